/* sm_slots.c: SMs as block slots, in groups of SMs that hold the same blocks (sm_slots.h). */
#include "sm_slots.h"
#include "alloc.h"
#include "errors.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

int colo_slots_init(colo_slots_t *s, const int *units, int n_classes)
{
    memset(s, 0, sizeof *s);
    int total = 0;
    for (int k = 0; k < n_classes; k++)
        total += units[k];
    s->cap = total + 1; /* a group holds one SM at least */
    s->groups = colo_calloc((size_t)s->cap, sizeof *s->groups);
    if (!s->groups) return COLO_ENOMEM;
    for (int i = 0; i < s->cap; i++) /* the free list, then one group per class */
        s->groups[i].next = i + 1 < s->cap ? i + 1 : -1;
    s->free = 0;
    s->head = -1;
    for (int k = 0; k < 64; k++)
        s->idle[k] = -1;
    for (int k = n_classes; k-- > 0;) {
        int j = s->free;
        s->free = s->groups[j].next;
        s->groups[j].cls = (uint32_t)k;
        s->groups[j].n = units[k];
        s->groups[j].next = s->head;
        s->head = j;
        s->n_groups++;
        if (k < 64) s->idle[k] = j;
    }
    return 0;
}

void colo_slots_fini(colo_slots_t *s)
{
    colo_free(s->groups);
    memset(s, 0, sizeof *s);
}

/* Blocks of k one SM of group g can take besides what it holds. */
static int group_fit_calc(const colo_slots_group_t *g, const colo_slots_occ_t *k)
{
    if (!g->n_res) return k->fit;
    if (g->n_res == COLO_SLOTS_PER_SM) return 0;
    int fit = k->fit;
    for (int x = 0; x < 4; x++)
        if (k->by[x] > 0) {
            /* shares are sums of 1/limit: a tolerance far below one block's share */
            double f = (1 + 1e-9 - g->use[x]) * k->by[x];
            if (f < fit) fit = f > 0 ? (int)f : 0;
        }
    return fit;
}

/* group_fit_calc remembered for one placement (stamp): a placement asks the same groups more
 * than once, and a group its blocks join is asked again. */
static int group_fit(colo_slots_t *s, colo_slots_group_t *g, const colo_slots_occ_t *k)
{
    if (g->fit_stamp != s->stamp) {
        g->fit = group_fit_calc(g, k);
        g->fit_stamp = s->stamp;
    }
    return g->fit;
}

/* Its SMs' use, worked out again from its residents (no drift from adding and removing). */
static void group_use(colo_slots_group_t *g)
{
    for (int x = 0; x < 4; x++)
        g->use[x] = 0;
    for (int r = 0; r < g->n_res; r++)
        for (int x = 0; x < 4; x++)
            g->use[x] += g->res[r].per_sm * g->res[r].o->u[x];
}

/* Whether group g holds blocks of kernel k. */
static bool group_holds(const colo_slots_group_t *g, const void *owner)
{
    for (int r = 0; r < g->n_res; r++)
        if (g->res[r].o->owner == owner) return true;
    return false;
}

static int group_has(const colo_slots_group_t *g, const colo_slots_occ_t *c)
{
    for (int r = 0; r < g->n_res; r++)
        if (g->res[r].o == c) return r;
    return -1;
}

/* Adds per blocks of cohort c on each SM of g; true when c held none there before. */
static void group_add(colo_slots_t *s, int i, colo_slots_occ_t *c, int per)
{
    colo_slots_group_t *g = &s->groups[i];
    if (!g->n_res && g->cls < 64 && s->idle[g->cls] == i) s->idle[g->cls] = -1;
    int r = g->n_res ? group_has(g, c) : -1;
    if (r >= 0) {
        g->res[r].per_sm += per;
    } else {
        g->res[g->n_res].o = c;
        g->res[g->n_res].per_sm = per;
        g->n_res++;
    }
    for (int x = 0; x < 4; x++)
        g->use[x] += per * c->u[x];
    g->fit_stamp = 0;
}

/* Group i's first n SMs stay in it; the rest become a group of their own, next after it. */
static void group_split(colo_slots_t *s, int i, int n)
{
    int j = s->free;
    colo_slots_group_t *a = &s->groups[i], *b = &s->groups[j];
    s->free = b->next;
    /* the header and the residents in use, not the whole record */
    memcpy(b, a, offsetof(colo_slots_group_t, res) + (size_t)a->n_res * sizeof a->res[0]);
    b->n -= n;
    s->groups[i].n = n;
    s->groups[i].next = j;
    s->n_groups++;
    if (a->cls < 64 && s->idle[a->cls] == i) s->idle[a->cls] = j; /* i is about to get blocks */
}

/* Group i takes in the group after it (same class and residents). */
static void group_merge_next(colo_slots_t *s, int i)
{
    int j = s->groups[i].next;
    if (s->groups[j].cls < 64 && s->idle[s->groups[j].cls] == j) s->idle[s->groups[j].cls] = i;
    s->groups[i].n += s->groups[j].n;
    s->groups[i].next = s->groups[j].next;
    s->groups[j].next = s->free;
    s->free = j;
    s->n_groups--;
}

static bool same_residents(const colo_slots_group_t *a, const colo_slots_group_t *b)
{
    if (a->cls != b->cls || a->n_res != b->n_res) return false;
    if (!a->n_res) return true;
    for (int r = 0; r < a->n_res; r++) {
        int s = group_has(b, a->res[r].o);
        if (s < 0 || b->res[s].per_sm != a->res[r].per_sm) return false;
    }
    return true;
}

/* Occupant c now holds n more SMs of class cls. */
static void occ_took(colo_slots_occ_t *c, uint32_t cls, long long blocks)
{
    for (int j = 0; j < c->n_cls; j++)
        if (c->cls[j].cls == cls) {
            c->cls[j].blocks += blocks;
            return;
        }
    if (c->n_cls == COLO_SLOTS_MAX_CLS) return; /* cannot be: a set spans at most that many */
    c->cls[c->n_cls].cls = cls;
    c->cls[c->n_cls].blocks = blocks;
    c->n_cls++;
}

/* One pass of placing up to want blocks of cohort c on groups of the classes in mask (only
 * idle ones: idle), at most per_max on each SM, taking at most *room SMs it does not hold
 * yet. Returns the blocks placed. */
static long long place_pass(colo_slots_t *s, colo_slots_occ_t *c, long long want, uint64_t mask,
                            long long per_max, int *room, bool capped, bool idle)
{
    const colo_slots_occ_t *k = c;
    long long placed = 0;
    for (int i = s->head; i >= 0 && placed < want; i = s->groups[i].next) {
        colo_slots_group_t *g = &s->groups[i];
        if (!(mask >> g->cls & 1) || (idle && g->n_res)) continue;
        int fit = group_fit(s, g, k);
        if (fit == 0) continue;
        /* under an SM cap, SMs that hold none of its blocks yet count against it */
        bool held = !capped || (g->n_res && group_holds(g, k->owner));
        if (!held && *room <= 0) continue;
        long long per = fit < per_max ? fit : per_max;
        long long left = want - placed;
        long long m = (left + per - 1) / per; /* SMs it needs here */
        if (!held && m > *room) m = *room;
        long long last = left - (m - 1) * per; /* the last SM's blocks: 1..per */
        if (last > per) last = per;
        if (m > g->n) {
            m = g->n;
            last = per;
        }
        int n0 = g->n;
        uint32_t cls = g->cls;
        long long whole = last < per ? m - 1 : m; /* SMs that get per each */
        if (whole > 0) {
            if (whole < n0) group_split(s, i, (int)whole);
            group_add(s, i, c, (int)per);
            occ_took(c, cls, whole * per);
            placed += whole * per;
        }
        if (last < per) { /* one more SM, with the rest */
            if (whole > 0) i = s->groups[i].next;
            if (s->groups[i].n > 1) group_split(s, i, 1);
            group_add(s, i, c, (int)last);
            occ_took(c, cls, last);
            placed += last;
        }
        if (!held) *room -= (int)m;
    }
    return placed;
}

long long colo_slots_place(colo_slots_t *s, colo_slots_occ_t *c, long long want, uint64_t mask,
                           int room)
{
    const colo_slots_occ_t *k = c;
    bool capped = room >= 0;
    if (!capped) room = INT_MAX;
    s->stamp++;
    if (!c->resident) c->n_cls = 0;
    /* the common case: one block each on the first idle SMs, where the first idle group has
     * enough (what the passes below do then, without counting) */
    for (int i = s->head; i >= 0 && !c->resident && want <= room; i = s->groups[i].next) {
        colo_slots_group_t *g = &s->groups[i];
        if (!(mask >> g->cls & 1) || g->n_res) continue;
        if (g->n < want || want > INT_MAX) break;
        if (g->n > want) group_split(s, i, (int)want);
        group_add(s, i, c, 1);
        occ_took(c, g->cls, want);
        c->resident = want;
        return want;
    }
    long long idle = 0, busy = 0;
    for (int i = s->head; i >= 0; i = s->groups[i].next) {
        const colo_slots_group_t *g = &s->groups[i];
        if ((mask >> g->cls & 1) && !g->n_res) idle += g->n;
    }
    long long placed = 0;
    if (idle > 0 && room > 0) {
        long long n = idle < room ? idle : room;
        placed = place_pass(s, c, want, mask, (want + n - 1) / n, &room, capped, true);
    }
    if (placed < want) /* SMs that hold blocks and have room for some of its */
        for (int i = s->head; i >= 0; i = s->groups[i].next) {
            colo_slots_group_t *g = &s->groups[i];
            if ((mask >> g->cls & 1) && g->n_res && group_fit(s, g, k) > 0) busy += g->n;
        }
    if (placed < want && busy > 0) {
        long long n = busy < room ? busy : room, left = want - placed;
        if (n < 1) n = 1;
        placed += place_pass(s, c, left, mask, (left + n - 1) / n, &room, capped, false);
    }
    if (placed > 0 && placed < want)
        placed += place_pass(s, c, want - placed, mask, LLONG_MAX, &room, capped, false);
    c->resident += placed;
    return placed;
}

void colo_slots_remove(colo_slots_t *s, colo_slots_occ_t *c)
{
    /* a group splits into neighbours, and they come together again: each group it leaves is
     * merged with a neighbour in the same state; a group left idle joins its class's idle
     * group, wherever that is (which SMs of a class are idle does not matter) */
    int prev = -1, *link = &s->head;
    while (*link >= 0) {
        int i = *link, j;
        colo_slots_group_t *g = &s->groups[i];
        int r = g->n_res ? group_has(g, c) : -1;
        if (r < 0) {
            prev = i;
            link = &g->next;
            continue;
        }
        memmove(&g->res[r], &g->res[r + 1], (size_t)(g->n_res - r - 1) * sizeof g->res[0]);
        g->n_res--;
        group_use(g);
        int *idle = g->cls < 64 ? &s->idle[g->cls] : NULL;
        if (!g->n_res && idle && *idle >= 0 && *idle != i) {
            s->groups[*idle].n += g->n;
            *link = g->next; /* i leaves the list; link is now at the group after it */
            g->next = s->free;
            s->free = i;
            s->n_groups--;
            continue;
        }
        if (!g->n_res && idle) *idle = i;
        while ((j = g->next) >= 0 && group_has(&s->groups[j], c) < 0 &&
               same_residents(g, &s->groups[j]))
            group_merge_next(s, i);
        if (prev >= 0 && same_residents(&s->groups[prev], g)) {
            group_merge_next(s, prev); /* i joins prev: link (prev's next) is at the one after */
            continue;
        }
        prev = i;
        link = &g->next;
    }
    c->n_cls = 0;
    c->resident = 0;
}

int colo_slots_owner_sms(const colo_slots_t *s, const void *owner)
{
    int n = 0;
    for (int i = s->head; i >= 0; i = s->groups[i].next)
        if (group_holds(&s->groups[i], owner)) n += s->groups[i].n;
    return n;
}

colo_slots_occ_t *colo_slots_find(const colo_slots_t *s, uint64_t mask,
                                  bool (*pred)(const colo_slots_occ_t *, void *), void *arg)
{
    for (int i = s->head; i >= 0; i = s->groups[i].next) {
        const colo_slots_group_t *g = &s->groups[i];
        if (!(mask >> g->cls & 1)) continue;
        for (int r = 0; r < g->n_res; r++)
            if (pred(g->res[r].o, arg)) return g->res[r].o;
    }
    return NULL;
}

int colo_slots_check(const colo_slots_t *s, const int *units, int n_classes)
{
    int per_cls[64] = {0};
    for (int i = s->head; i >= 0; i = s->groups[i].next) {
        const colo_slots_group_t *g = &s->groups[i];
        if (g->cls >= 64 || g->n < 1) {
            fprintf(stderr, "colo_slots_check: a group of %d SMs of class %u\n", g->n, g->cls);
            return COLO_ESTATE;
        }
        per_cls[g->cls] += g->n;
        double use[4] = {0, 0, 0, 0};
        for (int r = 0; r < g->n_res; r++)
            for (int x = 0; x < 4; x++)
                use[x] += g->res[r].per_sm * g->res[r].o->u[x];
        for (int x = 0; x < 4; x++)
            if (use[x] > 1 + 1e-6) {
                fprintf(stderr, "colo_slots_check: %d SMs of class %u hold %.6f of resource %d\n",
                        g->n, g->cls, use[x], x);
                return COLO_ESTATE;
            }
    }
    for (int k = 0; k < n_classes && k < 64; k++)
        if (per_cls[k] != units[k]) {
            fprintf(stderr, "colo_slots_check: class %d has %d SMs in groups, not %d\n", k,
                    per_cls[k], units[k]);
            return COLO_ESTATE;
        }
    return 0;
}
