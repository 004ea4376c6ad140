/* cluster.c: placement of tenants on a cluster of GPUs and the simulation of each GPU.
 *
 * The scenario file is the single-GPU format with a `cluster` section and, per tenant, an
 * optional `replicas` count. Each GPU that gets tenants becomes a single-GPU scenario made from
 * the same file (colo_scenario_load_edited): its model as `gpu`, its tenants (replicas named
 * NAME-rK, each with 1/replicas of the service's load), and the MIG instances or Green Context
 * SMs the placement chose. GPUs do not interact: nothing between them (host CPUs, network,
 * NVLink) is modelled. */
#define _GNU_SOURCE
#include "cluster.h"
#include "alloc.h"
#include "cfg.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"
#include "version.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 1024
/* "auto" replicas, interference-aware: at most this many more than the headroom rule gives. */
#define AUTO_MORE 8

typedef enum { FIRST_FIT, BEST_FIT, INTERFERENCE } policy_t;
static const char *const policy_names[] = {"first_fit", "best_fit", "interference_aware"};

/* The part of a GPU a replica gets: the whole GPU (timeslice, MPS), a MIG profile, or SMs. */
typedef struct part {
    const colo_mig_profile_t *prof;
    int sms;
} part_t;

typedef struct replica {
    size_t tenant;
    int k;   /* 1-based replica number */
    int gpu; /* index into gpus; -1: not placed */
    part_t part;
    double demand; /* share of its part it keeps busy alone: rate x time alone */
    double size;   /* on the first GPU model, for the placement order */
} replica_t;

typedef struct gpu {
    size_t pool, model;
    size_t n;
    size_t *members; /* replica indices, in placement order */
    double util;     /* timeslice, MPS: sum of demands */
    int sms_used;    /* Green Contexts */
    int taken[COLO_MIG_MAX_SLOTS], slices, counts[COLO_MIG_MAX_PROFILES]; /* MIG */
    int *placement; /* MIG: start slot of each member's instance */
    double memory;
} gpu_t;

typedef struct cluster {
    const char *path;
    const char *const *sets;
    size_t n_sets;
    colo_error_t *err;
    /* read from the file */
    policy_t policy;
    bool given_order;
    double headroom, attainment, trial_s;
    colo_share_mode_t mode;
    int mps_clients;
    size_t n_pools;
    struct pool {
        char *model;
        int count; /* -1: as many as needed */
        int opened;
        size_t model_idx;
    } * pools;
    size_t n_tenants;
    struct tenant {
        int replicas; /* 0: auto */
        double memory_gib;
        double rate; /* offered requests/s of the whole service; < 0: closed loop */
    } * tenants;
    /* one template scenario per distinct model: every tenant, for times alone */
    size_t n_models;
    colo_scenario_t **models;
    /* placement */
    size_t n_replicas;
    replica_t *replicas;
    size_t n_gpus;
    gpu_t *gpus;
    uint64_t seed;
    size_t *model_pool; /* a pool of each model */
    /* per tenant and model: its replicas' part, demand, SLO attainment alone (trial) */
    struct choice {
        bool done;
        part_t part;
        double demand, att;
    } * choices;
} cluster_t;

/* ---- editing a scenario's settings ---- */

static config_setting_t *set_member(config_setting_t *g, const char *name, int type)
{
    config_setting_t *s = config_setting_get_member(g, name);
    if (s && config_setting_type(s) != type) {
        config_setting_remove(g, name);
        s = NULL;
    }
    return s ? s : config_setting_add(g, name, type);
}

static int set_string(config_setting_t *g, const char *name, const char *v)
{
    config_setting_t *s = set_member(g, name, CONFIG_TYPE_STRING);
    return s && config_setting_set_string(s, v) == CONFIG_TRUE ? 0 : COLO_ENOMEM;
}

static int set_float(config_setting_t *g, const char *name, double v)
{
    config_setting_t *s = set_member(g, name, CONFIG_TYPE_FLOAT);
    return s && config_setting_set_float(s, v) == CONFIG_TRUE ? 0 : COLO_ENOMEM;
}

static int set_int(config_setting_t *g, const char *name, long long v)
{
    config_setting_t *s = set_member(g, name, CONFIG_TYPE_INT64);
    return s && config_setting_set_int64(s, v) == CONFIG_TRUE ? 0 : COLO_ENOMEM;
}

static void drop(config_setting_t *g, const char *name)
{
    if (config_setting_get_member(g, name)) config_setting_remove(g, name);
}

/* A copy of src added to parent (under src's name when parent is a group). */
static int copy_setting(config_setting_t *parent, const config_setting_t *src)
{
    int type = config_setting_type(src);
    const char *name = config_setting_is_group(parent) ? config_setting_name(src) : NULL;
    config_setting_t *d = config_setting_add(parent, name, type);
    if (!d) return COLO_ENOMEM;
    int ok = CONFIG_TRUE;
    switch (type) {
    case CONFIG_TYPE_GROUP:
    case CONFIG_TYPE_LIST:
    case CONFIG_TYPE_ARRAY:
        for (int i = 0; i < config_setting_length(src); i++) {
            int rc = copy_setting(d, config_setting_get_elem(src, (unsigned)i));
            if (rc) return rc;
        }
        break;
    case CONFIG_TYPE_INT:
        ok = config_setting_set_int(d, config_setting_get_int(src));
        break;
    case CONFIG_TYPE_INT64:
        ok = config_setting_set_int64(d, config_setting_get_int64(src));
        break;
    case CONFIG_TYPE_FLOAT:
        ok = config_setting_set_float(d, config_setting_get_float(src));
        break;
    case CONFIG_TYPE_STRING:
        ok = config_setting_set_string(d, config_setting_get_string(src));
        break;
    case CONFIG_TYPE_BOOL:
        ok = config_setting_set_bool(d, config_setting_get_bool(src));
        break;
    default:
        break;
    }
    return ok == CONFIG_TRUE ? 0 : COLO_ENOMEM;
}

/* What one generated scenario holds. */
typedef struct gen {
    const cluster_t *c;
    const char *model;
    const size_t *members; /* replica indices; NULL with n = SIZE_MAX: every tenant, alone */
    size_t n;
    const part_t *parts;
    const int *placements;
    double duration_s; /* 0: the file's */
    uint64_t seed;
} gen_t;

/* A service's name, as the scenario reader read it. */
static const char *tenant_name(const cluster_t *c, size_t t)
{
    return c->models[0]->tenants[t].name;
}

/* A replica's tenant name: NAME, or NAME-rK when its service has several. */
static void replica_name(const cluster_t *c, const replica_t *r, char *buf, size_t n)
{
    const struct tenant *t = &c->tenants[r->tenant];
    if (t->replicas != 1)
        snprintf(buf, n, "%s-r%d", tenant_name(c, r->tenant), r->k);
    else
        snprintf(buf, n, "%s", tenant_name(c, r->tenant));
}

static int edit(const colo_cfg_reader_t *r, config_setting_t *root, void *ctx)
{
    const gen_t *g = ctx;
    const cluster_t *c = g->c;
    int rc = 0;
    drop(root, "cluster");
    drop(root, "faults");
    if ((rc = set_string(root, "gpu", g->model)) ||
        (rc = set_int(root, "seed", (long long)g->seed)))
        return rc;
    if (g->duration_s > 0) {
        double warm = 0; /* written as an integer or a float */
        if ((rc = colo_cfg_double(r, root, "warmup_s", COLO_CFG_NONNEG, &warm)) < 0) return rc;
        if ((rc = set_float(root, "duration_s", g->duration_s)) ||
            (rc = set_float(root, "warmup_s", fmin(warm, g->duration_s / 5))))
            return rc;
    }
    config_setting_t *tl = config_setting_get_member(root, "tenants");
    if (!tl || !config_setting_is_list(tl)) return 0; /* the scenario reader says what is wrong */
    unsigned n0 = (unsigned)config_setting_length(tl);
    bool templ = g->n == SIZE_MAX;
    config_setting_t *sh = config_setting_get_member(root, "sharing");
    if (templ) { /* every tenant on one GPU, time-sliced, for times alone */
        drop(root, "sharing");
        if (!(sh = config_setting_add(root, "sharing", CONFIG_TYPE_GROUP)) ||
            (rc = set_string(sh, "mode", "timeslice")))
            return rc ? rc : COLO_ENOMEM;
        for (unsigned i = 0; i < n0; i++) {
            config_setting_t *t = config_setting_get_elem(tl, i);
            drop(t, "replicas");
            drop(t, "memory_gib");
        }
        return 0;
    }
    config_setting_t *ins = NULL;
    if (c->mode == COLO_SHARE_MIG) {
        drop(sh, "instances");
        if (!(ins = config_setting_add(sh, "instances", CONFIG_TYPE_LIST))) return COLO_ENOMEM;
    }
    for (size_t m = 0; m < g->n; m++) {
        const replica_t *rep = &c->replicas[g->members[m]];
        if ((rc = copy_setting(tl, config_setting_get_elem(tl, (unsigned)rep->tenant)))) return rc;
        config_setting_t *e = config_setting_get_elem(tl, n0 + (unsigned)m);
        char name[256];
        replica_name(c, rep, name, sizeof name);
        drop(e, "replicas");
        if ((rc = set_string(e, "name", name))) return rc;
        if (c->mode == COLO_SHARE_MIG) {
            char iname[32];
            snprintf(iname, sizeof iname, "i%zu", m);
            config_setting_t *in = config_setting_add(ins, NULL, CONFIG_TYPE_GROUP);
            if (!in || (rc = set_string(in, "name", iname)) ||
                (rc = set_string(in, "profile", g->parts[m].prof->name)) ||
                (rc = set_int(in, "placement", g->placements[m])) ||
                (rc = set_string(e, "instance", iname)))
                return rc ? rc : COLO_ENOMEM;
        } else if (c->mode == COLO_SHARE_GREEN) {
            if ((rc = set_int(e, "sms", g->parts[m].sms))) return rc;
        }
    }
    for (unsigned i = 0; i < n0; i++)
        config_setting_remove_elem(tl, 0);
    return 0;
}

/* Loads one GPU's scenario: its members, their parts; each replica's load divided. */
static int load_gpu(const cluster_t *c, const gen_t *g, colo_scenario_t **sc)
{
    int rc = colo_scenario_load_edited(c->path, c->sets, c->n_sets, edit, (void *)g, sc, c->err);
    if (rc) return rc;
    for (size_t m = 0; m < g->n; m++) {
        int reps = c->tenants[c->replicas[g->members[m]].tenant].replicas;
        if (reps > 1) colo_arrival_scale_load(&(*sc)->tenants[m].arrival, 1.0 / reps);
    }
    return 0;
}

/* Simulates one GPU's scenario into *res. */
static int simulate_gpu(const cluster_t *c, const gen_t *g, json_t **res)
{
    colo_scenario_t *sc = NULL;
    *res = NULL;
    int rc = load_gpu(c, g, &sc);
    if (!rc) rc = colo_simulate_scenario(sc, c->sets, c->n_sets, res, c->err);
    colo_scenario_free(sc);
    return rc;
}

/* ---- reading the cluster section ---- */

static int read_cluster(cluster_t *c, const colo_cfg_reader_t *r, const config_setting_t *root)
{
    static const char *const keys[] = {"gpus",       "policy",  "order", "headroom",
                                       "attainment", "trial_s", NULL};
    static const char *const pool_keys[] = {"model", "count", NULL};
    const config_setting_t *cl = config_setting_get_member(root, "cluster"), *gl;
    int rc;
    if (!config_setting_is_group(cl))
        return colo_cfg_error(r, cl, COLO_EINVAL, "is a group: cluster = { gpus = (...); ... }");
    if ((rc = colo_cfg_check_keys(r, cl, keys)) ||
        (rc = colo_cfg_aggregate(r, cl, "gpus", COLO_CFG_REQUIRED, CONFIG_TYPE_LIST, &gl)))
        return rc;
    size_t n_pools = (size_t)config_setting_length(gl);
    if (n_pools == 0)
        return colo_cfg_error(r, gl, COLO_EINVAL,
                              "lists no GPUs: ( { model = \"h100-sxm\"; count = 4; } )");
    if (!(c->pools = colo_calloc(n_pools, sizeof *c->pools))) return COLO_ENOMEM;
    c->n_pools = n_pools; /* only now: cluster_free walks n_pools entries of pools */
    for (size_t i = 0; i < c->n_pools; i++) {
        const config_setting_t *e = config_setting_get_elem(gl, (unsigned)i);
        const char *model;
        long long count = -1;
        if (!config_setting_is_group(e))
            return colo_cfg_error(r, e, COLO_EINVAL, "each entry is { model = \"...\"; count; }");
        if ((rc = colo_cfg_check_keys(r, e, pool_keys)) ||
            (rc = colo_cfg_string(r, e, "model", COLO_CFG_REQUIRED, &model)) ||
            (rc = colo_cfg_int(r, e, "count", COLO_CFG_POSITIVE, &count)) < 0)
            return rc;
        if (count > MAX_GPUS)
            return colo_cfg_error(r, config_setting_get_member(e, "count"), COLO_ERANGE,
                                  "at most %d", MAX_GPUS);
        c->pools[i].count = (int)count;
        if (!(c->pools[i].model = colo_strdup(model))) return COLO_ENOMEM;
    }
    const char *pol = "best_fit", *order = "decreasing";
    if ((rc = colo_cfg_string(r, cl, "policy", 0, &pol)) < 0 ||
        (rc = colo_cfg_string(r, cl, "order", 0, &order)) < 0)
        return rc;
    size_t p = 0;
    while (p < 3 && strcmp(pol, policy_names[p]) != 0)
        p++;
    if (p == 3)
        return colo_cfg_error(r, config_setting_get_member(cl, "policy"), COLO_EINVAL,
                              "unknown policy '%s' (first_fit, best_fit, interference_aware)", pol);
    c->policy = (policy_t)p;
    if (strcmp(order, "given") != 0 && strcmp(order, "decreasing") != 0)
        return colo_cfg_error(r, config_setting_get_member(cl, "order"), COLO_EINVAL,
                              "\"decreasing\" (largest demand first) or \"given\", not '%s'",
                              order);
    c->given_order = strcmp(order, "given") == 0;
    c->headroom = 0.8;
    c->attainment = 0.99;
    c->trial_s = 0; /* the scenario's duration */
    if ((rc = colo_cfg_double(r, cl, "headroom", COLO_CFG_POSITIVE, &c->headroom)) < 0 ||
        (rc = colo_cfg_double(r, cl, "attainment", COLO_CFG_POSITIVE, &c->attainment)) < 0 ||
        (rc = colo_cfg_double(r, cl, "trial_s", COLO_CFG_POSITIVE, &c->trial_s)) < 0)
        return rc;
    if (c->headroom > 1)
        return colo_cfg_error(r, config_setting_get_member(cl, "headroom"), COLO_ERANGE,
                              "a share of a GPU: at most 1");
    if (c->attainment > 1)
        return colo_cfg_error(r, config_setting_get_member(cl, "attainment"), COLO_ERANGE,
                              "a share of requests: at most 1");

    /* the mechanism on every GPU, and what the placement decides itself */
    const config_setting_t *sh = config_setting_get_member(root, "sharing");
    const char *mode = "timeslice", *cuda = "13.0";
    if (sh && ((rc = colo_cfg_string(r, sh, "mode", 0, &mode)) < 0 ||
               (rc = colo_cfg_string(r, sh, "cuda", 0, &cuda)) < 0))
        return rc;
    size_t m = 0;
    while (m < 4 && strcmp(mode, colo_share_mode_name((colo_share_mode_t)m)) != 0)
        m++;
    if (m == 4)
        return colo_cfg_error(r, config_setting_get_member(sh, "mode"), COLO_EINVAL,
                              "unknown mode '%s' (timeslice, mps, mig, green)", mode);
    c->mode = (colo_share_mode_t)m;
    c->mps_clients = strcmp(cuda, "13.1") == 0 ? 60 : 48;
    if (sh && config_setting_get_member(sh, "instances"))
        return colo_cfg_error(r, config_setting_get_member(sh, "instances"), COLO_EINVAL,
                              "in a cluster the placement chooses each GPU's MIG instances: "
                              "remove it");
    if (config_setting_get_member(root, "faults"))
        return colo_cfg_error(r, config_setting_get_member(root, "faults"), COLO_EUNSUPPORTED,
                              "faults are not supported in cluster scenarios yet");
    const config_setting_t *tl = config_setting_get_member(root, "tenants");
    c->n_tenants = tl && config_setting_is_list(tl) ? (size_t)config_setting_length(tl) : 0;
    if (!(c->tenants = colo_calloc(c->n_tenants + 1, sizeof *c->tenants))) return COLO_ENOMEM;
    for (size_t i = 0; i < c->n_tenants; i++) {
        const config_setting_t *t = config_setting_get_elem(tl, (unsigned)i);
        struct tenant *ct = &c->tenants[i];
        if (!config_setting_is_group(t)) continue; /* the scenario reader says why */
        static const char *const theirs[] = {"instance", "sms"};
        for (size_t k = 0; k < 2; k++)
            if (config_setting_get_member(t, theirs[k]))
                return colo_cfg_error(r, config_setting_get_member(t, theirs[k]), COLO_EINVAL,
                                      "in a cluster the placement chooses it: remove it");
        ct->replicas = 1;
        const config_setting_t *rs = config_setting_get_member(t, "replicas");
        if (rs && config_setting_type(rs) == CONFIG_TYPE_STRING) {
            if (strcmp(config_setting_get_string(rs), "auto") != 0)
                return colo_cfg_error(r, rs, COLO_EINVAL, "a number of replicas, or \"auto\"");
            ct->replicas = 0;
        } else {
            long long v = 1;
            if ((rc = colo_cfg_int(r, t, "replicas", COLO_CFG_POSITIVE, &v)) < 0) return rc;
            if (v > MAX_GPUS * 7)
                return colo_cfg_error(r, rs, COLO_ERANGE, "at most %d", MAX_GPUS * 7);
            ct->replicas = (int)v;
        }
        if ((rc = colo_cfg_double(r, t, "memory_gib", COLO_CFG_NONNEG, &ct->memory_gib)) < 0)
            return rc;
    }
    long long seed = 1;
    if ((rc = colo_cfg_int(r, root, "seed", COLO_CFG_NONNEG, &seed)) < 0) return rc;
    c->seed = (uint64_t)seed;
    return 0;
}

/* The offered rate of a tenant's arrivals, counted over the run where it has no fixed rate
 * (a replayed log). < 0: a closed loop or offline burst, which keeps its part busy. */
static int offered_rate(const colo_scenario_t *sc, size_t i, double *rate, colo_error_t *err)
{
    const colo_arrival_cfg_t *a = &sc->tenants[i].arrival;
    *rate = colo_arrival_rate(a);
    if (*rate > 0) return 0;
    if (colo_arrival_closed(a) || a->burst > 0) {
        *rate = -1;
        return 0;
    }
    colo_arrival_state_t st;
    int rc = colo_arrival_start(a, &st, err);
    if (rc) return rc;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        colo_arrival_stop(&st);
        return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    }
    gsl_rng_set(rng, sc->seed + i);
    colo_time_t now = 0, at;
    long long n = 0;
    int count;
    while (!(rc = colo_arrival_next(a, &st, rng, now, &at, &count, err)) && at < sc->duration) {
        n += count;
        now = at;
    }
    gsl_rng_free(rng);
    colo_arrival_stop(&st);
    if (rc < 0) return rc;
    *rate = (double)n / COLO_TO_S(sc->duration);
    return 0;
}

/* ---- parts and fit ---- */

static const colo_scenario_t *model_of(const cluster_t *c, const gpu_t *g)
{
    return c->models[g->model];
}

/* The demand of tenant t (one of reps replicas) on a part of a model: rate x time alone. */
static int demand_on(const cluster_t *c, size_t model, size_t t, int reps, part_t part, double *d)
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
static size_t candidate_parts(const cluster_t *c, const colo_gpu_t *g, double mem, part_t *out,
                              size_t cap)
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
            out[j] = (part_t){p, 0};
        }
        return n;
    }
    if (mem > g->memory.size_gib) return 0;
    if (c->mode == COLO_SHARE_GREEN) {
        int align = g->green.alignment, min = g->green.min_sms;
        for (int s = (min + align - 1) / align * align; s <= g->sm.count && n < cap; s += align)
            out[n++] = (part_t){NULL, s};
        return n;
    }
    out[n++] = (part_t){NULL, 0};
    return n;
}

/* SLO attainment of tenant t's replica alone on a part of a model, in trial_s (1: no SLO). */
static int run_alone(cluster_t *c, size_t model, size_t t, part_t part, double *att)
{
    size_t ri = 0;
    while (ri < c->n_replicas && c->replicas[ri].tenant != t)
        ri++;
    int start = part.prof ? part.prof->placements[0] : 0;
    gen_t gen = {c,      c->pools[c->model_pool[model]].model, &ri, 1, &part, &start, c->trial_s,
                 c->seed};
    json_t *res;
    int rc = simulate_gpu(c, &gen, &res);
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
static int choose_part(cluster_t *c, size_t model, size_t t, part_t *part, double *d)
{
    struct choice *ch = &c->choices[t * c->n_models + model];
    if (!ch->done) {
        const colo_gpu_t *g = c->models[model]->gpu;
        double mem = c->tenants[t].memory_gib, dk[160];
        part_t cand[160];
        int rc, reps = c->tenants[t].replicas;
        if (c->mode == COLO_SHARE_MIG && !g->mig.supported)
            return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, "sharing.mode",
                                  "%s does not support MIG", g->name);
        size_t n = candidate_parts(c, g, mem, cand, 160), pick;
        if (n == 0)
            return colo_error_set(c->err, COLO_ERANGE, c->path, 0, "memory_gib",
                                  "tenant '%s' holds %.4g GiB: no %s of %s is that big",
                                  tenant_name(c, t), mem,
                                  c->mode == COLO_SHARE_MIG ? "MIG instance" : "GPU", g->name);
        for (size_t k = 0; k < n; k++)
            if ((rc = demand_on(c, model, t, reps, cand[k], &dk[k]))) return rc;
        for (pick = 0; pick < n - 1 && dk[pick] > c->headroom; pick++)
            ;
        ch->att = 1;
        if (c->policy == INTERFERENCE && c->models[0]->tenants[t].slo > 0) {
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
static bool fits(const cluster_t *c, const gpu_t *g, const replica_t *r, double *left, int *start)
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
        if (g->memory + mem > gpu->memory.size_gib + 1e-9) return false;
        if (c->mode == COLO_SHARE_MPS && g->n + 1 > (size_t)c->mps_clients) return false;
        /* an empty GPU takes anything; otherwise the demands must stay within headroom,
         * unless trial runs judge (interference-aware) */
        if (g->n > 0 && c->policy != INTERFERENCE && g->util + r->demand > c->headroom + 1e-12)
            return false;
        *left = c->headroom - g->util - r->demand;
        return true;
    }
}

static int add_member(cluster_t *c, size_t gi, size_t ri, int start)
{
    gpu_t *g = &c->gpus[gi];
    replica_t *r = &c->replicas[ri];
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

/* Opens the next GPU of the pool: its index, or -1 when every pool is used up. */
static int open_gpu(cluster_t *c)
{
    for (size_t p = 0; p < c->n_pools; p++) {
        struct pool *pl = &c->pools[p];
        if (pl->count >= 0 && pl->opened >= pl->count) continue;
        if (c->n_gpus >= MAX_GPUS) return -1;
        gpu_t *g = &c->gpus[c->n_gpus];
        memset(g, 0, sizeof *g);
        g->pool = p;
        g->model = pl->model_idx;
        for (int s = 0; s < COLO_MIG_MAX_SLOTS; s++)
            g->taken[s] = -1;
        pl->opened++;
        return (int)c->n_gpus++;
    }
    return -1;
}

/* Sets the replica's part and demand for g's model. */
static int part_for(cluster_t *c, const gpu_t *g, replica_t *r)
{
    return choose_part(c, g->model, r->tenant, &r->part, &r->demand);
}

/* Interference-aware: simulates g with the replica added for trial_s; *ok when every tenant
 * with an SLO keeps the attainment goal, or what it reaches alone if that is less, *score the
 * worst p99 / SLO among them. */
static int trial(cluster_t *c, size_t gi, size_t ri, int start, bool *ok, double *score)
{
    gpu_t *g = &c->gpus[gi];
    size_t n = g->n + 1;
    size_t *members = colo_calloc(n, sizeof *members);
    part_t *parts = colo_calloc(n, sizeof *parts);
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
        gen_t gen = {c,          c->pools[g->pool].model, members, n, parts, pl,
                     c->trial_s, c->seed + 1000003u * gi};
        rc = simulate_gpu(c, &gen, &res);
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
static int place(cluster_t *c, size_t ri)
{
    replica_t *r = &c->replicas[ri];
    int best = -1, best_start = 0, rc;
    double best_left = INFINITY, best_score = INFINITY;
    for (size_t gi = 0; gi < c->n_gpus; gi++) {
        if ((rc = part_for(c, &c->gpus[gi], r))) return rc;
        double left;
        int start = 0;
        if (!fits(c, &c->gpus[gi], r, &left, &start)) continue;
        if (c->policy == FIRST_FIT) {
            best = (int)gi;
            best_start = start;
            break;
        }
        if (c->policy == INTERFERENCE) {
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
                                  tenant_name(c, r->tenant), c->pools[c->gpus[best].pool].model);
    }
    if ((rc = part_for(c, &c->gpus[best], r))) return rc;
    return add_member(c, (size_t)best, ri, best_start);
}

/* Largest first; ties in the order written. */
static int by_size(const void *a, const void *b)
{
    const replica_t *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? 1 : -1;
    if (x->tenant != y->tenant) return x->tenant < y->tenant ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

/* Makes sure tenant t has replicas 1..reps. */
static int have_replicas(cluster_t *c, size_t t, int reps, size_t *cap)
{
    int have = 0;
    for (size_t i = 0; i < c->n_replicas; i++)
        have += c->replicas[i].tenant == t;
    for (int k = have + 1; k <= reps; k++) {
        if (colo_grow((void **)&c->replicas, cap, c->n_replicas + 1, sizeof *c->replicas))
            return COLO_ENOMEM;
        c->replicas[c->n_replicas++] = (replica_t){t, k, -1, {NULL, 0}, 0, 0};
    }
    return 0;
}

/* Expands services into replicas, sized on the first GPU model, in placement order. "auto":
 * as many as keep each within headroom of the largest part; interference-aware, more while one
 * alone on the largest part misses the SLO goal in a trial run. */
static int make_replicas(cluster_t *c)
{
    size_t cap = 0;
    int rc;
    for (size_t t = 0; t < c->n_tenants; t++) {
        int reps = c->tenants[t].replicas;
        if (reps == 0) {
            const colo_gpu_t *g = c->models[0]->gpu;
            part_t largest = {NULL, 0};
            double d;
            if (c->mode == COLO_SHARE_MIG)
                for (size_t k = 0; k < g->mig.n_profiles; k++)
                    if (!largest.prof ||
                        g->mig.profiles[k].compute_slices > largest.prof->compute_slices)
                        largest.prof = &g->mig.profiles[k];
            if (c->mode == COLO_SHARE_GREEN)
                largest.sms = g->sm.count / g->green.alignment * g->green.alignment;
            if ((rc = demand_on(c, 0, t, 1, largest, &d))) return rc;
            reps = d <= c->headroom ? 1 : (int)ceil(d / c->headroom - 1e-9);
            if (reps > MAX_GPUS * 7) reps = MAX_GPUS * 7;
            c->tenants[t].replicas = reps;
            bool trial_more = c->policy == INTERFERENCE && c->models[0]->tenants[t].slo > 0;
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
        replica_t *r = &c->replicas[i];
        gpu_t first = {0};
        if ((rc = part_for(c, &first, r))) return rc;
        r->size = r->part.prof  ? (double)r->part.prof->compute_slices / g0->mig.compute_slices
                  : r->part.sms ? (double)r->part.sms / g0->sm.count
                                : r->demand;
    }
    if (!c->given_order) qsort(c->replicas, n, sizeof *c->replicas, by_size);
    return 0;
}

/* ---- setting up: the file, one template per model, the services' rates ---- */

static void cluster_free(cluster_t *c)
{
    for (size_t i = 0; i < c->n_pools; i++)
        colo_free(c->pools[i].model);
    colo_free(c->pools);
    colo_free(c->tenants);
    for (size_t i = 0; i < c->n_models; i++)
        colo_scenario_free(c->models[i]);
    colo_free(c->models);
    colo_free(c->replicas);
    colo_free(c->choices);
    colo_free(c->model_pool);
    for (size_t i = 0; i < c->n_gpus; i++) {
        colo_free(c->gpus[i].members);
        colo_free(c->gpus[i].placement);
    }
    colo_free(c->gpus);
}

static int setup(cluster_t *c)
{
    config_t cfg;
    config_init(&cfg);
    int rc = colo_cfg_read_file(&cfg, c->path, c->err);
    for (size_t i = 0; i < c->n_sets && !rc; i++)
        rc = colo_cfg_override(&cfg, c->sets[i], (int)i + 1, c->err);
    colo_cfg_reader_t r = {c->path, c->err};
    if (!rc) rc = read_cluster(c, &r, config_root_setting(&cfg));
    config_destroy(&cfg);
    if (rc) return rc;
    if (!(c->models = colo_calloc(c->n_pools, sizeof *c->models)) ||
        !(c->model_pool = colo_calloc(c->n_pools, sizeof *c->model_pool)) ||
        !(c->gpus = colo_calloc(MAX_GPUS, sizeof *c->gpus)))
        return COLO_ENOMEM;
    for (size_t p = 0; p < c->n_pools; p++) {
        size_t m = 0;
        while (m < c->n_models && strcmp(c->pools[c->model_pool[m]].model, c->pools[p].model) != 0)
            m++;
        c->pools[p].model_idx = m;
        if (m < c->n_models) continue;
        c->model_pool[m] = p;
        gen_t g = {c, c->pools[p].model, NULL, SIZE_MAX, NULL, NULL, 0, c->seed};
        if ((rc = colo_scenario_load_edited(c->path, c->sets, c->n_sets, edit, &g, &c->models[m],
                                            c->err)))
            return rc;
        c->n_models++;
    }
    double dur = COLO_TO_S(c->models[0]->duration);
    if (c->trial_s <= 0 || c->trial_s > dur) c->trial_s = dur;
    for (size_t t = 0; t < c->n_tenants; t++)
        if ((rc = offered_rate(c->models[0], t, &c->tenants[t].rate, c->err))) return rc;
    if (!(c->choices = colo_calloc(c->n_tenants * c->n_models + 1, sizeof *c->choices)))
        return COLO_ENOMEM;
    return 0;
}

/* ---- results ---- */

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static json_t *part_json(const cluster_t *c, const replica_t *r, int start)
{
    if (c->mode == COLO_SHARE_MIG)
        return json_pack("{s:s,s:i}", "mig_profile", r->part.prof->name, "placement", start);
    if (c->mode == COLO_SHARE_GREEN) return json_pack("{s:i}", "sms", r->part.sms);
    return json_pack("{s:s}", "whole", "gpu");
}

/* One service's figures over its replicas: counts and rates summed, SLO attainment weighted
 * by arrivals, the mean weighted by completions, percentiles the worst replica's. */
static json_t *service_json(const cluster_t *c, size_t t, json_t *const *gpu_res)
{
    double arrived = 0, completed = 0, dropped = 0, in_flight = 0, tput = 0, good = 0, met = 0;
    double mean = 0, iso = 0, slo = 0;
    double worst[5] = {0};
    static const char *const pct[] = {"p50", "p90", "p99", "p999", "max"};
    json_t *gpus = json_array(), *first = NULL;
    bool has_slo = false;
    int placed = 0;
    for (size_t gi = 0; gi < c->n_gpus; gi++)
        for (size_t m = 0; m < c->gpus[gi].n; m++) {
            const replica_t *r = &c->replicas[c->gpus[gi].members[m]];
            if (r->tenant != t) continue;
            json_t *o = json_array_get(json_object_get(gpu_res[gi], "tenants"), m);
            if (!o) continue;
            if (!first) first = o;
            placed++;
            json_array_append_new(gpus, json_integer((json_int_t)gi));
            double a = num(o, "arrived"), done = num(o, "completed");
            arrived += a;
            completed += done;
            dropped += num(o, "dropped");
            in_flight += num(o, "in_flight");
            tput += num(o, "throughput_rps");
            good += num(o, "goodput_rps");
            json_t *att = json_object_get(o, "slo_attainment");
            if (json_is_number(att)) {
                has_slo = true;
                met += json_number_value(att) * a;
            }
            json_t *lat = json_object_get(o, "latency_ms");
            mean += num(lat, "mean") * done;
            for (size_t k = 0; k < 5; k++)
                worst[k] = fmax(worst[k], num(lat, pct[k]));
            iso = num(o, "isolated_ms");
            slo = num(o, "slo_ms");
        }
    json_t *lat =
        json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "mean", completed > 0 ? mean / completed : 0, "p50",
                  worst[0], "p90", worst[1], "p99", worst[2], "p999", worst[3], "max", worst[4]);
    json_t *o =
        json_pack("{s:s,s:o,s:i,s:i,s:o,s:o,s:f,s:I,s:I,s:I,s:I,s:o,s:f,s:o,s:o,s:s}", "name",
                  tenant_name(c, t), "model",
                  first ? json_incref(json_object_get(first, "model")) : json_null(), "replicas",
                  c->tenants[t].replicas, "placed", placed, "gpus", gpus, "slo_ms",
                  slo > 0 ? json_real(slo) : json_null(), "isolated_ms", iso, "arrived",
                  (json_int_t)arrived, "completed", (json_int_t)completed, "dropped",
                  (json_int_t)dropped, "in_flight", (json_int_t)in_flight, "latency_ms", lat,
                  "throughput_rps", tput, "goodput_rps", has_slo ? json_real(good) : json_null(),
                  "slo_attainment", has_slo && arrived > 0 ? json_real(met / arrived) : json_null(),
                  "percentiles", "the worst replica's");
    if (o && c->tenants[t].rate >= 0)
        json_object_set_new(o, "offered_rps", json_real(c->tenants[t].rate));
    return o;
}

static json_t *results_json(const cluster_t *c, json_t *const *gpu_res)
{
    const colo_scenario_t *sc = c->models[0];
    json_t *services = json_array(), *gpus = json_array(), *by_model = json_object();
    json_t *unplaced = json_array(), *pool = json_array(), *sets = json_array();
    if (!services || !gpus || !by_model || !unplaced || !pool || !sets) goto oom;
    bool all_met = true;
    for (size_t t = 0; t < c->n_tenants; t++) {
        json_t *o = service_json(c, t, gpu_res);
        if (!o || json_array_append_new(services, o)) goto oom;
        json_t *att = json_object_get(o, "slo_attainment");
        if (json_is_number(att) && json_number_value(att) < c->attainment) all_met = false;
    }
    double busy = 0;
    for (size_t gi = 0; gi < c->n_gpus; gi++) {
        const gpu_t *g = &c->gpus[gi];
        const char *model = c->pools[g->pool].model;
        json_t *members = json_array();
        for (size_t m = 0; m < g->n && members; m++) {
            const replica_t *r = &c->replicas[g->members[m]];
            char name[256];
            replica_name(c, r, name, sizeof name);
            json_array_append_new(members,
                                  json_pack("{s:s,s:o,s:f}", "name", name, "part",
                                            part_json(c, r, g->placement[m]), "demand", r->demand));
        }
        double b = num(json_object_get(gpu_res[gi], "gpu"), "busy_fraction");
        busy += b;
        json_t *o = json_pack("{s:I,s:s,s:o,s:f,s:O}", "index", (json_int_t)gi, "model", model,
                              "tenants", members, "busy_fraction", b, "results", gpu_res[gi]);
        if (!o || json_array_append_new(gpus, o)) goto oom;
        json_object_set_new(by_model, model,
                            json_integer(json_integer_value(json_object_get(by_model, model)) + 1));
    }
    for (size_t i = 0; i < c->n_replicas; i++)
        if (c->replicas[i].gpu < 0) {
            char name[256];
            replica_name(c, &c->replicas[i], name, sizeof name);
            json_array_append_new(unplaced, json_string(name));
            all_met = false;
        }
    for (size_t p = 0; p < c->n_pools; p++)
        json_array_append_new(pool,
                              json_pack("{s:s,s:o}", "model", c->pools[p].model, "count",
                                        c->pools[p].count < 0 ? json_string("as many as needed")
                                                              : json_integer(c->pools[p].count)));
    for (size_t i = 0; i < c->n_sets; i++)
        json_array_append_new(sets, json_string(c->sets[i]));
    json_t *cluster = json_pack(
        "{s:s,s:s,s:s,s:f,s:f,s:o,s:I,s:o,s:b,s:o,s:o}", "policy", policy_names[c->policy], "order",
        c->given_order ? "given" : "decreasing", "mechanism", colo_share_mode_name(c->mode),
        "headroom", c->headroom, "attainment_goal", c->attainment, "pool", pool, "gpus_used",
        (json_int_t)c->n_gpus, "gpus_by_model", by_model, "all_slo_met", all_met, "unplaced",
        unplaced, "gpus", gpus);
    json_t *scenario =
        json_pack("{s:s,s:o,s:f,s:f,s:f,s:o}", "path", c->path, "description",
                  sc->description ? json_string(sc->description) : json_null(), "duration_s",
                  COLO_TO_S(sc->duration), "warmup_s", COLO_TO_S(sc->warmup), "load_scale",
                  sc->load_scale, "overrides", sets);
    return json_pack("{s:{s:s,s:i},s:s,s:o,s:I,s:o,s:{s:f},s:o}", "colosim", "version",
                     COLO_VERSION, "results_format", 1, "kind", "cluster", "scenario", scenario,
                     "seed", (json_int_t)c->seed, "tenants", services, "gpu", "busy_fraction",
                     c->n_gpus ? busy / (double)c->n_gpus : 0.0, "cluster", cluster);
oom:
    json_decref(services);
    json_decref(gpus);
    json_decref(by_model);
    json_decref(unplaced);
    json_decref(pool);
    json_decref(sets);
    return NULL;
}

/* ---- the public entry points ---- */

int colo_cluster_detect(const char *path, const char *const *sets, size_t n, colo_error_t *err)
{
    config_t cfg;
    config_init(&cfg);
    int rc = colo_cfg_read_file(&cfg, path, err);
    for (size_t i = 0; i < n && !rc; i++)
        rc = colo_cfg_override(&cfg, sets[i], (int)i + 1, err);
    if (!rc) rc = config_setting_get_member(config_root_setting(&cfg), "cluster") != NULL;
    config_destroy(&cfg);
    return rc;
}

int colo_cluster_check(const char *path, const char *const *sets, size_t n, FILE *describe,
                       colo_error_t *err)
{
    cluster_t c = {.path = path, .sets = sets, .n_sets = n, .err = err};
    int rc = setup(&c);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    if (!rc && describe) {
        const colo_scenario_t *m0 = c.models[0];
        fprintf(describe, "cluster   %s%s%s\n", path, m0->description ? ": " : "",
                m0->description ? m0->description : "");
        fprintf(describe, "gpus     ");
        for (size_t p = 0; p < c.n_pools; p++) {
            if (c.pools[p].count > 0)
                fprintf(describe, "%s %d x %s", p ? "," : "", c.pools[p].count, c.pools[p].model);
            else
                fprintf(describe, "%s as many %s as needed", p ? "," : "", c.pools[p].model);
        }
        fprintf(describe, "\nplacement %s, %s, headroom %.0f %%, %s on every GPU\n",
                policy_names[c.policy],
                c.given_order ? "in the given order" : "largest demand first", 100 * c.headroom,
                colo_share_mode_name(c.mode));
        fprintf(describe, "services  %zu\n", c.n_tenants);
        for (size_t t = 0; t < c.n_tenants; t++) {
            char reps[32];
            if (c.tenants[t].replicas > 0)
                snprintf(reps, sizeof reps, "%d", c.tenants[t].replicas);
            else
                snprintf(reps, sizeof reps, "auto");
            if (c.tenants[t].rate >= 0)
                fprintf(describe, "  %-14s replicas %s, offers %.4g requests/s\n",
                        m0->tenants[t].name, reps, c.tenants[t].rate);
            else
                fprintf(describe, "  %-14s replicas %s, closed loop\n", m0->tenants[t].name, reps);
        }
        fprintf(describe, "nothing placed or simulated yet: `colosim run %s` does both\n", path);
    }
    cluster_free(&c);
    return rc;
}

int colo_cluster_run(const char *path, const char *const *sets, size_t n, json_t **out,
                     colo_error_t *err)
{
    cluster_t c = {.path = path, .sets = sets, .n_sets = n, .err = err};
    json_t **gpu_res = NULL;
    *out = NULL;
    int rc = setup(&c);
    if (!rc) rc = make_replicas(&c);
    for (size_t i = 0; i < c.n_replicas && !rc; i++)
        rc = place(&c, i);
    if (!rc && !(gpu_res = colo_calloc(c.n_gpus + 1, sizeof *gpu_res))) rc = COLO_ENOMEM;
    for (size_t gi = 0; gi < c.n_gpus && !rc; gi++) {
        const gpu_t *g = &c.gpus[gi];
        part_t *parts = colo_calloc(g->n, sizeof *parts);
        if (!parts) {
            rc = COLO_ENOMEM;
            break;
        }
        for (size_t m = 0; m < g->n; m++)
            parts[m] = c.replicas[g->members[m]].part;
        gen_t gen = {&c,    c.pools[g->pool].model, g->members, g->n,
                     parts, g->placement,           0,          c.seed + 1000003u * gi};
        rc = simulate_gpu(&c, &gen, &gpu_res[gi]);
        colo_free(parts);
    }
    if (!rc && !(*out = results_json(&c, gpu_res))) rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    for (size_t gi = 0; gpu_res && gi < c.n_gpus; gi++)
        json_decref(gpu_res[gi]);
    colo_free(gpu_res);
    cluster_free(&c);
    return rc;
}

int colo_simulate_file(const char *path, const char *const *sets, size_t n, json_t **out,
                       colo_error_t *err)
{
    *out = NULL;
    int rc = colo_cluster_detect(path, sets, n, err);
    if (rc < 0) return rc;
    if (rc == 1) return colo_cluster_run(path, sets, n, out, err);
    colo_scenario_t *sc = NULL;
    rc = colo_scenario_load(path, sets, n, &sc, err);
    if (!rc) rc = colo_simulate_scenario(sc, sets, n, out, err);
    colo_scenario_free(sc);
    return rc;
}

int colo_simulate_scenario(const colo_scenario_t *sc, const char *const *sets, size_t n,
                           json_t **out, colo_error_t *err)
{
    colo_sim_t *sim = NULL;
    *out = NULL;
    int rc = colo_sim_new(sc, &sim, err);
    if (!rc) rc = colo_sim_run(sim, err);
    if (!rc && !(*out = colo_results_json(sim, sets, n)))
        rc = colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    colo_sim_free(sim);
    return rc;
}

void colo_cluster_print(json_t *res, FILE *f)
{
    json_t *cl = json_object_get(res, "cluster");
    fprintf(f, "placement: %s, %s on every GPU, headroom %.0f %%\n",
            json_string_value(json_object_get(cl, "policy")),
            json_string_value(json_object_get(cl, "mechanism")), 100 * num(cl, "headroom"));
    size_t i, k;
    json_t *g, *t;
    json_array_foreach(json_object_get(cl, "gpus"), i, g)
    {
        fprintf(f, "  GPU %-3zu %-10s busy %5.1f %% :", i,
                json_string_value(json_object_get(g, "model")), 100 * num(g, "busy_fraction"));
        json_array_foreach(json_object_get(g, "tenants"), k, t)
        {
            json_t *p = json_object_get(t, "part");
            const char *prof = json_string_value(json_object_get(p, "mig_profile"));
            fprintf(f, " %s", json_string_value(json_object_get(t, "name")));
            if (prof)
                fprintf(f, " [%s]", prof);
            else if (json_object_get(p, "sms"))
                fprintf(f, " [%d SMs]", (int)num(p, "sms"));
            fprintf(f, " (%.0f %%)", 100 * num(t, "demand"));
        }
        fputc('\n', f);
    }
    fprintf(f, "\n%-16s %4s %9s %9s %9s %9s %8s %8s\n", "service", "reps", "offered/s", "tput/s",
            "p50 ms", "p99 ms", "SLO ms", "met %");
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        json_t *lat = json_object_get(t, "latency_ms"), *att = json_object_get(t, "slo_attainment");
        json_t *off = json_object_get(t, "offered_rps");
        char offered[32] = "-", slo[32] = "-", met[32] = "-";
        if (json_is_number(off)) snprintf(offered, sizeof offered, "%.1f", json_number_value(off));
        if (json_is_number(json_object_get(t, "slo_ms")))
            snprintf(slo, sizeof slo, "%.1f", num(t, "slo_ms"));
        if (json_is_number(att)) snprintf(met, sizeof met, "%.2f", 100 * json_number_value(att));
        fprintf(f, "%-16.16s %4d %9s %9.1f %9.3f %9.3f %8s %8s\n",
                json_string_value(json_object_get(t, "name")), (int)num(t, "replicas"), offered,
                num(t, "throughput_rps"), num(lat, "p50"), num(lat, "p99"), slo, met);
    }
    fprintf(f, "(a service's percentiles are its worst replica's)\n\n");
    fprintf(f, "GPUs %s: %d (",
            json_array_size(json_object_get(cl, "unplaced")) ? "used" : "needed",
            (int)num(cl, "gpus_used"));
    const char *model;
    json_t *cnt;
    bool first = true;
    json_object_foreach(json_object_get(cl, "gpus_by_model"), model, cnt)
    {
        fprintf(f, "%s%d %s", first ? "" : ", ", (int)json_integer_value(cnt), model);
        first = false;
    }
    size_t unplaced = json_array_size(json_object_get(cl, "unplaced"));
    fprintf(f, ")%s; every SLO met for >= %.4g of requests: %s\n",
            unplaced ? ", all the cluster has, and more are needed" : "",
            num(cl, "attainment_goal"),
            json_is_true(json_object_get(cl, "all_slo_met")) ? "yes" : "no");
    if (unplaced) {
        fprintf(f, "not placed (no GPU left):");
        json_array_foreach(json_object_get(cl, "unplaced"), i, t)
            fprintf(f, " %s", json_string_value(t));
        fputc('\n', f);
    }
}
