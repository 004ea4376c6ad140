/* cluster_gpu.c: the one-GPU scenario of each GPU of a cluster, made from the cluster's file
 * (colo_scenario_load_edited): its model as `gpu`, its tenants (replicas named NAME-rK), and
 * the MIG instances or Green Context SMs the placement chose; simulated alone, or all together
 * as a fleet (fleet.c) when a service routes its requests among its replicas. */
#include "cluster_internal.h"
#include "alloc.h"
#include "cfg.h"
#include "fleet.h"
#include "metrics.h"
#include "results.h"
#include "router.h"
#include "timeline.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

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
            drop(t, "router"); /* the cluster's (read_cluster): among replicas on several GPUs */
            drop(t, "autoscale");
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
        drop(e, "router");
        drop(e, "autoscale");
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

/* Loads one GPU's scenario: its members, their parts; each replica's load divided, or, in a
 * fleet, a routed service's whole load on its leader and none on its other replicas. */
static int load_gpu(const colo_cluster_t *c, const colo_cluster_gen_t *g, colo_scenario_t **sc)
{
    int rc = colo_scenario_load_edited(c->path, c->sets, c->n_sets, edit, (void *)g, sc, c->err);
    if (rc) return rc;
    for (size_t m = 0; m < g->n; m++) {
        size_t t = c->replicas[g->members[m]].tenant;
        int reps = c->tenants[t].replicas;
        if (g->leaders && c->tenants[t].route.ops)
            (*sc)->tenants[m].routed = g->leaders[t] != g->members[m];
        else if (reps > 1)
            colo_arrival_scale_load(&(*sc)->tenants[m].arrival, 1.0 / reps);
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

int colo_cluster_load_template(const colo_cluster_t *c, const char *model, colo_scenario_t **out)
{
    colo_cluster_gen_t g = {c, model, NULL, SIZE_MAX, NULL, NULL, 0, c->seed, NULL};
    return colo_scenario_load_edited(c->path, c->sets, c->n_sets, edit, &g, out, c->err);
}

/* The scenario of GPU gi as placed; *parts is new (the caller frees it). */
static int placed_gen(const colo_cluster_t *c, size_t gi, const size_t *leaders,
                      colo_cluster_gen_t *gen, colo_cluster_part_t **parts)
{
    const colo_cluster_gpu_t *g = &c->gpus[gi];
    if (!(*parts = colo_calloc(g->n + 1, sizeof **parts))) return COLO_ENOMEM;
    for (size_t m = 0; m < g->n; m++)
        (*parts)[m] = c->replicas[g->members[m]].part;
    *gen = (colo_cluster_gen_t){c, c->pools[g->pool].model, g->members, g->n, *parts, g->placement,
                                0, c->seed + 1000003u * gi, leaders};
    return 0;
}

/* Every GPU in one event order, each routed service's router over its replicas wherever they
 * run (its leader: the placed replica with the lowest number, which takes the service's
 * arrivals). */
/* Samples over a routed service's replicas, summarised in ms; what: 0 latency, 1 TTFT, 2 TPOT
 * (LLM). NULL when out of memory. */
static json_t *merged(colo_tenant_run_t *const *reps, size_t n, int what)
{
    colo_samples_t all = {0};
    colo_latency_summary_t s;
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        const colo_samples_t *x =
            what ? colo_serving_llm_samples(reps[i], what == 2) : &reps[i]->latency;
        all.limit += x->limit;
        rc = colo_samples_merge(&all, x);
    }
    if (!rc) rc = colo_latency_summarise(&all, &s);
    colo_samples_fini(&all);
    if (rc) return NULL;
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "mean", s.mean_ms, "p50", s.p50_ms, "p90",
                     s.p90_ms, "p99", s.p99_ms, "p999", s.p999_ms, "max", s.max_ms);
}

/* A routed service over all its replicas' requests: {"latency_ms": ...} and, for an LLM
 * service, "ttft_ms" and "tpot_ms". */
static json_t *service_latency(colo_tenant_run_t *const *reps, size_t n)
{
    json_t *o = json_object();
    for (int w = 0; o && w < (reps[0]->llm ? 3 : 1); w++) {
        static const char *const key[] = {"latency_ms", "ttft_ms", "tpot_ms"};
        json_t *m = merged(reps, n, w);
        if (!m || json_object_set_new(o, key[w], m)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* Service t's replicas' runs, in GPU order, into reps (their number); *leader: the run of its
 * replica leader_ri. */
static size_t service_reps(const colo_cluster_t *c, colo_sim_t *const *sims, size_t t,
                           size_t leader_ri, colo_tenant_run_t **reps, colo_tenant_run_t **leader)
{
    size_t k = 0;
    *leader = NULL;
    for (size_t gi = 0; gi < c->n_gpus; gi++)
        for (size_t m = 0; m < c->gpus[gi].n; m++) {
            size_t ri = c->gpus[gi].members[m];
            if (c->replicas[ri].tenant != t) continue;
            reps[k++] = &sims[gi]->t[m];
            if (ri == leader_ri) *leader = &sims[gi]->t[m];
        }
    return k;
}

static int simulate_fleet(const colo_cluster_t *c, json_t **gpu_res, json_t **svc_lat)
{
    size_t n = c->n_gpus;
    colo_scenario_t **scs = colo_calloc(n + 1, sizeof *scs);
    colo_sim_t **sims = colo_calloc(n + 1, sizeof *sims);
    size_t *leaders = colo_calloc(c->n_tenants + 1, sizeof *leaders);
    colo_tenant_run_t **reps = colo_calloc(c->n_replicas + 1, sizeof *reps);
    int rc = scs && sims && leaders && reps ? 0 : COLO_ENOMEM;
    for (size_t t = 0; t < c->n_tenants; t++)
        leaders[t] = SIZE_MAX;
    for (size_t ri = 0; ri < c->n_replicas; ri++) { /* replicas of a service by number */
        const colo_cluster_replica_t *r = &c->replicas[ri];
        if (!rc && r->gpu >= 0 &&
            (leaders[r->tenant] == SIZE_MAX || r->k < c->replicas[leaders[r->tenant]].k))
            leaders[r->tenant] = ri;
    }
    for (size_t gi = 0; gi < n && !rc; gi++) {
        colo_cluster_gen_t gen;
        colo_cluster_part_t *parts = NULL;
        rc = placed_gen(c, gi, leaders, &gen, &parts);
        if (!rc) rc = load_gpu(c, &gen, &scs[gi]);
        if (!rc) rc = colo_sim_new(scs[gi], &sims[gi], c->err);
        colo_free(parts);
    }
    for (size_t t = 0; t < c->n_tenants && !rc; t++) {
        if (!c->tenants[t].route.ops || leaders[t] == SIZE_MAX) continue;
        colo_tenant_run_t *leader;
        size_t k = service_reps(c, sims, t, leaders[t], reps, &leader);
        rc = colo_router_attach(leader, reps, k, &c->tenants[t].route);
    }
    colo_timeline_t *tls = NULL; /* --timeline: one per GPU */
    size_t n_tl = 0;
    if (!rc && c->tl && !(tls = colo_calloc(n + 1, sizeof *tls))) rc = COLO_ENOMEM;
    for (size_t gi = 0; gi < n && !rc && tls; gi++) {
        char name[4096];
        colo_fleet_timeline_name(c->tl->path, gi, name, sizeof name);
        colo_time_t a = c->tl->window ? c->tl->start : scs[gi]->warmup;
        colo_time_t b = c->tl->window ? c->tl->end : scs[gi]->warmup + COLO_S(1);
        if (!(rc = colo_timeline_open(&tls[gi], name, a, b, c->err))) n_tl++;
        if (!rc && colo_sim_set_timeline(sims[gi], &tls[gi])) rc = COLO_ENOMEM;
    }
    if (!rc) rc = colo_fleet_run(sims, n, c->err);
    for (size_t gi = 0; gi < n_tl; gi++) { /* all written, or none */
        colo_error_t terr;
        colo_error_clear(&terr);
        int trc = colo_timeline_close(&tls[gi], rc == 0, &terr);
        if (!rc && trc) {
            rc = trc;
            *c->err = terr;
            for (size_t k = 0; k < gi; k++) {
                char name[4096];
                colo_fleet_timeline_name(c->tl->path, k, name, sizeof name);
                remove(name);
            }
        }
    }
    colo_free(tls);
    for (size_t t = 0; t < c->n_tenants && !rc; t++) {
        if (!c->tenants[t].route.ops || leaders[t] == SIZE_MAX) continue;
        colo_tenant_run_t *leader;
        size_t k = service_reps(c, sims, t, leaders[t], reps, &leader);
        if (!(svc_lat[t] = service_latency(reps, k))) rc = COLO_ENOMEM;
        if (!rc && leader->router->on && /* its autoscaler, at its leader */
            json_object_set_new(svc_lat[t], "autoscale",
                                colo_results_autoscale(leader->sim, leader)))
            rc = COLO_ENOMEM;
    }
    for (size_t gi = 0; gi < n && !rc; gi++)
        if (!(gpu_res[gi] = colo_results_json(sims[gi], c->sets, c->n_sets))) rc = COLO_ENOMEM;
    for (size_t gi = 0; sims && gi < n; gi++)
        colo_sim_free(sims[gi]);
    for (size_t gi = 0; scs && gi < n; gi++)
        colo_scenario_free(scs[gi]);
    colo_free(scs);
    colo_free(sims);
    colo_free(leaders);
    colo_free(reps);
    return rc;
}

int colo_cluster_simulate_all(const colo_cluster_t *c, json_t **gpu_res, json_t **svc_lat)
{
    bool routed = false;
    for (size_t t = 0; t < c->n_tenants; t++)
        routed |= c->tenants[t].route.ops != NULL;
    if (routed || c->tl) return simulate_fleet(c, gpu_res, svc_lat); /* timelines: the same */
    int rc = 0; /* GPUs that share no service's router run alone, one after another */
    for (size_t gi = 0; gi < c->n_gpus && !rc; gi++) {
        colo_cluster_gen_t gen;
        colo_cluster_part_t *parts = NULL;
        rc = placed_gen(c, gi, NULL, &gen, &parts);
        if (!rc) rc = colo_cluster_simulate_gpu(c, &gen, &gpu_res[gi]);
        colo_free(parts);
    }
    return rc;
}
