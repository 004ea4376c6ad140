/* placement.c: the placement policies (first_fit, best_fit, interference_aware): each
 * replica's part of a GPU, whether it fits, trial runs, and the replicas of each service. */
#include "cluster_internal.h"
#include "alloc.h"
#include "errors.h"
#include "llm_cfg.h"
#include "serving.h"
#include "simtime.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "auto" replicas, interference-aware: at most this many more than the headroom rule gives. */
#define AUTO_MORE 8

/* ---- parts and fit ---- */

static const colo_scenario_t *model_of(const colo_cluster_t *c, const colo_cluster_gpu_t *g)
{
    return c->models[g->model];
}

/* The demand of tenant t (one of reps replicas) on a part of a model: rate x time alone. */
static int demand_on(const colo_cluster_t *c, size_t model, size_t t, int reps,
                     colo_cluster_part_t part, double *d)
{
    const colo_scenario_t *sc = c->models[model];
    if (c->tenants[t].rate < 0) { /* a closed loop keeps whatever it gets busy */
        *d = c->headroom;
        return 0;
    }
    colo_time_t iso;
    int rc = colo_tenant_isolated_at(sc, t, colo_place_rates_of(sc->gpu, part.prof, part.sms), &iso,
                                     c->err);
    if (rc) return rc;
    *d = c->tenants[t].rate / reps * COLO_TO_S(iso);
    return 0;
}

static bool usable_profile(const colo_mig_profile_t *p)
{
    return !strstr(p->name, "+me"); /* the same resources as the plain profile */
}

/* The parts of a GPU of this model a tenant holding mem GiB may get, smallest first: MIG
 * profiles (by compute, then memory slices), Green Context sizes, or the whole GPU. */
static size_t candidate_parts(const colo_cluster_t *c, const colo_gpu_t *g, double mem,
                              colo_cluster_part_t *out, size_t cap)
{
    size_t n = 0;
    if (c->mode == COLO_SHARE_MIG) {
        for (size_t k = 0; k < g->mig.n_profiles && n < cap; k++) {
            const colo_mig_profile_t *p = &g->mig.profiles[k];
            if (!usable_profile(p) || p->memory_gib < mem) continue;
            size_t j = n++;
            while (j > 0 && (out[j - 1].prof->compute_slices > p->compute_slices ||
                             (out[j - 1].prof->compute_slices == p->compute_slices &&
                              out[j - 1].prof->memory_slices > p->memory_slices))) {
                out[j] = out[j - 1];
                j--;
            }
            out[j] = (colo_cluster_part_t){p, 0};
        }
        return n;
    }
    if (mem > g->memory.size_gib) return 0;
    if (c->mode == COLO_SHARE_GREEN) {
        int align = g->green.alignment, min = g->green.min_sms;
        for (int s = (min + align - 1) / align * align; s <= g->sm.count && n < cap; s += align)
            out[n++] = (colo_cluster_part_t){NULL, s};
        return n;
    }
    out[n++] = (colo_cluster_part_t){NULL, 0};
    return n;
}

/* SLO attainment of tenant t's replica alone on a part of a model, in trial_s (1: no SLO). */
static int run_alone(colo_cluster_t *c, size_t model, size_t t, colo_cluster_part_t part,
                     double *att)
{
    size_t ri = 0;
    while (ri < c->n_replicas && c->replicas[ri].tenant != t)
        ri++;
    int start = part.prof ? part.prof->placements[0] : 0;
    colo_cluster_gen_t gen = {
        c, c->pools[c->model_pool[model]].model, &ri, 1, &part, &start, c->trial_s, c->seed, NULL};
    json_t *res;
    int rc = colo_cluster_simulate_gpu(c, &gen, &res);
    if (rc) return rc;
    json_t *a =
        json_object_get(json_array_get(json_object_get(res, "tenants"), 0), "slo_attainment");
    *att = json_is_number(a) ? json_number_value(a) : 1;
    json_decref(res);
    return 0;
}

/* The part tenant t's replicas get on a model, and the demand of one on it (cached): the
 * smallest part that keeps the demand within headroom; interference-aware, that part or the
 * next larger on which the replica alone meets the SLO goal in a trial run. The largest part
 * when none does. */
static int choose_part(colo_cluster_t *c, size_t model, size_t t, colo_cluster_part_t *part,
                       double *d)
{
    struct choice *ch = &c->choices[t * c->n_models + model];
    if (!ch->done) {
        const colo_gpu_t *g = c->models[model]->gpu;
        double mem = c->tenants[t].memory_gib, dk[160];
        colo_cluster_part_t cand[160];
        int rc, reps = c->tenants[t].replicas;
        if (c->mode == COLO_SHARE_MIG && !g->mig.supported)
            return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, "sharing.mode",
                                  "%s does not support MIG", g->name);
        if (c->mode == COLO_SHARE_GREEN && !g->green.supported)
            return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, "sharing.mode",
                                  "%s has no Green Contexts (green.supported = false in %s)",
                                  g->name, g->path);
        size_t n = candidate_parts(c, g, mem, cand, 160), pick;
        if (n == 0)
            return colo_error_set(c->err, COLO_ERANGE, c->path, 0, "memory_gib",
                                  "tenant '%s' holds %.4g GiB: no %s of %s is that big",
                                  colo_cluster_tenant_name(c, t), mem,
                                  c->mode == COLO_SHARE_MIG ? "MIG instance" : "GPU", g->name);
        for (size_t k = 0; k < n; k++)
            if ((rc = demand_on(c, model, t, reps, cand[k], &dk[k]))) return rc;
        for (pick = 0; pick < n - 1 && dk[pick] > c->headroom; pick++)
            ;
        ch->att = 1;
        if (c->policy == COLO_CLUSTER_INTERFERENCE && c->models[0]->tenants[t].slo > 0) {
            size_t k = pick; /* the headroom rule's part, larger while it misses alone */
            for (; k < n; k++) {
                if ((rc = run_alone(c, model, t, cand[k], &ch->att))) return rc;
                if (ch->att >= c->attainment) break;
            }
            pick = k < n ? k : n - 1;
        }
        ch->part = cand[pick];
        ch->demand = dk[pick];
        ch->done = true;
    }
    *part = ch->part;
    *d = ch->demand;
    return 0;
}

/* Whether a replica with this part and demand fits on g now; *left is the share of g that
 * would stay free (for best fit) and *start the MIG placement. */
static bool fits(const colo_cluster_t *c, const colo_cluster_gpu_t *g,
                 const colo_cluster_replica_t *r, double *left, int *start)
{
    const colo_gpu_t *gpu = model_of(c, g)->gpu;
    double mem = c->tenants[r->tenant].memory_gib;
    switch (c->mode) {
    case COLO_SHARE_MIG: {
        const colo_mig_profile_t *p = r->part.prof;
        int pi = (int)(p - gpu->mig.profiles);
        if (g->counts[pi] >= p->max_count ||
            g->slices + p->compute_slices > gpu->mig.compute_slices)
            return false;
        for (int j = 0; j < p->n_placements; j++) {
            bool free_here = p->placements[j] + p->memory_slices <= COLO_MIG_MAX_SLOTS;
            for (int s = p->placements[j]; free_here && s < p->placements[j] + p->memory_slices;
                 s++)
                free_here = g->taken[s] < 0;
            if (free_here) {
                *start = p->placements[j];
                *left = (double)(gpu->mig.compute_slices - g->slices - p->compute_slices) /
                        gpu->mig.compute_slices;
                return true;
            }
        }
        return false;
    }
    case COLO_SHARE_GREEN:
        if (g->sms_used + r->part.sms > gpu->sm.count ||
            g->memory + mem > gpu->memory.size_gib + 1e-9)
            return false;
        *left = (double)(gpu->sm.count - g->sms_used - r->part.sms) / gpu->sm.count;
        return true;
    default:
        if (g->tp_ranks > 0) return false; /* a tensor-parallel replica's GPUs are its own */
        if (g->memory + mem > gpu->memory.size_gib + 1e-9) return false;
        if (c->mode == COLO_SHARE_MPS && g->n + 1 > (size_t)c->mps_clients) return false;
        /* an empty GPU takes anything; otherwise the demands must stay within headroom,
         * unless trial runs judge (interference-aware) */
        if (g->n > 0 && c->policy != COLO_CLUSTER_INTERFERENCE && !c->fit_memory &&
            g->util + r->demand > c->headroom + 1e-12)
            return false;
        *left = c->headroom - g->util - r->demand;
        return true;
    }
}

static int add_member(colo_cluster_t *c, size_t gi, size_t ri, int start)
{
    colo_cluster_gpu_t *g = &c->gpus[gi];
    colo_cluster_replica_t *r = &c->replicas[ri];
    size_t *m = colo_realloc(g->members, (g->n + 1) * sizeof *m);
    if (!m) return COLO_ENOMEM;
    g->members = m;
    int *pl = colo_realloc(g->placement, (g->n + 1) * sizeof *pl);
    if (!pl) return COLO_ENOMEM;
    g->placement = pl;
    g->members[g->n] = ri;
    g->placement[g->n] = start;
    g->n++;
    r->gpu = (int)gi;
    g->util += r->demand;
    g->sms_used += r->part.sms;
    g->memory += c->tenants[r->tenant].memory_gib;
    if (r->part.prof) {
        const colo_gpu_t *gpu = model_of(c, g)->gpu;
        g->counts[r->part.prof - gpu->mig.profiles]++;
        g->slices += r->part.prof->compute_slices;
        for (int s = start; s < start + r->part.prof->memory_slices; s++)
            g->taken[s] = (int)g->n - 1;
    }
    return 0;
}

/* Opens k GPUs of the first pool that has them left (a tensor-parallel replica's ranks): the
 * index of the first, the one simulated, or -1 when no pool has k left. */
static int open_gpus(colo_cluster_t *c, int k)
{
    for (size_t p = 0; p < c->n_pools; p++) {
        struct pool *pl = &c->pools[p];
        if (pl->count >= 0 && pl->opened + k > pl->count) continue;
        if (c->n_gpus >= MAX_GPUS) return -1;
        colo_cluster_gpu_t *g = &c->gpus[c->n_gpus];
        memset(g, 0, sizeof *g);
        g->pool = p;
        g->model = pl->model_idx;
        for (int s = 0; s < COLO_MIG_MAX_SLOTS; s++)
            g->taken[s] = -1;
        pl->opened += k;
        return (int)c->n_gpus++;
    }
    return -1;
}

/* Opens the next GPU of the pool: its index, or -1 when every pool is used up. */
static int open_gpu(colo_cluster_t *c)
{
    return open_gpus(c, 1);
}

/* Sets the replica's part and demand for g's model. */
static int part_for(colo_cluster_t *c, const colo_cluster_gpu_t *g, colo_cluster_replica_t *r)
{
    return choose_part(c, g->model, r->tenant, &r->part, &r->demand);
}

/* Interference-aware: simulates g with the replica added for trial_s; *ok when every tenant
 * with an SLO keeps the attainment goal, or what it reaches alone if that is less, *score the
 * worst p99 / SLO among them. */
static int trial(colo_cluster_t *c, size_t gi, size_t ri, int start, bool *ok, double *score)
{
    colo_cluster_gpu_t *g = &c->gpus[gi];
    size_t n = g->n + 1;
    size_t *members = colo_calloc(n, sizeof *members);
    colo_cluster_part_t *parts = colo_calloc(n, sizeof *parts);
    int *pl = colo_calloc(n, sizeof *pl);
    int rc = members && parts && pl ? 0 : COLO_ENOMEM;
    json_t *res = NULL;
    if (!rc) {
        for (size_t m = 0; m < g->n; m++) {
            members[m] = g->members[m];
            parts[m] = c->replicas[g->members[m]].part;
            pl[m] = g->placement[m];
        }
        members[g->n] = ri;
        parts[g->n] = c->replicas[ri].part;
        pl[g->n] = start;
        colo_cluster_gen_t gen = {c,          c->pools[g->pool].model, members, n, parts, pl,
                                  c->trial_s, c->seed + 1000003u * gi, NULL};
        rc = colo_cluster_simulate_gpu(c, &gen, &res);
    }
    *ok = rc == 0;
    *score = 0;
    if (rc == COLO_EINVAL || rc == COLO_ERANGE) { /* a layout that cannot be: not a candidate */
        *ok = false;
        rc = 0;
    }
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        double slo = json_number_value(json_object_get(t, "slo_ms"));
        json_t *att = json_object_get(t, "slo_attainment");
        if (slo <= 0 || !json_is_number(att)) continue;
        double a = json_number_value(att),
               p99 = json_number_value(json_object_get(json_object_get(t, "latency_ms"), "p99"));
        const struct choice *ch =
            &c->choices[c->replicas[members[i]].tenant * c->n_models + g->model];
        if (a < fmin(c->attainment, ch->att)) *ok = false;
        if (p99 / slo > *score) *score = p99 / slo;
    }
    json_decref(res);
    colo_free(members);
    colo_free(parts);
    colo_free(pl);
    return rc;
}

/* Places one replica by the policy; leaves it unplaced when no GPU is left. */
/* A tensor-parallel replica (llm.tensor_parallel = k > 1): k empty GPUs of one pool, rank 0's
 * simulated with the replica on it, the other k - 1 held for it (docs/cluster.md). */
static int place_tp(colo_cluster_t *c, size_t ri, int k)
{
    colo_cluster_replica_t *r = &c->replicas[ri];
    if (c->mode == COLO_SHARE_MIG || c->mode == COLO_SHARE_GREEN)
        return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, "sharing.mode",
                              "tenant '%s' spans %d GPUs (llm.tensor_parallel): its ranks take "
                              "whole GPUs, under timeslice or mps",
                              colo_cluster_tenant_name(c, r->tenant), k);
    int gi = open_gpus(c, k);
    if (gi < 0) return 0; /* unplaced: no pool has k GPUs left */
    colo_cluster_gpu_t *g = &c->gpus[gi];
    int rc = part_for(c, g, r);
    if (!rc) rc = add_member(c, (size_t)gi, ri, 0);
    g->tp_ranks = k - 1;
    return rc;
}

int colo_cluster_place(colo_cluster_t *c, size_t ri)
{
    colo_cluster_replica_t *r = &c->replicas[ri];
    const colo_tenant_cfg_t *tc = &c->models[0]->tenants[r->tenant];
    if (tc->llm && tc->llm->tensor_parallel > 1) return place_tp(c, ri, tc->llm->tensor_parallel);
    int best = -1, best_start = 0, rc;
    double best_left = INFINITY, best_score = INFINITY;
    for (size_t gi = 0; gi < c->n_gpus; gi++) {
        if ((rc = part_for(c, &c->gpus[gi], r))) return rc;
        double left;
        int start = 0;
        if (!fits(c, &c->gpus[gi], r, &left, &start)) continue;
        if (c->policy == COLO_CLUSTER_FIRST_FIT) {
            best = (int)gi;
            best_start = start;
            break;
        }
        if (c->policy == COLO_CLUSTER_INTERFERENCE) {
            bool ok;
            double score;
            if ((rc = trial(c, gi, ri, start, &ok, &score))) return rc;
            if (!ok) continue;
            if (score < best_score - 1e-9 || (score < best_score + 1e-9 && left < best_left)) {
                best = (int)gi;
                best_start = start;
                best_score = score;
                best_left = left;
            }
            continue;
        }
        if (left < best_left) {
            best = (int)gi;
            best_start = start;
            best_left = left;
        }
    }
    if (best < 0) {
        best = open_gpu(c);
        if (best < 0) return 0; /* unplaced */
        double left;
        if ((rc = part_for(c, &c->gpus[best], r))) return rc;
        if (!fits(c, &c->gpus[best], r, &left, &best_start))
            return colo_error_set(c->err, COLO_ERANGE, c->path, 0, "cluster",
                                  "tenant '%s' does not fit even on an empty %s",
                                  colo_cluster_tenant_name(c, r->tenant),
                                  c->pools[c->gpus[best].pool].model);
    }
    if ((rc = part_for(c, &c->gpus[best], r))) return rc;
    return add_member(c, (size_t)best, ri, best_start);
}

/* Largest first; ties in the order written. */
static int by_size(const void *a, const void *b)
{
    const colo_cluster_replica_t *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->tenant != y->tenant) return x->tenant < y->tenant ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Makes sure tenant t has replicas 1..reps. */
static int have_replicas(colo_cluster_t *c, size_t t, int reps, size_t *cap)
{
    int have = 0;
    for (size_t i = 0; i < c->n_replicas; i++)
        have += c->replicas[i].tenant == t;
    for (int k = have + 1; k <= reps; k++) {
        if (colo_grow((void **)&c->replicas, cap, c->n_replicas + 1, sizeof *c->replicas))
            return COLO_ENOMEM;
        c->replicas[c->n_replicas++] = (colo_cluster_replica_t){t, k, -1, {NULL, 0}, 0, 0};
    }
    return 0;
}

/* Expands services into replicas, sized on the first GPU model, in placement order. "auto":
 * as many as keep each within headroom of the largest part; interference-aware, more while one
 * alone on the largest part misses the SLO goal in a trial run. */
int colo_cluster_make_replicas(colo_cluster_t *c)
{
    size_t cap = 0;
    int rc;
    for (size_t t = 0; t < c->n_tenants; t++) {
        int reps = c->tenants[t].replicas;
        if (reps == 0) {
            const colo_gpu_t *g = c->models[0]->gpu;
            colo_cluster_part_t largest = {NULL, 0};
            double d;
            if (c->mode == COLO_SHARE_MIG)
                for (size_t k = 0; k < g->mig.n_profiles; k++)
                    if (!largest.prof ||
                        g->mig.profiles[k].compute_slices > largest.prof->compute_slices)
                        largest.prof = &g->mig.profiles[k];
            if (c->mode == COLO_SHARE_GREEN)
                largest.sms = g->sm.count / g->green.alignment * g->green.alignment;
            if ((rc = demand_on(c, 0, t, 1, largest, &d))) return rc;
            /* as a double first: a tiny headroom or a huge demand must not wrap an int */
            double need = d <= c->headroom ? 1 : ceil(d / c->headroom - 1e-9);
            if (!(need <= MAX_GPUS * 7))
                return colo_error_set(c->err, COLO_ERANGE, c->path, 0, "cluster.headroom",
                                      "tenant '%s' would need %.3g replicas to keep each within "
                                      "a headroom of %g of its GPU part (its demand there: %.3g): "
                                      "more than the %d a cluster can place",
                                      colo_cluster_tenant_name(c, t), need, c->headroom, d,
                                      MAX_GPUS * 7);
            reps = (int)need;
            c->tenants[t].replicas = reps;
            bool trial_more =
                c->policy == COLO_CLUSTER_INTERFERENCE && c->models[0]->tenants[t].slo > 0;
            for (int more = 0; trial_more && more < AUTO_MORE; more++) {
                double att;
                if ((rc = have_replicas(c, t, reps, &cap)) ||
                    (rc = run_alone(c, 0, t, largest, &att)))
                    return rc;
                if (att >= c->attainment) break;
                c->tenants[t].replicas = ++reps;
            }
        }
        if ((rc = have_replicas(c, t, reps, &cap))) return rc;
    }
    size_t n = c->n_replicas;
    const colo_gpu_t *g0 = c->models[0]->gpu;
    for (size_t i = 0; i < n; i++) {
        colo_cluster_replica_t *r = &c->replicas[i];
        colo_cluster_gpu_t first = {0};
        if ((rc = part_for(c, &first, r))) return rc;
        r->size = r->part.prof  ? (double)r->part.prof->compute_slices / g0->mig.compute_slices
                  : r->part.sms ? (double)r->part.sms / g0->sm.count
                                : r->demand;
    }
    if (!c->given_order) qsort(c->replicas, n, sizeof *c->replicas, by_size);
    return 0;
}
