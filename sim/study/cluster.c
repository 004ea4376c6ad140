/* cluster.c: cluster scenarios: the `cluster` section read, the one-GPU scenario of each GPU
 * made and simulated, and the entry points; the placement is in placement.c, the results in
 * cluster_results.c.
 *
 * The scenario file is the single-GPU format with a `cluster` section and, per tenant, an
 * optional `replicas` count. Each GPU that gets tenants becomes a single-GPU scenario made from
 * the same file (colo_scenario_load_edited): its model as `gpu`, its tenants (replicas named
 * NAME-rK, each with 1/replicas of the service's load), and the MIG instances or Green Context
 * SMs the placement chose. GPUs do not interact: nothing between them (host CPUs, network,
 * NVLink) is modelled. */
#define _GNU_SOURCE
#include "cluster.h"
#include "cluster_internal.h"
#include "alloc.h"
#include "cfg.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

const char *const colo_cluster_policy_names[] = {"first_fit", "best_fit", "interference_aware"};

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

/* A service's name, as the scenario reader read it. */
const char *colo_cluster_tenant_name(const colo_cluster_t *c, size_t t)
{
    return c->models[0]->tenants[t].name;
}

/* A replica's tenant name: NAME, or NAME-rK when its service has several. */
void colo_cluster_replica_name(const colo_cluster_t *c, const colo_cluster_replica_t *r, char *buf,
                               size_t n)
{
    const struct tenant *t = &c->tenants[r->tenant];
    if (t->replicas != 1)
        snprintf(buf, n, "%s-r%d", colo_cluster_tenant_name(c, r->tenant), r->k);
    else
        snprintf(buf, n, "%s", colo_cluster_tenant_name(c, r->tenant));
}

static int edit(const colo_cfg_reader_t *r, config_setting_t *root, void *ctx)
{
    const colo_cluster_gen_t *g = ctx;
    const colo_cluster_t *c = g->c;
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
            /* the memory all the tenants need together may not fit one GPU: not summed here; an
             * LLM engine still sizes its KV cache from what it is given, as it will be on its
             * own GPU (a limit is not summed) */
            config_setting_t *mem = config_setting_get_member(t, "memory_gib");
            if (mem && config_setting_get_member(t, "llm") &&
                !config_setting_get_member(t, "memory_limit_gib") &&
                (rc = set_float(t, "memory_limit_gib",
                                config_setting_get_float(mem) > 0
                                    ? config_setting_get_float(mem)
                                    : (double)config_setting_get_int64(mem))))
                return rc;
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
        const colo_cluster_replica_t *rep = &c->replicas[g->members[m]];
        if ((rc = colo_cfg_copy_setting(tl, config_setting_get_elem(tl, (unsigned)rep->tenant))))
            return rc;
        config_setting_t *e = config_setting_get_elem(tl, n0 + (unsigned)m);
        char name[256];
        colo_cluster_replica_name(c, rep, name, sizeof name);
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
static int load_gpu(const colo_cluster_t *c, const colo_cluster_gen_t *g, colo_scenario_t **sc)
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
int colo_cluster_simulate_gpu(const colo_cluster_t *c, const colo_cluster_gen_t *g, json_t **res)
{
    colo_scenario_t *sc = NULL;
    *res = NULL;
    int rc = load_gpu(c, g, &sc);
    if (!rc) rc = colo_simulate_scenario(sc, c->sets, c->n_sets, res, c->err);
    colo_scenario_free(sc);
    return rc;
}

/* ---- reading the cluster section ---- */

static int read_cluster(colo_cluster_t *c, const colo_cfg_reader_t *r, const config_setting_t *root)
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
    while (p < 3 && strcmp(pol, colo_cluster_policy_names[p]) != 0)
        p++;
    if (p == 3)
        return colo_cfg_error(r, config_setting_get_member(cl, "policy"), COLO_EINVAL,
                              "unknown policy '%s' (first_fit, best_fit, interference_aware)", pol);
    c->policy = (colo_cluster_policy_t)p;
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
    if (config_setting_get_member(root, "k8s")) /* the plugin shares one GPU; a cluster places */
        return colo_cfg_error(r, config_setting_get_member(root, "k8s"), COLO_EUNSUPPORTED,
                              "the Kubernetes device plugin's replicas share one GPU among pods; "
                              "a cluster places its services on GPUs itself (cluster.gpus, "
                              "sharing.mode): give k8s in a one-GPU scenario");
    const config_setting_t *tl = config_setting_get_member(root, "tenants");
    c->n_tenants = tl && config_setting_is_list(tl) ? (size_t)config_setting_length(tl) : 0;
    if (!(c->tenants = colo_calloc(c->n_tenants + 1, sizeof *c->tenants))) return COLO_ENOMEM;
    for (size_t i = 0; i < c->n_tenants; i++) {
        const config_setting_t *t = config_setting_get_elem(tl, (unsigned)i);
        struct tenant *ct = &c->tenants[i];
        if (!config_setting_is_group(t)) continue; /* the scenario reader says why */
        if (config_setting_get_member(t, "copies"))
            return colo_cfg_error(r, config_setting_get_member(t, "copies"), COLO_EINVAL,
                                  "in a cluster a service runs as replicas: give replicas = N");
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

/* ---- setting up: the file, one template per model, the services' rates ---- */

static void cluster_free(colo_cluster_t *c)
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

static int setup(colo_cluster_t *c)
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
        colo_cluster_gen_t g = {c, c->pools[p].model, NULL, SIZE_MAX, NULL, NULL, 0, c->seed};
        if ((rc = colo_scenario_load_edited(c->path, c->sets, c->n_sets, edit, &g, &c->models[m],
                                            c->err)))
            return rc;
        c->n_models++;
        /* the mechanism every GPU runs: its times alone were taken time-sliced, so say here
         * what the model cannot do (placement would find no MIG profile to place on) */
        const colo_gpu_t *gm = c->models[m]->gpu;
        char key[64];
        snprintf(key, sizeof key, "cluster.gpus.[%zu].model", p);
        if (c->mode == COLO_SHARE_MIG && !gm->mig.supported)
            return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, key,
                                  "%s does not support MIG (sharing.mode = \"mig\")", gm->name);
        if (c->mode == COLO_SHARE_GREEN && !gm->green.supported)
            return colo_error_set(c->err, COLO_EUNSUPPORTED, c->path, 0, key,
                                  "%s has no Green Contexts (green.supported = false in %s)",
                                  gm->name, gm->path);
    }
    double dur = COLO_TO_S(c->models[0]->duration);
    if (c->trial_s <= 0 || c->trial_s > dur) c->trial_s = dur;
    for (size_t t = 0; t < c->n_tenants; t++)
        if ((rc = offered_rate(c->models[0], t, &c->tenants[t].rate, c->err))) return rc;
    if (!(c->choices = colo_calloc(c->n_tenants * c->n_models + 1, sizeof *c->choices)))
        return COLO_ENOMEM;
    return 0;
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
    colo_cluster_t c = {.path = path, .sets = sets, .n_sets = n, .err = err};
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
                colo_cluster_policy_names[c.policy],
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
    colo_cluster_t c = {.path = path, .sets = sets, .n_sets = n, .err = err};
    json_t **gpu_res = NULL;
    *out = NULL;
    int rc = setup(&c);
    if (!rc) rc = colo_cluster_make_replicas(&c);
    for (size_t i = 0; i < c.n_replicas && !rc; i++)
        rc = colo_cluster_place(&c, i);
    if (!rc && !(gpu_res = colo_calloc(c.n_gpus + 1, sizeof *gpu_res))) rc = COLO_ENOMEM;
    for (size_t gi = 0; gi < c.n_gpus && !rc; gi++) {
        const colo_cluster_gpu_t *g = &c.gpus[gi];
        colo_cluster_part_t *parts = colo_calloc(g->n, sizeof *parts);
        if (!parts) {
            rc = COLO_ENOMEM;
            break;
        }
        for (size_t m = 0; m < g->n; m++)
            parts[m] = c.replicas[g->members[m]].part;
        colo_cluster_gen_t gen = {&c, c.pools[g->pool].model, g->members, g->n, parts, g->placement,
                                  0,  c.seed + 1000003u * gi};
        rc = colo_cluster_simulate_gpu(&c, &gen, &gpu_res[gi]);
        colo_free(parts);
    }
    if (!rc && !(*out = colo_cluster_results_json(&c, gpu_res))) rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    for (size_t gi = 0; gpu_res && gi < c.n_gpus; gi++)
        json_decref(gpu_res[gi]);
    colo_free(gpu_res);
    cluster_free(&c);
    return rc;
}

int colo_check_file(const char *path, const char *const *sets, size_t n, colo_error_t *err)
{
    int rc = colo_cluster_detect(path, sets, n, err);
    if (rc < 0) return rc;
    if (rc == 1) return colo_cluster_check(path, sets, n, NULL, err);
    colo_scenario_t *sc = NULL;
    rc = colo_scenario_load(path, sets, n, &sc, err);
    colo_scenario_free(sc);
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
