/* random.c: a replica uniformly at random, from the router's own stream (kube-proxy's iptables
 * mode). Reads nothing. */
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    (void)q, (void)reps;
    return (size_t)gsl_rng_uniform_int(r->rng, n);
}

const colo_router_ops_t colo_route_random = {
    .name = "random", .summary = "uniformly at random", .pick = pick};
