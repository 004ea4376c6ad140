/* blocks.c: kernels on a GPU as blocks on SMs: the block dispatcher hands free SM slots to the
 * pending blocks of kernels in priority, then arrival order; resident blocks run to
 * completion; blocks dispatched together are a cohort, one activity of the fluid solver, which
 * shares L2 and DRAM bandwidth and the SMs' issue rate; L2 capacity is shared by the kernels
 * with blocks resident (docs/model.md, "Blocks on SMs", "Contention"). */
#include "hardware.h"
#include "hardware_internal.h"
#include "alloc.h"
#include "errors.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* A cohort: blocks of one kernel dispatched at one instant onto free slots, which run to
 * completion and end together: one fluid activity. When nothing waits for its SMs, a cohort
 * stands for several waves of its kernel run back to back on the same slots (waves > 1), so a
 * kernel alone is one activity, as cheap as a kernel was before blocks were modelled; a kernel
 * that arrives and must wait cuts it at the wave boundary where it may start (split). */
struct colo_hw_cohort {
    struct colo_hw_live link; /* first member: in flight on the live list, or in the pool */
    colo_slots_occ_t occ;     /* its blocks on SMs: resident, classes */
    colo_hw_t *hw;
    colo_hw_kernel_t *k; /* NULL: its kernel was stopped as it ended (its completion to come) */
    struct colo_hw_cohort *next; /* the kernel's cohorts */
    colo_activity_id_t act;
    long long per_wave; /* blocks of each of its waves */
    long long total;    /* blocks it stands for, over its waves */
    int waves;
    double end_waves; /* it ends at fixed + end_waves x tau of work (waves; less when pieces
                         dispatched apart were merged into it) */
    double fixed;     /* the kernel's fixed part (dispatch, latency floor), carried by its first */
    double base;      /* its work done before its current activity began (it was cut), ns */
    double work;      /* its current activity's work at speed 1, ns */
};

struct colo_hw_kernel {
    struct colo_hw_live link; /* first member */
    colo_hw_t *hw;
    colo_kernel_work_t w;
    colo_hw_place_t place;
    double dram_eff; /* DRAM bytes with the L2 it shares now */
    /* on the S SMs its place allows: compute time, DRAM rate, fixed + body (W), the body
     * (compute or memory, the longer) and one wave of it (tau) */
    double t_comp, rate, W, body, tau;
    double sm_per_block; /* SMs' issue rate one resident block of it uses at speed 1 */
    double r0;           /* the fraction of its work this run does (1; less when resumed) */
    double u[4];  /* per block: share of an SM's warps, block slots, registers, shared memory */
    double by[4]; /* 1 / u: blocks each resource allows on an empty SM (0: no limit) */
    int fit;      /* its blocks on an empty SM (occupancy) */
    int S;
    bool capped;           /* S is below its set's SMs: SMs it newly takes are counted */
    long long B;           /* blocks of this run */
    long long wave_blocks; /* on S empty SMs: min(B, fit x S) */
    long long pending;     /* not yet dispatched */
    int waves;             /* ceil(B / wave_blocks) */
    double fixed_left;     /* fixed part not yet given to a cohort */
    colo_time_t fixed_end; /* when its first cohort's fixed part ends (at speed 1) */
    double weight;
    uint64_t seq, cls_mask;
    colo_hw_kernel_t *qprev, *qnext;
    bool queued;
    int n_cohorts; /* running */
    int acts;      /* solver activities its cohorts have started */
    struct colo_hw_cohort *cohorts;
    colo_fluid_done_fn done;
    void *obj;
    int64_t arg;
};

/* Works out what a kernel's place fixes for its whole run: the SMs it may use, its compute
 * time and DRAM rate there, its blocks' footprint on an SM, and its waves. */
static void kernel_place(const colo_hw_t *hw, colo_hw_kernel_t *k)
{
    const struct colo_hw_set *sms = &hw->sm.sets[k->place.sm_set];
    const struct colo_hw_set *chs = &hw->mem.sets[k->place.channel_set];
    int n_sms = sms->n_units;
    if (k->place.sm_limit > 0 && k->place.sm_limit < n_sms) n_sms = k->place.sm_limit;
    k->S = n_sms;
    k->capped = n_sms < sms->n_units;
    k->t_comp = colo_kernel_compute_ns(&k->w, n_sms);
    k->rate = colo_kernel_memory_rate(&k->w, n_sms, chs->n_units * hw->mem.unit_capacity);
    const colo_occupancy_t *o = &k->w.occ;
    int by[4] = {o->by_warps, o->by_blocks, o->by_registers, o->by_shared};
    k->fit = o->blocks_per_sm > 0 ? o->blocks_per_sm : 1;
    if (!(by[1] > 0 && by[1] < INT_MAX)) by[1] = k->fit; /* the block slots always count */
    for (int x = 0; x < 4; x++) {
        bool lim = by[x] > 0 && by[x] < INT_MAX;
        k->u[x] = lim ? 1.0 / by[x] : 0;
        k->by[x] = lim ? by[x] : 0;
    }
    k->cls_mask = 0;
    for (int p = 0; p < sms->n_parts; p++)
        k->cls_mask |= UINT64_C(1) << sms->parts[p].cls;
    long long full = (long long)k->fit * n_sms;
    k->wave_blocks = k->B < full ? k->B : full;
    k->waves = k->B <= k->wave_blocks ? 1 : (int)((k->B + k->wave_blocks - 1) / k->wave_blocks);
}

/* Its times at its current DRAM traffic. */
static void kernel_times(colo_hw_kernel_t *k)
{
    /* its SMs' issue rate, per resident block: its blocks alone keep min(blocks, SMs) SMs busy
     * for the compute share of its time (as spread over a whole wave) */
    long long used = k->B < k->S ? k->B : k->S;
    double t_mem = k->dram_eff / k->rate;
    k->body = k->t_comp > t_mem ? k->t_comp : t_mem;
    k->W = k->w.fixed_ns + k->body;
    if (k->W < 1e-3) k->W = 1e-3;
    k->tau = k->body * k->r0 / k->waves;
    k->sm_per_block = (double)used / (double)k->wave_blocks * k->t_comp / k->W;
}

/* The work a cohort stands for from its first block to its end, ns at speed 1: a whole kernel
 * run alone is exactly the kernel's time alone. */
static double cohort_target(const struct colo_hw_cohort *c)
{
    const colo_hw_kernel_t *k = c->k;
    double t = c->total == k->B && c->waves == k->waves && c->end_waves == c->waves
                   ? c->fixed + k->body * k->r0
                   : c->fixed + c->end_waves * k->tau;
    return t > 1e-3 ? t : 1e-3;
}

/* The cohort's resources and use of each per ns at speed 1: the SMs its blocks are on (their
 * issue rate, busy for the kernel's compute share of its time), its L2 group and its DRAM
 * channels, in proportion to its blocks against a full wave. Returns their number. */
static int cohort_elems(const colo_hw_t *hw, const struct colo_hw_cohort *c, colo_fluid_elem_t *e)
{
    const colo_hw_kernel_t *k = c->k;
    const struct colo_hw_set *chs = &hw->mem.sets[k->place.channel_set];
    double phi = (double)c->occ.resident / (double)k->wave_blocks;
    double l2 = k->w.l2_bytes > k->dram_eff ? k->w.l2_bytes : k->dram_eff;
    int n = 0;
    for (int i = 0; i < c->occ.n_cls; i++)
        e[n++] = (colo_fluid_elem_t){hw->sm.classes[c->occ.cls[i].cls].res,
                                     (double)c->occ.cls[i].blocks * k->sm_per_block};
    e[n++] = (colo_fluid_elem_t){hw->l2[k->place.l2_group].res, phi * l2 / k->W};
    for (int p = 0; p < chs->n_parts; p++)
        e[n++] = (colo_fluid_elem_t){hw->mem.classes[chs->parts[p].cls].res,
                                     phi * k->dram_eff * chs->parts[p].share / k->W};
    return n;
}

/* Places up to want more blocks of cohort c on the SMs of mask, within its kernel's SM cap. */
static long long place(colo_hw_t *hw, struct colo_hw_cohort *c, long long want, uint64_t mask)
{
    const colo_hw_kernel_t *k = c->k;
    /* under an SM cap: the SMs that hold none of its blocks it may still take */
    int room = -1;
    if (k->capped) {
        room = k->S - colo_slots_owner_sms(&hw->slots, k);
        if (room < 0) room = 0;
    }
    return colo_slots_place(&hw->slots, &c->occ, want, mask, room);
}

static void unplace(colo_hw_t *hw, struct colo_hw_cohort *c)
{
    colo_slots_remove(&hw->slots, &c->occ);
}

int colo_hw_check_slots(const colo_hw_t *hw)
{
    if (!hw->finalized) return 0;
    int units[64];
    for (size_t k = 0; k < hw->sm.n_classes && k < 64; k++)
        units[k] = hw->sm.classes[k].n_units;
    return colo_slots_check(&hw->slots, units, (int)hw->sm.n_classes);
}

/* -- the queue of kernels with blocks to dispatch: higher priority first, then arrival -- */

static void queue_insert(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    if (k->queued) return;
    colo_hw_kernel_t *prev = NULL, *q = hw->queue;
    while (q && (q->place.priority > k->place.priority ||
                 (q->place.priority == k->place.priority && q->seq < k->seq))) {
        prev = q;
        q = q->qnext;
    }
    k->qprev = prev;
    k->qnext = q;
    if (q) q->qprev = k;
    if (prev)
        prev->qnext = k;
    else
        hw->queue = k;
    k->queued = true;
}

static void queue_remove(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    if (!k->queued) return;
    if (k->qprev)
        k->qprev->qnext = k->qnext;
    else
        hw->queue = k->qnext;
    if (k->qnext) k->qnext->qprev = k->qprev;
    k->qprev = k->qnext = NULL;
    k->queued = false;
}

/* -- cohorts -- */

static void on_cohort_done(void *obj, int64_t arg);

/* A cohort record back to the pool. */
static void cohort_free(colo_hw_t *hw, struct colo_hw_cohort *c)
{
    colo_hw__live_remove(hw, &c->link);
    colo_hw__pool_put(&hw->cofree, &c->link);
}

/* The cohort whose occupant occ is. */
static struct colo_hw_cohort *cohort_of(const colo_slots_occ_t *occ)
{
    return (struct colo_hw_cohort *)((char *)occ - offsetof(struct colo_hw_cohort, occ));
}

static void l2_stale(colo_hw_t *hw, struct colo_hw_l2 *g);
static void l2_remove(struct colo_hw_l2 *g, colo_hw_kernel_t *k);

static struct colo_hw_cohort *cohort_take(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    struct colo_hw_cohort *c = colo_hw__pool_take(&hw->cofree, sizeof *c);
    if (!c) return NULL;
    colo_hw__live_add(hw, &c->link);
    /* every field the dispatcher reads before it sets it (no memset: one per cohort) */
    c->occ.owner = k;
    c->occ.u = k->u;
    c->occ.by = k->by;
    c->occ.fit = k->fit;
    c->occ.resident = 0;
    c->occ.n_cls = 0; /* its classes' entries: up to n_cls */
    c->hw = hw;
    c->k = k;
    c->next = NULL;
    c->act = 0;
    c->per_wave = c->total = 0;
    c->waves = 0;
    c->end_waves = c->fixed = c->base = c->work = 0;
    return c;
}

/* Starts cohort c's activity with work left (ns at speed 1). */
static int cohort_run(colo_hw_t *hw, struct colo_hw_cohort *c, double left)
{
    colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
    int n = cohort_elems(hw, c, e);
    c->work = left > 1e-3 ? left : 1e-3;
    c->k->acts++;
    int rc = colo_fluid_start(&hw->fl, c->work, 1.0, 1.0, e, n, on_cohort_done, c, 0, &c->act);
    if (!rc && c->k->weight != 1.0) rc = colo_fluid_set_weight(&hw->fl, c->act, c->k->weight);
    return rc;
}

/* Work done so far of cohort c, from its first block, ns at speed 1. */
static double cohort_done_work(const colo_hw_t *hw, const struct colo_hw_cohort *c)
{
    double r = colo_fluid_remaining(&hw->fl, c->act);
    return c->base + c->work * (1 - (r > 0 ? r : 0));
}

/* Cohort c ends at work `end` (from its first block) instead: its activity starts again with
 * what is left, its resources as they are now. */
static void cohort_recut(colo_hw_t *hw, struct colo_hw_cohort *c, double end)
{
    double done = cohort_done_work(hw, c), r;
    colo_hw__note(hw, colo_fluid_stop(&hw->fl, c->act, &r));
    c->base = done;
    colo_hw__note(hw, cohort_run(hw, c, end - done));
}

/* Takes cohort c off the SMs and off its kernel, into the free list. */
static void cohort_leave(colo_hw_t *hw, struct colo_hw_cohort *c, bool heard)
{
    colo_hw_kernel_t *k = c->k;
    unplace(hw, c);
    struct colo_hw_cohort **p = &k->cohorts;
    while (*p != c)
        p = &(*p)->next;
    *p = c->next;
    if (--k->n_cohorts == 0) { /* no blocks resident: off its L2 group */
        struct colo_hw_l2 *g = &hw->l2[k->place.l2_group];
        l2_remove(g, k);
        l2_stale(hw, g);
    }
    if (!heard) { /* it ended at this instant: its completion, still to come, frees it */
        c->k = NULL;
        return;
    }
    cohort_free(hw, c);
}

/* Whether a kernel other than k waits for blocks on SMs k may use. */
static bool others_wait(const colo_hw_t *hw, const colo_hw_kernel_t *k)
{
    for (const colo_hw_kernel_t *q = hw->queue; q; q = q->qnext)
        if (q != k && q->pending > 0 && (q->cls_mask & k->cls_mask)) return true;
    return false;
}

/* Dispatches what fits of k's pending blocks on the SMs of mask as one cohort. When it gets a
 * whole wave and nothing else waits for its SMs, the cohort runs all its remaining waves. */
static void dispatch_kernel(colo_hw_t *hw, colo_hw_kernel_t *k, uint64_t mask)
{
    long long want = k->pending < k->wave_blocks ? k->pending : k->wave_blocks;
    /* Slots that free up just after its latest wave of blocks began join that wave: the new
     * blocks run their whole block time and the wave's others wait for them (at most an eighth
     * of a block more), so a kernel that picks up slots in pieces at nearly the same moment
     * keeps one cohort, and no kernel ends sooner than its blocks allow */
    struct colo_hw_cohort *c = k->cohorts;
    /* (not one that ended at this instant, its completion not yet heard) */
    if (c && c->waves == 1 && k->tau > 0 && colo_fluid_speed(&hw->fl, c->act) >= 0) {
        double done = cohort_done_work(hw, c), end = cohort_target(c);
        if (end - done >= 0.875 * k->tau) {
            long long got = place(hw, c, want, mask);
            if (got == 0) return;
            double merged = end > done + k->tau ? end : done + k->tau;
            c->end_waves = (merged - c->fixed) / k->tau;
            c->per_wave = c->total = c->occ.resident;
            k->pending -= got;
            cohort_recut(hw, c, merged);
            return;
        }
    }
    c = cohort_take(hw, k);
    if (!c) {
        colo_hw__note(hw, COLO_ENOMEM);
        return;
    }
    long long got = place(hw, c, want, mask);
    if (got == 0) {
        cohort_free(hw, c);
        return;
    }
    c->per_wave = got;
    c->total = got;
    c->waves = 1;
    c->end_waves = 1;
    /* With a whole wave's slots it cannot use more, and the kernels that wait behind it get
     * none of its SMs before its last block is out: its full waves run as one cohort, and so
     * does its last, partial one when nothing waits for the slots that wave leaves free. */
    if (got == k->wave_blocks && k->pending > got) {
        long long full = k->pending / got, tail = k->pending - full * got;
        if (tail > 0 && others_wait(hw, k)) {
            c->total = full * got;
            c->waves = (int)full;
        } else {
            c->total = k->pending;
            c->waves = (int)(full + (tail > 0));
        }
        c->end_waves = c->waves;
    } else if (k->pending > got) {
        /* Slots come back to it as its own blocks retire: this cohort runs, back to back, the
         * waves the kernel would still run if it held its whole wave; the rest stay pending,
         * for the slots other kernels free meanwhile, and the kernels behind it keep waiting
         * for them. So a kernel that shares the SMs costs a few runs of waves, not one event
         * per wave, and no cohort takes more waves than the whole kernel would need. */
        long long more = (k->pending - got) / k->wave_blocks;
        if (more > 0) {
            c->total = got * (1 + more);
            c->waves = (int)(1 + more);
            c->end_waves = c->waves;
        }
    }
    /* blocks dispatched later do not start before the kernel's dispatch and floor are over */
    if (k->fixed_left > 0) {
        c->fixed = k->fixed_left;
        k->fixed_end = hw->eq->now + colo_time_from_ns(k->fixed_left);
        k->fixed_left = 0;
    } else {
        c->fixed = k->fixed_end > hw->eq->now ? (double)(k->fixed_end - hw->eq->now) : 0;
    }
    k->pending -= c->total;
    c->next = k->cohorts;
    k->cohorts = c;
    if (k->n_cohorts++ == 0) { /* its first resident blocks: it shares its L2 group now */
        struct colo_hw_l2 *g = &hw->l2[k->place.l2_group];
        if (colo_grow((void **)&g->running, &g->cap_running, g->n_running + 1, sizeof k))
            colo_hw__note(hw, COLO_ENOMEM);
        else
            g->running[g->n_running++] = k;
        l2_stale(hw, g);
    }
    colo_hw__note(hw, cohort_run(hw, c, cohort_target(c)));
}

/* Hands free slots to the queue's kernels in order. A kernel left with blocks to dispatch
 * holds its SMs for those behind it: later kernels get only the SMs of other sets (the block
 * scheduler serves a kernel's blocks only once those of the kernels before it are out). */
static void dispatch(colo_hw_t *hw)
{
    uint64_t blocked = 0;
    colo_hw_kernel_t *next;
    for (colo_hw_kernel_t *k = hw->queue; k; k = next) {
        next = k->qnext;
        uint64_t m = k->cls_mask & ~blocked;
        /* (a kernel whose runs of waves fill its wave has no slot to take: nothing fits) */
        if (m && k->pending > 0) dispatch_kernel(hw, k, m);
        if (k->pending == 0) queue_remove(hw, k);
        /* a kernel at its SM cap can take no other SM: it holds back no other kernel's blocks */
        else if (!k->capped || colo_slots_owner_sms(&hw->slots, k) < k->S)
            blocked |= k->cls_mask;
    }
}

/* Where kernel k, which must wait, cuts cohort c of another kernel: the waves c keeps (its
 * waves: no cut), and whether it is in its last, partial wave with slots to free (*shrink). */
struct cut {
    const colo_hw_t *hw;
    const colo_hw_kernel_t *k;
};

static long long cut_at(const colo_hw_t *hw, const colo_hw_kernel_t *k,
                        const struct colo_hw_cohort *c, bool *shrink)
{
    const colo_hw_kernel_t *o = c->k;
    *shrink = false;
    if (c->waves < 2 || o == k || !(o->tau > 0) ||
        colo_fluid_speed(&hw->fl, c->act) < 0) /* it ended at this instant */
        return c->waves;
    double done = cohort_done_work(hw, c);
    long long cur = (long long)floor((done - c->fixed) / o->tau);
    if (cur < 0) cur = 0;
    if (cur > c->waves - 1) cur = c->waves - 1;
    long long tail = c->total - (long long)(c->waves - 1) * c->per_wave;
    long long keep = k->place.priority > o->place.priority ? cur + 1
                     : tail < c->per_wave                  ? c->waves - 1
                                                           : c->waves;
    if (keep < cur + 1) keep = cur + 1;
    *shrink = keep == c->waves && cur == c->waves - 1 && tail < c->occ.resident;
    return keep;
}

static bool cuttable(const colo_slots_occ_t *occ, void *arg)
{
    const struct cut *x = arg;
    const struct colo_hw_cohort *c = cohort_of(occ);
    bool shrink;
    return cut_at(x->hw, x->k, c, &shrink) < c->waves || shrink;
}

/* A kernel k that must wait cuts the runs of several waves on its SMs where it may start: at
 * the end of the current wave if it has the higher priority, else where their last, partial
 * wave begins (it waits for every full wave before it anyway); a run already in its partial
 * wave frees the slots that wave does not use at once. */
static void split_runs(colo_hw_t *hw, const colo_hw_kernel_t *k)
{
    struct cut x = {hw, k};
    colo_slots_occ_t *occ;
    while ((occ = colo_slots_find(&hw->slots, k->cls_mask, cuttable, &x))) {
        struct colo_hw_cohort *c = cohort_of(occ);
        colo_hw_kernel_t *o = c->k;
        bool shrink;
        long long keep = cut_at(hw, k, c, &shrink);
        if (keep < c->waves) { /* its later waves go back to the queue */
            long long kept = keep * c->per_wave;
            o->pending += c->total - kept;
            c->total = kept;
            c->waves = (int)keep;
            c->end_waves = (double)keep;
            queue_insert(hw, o);
            cohort_recut(hw, c, c->fixed + (double)keep * o->tau);
            continue;
        }
        /* in its partial wave: only the blocks of that wave stay */
        long long tail = c->total - (long long)(c->waves - 1) * c->per_wave;
        unplace(hw, c);
        place(hw, c, tail, o->cls_mask);
        colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
        int n = cohort_elems(hw, c, e);
        colo_hw__note(hw, colo_fluid_update(&hw->fl, c->act, c->work, e, n));
    }
}

/* A running kernel's times and its cohorts' work and use from its current DRAM traffic. */
static void kernel_update(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    kernel_times(k);
    for (struct colo_hw_cohort *c = k->cohorts; c; c = c->next) {
        colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
        double coef[COLO_FLUID_MAX_ELEMS];
        int n = cohort_elems(hw, c, e);
        for (int i = 0; i < n; i++)
            coef[i] = e[i].coef;
        double left = cohort_target(c) - c->base;
        c->work = left > 1e-3 ? left : 1e-3;
        int rc = colo_fluid_update_coefs(&hw->fl, c->act, c->work, coef, n);
        /* COLO_ENOENT: it finished in the same instant and its own completion is next */
        if (rc != COLO_ENOENT) colo_hw__note(hw, rc);
    }
}

/* L2 capacity interference: kernels sharing an L2 group whose working sets together exceed it
 * each keep a proportional share; the hits they lose become DRAM traffic. Updates the speeds
 * of the kernels whose traffic changed. Run before the solve (presolve) for the groups whose
 * kernels changed, once for all the starts and ends of an instant: the shares depend only on
 * the kernels running when the rates are solved. */
static void share_l2(colo_hw_t *hw, struct colo_hw_l2 *g)
{
    double total = 0;
    for (size_t i = 0; i < g->n_running; i++)
        total += g->running[i]->w.working_set;
    /* within capacity now and before: every kernel keeps all its hits, as each began */
    bool over = total > g->bytes;
    if (!over && !g->over) return;
    g->over = over;
    for (size_t i = 0; i < g->n_running; i++) {
        colo_hw_kernel_t *k = g->running[i];
        double ws = k->w.working_set, kept = 1;
        if (total > g->bytes && ws > 0) {
            double share = g->bytes * ws / total, wanted = ws < g->bytes ? ws : g->bytes;
            kept = share < wanted ? share / wanted : 1;
        }
        double hits = k->w.l2_bytes - k->w.dram_bytes;
        double d = k->w.dram_bytes + (hits > 0 ? hits : 0) * (1 - kept);
        if (d == k->dram_eff) continue;
        k->dram_eff = d;
        kernel_update(hw, k);
    }
}

static void l2_stale(colo_hw_t *hw, struct colo_hw_l2 *g)
{
    g->stale = true;
    hw->l2_stale = true;
}

void colo_hw__presolve(void *obj)
{
    colo_hw_t *hw = obj;
    if (!hw->l2_stale) return;
    hw->l2_stale = false;
    for (size_t i = 0; i < hw->n_l2; i++)
        if (hw->l2[i].stale) {
            hw->l2[i].stale = false;
            share_l2(hw, &hw->l2[i]);
        }
}

static void l2_remove(struct colo_hw_l2 *g, colo_hw_kernel_t *k)
{
    for (size_t i = 0; i < g->n_running; i++)
        if (g->running[i] == k) {
            memmove(&g->running[i], &g->running[i + 1], (g->n_running - i - 1) * sizeof k);
            g->n_running--;
            return;
        }
}

/* A kernel off the GPU (finished or stopped, its cohorts gone and with them its place in its
 * L2 group): out of the queue, out of the live list, its record back in the pool. */
static void kernel_leave(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    queue_remove(hw, k);
    colo_hw__live_remove(hw, &k->link);
    colo_hw__pool_put(&hw->kfree, &k->link);
}

/* A cohort's blocks have run: its slots go to the queue; its kernel ends with its last. */
static void on_cohort_done(void *obj, int64_t arg)
{
    (void)arg;
    struct colo_hw_cohort *c = obj;
    colo_hw_kernel_t *k = c->k;
    if (!k) { /* its kernel was stopped in the instant it ended: only the record is left */
        cohort_free(c->hw, c);
        return;
    }
    colo_hw_t *hw = k->hw;
    colo_fluid_begin(&hw->fl);
    cohort_leave(hw, c, true);
    bool finished = k->pending == 0 && k->n_cohorts == 0;
    bool whole = k->acts == 1; /* one activity, from its start */
    colo_fluid_done_fn done = k->done;
    void *o = k->obj;
    int64_t a = k->arg;
    if (finished) kernel_leave(hw, k);
    dispatch(hw);
    colo_hw__note(hw, colo_fluid_end(&hw->fl));
    if (finished && done) {
        hw->done_whole = whole;
        done(o, a);
        hw->done_whole = false;
    }
}

const struct colo_fluid_use *colo_hw_done_solo(const colo_hw_t *hw)
{
    return hw->done_whole ? colo_fluid_done_solo(&hw->fl) : NULL;
}

int colo_hw_kernel_start(colo_hw_t *hw, const colo_kernel_work_t *w, colo_hw_place_t place,
                         double remaining, colo_fluid_done_fn done, void *obj, int64_t arg,
                         colo_hw_kernel_t **out)
{
    if (place.sm_set >= hw->sm.n_sets || place.l2_group >= hw->n_l2 ||
        place.channel_set >= hw->mem.n_sets || !(remaining > 0))
        return COLO_EINVAL;
    int rc = hw->finalized ? 0 : colo_hw__finalize(hw);
    if (rc) return rc;
    if (hw->sm.sets[place.sm_set].n_parts < 0 || hw->mem.sets[place.channel_set].n_parts < 0)
        return COLO_EUNSUPPORTED; /* spans more than COLO_HW_MAX_PARTS classes */
    struct colo_hw_l2 *g = &hw->l2[place.l2_group];
    colo_hw_kernel_t *k = colo_hw__pool_take(&hw->kfree, sizeof(colo_hw_kernel_t));
    if (!k || colo_grow((void **)&g->running, &g->cap_running, g->n_running + 1, sizeof k)) {
        if (k) colo_hw__pool_put(&hw->kfree, &k->link);
        return COLO_ENOMEM;
    }
    /* every field set here or in kernel_place and kernel_times (no memset: a kernel is short) */
    k->qprev = k->qnext = NULL;
    k->queued = false;
    k->n_cohorts = 0;
    k->acts = 0;
    k->cohorts = NULL;
    k->hw = hw;
    k->w = *w;
    k->place = place;
    k->dram_eff = w->dram_bytes;
    k->done = done;
    k->obj = obj;
    k->arg = arg;
    k->weight = 1.0;
    k->r0 = remaining < 1 ? remaining : 1;
    long long blocks = w->blocks > 0 ? (long long)w->blocks : 1;
    k->B = k->r0 < 1 ? (long long)ceil(k->r0 * (double)blocks) : blocks;
    if (k->B < 1) k->B = 1;
    k->pending = k->B;
    k->seq = ++hw->seq;
    kernel_place(hw, k);
    kernel_times(k);
    k->fixed_left = w->fixed_ns * k->r0;
    k->fixed_end = 0;
    colo_hw__live_add(hw, &k->link);
    colo_fluid_begin(&hw->fl);
    if (!hw->queue) /* nothing waits: it takes what is free */
        dispatch_kernel(hw, k, k->cls_mask);
    else {
        queue_insert(hw, k);
        dispatch(hw);
    }
    if (k->pending > 0) { /* it waits: the runs of several waves on its SMs are cut */
        queue_insert(hw, k);
        split_runs(hw, k);
        dispatch(hw);
    }
    rc = colo_fluid_end(&hw->fl);
    if (out) *out = k;
    return rc ? rc : hw->failed;
}

int colo_hw_kernel_stop(colo_hw_t *hw, colo_hw_kernel_t *k, double *remaining)
{
    colo_fluid_begin(&hw->fl);
    double left = (double)k->pending;
    int rc = 0;
    while (k->cohorts) {
        struct colo_hw_cohort *c = k->cohorts;
        if (colo_fluid_speed(&hw->fl, c->act) < 0) { /* it ended at this instant */
            cohort_leave(hw, c, false);
            continue;
        }
        double target = cohort_target(c), done = cohort_done_work(hw, c), r;
        double frac = target > 0 ? (target - done) / target : 0;
        left += (double)c->total * (frac < 0 ? 0 : frac > 1 ? 1 : frac);
        int rs = colo_fluid_stop(&hw->fl, c->act, &r);
        if (rs && !rc) rc = rs;
        cohort_leave(hw, c, true);
    }
    double rem = k->r0 * left / (double)k->B;
    if (remaining) *remaining = rem > 1e-12 ? (rem < 1 ? rem : 1) : 1e-12;
    kernel_leave(hw, k);
    dispatch(hw);
    int rc2 = colo_fluid_end(&hw->fl);
    return rc ? rc : rc2 ? rc2 : hw->failed;
}

int colo_hw_kernel_weight(colo_hw_t *hw, colo_hw_kernel_t *k, double weight)
{
    k->weight = weight;
    int rc = 0;
    for (struct colo_hw_cohort *c = k->cohorts; c && !rc; c = c->next)
        rc = colo_fluid_set_weight(&hw->fl, c->act, weight);
    return rc;
}

double colo_hw_kernel_speed(const colo_hw_t *hw, const colo_hw_kernel_t *k)
{
    return k->cohorts ? colo_fluid_speed(&hw->fl, k->cohorts->act) : 0;
}

double colo_hw_kernel_dram_bytes(const colo_hw_kernel_t *k)
{
    return k->dram_eff;
}

long long colo_hw_kernel_resident(const colo_hw_kernel_t *k)
{
    long long n = 0;
    for (const struct colo_hw_cohort *c = k->cohorts; c; c = c->next)
        n += c->occ.resident;
    return n;
}

long long colo_hw_kernel_pending(const colo_hw_kernel_t *k)
{
    return k->pending;
}
