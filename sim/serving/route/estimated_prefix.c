/* estimated_prefix.c: llm-d's *estimated* prefix-cache scheduling (the Gateway API Inference
 * Extension's prefix-cache-scorer, v1.0.0, pkg/epp/scheduling/framework/plugins/multi/prefix):
 * the router cannot see the replicas' caches, so it guesses them from its own history. After
 * each decision it records the request's prompt blocks as held by the replica it chose, in an
 * LRU index of lru_blocks entries per replica (31,250 by default, DefaultLRUCapacityPerServer);
 * a new request's prefix score on a replica is the number of its leading blocks the index says
 * that replica holds, walking from the first block until one that no replica holds, over its
 * blocks (at most 256, DefaultMaxPrefixBlocks: the scorer hashes only the start of a prompt).
 * score = prefix_weight x prefix + kv_weight x (1 - KV use) + queue_weight x queue, with the
 * default 1 : 1 : 1 of the Extension's default plug-ins at v1.0 (config/charts/inferencepool,
 * default-plugins.yaml; weight 1 when none is given), which llm-d's 2025-09-24 benchmark used.
 * The index learns nothing from the replicas: a block the replica evicted still scores. Blocks
 * are the engine's KV blocks (llm-d: 64 characters, about 16 tokens: vLLM's default block). */
#include "alloc.h"
#include "prefix_cache.h"
#include "router.h"

#include <stdint.h>
#include <string.h>

#define MAX_BLOCKS 256

/* One entry: a block key held by one replica, on that replica's LRU list. */
struct entry {
    uint64_t key;
    uint32_t rep;
    int32_t prev, next; /* LRU list of its replica, most recent first; or the free list */
};

struct index {
    struct entry *e;
    int32_t *table; /* open addressing: entry index + 1, 0 empty */
    size_t mask;
    int32_t free;         /* free entries (next) */
    int32_t *head, *tail; /* per replica: most and least recently used */
    size_t *count, cap;   /* per replica: entries; and the most */
    double *score;        /* per replica, for this request */
};

static size_t slot_of(const struct index *x, uint64_t key, uint32_t rep)
{
    uint64_t h = (key ^ ((uint64_t)rep * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
    return (size_t)(h >> 17) & x->mask;
}

/* The table slot holding (key, rep), or the empty slot where it would go. */
static size_t find(const struct index *x, uint64_t key, uint32_t rep)
{
    size_t s = slot_of(x, key, rep);
    while (x->table[s] && !(x->e[x->table[s] - 1].key == key && x->e[x->table[s] - 1].rep == rep))
        s = (s + 1) & x->mask;
    return s;
}

static void unlink_lru(struct index *x, int32_t i)
{
    struct entry *en = &x->e[i];
    if (en->prev >= 0)
        x->e[en->prev].next = en->next;
    else
        x->head[en->rep] = en->next;
    if (en->next >= 0)
        x->e[en->next].prev = en->prev;
    else
        x->tail[en->rep] = en->prev;
}

static void push_front(struct index *x, int32_t i)
{
    struct entry *en = &x->e[i];
    en->prev = -1;
    en->next = x->head[en->rep];
    if (en->next >= 0)
        x->e[en->next].prev = i;
    else
        x->tail[en->rep] = i;
    x->head[en->rep] = i;
}

/* Removes table slot s, moving later entries of its run back (linear probing's deletion). */
static void remove_slot(struct index *x, size_t s)
{
    x->table[s] = 0;
    for (size_t j = (s + 1) & x->mask; x->table[j]; j = (j + 1) & x->mask) {
        int32_t i = x->table[j];
        size_t home = slot_of(x, x->e[i - 1].key, x->e[i - 1].rep);
        /* i stays if its home lies cyclically in (s, j] */
        if (s < j ? (home > s && home <= j) : (home > s || home <= j)) continue;
        x->table[s] = i;
        x->table[j] = 0;
        s = j;
    }
}

static void touch(struct index *x, uint64_t key, uint32_t rep)
{
    size_t s = find(x, key, rep);
    if (x->table[s]) {
        unlink_lru(x, x->table[s] - 1);
        push_front(x, x->table[s] - 1);
        return;
    }
    int32_t i;
    if (x->count[rep] == x->cap) { /* evict the replica's least recently used */
        i = x->tail[rep];
        unlink_lru(x, i);
        remove_slot(x, find(x, x->e[i].key, rep));
        s = find(x, key, rep);
    } else {
        i = x->free;
        x->free = x->e[i].next;
        x->count[rep]++;
    }
    x->e[i] = (struct entry){key, rep, -1, -1};
    x->table[s] = i + 1;
    push_front(x, i);
}

static struct index *index_new(size_t n, size_t cap)
{
    struct index *x = colo_calloc(1, sizeof *x);
    size_t total = n * cap, size = 2;
    while (size < 2 * total)
        size *= 2;
    if (!x || !(x->e = colo_calloc(total, sizeof *x->e)) ||
        !(x->table = colo_calloc(size, sizeof *x->table)) ||
        !(x->head = colo_calloc(n, sizeof *x->head)) ||
        !(x->tail = colo_calloc(n, sizeof *x->tail)) ||
        !(x->count = colo_calloc(n, sizeof *x->count)) ||
        !(x->score = colo_calloc(n, sizeof *x->score))) {
        if (x) {
            colo_free(x->e), colo_free(x->table), colo_free(x->head), colo_free(x->tail);
            colo_free(x->count), colo_free(x->score), colo_free(x);
        }
        return NULL;
    }
    x->mask = size - 1;
    x->cap = cap;
    for (size_t i = 0; i < total; i++)
        x->e[i].next = i + 1 < total ? (int32_t)(i + 1) : -1;
    x->free = total ? 0 : -1;
    for (size_t r = 0; r < n; r++)
        x->head[r] = x->tail[r] = -1;
    return x;
}

static void fini(colo_router_t *r)
{
    struct index *x = r->state;
    if (!x) return;
    colo_free(x->e), colo_free(x->table), colo_free(x->head), colo_free(x->tail);
    colo_free(x->count), colo_free(x->score), colo_free(x);
    r->state = NULL;
}

static size_t pick(colo_router_t *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n)
{
    struct index *x = r->state;
    size_t cap = r->cfg.param[3] >= 1 ? (size_t)r->cfg.param[3] : 1;
    if (!x && !(x = r->state = index_new(r->n, cap))) return 0;
    long long blocks = q->prefix ? colo_prefix_blocks(q->prefix, q->block_tokens) : 0;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    memset(x->score, 0, n * sizeof *x->score);
    for (long long j = 0; j < blocks; j++) {
        uint64_t key = colo_prefix_block_key(q->prefix, q->block_tokens, j);
        bool any = false;
        for (size_t i = 0; i < n; i++)
            if (x->table[find(x, key, (uint32_t)reps[i].id)]) x->score[i]++, any = true;
        if (!any) break;
    }
    for (size_t i = 0; i < n && blocks > 0; i++)
        x->score[i] /= (double)blocks;
    size_t best = colo_router_pick_scored(r, reps, n, x->score, r->cfg.param);
    for (long long j = 0; j < blocks; j++) /* what it believes the replica now holds */
        touch(x, colo_prefix_block_key(q->prefix, q->block_tokens, j), (uint32_t)reps[best].id);
    return best;
}

const colo_router_ops_t colo_route_estimated_prefix = {
    .name = "estimated_prefix",
    .summary = "prefix_aware from the router's own history of where prompts went (LLM)",
    .params = {"prefix_weight", "kv_weight", "queue_weight", "lru_blocks", NULL},
    .defaults = {1, 1, 1, 31250},
    .llm_only = true,
    .pick = pick,
    .fini = fini};
