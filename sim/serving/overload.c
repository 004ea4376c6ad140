/* overload.c: what the serving loop watches besides the requests (issue 41): a tenant offered
 * more than it serves, whose queue grows until the arrivals stop, and a replayed log that runs
 * out before the run does, which the results name (docs/results.md, "Overload and short logs");
 * and every 4096 events, a stop asked for and the run's progress. */
#include "serving_internal.h"
#include "stop.h"

#include <math.h>

/* The end of the window: by how much each tenant's requests in the system grew over it: those
 * that arrived in it, less those completed in it (of any arrival time) and those dropped. An
 * open-loop tenant whose backlog grew by more than 2 % of its arrivals, by 10 requests at least,
 * and by more than twice the requests it would hold with no queue at all (its rate times its
 * time alone: a run without warm-up starts empty and fills that much even when stable) is
 * overloaded: the rate it was served fell short of the rate offered. Closed loops (their clients
 * bound the backlog) and MLPerf Offline (every sample at once) are left out. */
static void on_end(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    (void)arg;
    double window = COLO_TO_S(sim->sc->duration - sim->sc->warmup);
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        const colo_arrival_cfg_t *a = &t->cfg->arrival;
        int64_t grew = (int64_t)t->arrived - (int64_t)t->finished_in_window - (int64_t)t->dropped;
        t->backlog_growth = grew;
        double busy = 2.0 * (double)t->arrived / window * COLO_TO_S(t->isolated);
        double least = fmax(fmax(10.0, 0.02 * (double)t->arrived), busy);
        t->overloaded = !colo_arrival_closed(a) && a->burst == 0 && (double)grew > least;
    }
}

void colo_serving_watch(colo_sim_t *sim)
{
    colo_serving_fail(sim, colo_eq_schedule(&sim->eq, sim->sc->duration, on_end, sim, 0, NULL));
}

void colo_serving_arrivals_ended(colo_tenant_run_t *t, colo_time_t now)
{
    if (t->arrivals_ended < 0) t->arrivals_ended = now;
}

bool colo_serving_lg_stopped(colo_tenant_run_t *t, colo_time_t at, colo_time_t now)
{
    if (!colo_loadgen_done(&t->cfg->arrival.lg, t->lg, at)) return false;
    colo_serving_arrivals_ended(t, now);
    return true;
}

void colo_serving_poll(colo_sim_t *sim)
{
    if (colo_stop_requested()) colo_serving_fail(sim, COLO_EINTR);
    if (sim->progress) sim->progress(sim->progress_ctx, sim->eq.now, sim->end);
}

void colo_sim_set_progress(colo_sim_t *sim, void (*fn)(void *ctx, colo_time_t now, colo_time_t end),
                           void *ctx)
{
    sim->progress = fn;
    sim->progress_ctx = ctx;
}
