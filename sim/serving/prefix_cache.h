/* prefix_cache.h: automatic prefix caching of an LLM tenant's KV blocks (docs/llm.md, "Prefix
 * caching"), as vLLM's automatic prefix caching does it (vLLM docs/design/prefix_caching.md): a
 * full KV block is known by a hash of its tokens and of its prefix; a finished request's full
 * blocks stay in the cache with no holder, and are evicted least recently used when a request
 * needs room; a new request takes the longest run of its leading blocks that is cached and
 * prefills only the rest.
 *
 * Requests carry no tokens, only hashed units: unit k stands for tokens [kU, (k+1)U) of the
 * request (U: 512 for a Mooncake log's hash_ids, the engine's block for the synthetic
 * workloads), and two requests whose first k units have the same ids have the same first kU
 * tokens. KV block j (tokens [jB, (j+1)B)) is keyed only when it lies within the request's full
 * units; its key mixes the hash of every unit up to the one holding its last token with its end
 * position, so a block is keyed by its tokens and all those before it whatever U and B are. */
#ifndef COLO_PREFIX_CACHE_H
#define COLO_PREFIX_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A request's prompt as hashed units. Caller-owned; colo_prefix_fini frees. */
typedef struct colo_prefix {
    uint64_t *chain; /* chain[k]: hash of the ids of units 0 ... k */
    size_t n, cap;   /* units in the chain (full units only), room */
    int unit_tokens; /* U */
} colo_prefix_t;

/* Id tags that keep the synthetic workloads' ids and a log's apart. */
enum {
    COLO_PREFIX_LOG = 1,
    COLO_PREFIX_GROUP,
    COLO_PREFIX_USER,
    COLO_PREFIX_SYSTEM,
    COLO_PREFIX_SESSION
};

/* A 64-bit id of (tag, a, b, k): unit k of what (tag, a, b) names. */
uint64_t colo_prefix_id(int tag, uint64_t a, uint64_t b, uint64_t k);
/* Empties p and sets its unit (tokens per unit). */
void colo_prefix_reset(colo_prefix_t *p, int unit_tokens);
/* Appends a unit of id to the chain. 0 or COLO_ENOMEM. Amortised O(1). */
int colo_prefix_push(colo_prefix_t *p, uint64_t id);
/* dst becomes a copy of src. 0 or COLO_ENOMEM. O(units). */
int colo_prefix_copy(colo_prefix_t *dst, const colo_prefix_t *src);
void colo_prefix_fini(colo_prefix_t *p);
/* KV blocks of b tokens that p keys from the front: those within its full units. */
long long colo_prefix_blocks(const colo_prefix_t *p, int b);
/* Key of block j of b tokens (j < colo_prefix_blocks). */
uint64_t colo_prefix_block_key(const colo_prefix_t *p, int b, long long j);

/* The prefix cache of one engine: its KV blocks are free and anonymous (empty), cached with no
 * request holding them (idle, on a least-recently-used list), cached and held by requests, or
 * held privately by one request. Caller-owned (init / fini). */
typedef struct colo_prefix_cache {
    struct colo_pc_entry {
        uint64_t key;
        int32_t ref;        /* requests holding it; 0: idle, on the LRU list */
        int32_t prev, next; /* LRU list (idle), or the free slots' list (next) */
    } * e;
    int32_t *table;             /* open addressing, linear probing: entry index + 1, 0 for none */
    size_t mask;                /* table size - 1 (a power of two, at least twice the blocks) */
    int32_t free_slot;          /* first entry slot not in use (-1: none) */
    int32_t lru_head, lru_tail; /* idle entries, least recently used first (-1: none) */
    long long blocks;           /* the KV cache's blocks */
    long long empty, idle, in_use; /* anonymous free blocks; entries with ref 0; with ref > 0 */
    uint64_t evicted;              /* idle entries evicted for room, over the run */
    /* lookups counted (colo_prefix_cache_count): requests, their prompts' blocks and tokens, and
     * what they found cached */
    uint64_t requests, prompt_blocks, hit_blocks, prompt_tokens, hit_tokens;
} colo_prefix_cache_t;

/* A cache of blocks KV blocks, all empty. 0 or COLO_ENOMEM. O(blocks). */
int colo_prefix_cache_init(colo_prefix_cache_t *pc, long long blocks);
void colo_prefix_cache_fini(colo_prefix_cache_t *pc);
/* Free blocks: empty and idle. */
long long colo_prefix_cache_free(const colo_prefix_cache_t *pc);
/* How many of p's leading blocks of b tokens are cached, at most max: the longest run from the
 * front; *idle (may be NULL): how many of them no request holds. Changes nothing. O(blocks
 * matched). */
long long colo_prefix_cache_match(const colo_prefix_cache_t *pc, const colo_prefix_t *p, int b,
                                  long long max, long long *idle);

/* Counts a request's lookup: a prompt of `prompt` tokens in blocks of b, hit blocks found. */
void colo_prefix_cache_count(colo_prefix_cache_t *pc, long long prompt, int b, long long hit);

/* The cache entries one request holds, in block order (caller-owned, zeroed to start). */
typedef struct colo_prefix_hold {
    int32_t *ent;
    size_t n, cap;
    long long keyed; /* blocks from the front looked at for registration so far */
} colo_prefix_hold_t;

/* The request takes its first n blocks of b tokens from the cache (colo_prefix_cache_match
 * gave at least n): each entry's holders + 1, an idle one leaves the LRU list. 0 or
 * COLO_ENOMEM. O(n). */
int colo_prefix_cache_take(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, const colo_prefix_t *p,
                           int b, long long n);
/* n free blocks become a request's private blocks: empty ones first, then idle entries evicted
 * least recently used first. n must be at most colo_prefix_cache_free. O(n). */
void colo_prefix_cache_alloc(colo_prefix_cache_t *pc, long long n);
/* The request's private blocks that are now full of computed tokens (its first `tokens`
 * tokens) and keyed become entries it holds, so that others may hit them (vLLM caches a block
 * once it is full). A block whose key is cached already stays private (vLLM keeps such a
 * duplicate until its request ends). 0 or COLO_ENOMEM. O(blocks registered). */
int colo_prefix_cache_commit(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, const colo_prefix_t *p,
                             int b, long long tokens);
/* The request gives back its entries and `private` private blocks: the private ones become
 * empty; each entry loses a holder, and one that has none left goes to the LRU list's tail,
 * the request's last block first (vLLM frees a request's blocks in reverse order: its deepest
 * block is the least likely to be shared). The hold is emptied. O(entries). */
void colo_prefix_cache_release(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, long long private);
void colo_prefix_hold_fini(colo_prefix_hold_t *h);
/* Every idle block is forgotten and becomes empty (the engine's process died: its KV cache is
 * gone); not counted as evicted. O(idle blocks). */
void colo_prefix_cache_forget_idle(colo_prefix_cache_t *pc);

#endif
