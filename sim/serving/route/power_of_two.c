/* power_of_two.c: two replicas at random, the one with fewer outstanding (Mitzenmacher, "The
 * Power of Two Choices in Randomized Load Balancing", IEEE TPDS 12(10), 2001; Envoy's
 * LEAST_REQUEST default, choice_count = 2). Ties: the first drawn. */
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    (void)q;
    if (n < 2) return 0;
    size_t a = (size_t)gsl_rng_uniform_int(r->rng, n);
    size_t b = (size_t)gsl_rng_uniform_int(r->rng, n - 1);
    if (b >= a) b++;
    return reps[b].outstanding < reps[a].outstanding ? b : a;
}

const colo_router_ops_t colo_route_power_of_two = {
    .name = "power_of_two", .summary = "the fewer outstanding of two at random", .pick = pick};
