/* sampling.c: the GPU's utilisation over the window: sampled every metrics.interval from
 * warmup, kept in at most COLO_UTIL_POINTS points, and its integrals at the window's end. */
#include "alloc.h"
#include "invariant.h"
#include "serving.h"
#include "serving_internal.h"

#include <stdio.h>
#include <string.h>

static void usage_now(colo_sim_t *sim, double v[COLO_USE_KINDS])
{
    double cap[COLO_USE_KINDS];
    colo_hw_usage(&sim->hw, v, cap);
    static const int kind[3] = {COLO_USE_SM, COLO_USE_L2, COLO_USE_DRAM};
    for (size_t i = 0; i < sim->n; i++) /* timed kernels: each stream's, in order */
        for (int j = 0; j < sim->t[i].n_streams; j++) {
            colo_stream_run_t *s = &sim->t[i].streams[j];
            double u[3] = {s->ts_int[0], s->ts_int[1], s->ts_int[2]};
            if (s->ts_on) colo_merge_ts_add(s, sim->eq.now, u, false);
            for (int k = 0; k < 3; k++)
                v[kind[k]] += u[k];
        }
    memcpy(sim->util_cap, cap, sizeof cap);
}

/* Every metrics.interval from warmup to duration: the utilisation of the interval just ended. */
void colo_serving_on_sample(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    (void)arg;
    double v[COLO_USE_KINDS];
    usage_now(sim, v);
    colo_time_t iv = sim->sc->util_interval;
    if (sim->util_started) {
        if (sim->n_util == sim->cap_util) {
            size_t ncap = sim->cap_util ? 2 * sim->cap_util : 64;
            for (int k = 0; k < COLO_USE_KINDS; k++) {
                double *p = colo_realloc(sim->util[k], ncap * sizeof *p);
                if (!p) {
                    colo_serving_fail(sim, COLO_ENOMEM);
                    return;
                }
                sim->util[k] = p;
            }
            sim->cap_util = ncap;
        }
        if (!sim->util_merge) sim->util_merge = 1;
        for (int k = 0; k < COLO_USE_KINDS; k++) {
            double c = sim->util_cap[k] * (double)iv;
            double u = c > 0 ? (v[k] - sim->util_last[k]) / c : 0;
            /* a share of what the resource can do: the integrals are exact to about 1e-12 of
             * themselves (tolerance of the check) */
            COLO_DCHECK(u >= -1e-9 && u <= 1 + 1e-9,
                        "utilisation %s of the interval ending at %lld ns is %.17g",
                        colo_use_names[k], (long long)sim->eq.now, u);
            if (sim->tl) {
                char name[48];
                snprintf(name, sizeof name, "utilisation %s", colo_use_names[k]);
                colo_timeline_counter(sim->tl, COLO_TL_COUNTERS, name, sim->eq.now - iv, u);
            }
            sim->util_acc[k] += u;
        }
        /* the series keeps at most COLO_UTIL_POINTS points: past them, each point is the mean
         * of twice as many intervals as before (memory independent of the run's length) */
        if (++sim->util_acc_n == sim->util_merge) {
            for (int k = 0; k < COLO_USE_KINDS; k++) {
                sim->util[k][sim->n_util] = sim->util_acc[k] / (double)sim->util_merge;
                sim->util_acc[k] = 0;
            }
            sim->util_acc_n = 0;
            if (++sim->n_util == COLO_UTIL_POINTS) {
                for (int k = 0; k < COLO_USE_KINDS; k++)
                    for (size_t i = 0; i < COLO_UTIL_POINTS / 2; i++)
                        sim->util[k][i] = 0.5 * (sim->util[k][2 * i] + sim->util[k][2 * i + 1]);
                sim->n_util = COLO_UTIL_POINTS / 2;
                sim->util_merge *= 2;
            }
        }
    } else {
        memcpy(sim->util_first, v, sizeof v);
        sim->util_started = true;
    }
    memcpy(sim->util_last, v, sizeof v);
    if (sim->eq.now + iv <= sim->sc->duration)
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, sim->eq.now + iv, colo_serving_on_sample,
                                                sim, 0, NULL));
}

/* At duration: the integrals that close the window's mean. */
void colo_serving_on_window_end(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    (void)arg;
    usage_now(sim, sim->util_end);
    sim->util_ended = true;
}
