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
#include "llm_cfg.h"
#include "results.h"
#include "router.h"
#include "scenario.h"
#include "serving.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

const char *const colo_cluster_policy_names[] = {"first_fit", "best_fit", "interference_aware"};

/* ---- reading the cluster section ---- */

static int read_cluster(colo_cluster_t *c, const colo_cfg_reader_t *r, const config_setting_t *root)
{
    static const char *const keys[] = {"gpus",       "policy",  "order", "headroom",
                                       "attainment", "trial_s", "fit",   NULL};
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
    const char *fit = "demand";
    if ((rc = colo_cfg_string(r, cl, "fit", 0, &fit)) < 0) return rc;
    if (strcmp(fit, "demand") != 0 && strcmp(fit, "memory") != 0)
        return colo_cfg_error(r, config_setting_get_member(cl, "fit"), COLO_EINVAL,
                              "\"demand\" (memory, and the demands within headroom) or "
                              "\"memory\" (memory only), not '%s'",
                              fit);
    c->fit_memory = strcmp(fit, "memory") == 0;
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
        if ((rc = colo_router_read(r, t, &ct->route)) < 0) return rc;
        if (!ct->route.ops && config_setting_get_member(t, "autoscale"))
            return colo_cfg_error(r, config_setting_get_member(t, "autoscale"), COLO_EINVAL,
                                  "scales a routed service's replicas: give router = "
                                  "\"POLICY\" too");
        if (!ct->route.ops) continue;
        const config_setting_t *rt = config_setting_get_member(t, "router");
        if (ct->replicas == 1)
            return colo_cfg_error(r, rt, COLO_EINVAL,
                                  "routes a service's requests among its replicas: give "
                                  "replicas = N (2 or more) or \"auto\"");
        if ((rc =
                 colo_router_check(r, rt, &ct->route, config_setting_get_member(t, "llm"), NULL)) ||
            (rc = colo_autoscale_read(r, t, ct->replicas > 0 ? ct->replicas : MAX_GPUS * 7,
                                      &ct->route.scale)) < 0)
            return rc;
        ct->router_line = (int)config_setting_source_line(rt);
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
        if ((rc = colo_cluster_load_template(c, c->pools[p].model, &c->models[m]))) return rc;
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
    for (size_t t = 0; t < c->n_tenants; t++) {
        const colo_arrival_cfg_t *a = &c->models[0]->tenants[t].arrival;
        char key[300];
        snprintf(key, sizeof key, "tenants.%s.router", c->models[0]->tenants[t].name);
        if (c->tenants[t].route.ops && (colo_arrival_closed(a) || a->lg.scenario != COLO_LG_NONE))
            return colo_error_set(c->err, COLO_EINVAL, c->path, c->tenants[t].router_line, key,
                                  "a router deals one open-loop arrival stream (Poisson, gamma, "
                                  "MMPP, a replayed log) among replicas; a closed loop's clients "
                                  "and an MLPerf LoadGen test each wait for their own system");
        if ((rc = offered_rate(c->models[0], t, &c->tenants[t].rate, c->err))) return rc;
    }
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
            const colo_route_cfg_t *rt = &c.tenants[t].route;
            const colo_llm_cfg_t *llm = m0->tenants[t].llm;
            if (llm && llm->tensor_parallel > 1)
                fprintf(describe, "  %-14s each replica over %d GPUs (tensor parallelism)\n", "",
                        llm->tensor_parallel);
            char delay[48] = "";
            if (rt->delay > 0)
                snprintf(delay, sizeof delay, " after %.6g ms", COLO_TO_MS(rt->delay));
            if (rt->ops)
                fprintf(describe, "  %-14s routed by %s%s, one arrival stream\n", "", rt->ops->name,
                        delay);
            if (rt->scale.max > 0)
                fprintf(describe,
                        "  %-14s autoscaled %d to %d replicas: target %g outstanding each, every "
                        "%g s, cold start %g s, scale-down window %g s\n",
                        "", rt->scale.min, rt->scale.max, rt->scale.target,
                        COLO_TO_S(rt->scale.interval), COLO_TO_S(rt->scale.cold_start),
                        COLO_TO_S(rt->scale.window));
        }
        if (c.fit_memory) fprintf(describe, "fit       by memory alone\n");
        fprintf(describe, "nothing placed or simulated yet: `colosim run %s` does both\n", path);
    }
    cluster_free(&c);
    return rc;
}

int colo_cluster_run(const char *path, const char *const *sets, size_t n, json_t **out,
                     colo_error_t *err)
{
    return colo_cluster_run_timeline(path, sets, n, NULL, out, err);
}

int colo_cluster_run_timeline(const char *path, const char *const *sets, size_t n,
                              const colo_fleet_timeline_t *tl, json_t **out, colo_error_t *err)
{
    colo_cluster_t c = {.path = path, .sets = sets, .n_sets = n, .err = err, .tl = tl};
    json_t **gpu_res = NULL, **svc_lat = NULL;
    *out = NULL;
    int rc = setup(&c);
    if (!rc) rc = colo_cluster_make_replicas(&c);
    for (size_t i = 0; i < c.n_replicas && !rc; i++)
        rc = colo_cluster_place(&c, i);
    if (!rc && !(gpu_res = colo_calloc(c.n_gpus + 1, sizeof *gpu_res))) rc = COLO_ENOMEM;
    if (!rc && !(svc_lat = colo_calloc(c.n_tenants + 1, sizeof *svc_lat))) rc = COLO_ENOMEM;
    if (!rc) rc = colo_cluster_simulate_all(&c, gpu_res, svc_lat);
    if (!rc && !(*out = colo_cluster_results_json(&c, gpu_res, svc_lat))) rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    for (size_t gi = 0; gpu_res && gi < c.n_gpus; gi++)
        json_decref(gpu_res[gi]);
    colo_free(gpu_res);
    for (size_t t = 0; svc_lat && t < c.n_tenants; t++)
        json_decref(svc_lat[t]);
    colo_free(svc_lat);
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
