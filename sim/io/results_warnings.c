/* results_warnings.c: the traps a run's figures hide, named in its results (issue 41): tenants
 * offered more than they served, replayed logs that ran out before the run, LoadGen tests that
 * stopped issuing (docs/results.md, "Overload and short logs"). */
#include "results_warnings.h"
#include "router.h"
#include "run_stats_internal.h"

#include <math.h>
#include <string.h>

/* One note: the tenant, its kind, when (seconds of simulated time; < 0: none) and the words. */
static int note(json_t *a, const char *tenant, const char *kind, double at_s, const char *text)
{
    json_t *o = json_pack("{s:s,s:s,s:o,s:s}", "tenant", tenant, "kind", kind, "at_s",
                          at_s >= 0 ? json_real(at_s) : json_null(), "message", text);
    return json_array_append_new(a, o);
}

json_t *colo_results_warnings(const colo_sim_t *sim)
{
    const colo_scenario_t *sc = sim->sc;
    json_t *a = json_array();
    int bad = !a;
    for (size_t i = 0; i < sim->n && !bad; i++) {
        const colo_tenant_run_t *t = &sim->t[i];
        const char *name = t->cfg->name;
        double window = COLO_TO_S(sc->duration - sc->warmup);
        char text[512];
        if (t->overloaded) {
            snprintf(
                text, sizeof text,
                "tenant %s is overloaded: offered %.1f requests/s, it completed %.1f/s in "
                "the window, and its queue grew by %lld through the window; its latencies depend "
                "on the run's length",
                name, (double)t->arrived / window, (double)t->finished_in_window / window,
                (long long)t->backlog_growth);
            bad |= note(a, name, "overloaded", -1, text);
        }
        if (t->router && t->router->on && t->router->cfg.scale.interval >= sc->duration) {
            snprintf(text, sizeof text,
                     "tenant %s: its autoscaler decides every %g s, and the run's arrivals last "
                     "%g s: it never decided, and only its minimum of %d replica%s took requests "
                     "(give autoscale.interval_s below duration_s)",
                     name, COLO_TO_S(t->router->cfg.scale.interval), COLO_TO_S(sc->duration),
                     t->router->cfg.scale.min, t->router->cfg.scale.min == 1 ? "" : "s");
            bad |= note(a, name, "autoscaler_idle", -1, text);
        }
        if (t->arrivals_ended < 0 || t->arrivals_ended >= sc->duration) continue;
        double at = COLO_TO_S(t->arrivals_ended), left = COLO_TO_S(sc->duration) - at;
        /* a log cut to the run ends within a few of its gaps of it: nothing to say */
        double gap = t->arrived ? window / (double)t->arrived : 0;
        if (left <= fmax(0.01 * COLO_TO_S(sc->duration), 5 * gap)) continue;
        if (t->lg) {
            snprintf(text, sizeof text,
                     "tenant %s: LoadGen stopped issuing at %.3f s of the %.3f s run (its "
                     "min_duration and min_query_count met); its throughput is over the window "
                     "up to its last answer",
                     name, at, COLO_TO_S(sc->duration));
            bad |= note(a, name, "loadgen_stopped", at, text);
        } else {
            snprintf(text, sizeof text,
                     "tenant %s: its arrivals ran out at %.3f s of the %.3f s run (%s); no "
                     "request arrived after, and its rates are over the whole window",
                     name, at, COLO_TO_S(sc->duration),
                     t->cfg->arrival.path ? "the end of its replayed log" : "the process ended");
            bad |= note(a, name, "arrivals_ended", at, text);
        }
    }
    /* the host's cores all asked for: its time stretched (docs/model.md, "The host") */
    double window = COLO_TO_S(sc->duration - sc->warmup), sat = COLO_TO_S(sim->host.saturated);
    if (!bad && sc->host.cores > 0 && window > 0 && sat > 0.01 * window) {
        char text[512];
        snprintf(text, sizeof text,
                 "the host's %d cores were all asked for %.1f %% of the window (more streams "
                 "dispatching than cores): host time stretched, and its tenants' latencies with "
                 "it (host.cores; docs/model.md, \"The host\")",
                 sc->host.cores, 100 * sat / window);
        bad |= note(a, "", "host_saturated", -1, text);
    }
    if (!bad && sc->merge) { /* approximate on purpose (docs/engine.md, "Fewer events than kernels") */
        char text[256];
        snprintf(text, sizeof text,
                 "fidelity.kernels = \"merged\" (tolerance %g): runs of similar kernels ran as "
                 "one; latencies under contention are approximate (docs/engine.md)",
                 sc->merge_tolerance);
        bad |= note(a, "", "fidelity_merged", -1, text);
    }
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

void colo_results_print_warnings(json_t *results, FILE *f)
{
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(results, "warnings"), i, n)
    {
        const char *m = json_string_value(json_object_get(n, "message"));
        if (m) fprintf(f, "%swarning: %s\n", i ? "" : "\n", m);
    }
}
