/* least_kv_load.c: the LLM replica whose KV cache running requests fill least (vLLM's
 * gpu_cache_usage metric, which llm-d's kv-cache-utilization scorer reads: score 1 - usage);
 * ties: the fewest outstanding, then in turn. */
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    (void)q;
    size_t best = r->next % n;
    for (size_t k = 1; k < n; k++) {
        size_t i = (r->next + k) % n;
        if (reps[i].kv_usage < reps[best].kv_usage ||
            (reps[i].kv_usage == reps[best].kv_usage &&
             reps[i].outstanding < reps[best].outstanding))
            best = i;
    }
    r->next = (best + 1) % n;
    return best;
}

const colo_router_ops_t colo_route_least_kv_load = {.name = "least_kv_load",
                                                    .summary = "the least-filled KV cache (LLM)",
                                                    .llm_only = true,
                                                    .pick = pick};
