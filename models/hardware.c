/* hardware.c: a GPU's resources: the block dispatcher that hands SM slots to kernels' blocks,
 * the fluid solver's resources, kernels with L2 capacity interference, and copies with copy
 * engines and per-transfer latency. */
#include "hardware.h"
#include "alloc.h"
#include "errors.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Kernels and copies in flight are on the hardware's live list, so colo_hw_fini can free those
 * a run left behind when it stopped. */
struct colo_hw_live {
    struct colo_hw_live *prev, *next;
};

struct colo_hw_copy {
    struct colo_hw_live link; /* first member */
    colo_hw_t *hw;
    colo_copy_dir_t dir;
    long long bytes;
    uint32_t ce;
    colo_fluid_done_fn done;
    void *obj;
    int64_t arg;
    colo_hw_copy_opts_t o;
    colo_activity_id_t act; /* moving bytes: its activity (0 before) */
};

static void live_add(colo_hw_t *hw, struct colo_hw_live *l)
{
    l->prev = NULL;
    l->next = hw->live;
    if (hw->live) hw->live->prev = l;
    hw->live = l;
}

static void live_remove(colo_hw_t *hw, struct colo_hw_live *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        hw->live = l->next;
    if (l->next) l->next->prev = l->prev;
}

static void presolve(void *obj);

static void note(colo_hw_t *hw, int rc)
{
    if (rc && !hw->failed) hw->failed = rc;
}

int colo_hw_init(colo_hw_t *hw, const colo_gpu_t *gpu, colo_eq_t *eq)
{
    memset(hw, 0, sizeof *hw);
    hw->gpu = gpu;
    hw->eq = eq;
    colo_fluid_init(&hw->fl, eq);
    colo_fluid_on_presolve(&hw->fl, presolve, hw);
    hw->sm.n_units = gpu->sm.count < COLO_HW_MAX_UNITS ? gpu->sm.count : COLO_HW_MAX_UNITS;
    hw->sm.unit_capacity = 1;
    hw->mem.n_units =
        gpu->memory.channels < COLO_HW_MAX_UNITS ? gpu->memory.channels : COLO_HW_MAX_UNITS;
    hw->mem.unit_capacity = colo_gpu_dram_rate(gpu) / hw->mem.n_units;
    int all[COLO_HW_MAX_UNITS];
    for (int u = 0; u < COLO_HW_MAX_UNITS; u++)
        all[u] = u;
    uint32_t idx;
    int rc = colo_hw_add_sm_set(hw, all, hw->sm.n_units, &idx);
    if (!rc) rc = colo_hw_add_l2_group(hw, colo_gpu_l2_capacity(gpu), colo_gpu_l2_rate(gpu), &idx);
    if (!rc) rc = colo_hw_add_channel_set(hw, all, hw->mem.n_units, &idx);
    if (!rc) rc = colo_fluid_add_resource(&hw->fl, gpu->pcie.h2d_gbps, &hw->pcie[COLO_COPY_H2D]);
    if (!rc) rc = colo_fluid_add_resource(&hw->fl, gpu->pcie.d2h_gbps, &hw->pcie[COLO_COPY_D2H]);
    if (!rc) rc = colo_hw_add_ce_domain(hw, gpu->pcie.copy_engines, &idx);
    if (rc) colo_hw_fini(hw);
    return rc;
}

void colo_hw_fini(colo_hw_t *hw)
{
    while (hw->live) { /* in flight when the run stopped; queued copies are among them */
        struct colo_hw_live *l = hw->live;
        hw->live = l->next;
        colo_free(l);
    }
    struct colo_hw_live *pools[] = {hw->kfree, hw->cfree};
    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++)
        while (pools[i]) {
            struct colo_hw_live *l = pools[i];
            pools[i] = l->next;
            colo_free(l);
        }
    for (size_t i = 0; i < hw->n_l2; i++)
        colo_free(hw->l2[i].running);
    for (size_t i = 0; i < hw->n_ce; i++)
        colo_free(hw->ce[i].queue);
    for (size_t i = 0; i < hw->n_co_all; i++)
        colo_free(hw->co_all[i]);
    colo_free(hw->co_all);
    colo_free(hw->groups);
    colo_free(hw->sm.sets);
    colo_free(hw->sm.classes);
    colo_free(hw->mem.sets);
    colo_free(hw->mem.classes);
    colo_free(hw->moving);
    colo_free(hw->l2);
    colo_free(hw->ce);
    colo_fluid_fini(&hw->fl);
    memset(hw, 0, sizeof *hw);
}

static int add_set(colo_hw_t *hw, colo_hw_family_t *f, const int *units, int n, uint32_t *index)
{
    if (hw->finalized || n < 1 || f->n_sets >= 64) return COLO_EINVAL;
    if (colo_grow((void **)&f->sets, &f->cap_sets, f->n_sets + 1, sizeof *f->sets))
        return COLO_ENOMEM;
    struct colo_hw_set *s = &f->sets[f->n_sets];
    memset(s, 0, sizeof *s);
    for (int i = 0; i < n; i++) {
        if (units[i] < 0 || units[i] >= f->n_units) return COLO_EINVAL;
        if (!s->member[units[i]]) s->n_units++;
        s->member[units[i]] = 1;
    }
    *index = (uint32_t)f->n_sets++;
    return 0;
}

int colo_hw_add_sm_set(colo_hw_t *hw, const int *sms, int n, uint32_t *index)
{
    return add_set(hw, &hw->sm, sms, n, index);
}

int colo_hw_add_channel_set(colo_hw_t *hw, const int *channels, int n, uint32_t *index)
{
    return add_set(hw, &hw->mem, channels, n, index);
}

int colo_hw_set_sms(const colo_hw_t *hw, uint32_t i)
{
    return i < hw->sm.n_sets ? hw->sm.sets[i].n_units : 0;
}

int colo_hw_add_l2_group(colo_hw_t *hw, double bytes, double bandwidth, uint32_t *index)
{
    if (colo_grow((void **)&hw->l2, &hw->cap_l2, hw->n_l2 + 1, sizeof *hw->l2)) return COLO_ENOMEM;
    struct colo_hw_l2 *g = &hw->l2[hw->n_l2];
    memset(g, 0, sizeof *g);
    int rc = colo_fluid_add_resource(&hw->fl, bandwidth, &g->res);
    if (rc) return rc;
    g->bytes = bytes;
    *index = (uint32_t)hw->n_l2++;
    return 0;
}

int colo_hw_add_ce_domain(colo_hw_t *hw, int engines, uint32_t *index)
{
    if (engines < 1) return COLO_EINVAL;
    if (colo_grow((void **)&hw->ce, &hw->cap_ce, hw->n_ce + 1, sizeof *hw->ce)) return COLO_ENOMEM;
    memset(&hw->ce[hw->n_ce], 0, sizeof hw->ce[hw->n_ce]);
    hw->ce[hw->n_ce].engines = engines;
    *index = (uint32_t)hw->n_ce++;
    return 0;
}

/* Splits a family's units into classes of equal membership over all its sets and gives each
 * class a solver resource. O(units x (sets + classes)). */
static int build_classes(colo_hw_t *hw, colo_hw_family_t *f)
{
    uint64_t sig[COLO_HW_MAX_UNITS];
    int cls_of[COLO_HW_MAX_UNITS];
    for (int u = 0; u < f->n_units; u++) {
        sig[u] = 0;
        for (size_t s = 0; s < f->n_sets; s++)
            if (f->sets[s].member[u]) sig[u] |= UINT64_C(1) << s;
        cls_of[u] = -1;
        if (!sig[u]) continue;
        for (int d = 0; d < u; d++)
            if (sig[d] == sig[u]) {
                cls_of[u] = cls_of[d];
                break;
            }
        if (cls_of[u] >= 0) {
            f->classes[cls_of[u]].n_units++;
            continue;
        }
        if (colo_grow((void **)&f->classes, &f->cap_classes, f->n_classes + 1, sizeof *f->classes))
            return COLO_ENOMEM;
        cls_of[u] = (int)f->n_classes;
        f->classes[f->n_classes].n_units = 1;
        f->n_classes++;
    }
    for (size_t k = 0; k < f->n_classes; k++) {
        int rc = colo_fluid_add_resource(&hw->fl, f->classes[k].n_units * f->unit_capacity,
                                         &f->classes[k].res);
        if (rc) return rc;
    }
    for (size_t s = 0; s < f->n_sets; s++) {
        struct colo_hw_set *set = &f->sets[s];
        for (size_t k = 0; k < f->n_classes; k++) {
            int u = 0;
            while (u < f->n_units && cls_of[u] != (int)k)
                u++;
            if (u == f->n_units || !set->member[u]) continue;
            if (set->n_parts < 0) continue;
            if (set->n_parts == COLO_HW_MAX_PARTS) {
                /* Too many classes for a kernel to spread over: only an error if one runs on
                 * it (the whole GPU's set when eight or more Green Contexts split it). */
                set->n_parts = -1;
                continue;
            }
            set->parts[set->n_parts].cls = (uint32_t)k;
            set->parts[set->n_parts].share = (double)f->classes[k].n_units / set->n_units;
            set->n_parts++;
        }
    }
    return 0;
}

static int finalize(colo_hw_t *hw)
{
    int rc = build_classes(hw, &hw->sm);
    if (!rc) rc = build_classes(hw, &hw->mem);
    if (rc) return rc;
    /* the dispatcher's masks of SM classes are 64 bits; a group per SM at most */
    if (hw->sm.n_classes > 64) return COLO_EUNSUPPORTED;
    int cap = hw->sm.n_units + 1;
    hw->groups = colo_calloc((size_t)cap, sizeof *hw->groups);
    if (!hw->groups) return COLO_ENOMEM;
    for (int i = 0; i < cap; i++) /* the free list, then one group per class */
        hw->groups[i].next = i + 1 < cap ? i + 1 : -1;
    hw->g_free = 0;
    hw->g_head = -1;
    for (size_t k = hw->sm.n_classes; k-- > 0;) {
        int j = hw->g_free;
        hw->g_free = hw->groups[j].next;
        hw->groups[j].cls = (uint32_t)k;
        hw->groups[j].n = hw->sm.classes[k].n_units;
        hw->groups[j].next = hw->g_head;
        hw->g_head = j;
        hw->n_groups++;
    }
    hw->finalized = true;
    return 0;
}

/* ---- kernels: blocks on SMs ---- */

/* A cohort: blocks of one kernel dispatched at one instant onto free slots, which run to
 * completion and end together: one fluid activity. When nothing waits for its SMs, a cohort
 * stands for several waves of its kernel run back to back on the same slots (waves > 1), so a
 * kernel alone is one activity, as cheap as a kernel was before blocks were modelled; a kernel
 * that arrives and must wait cuts it at the wave boundary where it may start (split). */
struct colo_hw_cohort {
    colo_hw_kernel_t *k;
    struct colo_hw_cohort *next; /* the kernel's cohorts; the free list */
    colo_activity_id_t act;
    long long per_wave; /* blocks of each of its waves */
    long long resident; /* blocks on SMs now (fewer than per_wave in a last, partial wave) */
    long long total;    /* blocks it stands for, over its waves */
    int waves;
    double end_waves; /* it ends at fixed + end_waves x tau of work (waves; less when pieces
                         dispatched apart were merged into it) */
    int sms;      /* SMs holding its blocks */
    int new_sms;  /* of which none held its kernel's blocks when it came */
    double fixed; /* the kernel's fixed part (dispatch, latency floor), carried by its first */
    double base;  /* its work done before its current activity began (it was cut), ns */
    double work;  /* its current activity's work at speed 1, ns */
    int n_cls;
    struct {
        uint32_t cls;
        int sms;
    } cls[COLO_HW_MAX_PARTS];
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
    double r0;   /* the fraction of its work this run does (1; less when resumed) */
    double u[4];  /* per block: share of an SM's warps, block slots, registers, shared memory */
    double by[4]; /* 1 / u: blocks each resource allows on an empty SM (0: no limit) */
    int fit;     /* its blocks on an empty SM (occupancy) */
    int S;
    bool capped;          /* S is below its set's SMs: SMs it newly takes are counted */
    long long B;          /* blocks of this run */
    long long wave_blocks; /* on S empty SMs: min(B, fit x S) */
    long long pending;    /* not yet dispatched */
    int waves;            /* ceil(B / wave_blocks) */
    double fixed_left;    /* fixed part not yet given to a cohort */
    double weight;
    uint64_t seq, cls_mask;
    colo_hw_kernel_t *qprev, *qnext;
    bool queued;
    int lazy;      /* cohorts of several waves running: its pending blocks come after them */
    int n_cohorts; /* running */
    int sms_held;  /* SMs its cohorts took that held none of its blocks (an MPS cap bounds it) */
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
    k->waves = (int)((k->B + k->wave_blocks - 1) / k->wave_blocks);
}

/* Its times at its current DRAM traffic. */
static void kernel_times(colo_hw_kernel_t *k)
{
    double t_mem = k->dram_eff / k->rate;
    k->body = k->t_comp > t_mem ? k->t_comp : t_mem;
    k->W = k->w.fixed_ns + k->body;
    if (k->W < 1e-3) k->W = 1e-3;
    k->tau = k->body * k->r0 / k->waves;
}

/* The work a cohort stands for from its first block to its end, ns at speed 1: a whole kernel
 * run alone is exactly the kernel's time alone. */
static double cohort_target(const struct colo_hw_cohort *c)
{
    const colo_hw_kernel_t *k = c->k;
    double t = c->total == k->B && c->waves == k->waves ? c->fixed + k->body * k->r0
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
    double phi = (double)c->resident / (double)k->wave_blocks;
    double l2 = k->w.l2_bytes > k->dram_eff ? k->w.l2_bytes : k->dram_eff;
    int n = 0;
    for (int i = 0; i < c->n_cls; i++)
        e[n++] = (colo_fluid_elem_t){hw->sm.classes[c->cls[i].cls].res,
                                     c->cls[i].sms * k->t_comp / k->W};
    e[n++] = (colo_fluid_elem_t){hw->l2[k->place.l2_group].res, phi * l2 / k->W};
    for (int p = 0; p < chs->n_parts; p++)
        e[n++] = (colo_fluid_elem_t){hw->mem.classes[chs->parts[p].cls].res,
                                     phi * k->dram_eff * chs->parts[p].share / k->W};
    return n;
}

/* -- SM groups -- */

/* Blocks of k one SM of group g can take besides what it holds. */
static int group_fit_calc(const colo_hw_group_t *g, const colo_hw_kernel_t *k)
{
    if (!g->n_res) return k->fit;
    if (g->n_res == COLO_HW_GROUP_RES) return 0;
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
static int group_fit(colo_hw_t *hw, colo_hw_group_t *g, const colo_hw_kernel_t *k)
{
    if (g->fit_stamp != hw->stamp) {
        g->fit = group_fit_calc(g, k);
        g->fit_stamp = hw->stamp;
    }
    return g->fit;
}

/* Its SMs' use, worked out again from its residents (no drift from adding and removing). */
static void group_use(colo_hw_group_t *g)
{
    for (int x = 0; x < 4; x++)
        g->use[x] = 0;
    for (int r = 0; r < g->n_res; r++)
        for (int x = 0; x < 4; x++)
            g->use[x] += g->res[r].per_sm * g->res[r].c->k->u[x];
}

/* Whether group g holds blocks of kernel k. */
static bool group_holds(const colo_hw_group_t *g, const colo_hw_kernel_t *k)
{
    for (int r = 0; r < g->n_res; r++)
        if (g->res[r].c->k == k) return true;
    return false;
}

static int group_has(const colo_hw_group_t *g, const struct colo_hw_cohort *c)
{
    for (int r = 0; r < g->n_res; r++)
        if (g->res[r].c == c) return r;
    return -1;
}

/* Adds per blocks of cohort c on each SM of g; true when c held none there before. */
static bool group_add(colo_hw_group_t *g, struct colo_hw_cohort *c, int per)
{
    int r = g->n_res ? group_has(g, c) : -1;
    if (r >= 0) {
        g->res[r].per_sm += per;
    } else {
        g->res[g->n_res].c = c;
        g->res[g->n_res].per_sm = per;
        g->n_res++;
    }
    for (int x = 0; x < 4; x++)
        g->use[x] += per * c->k->u[x];
    g->fit_stamp = 0;
    return r < 0;
}

/* Group i's first n SMs stay in it; the rest become a group of their own, next after it. */
static void group_split(colo_hw_t *hw, int i, int n)
{
    int j = hw->g_free;
    colo_hw_group_t *a = &hw->groups[i], *b = &hw->groups[j];
    hw->g_free = b->next;
    /* the header and the residents in use, not the whole record */
    memcpy(b, a, offsetof(colo_hw_group_t, res) + (size_t)a->n_res * sizeof a->res[0]);
    b->n -= n;
    hw->groups[i].n = n;
    hw->groups[i].next = j;
    hw->n_groups++;
}

/* Group i takes in the group after it (same class and residents). */
static void group_merge_next(colo_hw_t *hw, int i)
{
    int j = hw->groups[i].next;
    hw->groups[i].n += hw->groups[j].n;
    hw->groups[i].next = hw->groups[j].next;
    hw->groups[j].next = hw->g_free;
    hw->g_free = j;
    hw->n_groups--;
}

static bool same_residents(const colo_hw_group_t *a, const colo_hw_group_t *b)
{
    if (a->cls != b->cls || a->n_res != b->n_res) return false;
    if (!a->n_res) return true;
    for (int r = 0; r < a->n_res; r++) {
        int s = group_has(b, a->res[r].c);
        if (s < 0 || b->res[s].per_sm != a->res[r].per_sm) return false;
    }
    return true;
}

/* Cohort c now holds n more SMs of class cls. */
static void cohort_took(struct colo_hw_cohort *c, uint32_t cls, int n)
{
    c->sms += n;
    for (int j = 0; j < c->n_cls; j++)
        if (c->cls[j].cls == cls) {
            c->cls[j].sms += n;
            return;
        }
    if (c->n_cls == COLO_HW_MAX_PARTS) return; /* cannot be: a set spans at most that many */
    c->cls[c->n_cls].cls = cls;
    c->cls[c->n_cls].sms = n;
    c->n_cls++;
}

/* One pass of placing up to want blocks of cohort c on groups of the classes in mask (only
 * idle ones: idle), at most per_max on each SM, taking at most *room SMs it does not hold
 * yet. Returns the blocks placed. */
static long long place_pass(colo_hw_t *hw, struct colo_hw_cohort *c, long long want,
                            uint64_t mask, long long per_max, int *room, bool idle)
{
    colo_hw_kernel_t *k = c->k;
    long long placed = 0;
    for (int i = hw->g_head; i >= 0 && placed < want; i = hw->groups[i].next) {
        colo_hw_group_t *g = &hw->groups[i];
        if (!(mask >> g->cls & 1) || (idle && g->n_res)) continue;
        int fit = group_fit(hw, g, k);
        if (fit == 0) continue;
        /* under an SM cap, SMs that hold none of its blocks yet count against it */
        bool held = !k->capped || (g->n_res && group_holds(g, k));
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
            if (whole < n0) group_split(hw, i, (int)whole);
            if (group_add(&hw->groups[i], c, (int)per)) cohort_took(c, cls, (int)whole);
            placed += whole * per;
        }
        if (last < per) { /* one more SM, with the rest */
            if (whole > 0) i = hw->groups[i].next;
            if (hw->groups[i].n > 1) group_split(hw, i, 1);
            if (group_add(&hw->groups[i], c, (int)last)) cohort_took(c, cls, 1);
            placed += last;
        }
        if (!held) {
            *room -= (int)m;
            c->new_sms += (int)m;
        }
    }
    return placed;
}

/* Places up to want blocks of cohort c on free slots of the SMs of the classes in mask, within
 * its kernel's SM cap: spread evenly over idle SMs first, then over SMs with room, then filling
 * (the block scheduler spreads a grid over the SMs with the most free resources). Sets the
 * cohort's SMs and classes. Returns the blocks placed. O(groups x residents). */
static long long place(colo_hw_t *hw, struct colo_hw_cohort *c, long long want, uint64_t mask)
{
    colo_hw_kernel_t *k = c->k;
    int room = k->capped ? k->S - k->sms_held - c->new_sms : INT_MAX;
    hw->stamp++;
    if (!c->resident) {
        c->sms = c->new_sms = 0;
        c->n_cls = 0;
    }
    long long idle = 0, busy = 0;
    for (int i = hw->g_head; i >= 0; i = hw->groups[i].next) {
        const colo_hw_group_t *g = &hw->groups[i];
        if ((mask >> g->cls & 1) && !g->n_res) idle += g->n;
    }
    long long placed = 0;
    if (idle > 0 && room > 0) {
        long long n = idle < room ? idle : room;
        placed = place_pass(hw, c, want, mask, (want + n - 1) / n, &room, true);
    }
    if (placed < want) /* SMs that hold blocks and have room for some of its */
        for (int i = hw->g_head; i >= 0; i = hw->groups[i].next) {
            colo_hw_group_t *g = &hw->groups[i];
            if ((mask >> g->cls & 1) && g->n_res && group_fit(hw, g, k) > 0) busy += g->n;
        }
    if (placed < want && busy > 0) {
        long long n = busy < room ? busy : room, left = want - placed;
        if (n < 1) n = 1;
        placed += place_pass(hw, c, left, mask, (left + n - 1) / n, &room, false);
    }
    if (placed > 0 && placed < want)
        placed += place_pass(hw, c, want - placed, mask, LLONG_MAX, &room, false);
    c->resident += placed;
    return placed;
}

/* Takes cohort c's blocks off its SMs; groups left in the same state merge again. */
static void unplace(colo_hw_t *hw, struct colo_hw_cohort *c)
{
    /* a group splits into neighbours, and they come together again: each group it leaves is
     * merged with a neighbour in the same state */
    for (int i = hw->g_head, prev = -1; i >= 0; prev = i, i = hw->groups[i].next) {
        colo_hw_group_t *g = &hw->groups[i];
        int r = g->n_res ? group_has(g, c) : -1;
        if (r < 0) continue;
        memmove(&g->res[r], &g->res[r + 1], (size_t)(g->n_res - r - 1) * sizeof g->res[0]);
        g->n_res--;
        group_use(g);
        int j;
        while ((j = g->next) >= 0 && group_has(&hw->groups[j], c) < 0 &&
               same_residents(g, &hw->groups[j]))
            group_merge_next(hw, i);
        if (prev >= 0 && same_residents(&hw->groups[prev], g)) {
            group_merge_next(hw, prev);
            i = prev;
        }
    }
    c->sms = c->new_sms = 0;
    c->n_cls = 0;
    c->resident = 0;
}

int colo_hw_check_slots(const colo_hw_t *hw)
{
    if (!hw->finalized) return 0;
    int per_cls[COLO_HW_MAX_UNITS] = {0};
    for (int i = hw->g_head; i >= 0; i = hw->groups[i].next) {
        const colo_hw_group_t *g = &hw->groups[i];
        per_cls[g->cls] += g->n;
        double use[4] = {0, 0, 0, 0};
        for (int r = 0; r < g->n_res; r++)
            for (int x = 0; x < 4; x++)
                use[x] += g->res[r].per_sm * g->res[r].c->k->u[x];
        for (int x = 0; x < 4; x++)
            if (use[x] > 1 + 1e-6) {
                fprintf(stderr, "colo_hw_check_slots: %d SMs of class %u hold %.6f of resource %d\n",
                        g->n, g->cls, use[x], x);
                return COLO_ESTATE;
            }
    }
    for (size_t k = 0; k < hw->sm.n_classes; k++)
        if (per_cls[k] != hw->sm.classes[k].n_units) {
            fprintf(stderr, "colo_hw_check_slots: class %zu has %d SMs in groups, not %d\n", k,
                    per_cls[k], hw->sm.classes[k].n_units);
            return COLO_ESTATE;
        }
    for (const struct colo_hw_live *l = hw->live; l; l = l->next) {
        (void)l; /* copies are on the list too: kernels are checked through the groups */
    }
    return 0;
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
static void l2_stale(colo_hw_t *hw, struct colo_hw_l2 *g);
static void l2_remove(struct colo_hw_l2 *g, colo_hw_kernel_t *k);

static struct colo_hw_cohort *cohort_take(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    struct colo_hw_cohort *c = hw->cofree;
    if (c) {
        hw->cofree = c->next;
    } else {
        if (colo_grow((void **)&hw->co_all, &hw->cap_co_all, hw->n_co_all + 1, sizeof c))
            return NULL;
        if (!(c = colo_malloc(sizeof *c))) return NULL;
        hw->co_all[hw->n_co_all++] = c; /* every record, for colo_hw_fini */
    }
    memset(c, 0, sizeof *c);
    c->k = k;
    return c;
}

/* Starts cohort c's activity with work left (ns at speed 1). */
static int cohort_run(colo_hw_t *hw, struct colo_hw_cohort *c, double left)
{
    colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
    int n = cohort_elems(hw, c, e);
    c->work = left > 1e-3 ? left : 1e-3;
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
    note(hw, colo_fluid_stop(&hw->fl, c->act, &r));
    c->base = done;
    note(hw, cohort_run(hw, c, end - done));
}

/* Takes cohort c off the SMs and off its kernel, into the free list. */
static void cohort_leave(colo_hw_t *hw, struct colo_hw_cohort *c)
{
    colo_hw_kernel_t *k = c->k;
    k->sms_held -= c->new_sms;
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
    if (c->waves > 1) k->lazy--;
    c->next = hw->cofree;
    hw->cofree = c;
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
    /* Slots that free up while its latest wave of blocks runs join that wave: the blocks
     * dispatched apart end together, when their block time is used (its weighted mean end),
     * so a kernel that picks up slots piece by piece keeps one cohort a wave, not one a piece */
    struct colo_hw_cohort *c = k->cohorts;
    /* (not one that ended at this instant, its completion not yet heard) */
    if (c && c->waves == 1 && k->tau > 0 && colo_fluid_speed(&hw->fl, c->act) >= 0) {
        double done = cohort_done_work(hw, c), end = cohort_target(c);
        long long r = c->resident, sms = c->new_sms;
        long long got = place(hw, c, want, mask);
        if (got == 0) return;
        double left = end > done ? end - done : 0;
        double merged = done + ((double)r * left + (double)got * k->tau) / (double)(r + got);
        c->end_waves = (merged - c->fixed) / k->tau;
        c->per_wave = c->total = c->resident;
        k->pending -= got;
        k->sms_held += c->new_sms - (int)sms;
        hw->merges++;
            cohort_recut(hw, c, merged);
        return;
    }
    c = cohort_take(hw, k);
    if (!c) {
        note(hw, COLO_ENOMEM);
        return;
    }
    long long got = place(hw, c, want, mask);
    if (got == 0) {
        c->next = hw->cofree;
        hw->cofree = c;
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
        if (c->waves > 1) k->lazy++;
    } else if (k->pending > got) {
        /* Slots come back to it as its own blocks retire: this cohort runs, back to back, the
         * waves it would run if the kernel held its whole wave (its share of the remaining
         * blocks); the rest stay pending, for the slots other kernels free meanwhile, and the
         * kernels behind it keep waiting for them. So a kernel that shares the SMs costs a few
         * runs of waves, not one event per wave. */
        long long ext = 0; /* (not those that ended at this instant, not yet heard) */
        for (const struct colo_hw_cohort *o = k->cohorts; o; o = o->next)
            if (o->waves > 1 && o != c && colo_fluid_speed(&hw->fl, o->act) >= 0)
                ext += o->resident;
        long long share = k->wave_blocks - ext;
        long long more = share >= got ? (k->pending - got) / share : 0;
        if (more > 0) {
            c->total = got * (1 + more);
            c->waves = (int)(1 + more);
            c->end_waves = c->waves;
            k->lazy++;
        }
    }
    c->fixed = k->fixed_left;
    k->fixed_left = 0;
    k->pending -= c->total;
    k->sms_held += c->new_sms;
    c->next = k->cohorts;
    k->cohorts = c;
    if (k->n_cohorts++ == 0) { /* its first resident blocks: it shares its L2 group now */
        struct colo_hw_l2 *g = &hw->l2[k->place.l2_group];
        g->running[g->n_running++] = k; /* room made when it started */
        l2_stale(hw, g);
    }
    hw->cohorts++;
    note(hw, cohort_run(hw, c, cohort_target(c)));
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
        if (k->pending > 0)
            blocked |= k->cls_mask;
        else
            queue_remove(hw, k);
    }
}

/* A kernel k that must wait cuts the runs of several waves on its SMs where it may start: at
 * the end of the current wave if it has the higher priority, else where their last, partial
 * wave begins (it waits for every full wave before it anyway); a run already in its partial
 * wave frees the slots that wave does not use at once. */
static void split_runs(colo_hw_t *hw, const colo_hw_kernel_t *k)
{
    bool again = true;
    while (again) { /* a cut changes the groups: look again until nothing is left to cut */
        again = false;
        for (int i = hw->g_head; i >= 0 && !again; i = hw->groups[i].next) {
        const colo_hw_group_t *g = &hw->groups[i];
        if (!(k->cls_mask >> g->cls & 1)) continue;
        for (int r = 0; r < g->n_res && !again; r++) {
            struct colo_hw_cohort *c = g->res[r].c;
            colo_hw_kernel_t *o = c->k;
            if (c->waves < 2 || o == k || !(o->tau > 0) ||
                colo_fluid_speed(&hw->fl, c->act) < 0) /* it ended at this instant */
                continue;
            double done = cohort_done_work(hw, c);
            long long cur = (long long)floor((done - c->fixed) / o->tau);
            if (cur < 0) cur = 0;
            if (cur > c->waves - 1) cur = c->waves - 1;
            long long tail = c->total - (long long)(c->waves - 1) * c->per_wave;
            long long keep = k->place.priority > o->place.priority ? cur + 1
                             : tail < c->per_wave                  ? c->waves - 1
                                                                   : c->waves;
            if (keep < cur + 1) keep = cur + 1;
            if (keep < c->waves) { /* its later waves go back to the queue */
                long long kept = keep * c->per_wave;
                o->pending += c->total - kept;
                c->total = kept;
                c->waves = (int)keep;
                c->end_waves = (double)keep;
                if (c->waves == 1) o->lazy--;
                queue_insert(hw, o);
                cohort_recut(hw, c, c->fixed + (double)keep * o->tau);
                hw->splits++;
                again = true;
                continue;
            }
            if (cur == c->waves - 1 && tail < c->resident) { /* in its partial wave */
                o->sms_held -= c->new_sms;
                unplace(hw, c);
                place(hw, c, tail, o->cls_mask);
                o->sms_held += c->new_sms;
                colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
                int n = cohort_elems(hw, c, e);
                note(hw, colo_fluid_update(&hw->fl, c->act, c->work, e, n));
                hw->splits++;
                again = true;
            }
            }
        }
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
        if (rc != COLO_ENOENT) note(hw, rc);
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

static void presolve(void *obj)
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

/* Kernel and copy records come from a free list of their kind when one is there (their link,
 * the first member, chains it): no allocation per kernel or copy once a run has reached its
 * most concurrent ones. Not zeroed: the caller sets every field. */
static void *pool_take(struct colo_hw_live **pool, size_t size)
{
    struct colo_hw_live *l = *pool;
    if (!l) return colo_malloc(size);
    *pool = l->next;
    return l;
}

static void pool_put(struct colo_hw_live **pool, struct colo_hw_live *l)
{
    l->next = *pool;
    *pool = l;
}

/* A kernel off the GPU (finished or stopped, its cohorts gone and with them its place in its
 * L2 group): out of the queue, out of the live list, its record back in the pool. */
static void kernel_leave(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    queue_remove(hw, k);
    live_remove(hw, &k->link);
    pool_put(&hw->kfree, &k->link);
}

/* A cohort's blocks have run: its slots go to the queue; its kernel ends with its last. */
static void on_cohort_done(void *obj, int64_t arg)
{
    (void)arg;
    struct colo_hw_cohort *c = obj;
    colo_hw_kernel_t *k = c->k;
    colo_hw_t *hw = k->hw;
    colo_fluid_begin(&hw->fl);
    cohort_leave(hw, c);
    bool finished = k->pending == 0 && k->n_cohorts == 0;
    colo_fluid_done_fn done = k->done;
    void *o = k->obj;
    int64_t a = k->arg;
    if (finished) kernel_leave(hw, k);
    dispatch(hw);
    note(hw, colo_fluid_end(&hw->fl));
    if (finished && done) done(o, a);
}

int colo_hw_kernel_start(colo_hw_t *hw, const colo_kernel_work_t *w, colo_hw_place_t place,
                         double remaining, colo_fluid_done_fn done, void *obj, int64_t arg,
                         colo_hw_kernel_t **out)
{
    if (place.sm_set >= hw->sm.n_sets || place.l2_group >= hw->n_l2 ||
        place.channel_set >= hw->mem.n_sets || !(remaining > 0))
        return COLO_EINVAL;
    int rc = hw->finalized ? 0 : finalize(hw);
    if (rc) return rc;
    if (hw->sm.sets[place.sm_set].n_parts < 0 || hw->mem.sets[place.channel_set].n_parts < 0)
        return COLO_EUNSUPPORTED; /* spans more than COLO_HW_MAX_PARTS classes */
    struct colo_hw_l2 *g = &hw->l2[place.l2_group];
    colo_hw_kernel_t *k = pool_take(&hw->kfree, sizeof(colo_hw_kernel_t));
    if (!k || colo_grow((void **)&g->running, &g->cap_running, g->n_running + 1, sizeof k)) {
        if (k) pool_put(&hw->kfree, &k->link);
        return COLO_ENOMEM;
    }
    /* every field set here or in kernel_place and kernel_times (no memset: a kernel is short) */
    k->qprev = k->qnext = NULL;
    k->queued = false;
    k->lazy = k->n_cohorts = k->sms_held = 0;
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
    live_add(hw, &k->link);
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
        double target = cohort_target(c), done = cohort_done_work(hw, c), r;
        double frac = target > 0 ? (target - done) / target : 0;
        left += (double)c->total * (frac < 0 ? 0 : frac > 1 ? 1 : frac);
        int rs = colo_fluid_stop(&hw->fl, c->act, &r);
        if (rs && !rc) rc = rs;
        cohort_leave(hw, c);
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
        n += c->resident;
    return n;
}

long long colo_hw_kernel_pending(const colo_hw_kernel_t *k)
{
    return k->pending;
}

/* ---- copies ---- */

colo_time_t colo_hw_copy_alone(const colo_gpu_t *gpu, colo_copy_dir_t dir, long long bytes)
{
    double rate = dir == COLO_COPY_H2D ? gpu->pcie.h2d_gbps : gpu->pcie.d2h_gbps;
    return colo_time_from_ns(gpu->pcie.latency_us * 1e3) + colo_time_from_ns((double)bytes / rate);
}

static void copy_begin(colo_hw_copy_t *c);

/* Fair PCIe: a flow's copies moving bytes in one direction share its weight equally, so that
 * flows get the link in proportion to their weights however many copies each has. */
static void flow_reweigh(colo_hw_t *hw, const colo_hw_copy_t *c)
{
    if (!hw->pcie_fair || c->o.flow < 0) return;
    int n = 0;
    for (size_t i = 0; i < hw->n_moving; i++)
        n += hw->moving[i]->o.flow == c->o.flow && hw->moving[i]->dir == c->dir;
    for (size_t i = 0; i < hw->n_moving && n > 0; i++) {
        const colo_hw_copy_t *m = hw->moving[i];
        /* a copy that ended at this instant, its completion not yet heard, has no weight */
        if (m->o.flow == c->o.flow && m->dir == c->dir && colo_fluid_speed(&hw->fl, m->act) >= 0)
            note(hw, colo_fluid_set_weight(&hw->fl, m->act, m->o.weight / n));
    }
}

static void on_copy_done(void *obj, int64_t arg)
{
    (void)arg;
    colo_hw_copy_t *c = obj;
    colo_hw_t *hw = c->hw;
    struct colo_hw_ce *d = &hw->ce[c->ce];
    for (size_t i = 0; i < hw->n_moving; i++)
        if (hw->moving[i] == c) {
            hw->moving[i] = hw->moving[--hw->n_moving];
            break;
        }
    colo_fluid_begin(&hw->fl);
    flow_reweigh(hw, c);
    d->busy--;
    if (d->q_len) {
        colo_hw_copy_t *next = d->queue[d->q_head];
        d->q_head = (d->q_head + 1) % d->q_cap;
        d->q_len--;
        copy_begin(next);
    }
    note(hw, colo_fluid_end(&hw->fl));
    live_remove(hw, &c->link);
    colo_fluid_done_fn done = c->done;
    void *o = c->obj;
    int64_t a = c->arg;
    pool_put(&hw->cfree, &c->link);
    if (done) done(o, a);
}

static void on_copy_latency(void *obj, int64_t arg)
{
    (void)arg;
    colo_hw_copy_t *c = obj;
    colo_hw_t *hw = c->hw;
    double rate = colo_fluid_capacity(&hw->fl, hw->pcie[c->dir]);
    /* the link, and the device's DRAM channels the bytes are written to or read from */
    colo_fluid_elem_t e[1 + COLO_HW_MAX_PARTS];
    int n = 0;
    e[n++] = (colo_fluid_elem_t){hw->pcie[c->dir], rate};
    const struct colo_hw_set *chs = &hw->mem.sets[c->o.channel_set];
    for (int p = 0; p < chs->n_parts; p++)
        e[n++] = (colo_fluid_elem_t){hw->mem.classes[chs->parts[p].cls].res,
                                     rate * chs->parts[p].share};
    if (hw->n_moving == hw->cap_moving) {
        size_t ncap = hw->cap_moving ? 2 * hw->cap_moving : 8;
        colo_hw_copy_t **m = colo_realloc(hw->moving, ncap * sizeof *m);
        if (!m) {
            note(hw, COLO_ENOMEM);
            return;
        }
        hw->moving = m;
        hw->cap_moving = ncap;
    }
    colo_fluid_begin(&hw->fl);
    note(hw, colo_fluid_start(&hw->fl, (double)c->bytes / rate, 1.0, 1.0, e, n, on_copy_done, c, 0,
                              &c->act));
    if (c->act) {
        hw->moving[hw->n_moving++] = c;
        if (!hw->pcie_fair) {
        } else if (c->o.flow < 0) {
            note(hw, colo_fluid_set_weight(&hw->fl, c->act, c->o.weight));
        } else {
            flow_reweigh(hw, c);
        }
    }
    note(hw, colo_fluid_end(&hw->fl));
}

static void copy_begin(colo_hw_copy_t *c)
{
    colo_hw_t *hw = c->hw;
    hw->ce[c->ce].busy++;
    colo_time_t lat = colo_time_from_ns(hw->gpu->pcie.latency_us * 1e3);
    note(hw, colo_eq_schedule(hw->eq, hw->eq->now + lat, on_copy_latency, c, 0, NULL));
}

int colo_hw_copy_start(colo_hw_t *hw, colo_copy_dir_t dir, long long bytes, uint32_t ce,
                       colo_fluid_done_fn done, void *obj, int64_t arg)
{
    colo_hw_copy_opts_t o = {0, -1, 1.0};
    return colo_hw_copy_start_at(hw, dir, bytes, ce, &o, done, obj, arg);
}

int colo_hw_copy_start_at(colo_hw_t *hw, colo_copy_dir_t dir, long long bytes, uint32_t ce,
                          const colo_hw_copy_opts_t *o, colo_fluid_done_fn done, void *obj,
                          int64_t arg)
{
    if (ce >= hw->n_ce || bytes < 1 || o->channel_set >= hw->mem.n_sets || !(o->weight > 0))
        return COLO_EINVAL;
    int rc = hw->finalized ? 0 : finalize(hw); /* the channel classes its bytes use */
    if (rc) return rc;
    if (hw->mem.sets[o->channel_set].n_parts < 0) return COLO_EUNSUPPORTED;
    colo_hw_copy_t *c = pool_take(&hw->cfree, sizeof(colo_hw_copy_t));
    if (!c) return COLO_ENOMEM;
    *c = (colo_hw_copy_t){{NULL, NULL}, hw, dir, bytes, ce, done, obj, arg, *o, 0};
    live_add(hw, &c->link);
    struct colo_hw_ce *d = &hw->ce[ce];
    if (d->busy < d->engines) {
        copy_begin(c);
        return hw->failed;
    }
    if (d->q_len == d->q_cap) {
        size_t ncap = d->q_cap ? 2 * d->q_cap : 8;
        colo_hw_copy_t **q = colo_malloc(ncap * sizeof *q);
        if (!q) {
            live_remove(hw, &c->link);
            pool_put(&hw->cfree, &c->link);
            return COLO_ENOMEM;
        }
        for (size_t i = 0; i < d->q_len; i++)
            q[i] = d->queue[(d->q_head + i) % d->q_cap];
        colo_free(d->queue);
        d->queue = q;
        d->q_cap = ncap;
        d->q_head = 0;
    }
    d->queue[(d->q_head + d->q_len) % d->q_cap] = c;
    d->q_len++;
    return 0;
}

const char *const colo_use_names[COLO_USE_KINDS] = {"sm", "l2", "dram", "pcie_h2d", "pcie_d2h"};

static double family_integral(const colo_hw_t *hw, const colo_hw_family_t *f)
{
    double v = 0;
    for (size_t k = 0; k < f->n_classes; k++)
        v += colo_fluid_used_integral(&hw->fl, f->classes[k].res);
    return v;
}

void colo_hw_usage(const colo_hw_t *hw, double integral[COLO_USE_KINDS],
                   double capacity[COLO_USE_KINDS])
{
    integral[COLO_USE_SM] = family_integral(hw, &hw->sm);
    integral[COLO_USE_DRAM] = family_integral(hw, &hw->mem);
    integral[COLO_USE_L2] = 0;
    for (size_t g = 0; g < hw->n_l2; g++)
        integral[COLO_USE_L2] += colo_fluid_used_integral(&hw->fl, hw->l2[g].res);
    integral[COLO_USE_H2D] = colo_fluid_used_integral(&hw->fl, hw->pcie[COLO_COPY_H2D]);
    integral[COLO_USE_D2H] = colo_fluid_used_integral(&hw->fl, hw->pcie[COLO_COPY_D2H]);
    capacity[COLO_USE_SM] = hw->sm.n_units * hw->sm.unit_capacity;
    capacity[COLO_USE_DRAM] = hw->mem.n_units * hw->mem.unit_capacity;
    capacity[COLO_USE_L2] = hw->n_l2 ? colo_fluid_capacity(&hw->fl, hw->l2[0].res) : 0;
    capacity[COLO_USE_H2D] = colo_fluid_capacity(&hw->fl, hw->pcie[COLO_COPY_H2D]);
    capacity[COLO_USE_D2H] = colo_fluid_capacity(&hw->fl, hw->pcie[COLO_COPY_D2H]);
}
