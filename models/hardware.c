/* hardware.c: a GPU's resources for the fluid solver, kernels with L2 capacity interference,
 * and copies with copy engines and per-transfer latency. */
#include "hardware.h"
#include "alloc.h"
#include "errors.h"

#include <string.h>

/* Kernels and copies in flight are on the hardware's live list, so colo_hw_fini can free those
 * a run left behind when it stopped. */
struct colo_hw_live {
    struct colo_hw_live *prev, *next;
};

struct colo_hw_kernel {
    struct colo_hw_live link; /* first member */
    colo_hw_t *hw;
    colo_kernel_work_t w;
    colo_hw_place_t place;
    colo_activity_id_t act;
    double dram_eff; /* DRAM bytes with the L2 it shares now */
    /* what its place fixes, worked out once at its start (kernel_place): SMs busy x compute
     * time, compute time, and DRAM rate on the SMs and channels it may use */
    double used_comp, t_comp, rate;
    colo_fluid_done_fn done;
    void *obj;
    int64_t arg;
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
        f->classes[f->n_classes].users = 0;
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
    if (!rc) hw->finalized = true;
    return rc;
}

/* ---- kernels ---- */

/* Works out what a kernel's place fixes for its whole run: the SMs it fills, its compute time
 * and its DRAM rate there. */
static void kernel_place(const colo_hw_t *hw, colo_hw_kernel_t *k)
{
    const struct colo_hw_set *sms = &hw->sm.sets[k->place.sm_set];
    const struct colo_hw_set *chs = &hw->mem.sets[k->place.channel_set];
    int n_sms = sms->n_units;
    if (k->place.sm_limit > 0 && k->place.sm_limit < n_sms) n_sms = k->place.sm_limit;
    k->t_comp = colo_kernel_compute_ns(&k->w, n_sms);
    k->used_comp = colo_kernel_sms_used(&k->w, n_sms) * k->t_comp;
    k->rate = colo_kernel_memory_rate(&k->w, n_sms, chs->n_units * hw->mem.unit_capacity);
}

/* The kernel's work at its current DRAM traffic, and what it uses of each resource per ns at
 * full speed, in the order of its elements (SM classes, L2, channel classes); with e, the
 * elements. Returns the number of coefficients. */
static int kernel_coefs(const colo_hw_t *hw, const colo_hw_kernel_t *k, double *work, double *coef,
                        colo_fluid_elem_t *e)
{
    const struct colo_hw_set *sms = &hw->sm.sets[k->place.sm_set];
    const struct colo_hw_set *chs = &hw->mem.sets[k->place.channel_set];
    double t_mem = k->dram_eff / k->rate;
    double W = k->w.fixed_ns + (k->t_comp > t_mem ? k->t_comp : t_mem);
    if (W < 1e-3) W = 1e-3;
    double l2 = k->w.l2_bytes > k->dram_eff ? k->w.l2_bytes : k->dram_eff;
    /* Blocks go to whichever SMs of the set are free, so a kernel leans on the classes of its
     * set that fewer kernels use: its share of a class ~ the class's SMs / the kernels on it.
     * With disjoint or identical sets this is an even spread. */
    double wsum = 0, wt[COLO_HW_MAX_PARTS];
    for (int p = 0; p < sms->n_parts; p++) {
        const struct colo_hw_class *cl = &hw->sm.classes[sms->parts[p].cls];
        wt[p] = cl->n_units / (double)(cl->users > 1 ? cl->users : 1);
        wsum += wt[p];
    }
    int n = 0;
    for (int p = 0; p < sms->n_parts; p++) {
        if (e) e[n].res = hw->sm.classes[sms->parts[p].cls].res;
        coef[n++] = k->used_comp / W * wt[p] / wsum;
    }
    if (e) e[n].res = hw->l2[k->place.l2_group].res;
    coef[n++] = l2 / W;
    for (int p = 0; p < chs->n_parts; p++) {
        if (e) e[n].res = hw->mem.classes[chs->parts[p].cls].res;
        coef[n++] = k->dram_eff * chs->parts[p].share / W;
    }
    if (e)
        for (int i = 0; i < n; i++)
            e[i].coef = coef[i];
    *work = W;
    return n;
}

/* A running kernel's work and coefficients from its current DRAM traffic and SM shares, changed
 * in place in the solver. */
static void kernel_update(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    double W, coef[COLO_FLUID_MAX_ELEMS];
    int n = kernel_coefs(hw, k, &W, coef, NULL);
    int rc = colo_fluid_update_coefs(&hw->fl, k->act, W, coef, n);
    /* COLO_ENOENT: k finished in the same instant and its own completion is next */
    if (rc != COLO_ENOENT) note(hw, rc);
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

/* Counts k on (delta = +1) or off (-1) the SM classes of its set; where its set spans several
 * classes the kernels on partly overlapping sets get new shares. */
static void sm_users(colo_hw_t *hw, colo_hw_kernel_t *k, int delta)
{
    const struct colo_hw_set *set = &hw->sm.sets[k->place.sm_set];
    for (int p = 0; p < set->n_parts; p++)
        hw->sm.classes[set->parts[p].cls].users += delta;
    if (set->n_parts < 2) return;
    for (size_t g = 0; g < hw->n_l2; g++)
        for (size_t i = 0; i < hw->l2[g].n_running; i++) {
            colo_hw_kernel_t *o = hw->l2[g].running[i];
            if (o == k || hw->sm.sets[o->place.sm_set].n_parts < 2) continue;
            kernel_update(hw, o);
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

/* A kernel off the GPU (finished or stopped): off its L2 group and SM classes, whose shares
 * are then stale, out of the live list, its record back in the pool. */
static void kernel_leave(colo_hw_t *hw, colo_hw_kernel_t *k)
{
    struct colo_hw_l2 *g = &hw->l2[k->place.l2_group];
    l2_remove(g, k);
    sm_users(hw, k, -1);
    l2_stale(hw, g);
    live_remove(hw, &k->link);
    pool_put(&hw->kfree, &k->link);
}

static void on_kernel_done(void *obj, int64_t arg)
{
    (void)arg;
    colo_hw_kernel_t *k = obj;
    kernel_leave(k->hw, k);
    /* its record is in the pool, untouched until taken again: read before done() may */
    if (k->done) k->done(k->obj, k->arg);
}

int colo_hw_kernel_start(colo_hw_t *hw, const colo_kernel_work_t *w, colo_hw_place_t place,
                         double remaining, colo_fluid_done_fn done, void *obj, int64_t arg,
                         colo_hw_kernel_t **out)
{
    if (place.sm_set >= hw->sm.n_sets || place.l2_group >= hw->n_l2 ||
        place.channel_set >= hw->mem.n_sets)
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
    *k = (colo_hw_kernel_t){{NULL, NULL}, hw, *w, place, 0, w->dram_bytes, 0, 0, 0, done, obj, arg};
    kernel_place(hw, k);
    g->running[g->n_running++] = k;
    colo_fluid_begin(&hw->fl);
    sm_users(hw, k, +1);
    l2_stale(hw, g);
    colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
    double W, coef[COLO_FLUID_MAX_ELEMS];
    int n = kernel_coefs(hw, k, &W, coef, e);
    rc = colo_fluid_start(&hw->fl, W, remaining, 1.0, e, n, on_kernel_done, k, 0, &k->act);
    if (rc) {
        l2_remove(g, k);
        sm_users(hw, k, -1);
        pool_put(&hw->kfree, &k->link);
    } else {
        live_add(hw, &k->link);
    }
    int rc2 = colo_fluid_end(&hw->fl);
    if (rc) return rc;
    if (out) *out = k;
    return rc2 ? rc2 : hw->failed;
}

int colo_hw_kernel_stop(colo_hw_t *hw, colo_hw_kernel_t *k, double *remaining)
{
    colo_fluid_begin(&hw->fl);
    int rc = colo_fluid_stop(&hw->fl, k->act, remaining);
    if (!rc) kernel_leave(hw, k);
    int rc2 = colo_fluid_end(&hw->fl);
    return rc ? rc : rc2 ? rc2 : hw->failed;
}

int colo_hw_kernel_weight(colo_hw_t *hw, colo_hw_kernel_t *k, double weight)
{
    return colo_fluid_set_weight(&hw->fl, k->act, weight);
}

double colo_hw_kernel_speed(const colo_hw_t *hw, const colo_hw_kernel_t *k)
{
    return colo_fluid_speed(&hw->fl, k->act);
}

double colo_hw_kernel_dram_bytes(const colo_hw_kernel_t *k)
{
    return k->dram_eff;
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
