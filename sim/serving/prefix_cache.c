/* prefix_cache.c: automatic prefix caching of an LLM tenant's KV blocks (prefix_cache.h). */
#include "prefix_cache.h"
#include "alloc.h"
#include "errors.h"
#include "invariant.h"

#include <string.h>

/* splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a bijective 64-bit mix, so distinct inputs stay distinct. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

uint64_t colo_prefix_id(int tag, uint64_t a, uint64_t b, uint64_t k)
{
    return mix(mix(mix(mix((uint64_t)tag) ^ a) ^ b) ^ k);
}

void colo_prefix_reset(colo_prefix_t *p, int unit_tokens)
{
    p->n = 0;
    p->unit_tokens = unit_tokens;
}

int colo_prefix_push(colo_prefix_t *p, uint64_t id)
{
    if (p->n == p->cap && colo_grow((void **)&p->chain, &p->cap, p->n + 1, sizeof *p->chain))
        return COLO_ENOMEM;
    uint64_t parent = p->n ? p->chain[p->n - 1] : 0x70726566ULL; /* a root for the first unit */
    p->chain[p->n] = mix(parent ^ mix(id));
    p->n++;
    return 0;
}

int colo_prefix_copy(colo_prefix_t *dst, const colo_prefix_t *src)
{
    colo_prefix_reset(dst, src->unit_tokens);
    if (src->n > dst->cap && colo_grow((void **)&dst->chain, &dst->cap, src->n, sizeof *dst->chain))
        return COLO_ENOMEM;
    if (src->n) memcpy(dst->chain, src->chain, src->n * sizeof *src->chain);
    dst->n = src->n;
    return 0;
}

void colo_prefix_fini(colo_prefix_t *p)
{
    colo_free(p->chain);
    memset(p, 0, sizeof *p);
}

long long colo_prefix_blocks(const colo_prefix_t *p, int b)
{
    return p->n ? (long long)p->n * p->unit_tokens / b : 0;
}

uint64_t colo_prefix_block_key(const colo_prefix_t *p, int b, long long j)
{
    long long end = (j + 1) * b; /* the block's last token is end - 1 */
    return mix(p->chain[(end - 1) / p->unit_tokens] ^ mix((uint64_t)end));
}

/* ---- the cache ---- */

int colo_prefix_cache_init(colo_prefix_cache_t *pc, long long blocks)
{
    memset(pc, 0, sizeof *pc);
    size_t size = 16;
    while (size < 2 * (size_t)blocks)
        size *= 2;
    pc->e = colo_malloc((size_t)blocks * sizeof *pc->e);
    pc->table = colo_calloc(size, sizeof *pc->table);
    if (!pc->e || !pc->table) return COLO_ENOMEM;
    pc->mask = size - 1;
    for (long long i = 0; i < blocks; i++)
        pc->e[i].next = i + 1 < blocks ? (int32_t)(i + 1) : -1;
    pc->free_slot = blocks ? 0 : -1;
    pc->lru_head = pc->lru_tail = -1;
    pc->blocks = pc->empty = blocks;
    return 0;
}

void colo_prefix_cache_fini(colo_prefix_cache_t *pc)
{
    colo_free(pc->e);
    colo_free(pc->table);
    memset(pc, 0, sizeof *pc);
}

long long colo_prefix_cache_free(const colo_prefix_cache_t *pc)
{
    return pc->empty + pc->idle;
}

/* The table's slot holding key, or its first empty slot on the probe. */
static size_t slot_of(const colo_prefix_cache_t *pc, uint64_t key)
{
    size_t s = (size_t)key & pc->mask;
    while (pc->table[s] && pc->e[pc->table[s] - 1].key != key)
        s = (s + 1) & pc->mask;
    return s;
}

static int32_t find(const colo_prefix_cache_t *pc, uint64_t key)
{
    return pc->table[slot_of(pc, key)] - 1;
}

/* Removes entry i's key from the table (backward-shift deletion: no tombstones, so probes
 * stay as short as the load factor of at most one half makes them). */
static void unhash(colo_prefix_cache_t *pc, int32_t i)
{
    size_t s = slot_of(pc, pc->e[i].key);
    pc->table[s] = 0;
    for (size_t t = (s + 1) & pc->mask; pc->table[t]; t = (t + 1) & pc->mask) {
        size_t home = (size_t)pc->e[pc->table[t] - 1].key & pc->mask;
        /* the entry at t may move to the hole at s when its home is not in (s, t] */
        if (((t - home) & pc->mask) >= ((t - s) & pc->mask)) {
            pc->table[s] = pc->table[t];
            pc->table[t] = 0;
            s = t;
        }
    }
}

static void lru_unlink(colo_prefix_cache_t *pc, int32_t i)
{
    struct colo_pc_entry *e = &pc->e[i];
    if (e->prev >= 0)
        pc->e[e->prev].next = e->next;
    else
        pc->lru_head = e->next;
    if (e->next >= 0)
        pc->e[e->next].prev = e->prev;
    else
        pc->lru_tail = e->prev;
}

static void lru_append(colo_prefix_cache_t *pc, int32_t i)
{
    pc->e[i].prev = pc->lru_tail;
    pc->e[i].next = -1;
    if (pc->lru_tail >= 0)
        pc->e[pc->lru_tail].next = i;
    else
        pc->lru_head = i;
    pc->lru_tail = i;
}

long long colo_prefix_cache_match(const colo_prefix_cache_t *pc, const colo_prefix_t *p, int b,
                                  long long max, long long *idle)
{
    long long n = colo_prefix_blocks(p, b), k = 0, free_hits = 0;
    if (n > max) n = max;
    for (; k < n; k++) {
        int32_t i = find(pc, colo_prefix_block_key(p, b, k));
        if (i < 0) break;
        free_hits += pc->e[i].ref == 0;
    }
    if (idle) *idle = free_hits;
    return k;
}

void colo_prefix_cache_count(colo_prefix_cache_t *pc, long long prompt, int b, long long hit)
{
    pc->requests++;
    pc->prompt_blocks += (uint64_t)((prompt + b - 1) / b);
    pc->prompt_tokens += (uint64_t)prompt;
    pc->hit_blocks += (uint64_t)hit;
    pc->hit_tokens += (uint64_t)(hit * b);
}

static int hold_push(colo_prefix_hold_t *h, int32_t i)
{
    if (h->n == h->cap && colo_grow((void **)&h->ent, &h->cap, h->n + 1, sizeof *h->ent))
        return COLO_ENOMEM;
    h->ent[h->n++] = i;
    return 0;
}

int colo_prefix_cache_take(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, const colo_prefix_t *p,
                           int b, long long n)
{
    for (long long k = 0; k < n; k++) {
        int32_t i = find(pc, colo_prefix_block_key(p, b, k));
        COLO_CHECK(i >= 0, "prefix cache: block %lld was matched and is gone", k);
        if (hold_push(h, i)) return COLO_ENOMEM;
        if (pc->e[i].ref++ == 0) {
            lru_unlink(pc, i);
            pc->idle--;
            pc->in_use++;
        }
    }
    h->keyed = n;
    return 0;
}

void colo_prefix_cache_alloc(colo_prefix_cache_t *pc, long long n)
{
    COLO_CHECK(n <= pc->empty + pc->idle, "prefix cache: %lld blocks asked, %lld free", n,
               pc->empty + pc->idle);
    long long from_empty = n < pc->empty ? n : pc->empty;
    pc->empty -= from_empty;
    for (n -= from_empty; n > 0; n--) { /* evict the least recently used idle entry */
        int32_t i = pc->lru_head;
        lru_unlink(pc, i);
        unhash(pc, i);
        pc->e[i].next = pc->free_slot;
        pc->free_slot = i;
        pc->idle--;
        pc->evicted++;
    }
}

int colo_prefix_cache_commit(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, const colo_prefix_t *p,
                             int b, long long tokens)
{
    long long upto = tokens / b, keyed = colo_prefix_blocks(p, b);
    if (upto > keyed) upto = keyed;
    for (; h->keyed < upto; h->keyed++) {
        uint64_t key = colo_prefix_block_key(p, b, h->keyed);
        size_t s = slot_of(pc, key);
        if (pc->table[s]) continue; /* a duplicate: stays private */
        int32_t i = pc->free_slot;  /* a slot is free: entries are distinct held blocks */
        COLO_CHECK(i >= 0, "prefix cache: more entries than its %lld blocks", pc->blocks);
        if (hold_push(h, i)) return COLO_ENOMEM;
        pc->free_slot = pc->e[i].next;
        pc->e[i] = (struct colo_pc_entry){.key = key, .ref = 1, .prev = -1, .next = -1};
        pc->table[s] = i + 1;
        pc->in_use++;
    }
    return 0;
}

void colo_prefix_cache_release(colo_prefix_cache_t *pc, colo_prefix_hold_t *h, long long private)
{
    pc->empty += private;
    for (size_t k = h->n; k-- > 0;) {
        int32_t i = h->ent[k];
        if (--pc->e[i].ref > 0) continue;
        lru_append(pc, i);
        pc->in_use--;
        pc->idle++;
    }
    h->n = 0;
    h->keyed = 0;
}

void colo_prefix_cache_forget_idle(colo_prefix_cache_t *pc)
{
    while (pc->lru_head >= 0) {
        int32_t i = pc->lru_head;
        lru_unlink(pc, i);
        unhash(pc, i);
        pc->e[i].next = pc->free_slot;
        pc->free_slot = i;
    }
    pc->empty += pc->idle;
    pc->idle = 0;
}

void colo_prefix_hold_fini(colo_prefix_hold_t *h)
{
    colo_free(h->ent);
    memset(h, 0, sizeof *h);
}
