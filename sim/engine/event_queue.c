/* event_queue.c: array-backed binary min-heap with O(log n) cancel through stored positions.
 *
 * The heap holds small nodes (time, sequence, slot) so sifting touches only keys; payloads live
 * in a slot pool whose entries record where their node sits. A pop leaves the root empty and the
 * next schedule, which in a simulation almost always follows, sifts its event down from there:
 * one pass instead of two. A slot's generation changes each
 * time it is freed, so a stale handle can never cancel someone else's event. */
#include "event_queue.h"
#include "alloc.h"
#include "errors.h"
#include "invariant.h"

#include <stdlib.h>
#include <string.h>

#define NO_SLOT UINT32_MAX

/* The heap holds keys only, 16 bytes each, so sifting never touches payloads: the time, and in
 * one word the scheduling sequence number (high 40 bits, breaks ties) and the payload's slot
 * (low 24 bits). Comparing that word compares sequence numbers, which are unique. */
#define SLOT_BITS 24
#define MAX_SLOTS (1u << SLOT_BITS)                 /* pending events at most: 16.7 million */
#define SEQ_LIMIT (UINT64_C(1) << (64 - SLOT_BITS)) /* renumber before the sequence wraps */

struct colo_eq_node {
    colo_time_t time;
    uint64_t sk; /* seq << SLOT_BITS | slot */
};

struct colo_eq_slot {
    colo_event_fn fn;
    void *obj;
    int64_t arg;
    uint32_t pos; /* index in heap while pending; next free slot while free */
    uint32_t gen;
};

static inline uint32_t slot_of(struct colo_eq_node n)
{
    return (uint32_t)(n.sk & (MAX_SLOTS - 1));
}

/* Written without short-circuit branches so the compiler can use conditional moves: the
 * child chosen at each level is a coin toss that a branch predictor cannot learn. */
static inline int before(const struct colo_eq_node *a, const struct colo_eq_node *b)
{
    return (a->time < b->time) | ((a->time == b->time) & (a->sk < b->sk));
}

static inline void place(colo_eq_t *q, size_t i, struct colo_eq_node node)
{
    q->heap[i] = node;
    q->slots[slot_of(node)].pos = (uint32_t)i;
}

static void sift_up(colo_eq_t *q, size_t i, struct colo_eq_node node)
{
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&node, &q->heap[parent])) break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, node);
}

static void sift_down(colo_eq_t *q, size_t i, struct colo_eq_node node)
{
    size_t n = q->n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n) c += (size_t)before(&q->heap[c + 1], &q->heap[c]);
        if (!before(&q->heap[c], &node)) break;
        place(q, i, q->heap[c]);
        i = c;
    }
    place(q, i, node);
}

/* Removes the root the "bottom-up" way (Wegener): walk the hole down to a leaf along the smaller
 * children, one comparison per level, then sift the last node up from there. The last node
 * usually belongs near the bottom, so this beats the textbook two comparisons per level. */
static void remove_root(colo_eq_t *q)
{
    struct colo_eq_node last = q->heap[--q->n];
    size_t n = q->n, i = 0;
    if (n == 0) return;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c + 1 < n)
            c += (size_t)before(&q->heap[c + 1], &q->heap[c]);
        else if (c >= n)
            break;
        place(q, i, q->heap[c]);
        i = c;
    }
    sift_up(q, i, last);
}

/* A pop leaves the root empty, expecting the handler to schedule an event into it; anything
 * else that needs a proper heap first closes the hole. */
static void fill_hole(colo_eq_t *q)
{
    if (!q->hole) return;
    q->hole = false;
    remove_root(q);
}

static int grow_slots(colo_eq_t *q)
{
    size_t old = q->slot_cap;
    if (old >= MAX_SLOTS) return COLO_ENOMEM;
    size_t cap = old;
    int rc = colo_grow((void **)&q->slots, &cap, old + 1, sizeof *q->slots);
    if (rc) return rc;
    if (cap > MAX_SLOTS) cap = MAX_SLOTS;
    for (size_t i = old; i < cap; i++) {
        q->slots[i].pos = (i + 1 < cap) ? (uint32_t)(i + 1) : q->free_head;
        q->slots[i].gen = 0;
    }
    q->free_head = (uint32_t)old;
    q->slot_cap = cap;
    return 0;
}

int colo_eq_init(colo_eq_t *q, size_t hint)
{
    memset(q, 0, sizeof *q);
    q->free_head = NO_SLOT;
    q->seq_limit = SEQ_LIMIT;
    if (hint < 16) hint = 16;
    if (colo_grow((void **)&q->heap, &q->heap_cap, hint, sizeof *q->heap)) return COLO_ENOMEM;
    while (q->slot_cap < hint) {
        if (grow_slots(q)) {
            colo_eq_fini(q);
            return COLO_ENOMEM;
        }
    }
    return 0;
}

void colo_eq_fini(colo_eq_t *q)
{
    colo_free(q->heap);
    colo_free(q->slots);
    memset(q, 0, sizeof *q);
}

static int cmp_node(const void *a, const void *b)
{
    const struct colo_eq_node *x = a, *y = b;
    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

/* After 2^40 schedules the sequence numbers would wrap: give the pending events new ones,
 * 0 .. n-1 in their current order. A sorted array is a valid heap. O(n log n), once in 10^12. */
static void renumber(colo_eq_t *q)
{
    fill_hole(q);
    qsort(q->heap, q->n, sizeof *q->heap, cmp_node);
    for (size_t i = 0; i < q->n; i++) {
        q->heap[i].sk = ((uint64_t)i << SLOT_BITS) | slot_of(q->heap[i]);
        q->slots[slot_of(q->heap[i])].pos = (uint32_t)i;
    }
    q->next_seq = q->n;
}

int colo_eq_schedule(colo_eq_t *q, colo_time_t t, colo_event_fn fn, void *obj, int64_t arg,
                     colo_event_id_t *id)
{
    if (t < q->now) return COLO_EINVAL;
    if (q->free_head == NO_SLOT && grow_slots(q)) return COLO_ENOMEM;
    if (!q->hole && q->n == q->heap_cap &&
        colo_grow((void **)&q->heap, &q->heap_cap, q->n + 1, sizeof *q->heap))
        return COLO_ENOMEM;

    uint32_t s = q->free_head;
    struct colo_eq_slot *slot = &q->slots[s];
    q->free_head = slot->pos;
    slot->fn = fn;
    slot->obj = obj;
    slot->arg = arg;

    if (q->next_seq == q->seq_limit) renumber(q);
    struct colo_eq_node node = {t, (q->next_seq++ << SLOT_BITS) | s};
    if (q->hole) { /* the root was popped: the new event takes its place (a "hold") */
        q->hole = false;
        sift_down(q, 0, node);
    } else {
        sift_up(q, q->n++, node);
    }
    if (id) *id = ((uint64_t)slot->gen << 32) | ((uint64_t)s + 1);
    return 0;
}

static void free_slot(colo_eq_t *q, uint32_t s)
{
    q->slots[s].gen++;
    q->slots[s].pos = q->free_head;
    q->free_head = s;
}

/* Removes the node at heap index i, refilling the hole with the last node. */
static void remove_at(colo_eq_t *q, size_t i)
{
    struct colo_eq_node last = q->heap[--q->n];
    if (i == q->n) return;
    if (i > 0 && before(&last, &q->heap[(i - 1) / 2]))
        sift_up(q, i, last);
    else
        sift_down(q, i, last);
}

int colo_eq_cancel(colo_eq_t *q, colo_event_id_t id)
{
    uint64_t s64 = (id & 0xffffffffu);
    if (s64 == 0 || s64 > q->slot_cap) return COLO_ENOENT;
    uint32_t s = (uint32_t)(s64 - 1);
    uint32_t gen = (uint32_t)(id >> 32);
    struct colo_eq_slot *slot = &q->slots[s];
    /* A pending slot's node points back at it; a free or reused slot fails one of the checks. */
    if (slot->gen != gen) return COLO_ENOENT;
    fill_hole(q);
    if (slot->pos >= q->n || slot_of(q->heap[slot->pos]) != s) return COLO_ENOENT;
    remove_at(q, slot->pos);
    free_slot(q, s);
    return 0;
}

bool colo_eq_pop(colo_eq_t *q, colo_event_t *ev)
{
    fill_hole(q);
    if (q->n == 0) return false;
    struct colo_eq_node top = q->heap[0];
    struct colo_eq_slot *slot = &q->slots[slot_of(top)];
    ev->time = top.time;
    ev->fn = slot->fn;
    ev->obj = slot->obj;
    ev->arg = slot->arg;
    q->hole = true; /* removed lazily: the next schedule usually refills the root */
    free_slot(q, slot_of(top));
    COLO_CHECK(top.time >= q->now, "simulated time goes back from %lld to %lld ns",
               (long long)q->now, (long long)top.time);
    q->now = top.time;
    q->popped++;
    return true;
}

colo_time_t colo_eq_peek_time(const colo_eq_t *q)
{
    if (!q->hole) return q->n ? q->heap[0].time : COLO_TIME_MAX;
    /* the root is empty: the earliest is one of its two children */
    colo_time_t t = COLO_TIME_MAX;
    if (q->n > 1) t = q->heap[1].time;
    if (q->n > 2 && q->heap[2].time < t) t = q->heap[2].time;
    return t;
}
