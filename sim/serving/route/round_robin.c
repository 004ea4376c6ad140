/* round_robin.c: the replicas in turn, 1, 2, ..., N, 1, ...: what Kubernetes' kube-proxy (IPVS
 * rr) and most load balancers do by default. Reads nothing. */
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    (void)q, (void)reps;
    size_t i = r->next % n;
    r->next = (i + 1) % n;
    return i;
}

const colo_router_ops_t colo_route_round_robin = {
    .name = "round_robin", .summary = "in turn", .pick = pick};
