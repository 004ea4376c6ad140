/* prefix_aware.c: the LLM replica with the best weighted score of three scorers, the way
 * llm-d's inference scheduler combines its plug-ins (docs/routing.md, "prefix_aware"):
 *   prefix  = cached leading blocks of the request's prompt there / the prompt's blocks
 *   kv      = 1 - the share of its KV cache running requests hold
 *   queue   = (most outstanding - its outstanding) / (most - fewest), 1 when all are equal
 *   score   = prefix_weight x prefix + kv_weight x kv + queue_weight x queue
 * The highest score wins, ties at random (llm-d's max-score picker shuffles before it sorts).
 * Defaults 3 : 2 : 2, the weights of llm-d's "precise prefix cache aware" well-lit path
 * (llm-d/llm-d guides/precise-prefix-cache-aware/gaie-kv-events/values.yaml @ 126f65d), which
 * its benchmark of 2025-09-24 used; prefix_weight = 0 with kv and queue 1 : 1 is the benchmark's
 * "load-aware" scheduler. The prefix score is matched / total blocks, as llm-d's scorer computes
 * it since 2026-05 (llm-d-inference-scheduler e6f6b84, #1107); before, it was min-max normalised
 * among the pods with any hit (docs/routing.md). The queue is the router's outstanding count
 * (vLLM's num_requests_waiting in llm-d, scraped every 50 ms: waiting only, and older). */
#include "alloc.h"
#include "router.h"

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    double *pre = r->state;
    if (!pre && !(pre = r->state = colo_calloc(r->n, sizeof *pre))) return 0; /* n <= r->n */
    for (size_t i = 0; i < n; i++)
        pre[i] = q->prompt_blocks > 0 ? (double)reps[i].prefix_hit / (double)q->prompt_blocks : 0;
    return colo_router_pick_scored(r, reps, n, pre, r->cfg.param);
}

static void fini(colo_router_t *r)
{
    colo_free(r->state);
    r->state = NULL;
}

const colo_router_ops_t colo_route_prefix_aware = {
    .name = "prefix_aware",
    .summary = "the best weighted score of cached prefix, free KV cache and queue (LLM)",
    .params = {"prefix_weight", "kv_weight", "queue_weight", NULL},
    .defaults = {3, 2, 2},
    .reads = COLO_ROUTE_READS_PREFIX,
    .llm_only = true,
    .pick = pick,
    .fini = fini};
