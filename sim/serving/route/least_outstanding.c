/* least_outstanding.c: the fewest requests outstanding (Envoy's LEAST_REQUEST with every host
 * considered); ties in turn. Reads what the router itself counts: requests it sent each replica
 * that have not come back. */
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    (void)q;
    return colo_router_least_outstanding(r, reps, n);
}

const colo_router_ops_t colo_route_least_outstanding = {
    .name = "least_outstanding", .summary = "the fewest requests outstanding", .pick = pick};
