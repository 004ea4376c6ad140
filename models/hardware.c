/* hardware.c: a GPU's resources for the fluid solver (SM and channel classes, L2 groups, the
 * PCIe link), copy engines, and copies with their per-transfer latency; kernels are in
 * blocks.c. */
#include "hardware.h"
#include "hardware_internal.h"
#include "alloc.h"
#include "errors.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

int colo_hw_init(colo_hw_t *hw, const colo_gpu_t *gpu, colo_eq_t *eq)
{
    memset(hw, 0, sizeof *hw);
    hw->gpu = gpu;
    hw->eq = eq;
    colo_fluid_init(&hw->fl, eq);
    colo_fluid_on_presolve(&hw->fl, colo_hw__presolve, hw);
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
    while (hw->live) { /* in flight when the run stopped: kernels, cohorts, copies (queued too) */
        struct colo_hw_live *l = hw->live;
        hw->live = l->next;
        colo_free(l);
    }
    struct colo_hw_live *pools[] = {hw->kfree, hw->cfree, hw->cofree};
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
    colo_slots_fini(&hw->slots);
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
        f->classes[f->n_classes] = (struct colo_hw_class){.n_units = 1};
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

int colo_hw__finalize(colo_hw_t *hw)
{
    int rc = build_classes(hw, &hw->sm);
    if (!rc) rc = build_classes(hw, &hw->mem);
    if (rc) return rc;
    /* the dispatcher's masks of SM classes are 64 bits */
    if (hw->sm.n_classes > 64) return COLO_EUNSUPPORTED;
    int units[64];
    for (size_t k = 0; k < hw->sm.n_classes; k++)
        units[k] = hw->sm.classes[k].n_units;
    rc = colo_slots_init(&hw->slots, units, (int)hw->sm.n_classes);
    if (rc) return rc;
    hw->finalized = true;
    return 0;
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
            colo_hw__note(hw, colo_fluid_set_weight(&hw->fl, m->act, m->o.weight / n));
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
    colo_hw__note(hw, colo_fluid_end(&hw->fl));
    colo_hw__live_remove(hw, &c->link);
    colo_fluid_done_fn done = c->done;
    void *o = c->obj;
    int64_t a = c->arg;
    colo_hw__pool_put(&hw->cfree, &c->link);
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
        e[n++] =
            (colo_fluid_elem_t){hw->mem.classes[chs->parts[p].cls].res, rate * chs->parts[p].share};
    if (hw->n_moving == hw->cap_moving) {
        size_t ncap = hw->cap_moving ? 2 * hw->cap_moving : 8;
        colo_hw_copy_t **m = colo_realloc(hw->moving, ncap * sizeof *m);
        if (!m) {
            colo_hw__note(hw, COLO_ENOMEM);
            return;
        }
        hw->moving = m;
        hw->cap_moving = ncap;
    }
    colo_hw__note(hw, colo_hw__apply_reserved(hw, c->o.channel_set)); /* timed kernels' */
    colo_fluid_begin(&hw->fl);
    colo_hw__note(hw, colo_fluid_start(&hw->fl, (double)c->bytes / rate, 1.0, 1.0, e, n,
                                       on_copy_done, c, 0, &c->act));
    if (c->act) {
        hw->moving[hw->n_moving++] = c;
        if (!hw->pcie_fair) {
        } else if (c->o.flow < 0) {
            colo_hw__note(hw, colo_fluid_set_weight(&hw->fl, c->act, c->o.weight));
        } else {
            flow_reweigh(hw, c);
        }
    }
    colo_hw__note(hw, colo_fluid_end(&hw->fl));
}

static void copy_begin(colo_hw_copy_t *c)
{
    colo_hw_t *hw = c->hw;
    hw->ce[c->ce].busy++;
    colo_time_t lat = colo_time_from_ns(hw->gpu->pcie.latency_us * 1e3);
    colo_hw__note(hw, colo_eq_schedule(hw->eq, hw->eq->now + lat, on_copy_latency, c, 0, NULL));
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
    int rc = hw->finalized ? 0 : colo_hw__finalize(hw); /* the channel classes its bytes use */
    if (rc) return rc;
    if (hw->mem.sets[o->channel_set].n_parts < 0) return COLO_EUNSUPPORTED;
    colo_hw_copy_t *c = colo_hw__pool_take(&hw->cfree, sizeof(colo_hw_copy_t));
    if (!c) return COLO_ENOMEM;
    *c = (colo_hw_copy_t){{NULL, NULL}, hw, dir, bytes, ce, done, obj, arg, *o, 0};
    colo_hw__live_add(hw, &c->link);
    struct colo_hw_ce *d = &hw->ce[ce];
    if (d->busy < d->engines) {
        copy_begin(c);
        return hw->failed;
    }
    if (d->q_len == d->q_cap) {
        size_t ncap = d->q_cap ? 2 * d->q_cap : 8;
        colo_hw_copy_t **q = colo_malloc(ncap * sizeof *q);
        if (!q) {
            colo_hw__live_remove(hw, &c->link);
            colo_hw__pool_put(&hw->cfree, &c->link);
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

int colo_hw_reserve_dram(colo_hw_t *hw, uint32_t channel_set, double rate)
{
    if (!(rate != 0) || !isfinite(rate)) return 0;
    int rc = hw->finalized ? 0 : colo_hw__finalize(hw); /* the channel classes it uses */
    if (rc) return rc;
    colo_hw_family_t *f = &hw->mem;
    const struct colo_hw_set *chs = &f->sets[channel_set];
    for (int p = 0; p < chs->n_parts; p++) { /* while no copy moves, the solver need not know */
        struct colo_hw_class *k = &f->classes[chs->parts[p].cls];
        k->reserved += rate * chs->parts[p].share;
        if (k->reserved < 1e-9 * k->n_units * f->unit_capacity)
            k->reserved = 0; /* released: exactly the whole again */
        k->stale = true;
    }
    return hw->n_moving ? colo_hw__apply_reserved(hw, channel_set) : 0;
}

int colo_hw__apply_reserved(colo_hw_t *hw, uint32_t channel_set)
{
    colo_hw_family_t *f = &hw->mem;
    const struct colo_hw_set *chs = &f->sets[channel_set];
    int rc = 0;
    colo_fluid_begin(&hw->fl);
    for (int p = 0; p < chs->n_parts && !rc; p++) {
        struct colo_hw_class *k = &f->classes[chs->parts[p].cls];
        if (!k->stale) continue;
        k->stale = false;
        double left = k->n_units * f->unit_capacity - k->reserved;
        rc = colo_fluid_set_capacity(&hw->fl, k->res, left > 0 ? left : 0);
    }
    int end = colo_fluid_end(&hw->fl);
    return rc ? rc : end;
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
