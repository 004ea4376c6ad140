/* session_affinity.c: every request of a session to the same replica, chosen by a hash of the
 * session's key (consistent hashing on a request header or cookie, as Envoy's RING_HASH and
 * MAGLEV load balancers do): a multi-turn conversation finds its own history in that replica's
 * prefix cache. Requests without a session go to the fewest outstanding. The hash is
 * SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014), so equal keys pick equal replicas on every run. */
#include "router.h"

#include <stdint.h>

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    if (q->session < 0) return colo_router_least_outstanding(r, reps, n);
    return (size_t)(mix((uint64_t)q->session) % n);
}

const colo_router_ops_t colo_route_session_affinity = {
    .name = "session_affinity",
    .summary = "a session's requests to one replica (hash of its key)",
    .pick = pick};
