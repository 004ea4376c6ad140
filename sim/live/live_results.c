/* live_results.c: a live run's results in the simulator's schema, from records and fits. */
#include "live_run_internal.h"
#include "alloc.h"
#include "metrics.h"
#include "results.h"
#include "version.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *placement_json(const colo_scenario_t *sc, const colo_live_tenant_t *p)
{
    static const char *const ctx[] = {"own context", "MPS client", "Green Context", "MIG instance"};
    json_t *o = json_pack("{s:i,s:s,s:i}", "process", p->process, "context", ctx[p->ctx], "sms",
                          p->sms ? p->sms : sc->gpu->sm.count);
    if (o && p->ctx == COLO_LIVE_MPS)
        json_object_set_new(o, "active_thread_percentage",
                            json_integer(p->active_thread_percentage));
    if (o && p->instance) json_object_set_new(o, "profile", json_string(p->instance));
    return o;
}

static json_t *tenant_json(const colo_scenario_t *sc, const colo_live_tenant_t *p,
                           const colo_live_outcome_t *o)
{
    const colo_tenant_cfg_t *c = &sc->tenants[p->tenant];
    long long w0 = sc->warmup, w1 = sc->duration;
    colo_samples_t lat;
    memset(&lat, 0, sizeof lat);
    lat.limit = sc->exact_samples;
    unsigned long long arrived = 0, completed = 0, dropped = 0, finished = 0, met = 0;
    double queue = 0, exec = 0;
    if (p->clients == 0) {
        for (size_t k = 0; k < p->n_arrivals; k++)
            if (p->arrivals[k] >= w0 && p->arrivals[k] < w1) arrived += (unsigned)p->counts[k];
    }
    int bad = 0;
    for (size_t k = 0; k < o->n; k++) {
        const colo_live_record_t *r = &o->rec[k];
        bool in = r->arrival >= w0 && r->arrival < w1;
        if (p->clients && in) arrived++;
        if (r->dropped) {
            dropped += in;
            continue;
        }
        if (r->end >= w0 && r->end < w1) finished++;
        if (!in) continue;
        completed++;
        queue += (double)(r->start - r->arrival);
        exec += (double)(r->end - r->start);
        if (c->slo > 0 && r->end - r->arrival <= c->slo) met++;
        bad |= colo_samples_push(&lat, r->end - r->arrival);
    }
    colo_latency_summary_t s;
    bad |= colo_latency_summarise(&lat, &s);
    colo_samples_fini(&lat);
    if (bad) return NULL;
    double window = COLO_TO_S(sc->duration - sc->warmup), done = completed ? (double)completed : 1;
    json_t *t = json_pack(
        "{s:s,s:s,s:i,s:s,s:o,s:{s:s,s:f},s:o,s:o,s:I,s:I,s:I,s:{s:I},s:I,s:o,s:f,s:o,s:o,s:f,"
        "s:f,s:o}",
        "name", c->name, "model", c->trace->model, "batch", c->trace->batch, "trace", c->trace_path,
        "command", c->command ? json_string(c->command) : json_null(), "arrival", "process",
        c->arrival.ops->name, "rate", colo_arrival_rate(&c->arrival), "slo_ms",
        c->slo > 0 ? json_real(c->slo_ms) : json_null(), "placement", placement_json(sc, p),
        "arrived", (json_int_t)arrived, "completed", (json_int_t)completed, "dropped",
        (json_int_t)dropped, "dropped_by_reason", "deadline", (json_int_t)dropped, "in_flight",
        (json_int_t)(arrived > completed + dropped ? arrived - completed - dropped : 0),
        "latency_ms", colo_latency_json(&s), "throughput_rps", (double)finished / window,
        "slo_attainment",
        c->slo > 0 && arrived ? json_real((double)met / (double)arrived) : json_null(),
        "goodput_rps", c->slo > 0 ? json_real((double)met / window) : json_null(), "queue_ms_mean",
        queue / done / 1e6, "execution_ms_mean", exec / done / 1e6, "error",
        o->error[0] ? json_string(o->error) : json_null());
    return t;
}

json_t *colo_live_results(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                          const colo_live_outcome_t *out, const char *const *overrides,
                          size_t n_overrides, json_t *live)
{
    json_t *tenants = json_array();
    for (size_t i = 0; i < plan->n && tenants; i++)
        if (json_array_append_new(tenants, tenant_json(sc, &plan->t[i], &out[i]))) {
            json_decref(tenants);
            tenants = NULL;
        }
    json_t *scenario = tenants ? colo_results_scenario_json(sc, overrides, n_overrides) : NULL;
    if (!scenario) {
        json_decref(tenants);
        json_decref(live);
        return NULL;
    }
    return json_pack("{s:{s:s,s:i},s:o,s:I,s:o,s:o}", "colosim", "version", COLO_VERSION,
                     "results_format", 1, "scenario", scenario, "seed", (json_int_t)sc->seed,
                     "tenants", tenants, "live", live);
}

/* Reads a tenant's records; its error file, if any, into out->error. */
int colo_live_read_outcome(size_t tenant, colo_live_outcome_t *out)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/tenant-%zu.err", colo_live_parent.run_dir, tenant);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(out->error, sizeof out->error, f)) out->error[strcspn(out->error, "\n")] = 0;
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/tenant-%zu.rec", colo_live_parent.run_dir, tenant);
    if (!(f = fopen(path, "r"))) return 0;
    size_t cap = 0;
    colo_live_record_t r;
    int rc = 0;
    while (fscanf(f, "%lld %lld %lld %d", &r.arrival, &r.start, &r.end, &r.dropped) == 4) {
        if (colo_grow((void **)&out->rec, &cap, out->n + 1, sizeof r)) {
            rc = COLO_ENOMEM;
            break;
        }
        out->rec[out->n++] = r;
    }
    fclose(f);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each tenant's fit, from the fit files: where it was fitted and how close each kernel came. */
int colo_live_fit_results(const colo_scenario_t *sc, const colo_live_plan_t *plan, json_t *tenants)
{
    for (size_t i = 0; i < plan->n; i++) {
        json_t *t = json_array_get(tenants, i);
        if (!t) return -1;
        if (sc->tenants[i].command) {
            json_object_set_new(t, "fit", json_null());
            continue;
        }
        colo_live_fit_t f;
        memset(&f, 0, sizeof f);
        colo_live_fit_load(colo_live_parent.run_dir, plan->t[i].process, &f);
        double *e = colo_calloc(f.n + 1, sizeof *e);
        if (!e) {
            colo_live_fit_free(&f);
            return -1;
        }
        size_t n = 0, within = 0;
        for (size_t k = 0; k < f.n; k++) {
            if (f.e[k].tenant != i || !(f.e[k].target_ns > 0)) continue;
            e[n] = 100.0 * fabs(f.e[k].fitted_ns - f.e[k].target_ns) / f.e[k].target_ns;
            within += e[n++] <= 5.0;
        }
        colo_live_fit_free(&f);
        qsort(e, n, sizeof *e, cmp_double);
        char where[96];
        colo_place_rates_t at;
        colo_live_fit_place(sc, plan, i, &at, where, sizeof where);
        json_t *o = n ? json_pack("{s:s,s:I,s:f,s:f,s:f}", "placement", where, "kernels",
                                  (json_int_t)n, "within_5pct", (double)within / (double)n,
                                  "median_error_pct", e[n / 2], "max_error_pct", e[n - 1])
                      : json_null();
        colo_free(e);
        if (!o || json_object_set_new(t, "fit", o)) return -1;
    }
    return 0;
}
