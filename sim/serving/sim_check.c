/* sim_check.c: the accounts of a finished run (colo_sim_check, serving.h): every kernel that
 * started ended or still runs, every request that arrived in the window completed, was dropped
 * with a reason or is in flight. */
#include "invariant.h"
#include "serving.h"
#include "serving_internal.h"

void colo_sim_check(const colo_sim_t *sim)
{
    int running = 0;
    for (size_t i = 0; i < sim->n; i++) {
        const colo_tenant_run_t *t = &sim->t[i];
        const char *name = t->cfg->name;
        int streams_running = 0, busy = 0;
        for (int k = 0; k < t->n_streams; k++) {
            streams_running += t->streams[k].kernel_running;
            busy += t->streams[k].busy;
            COLO_CHECK(t->streams[k].busy || t->streams[k].n_batch == 0,
                       "tenant %s: instance %d holds %d requests while idle", name, k,
                       t->streams[k].n_batch);
        }
        COLO_CHECK(streams_running == t->kernels_running && busy == t->busy_streams &&
                       busy <= t->n_streams,
                   "tenant %s: %d kernels and %d requests running on its %d instances; counted "
                   "%d and %d",
                   name, streams_running, busy, t->n_streams, t->kernels_running, t->busy_streams);
        COLO_CHECK(t->kernel_starts == t->kernel_ends + (uint64_t)t->kernels_running,
                   "tenant %s: %llu kernels started, %llu ended, %d still running", name,
                   (unsigned long long)t->kernel_starts, (unsigned long long)t->kernel_ends,
                   t->kernels_running);
        running += t->kernels_running;
        uint64_t by_reason = 0;
        for (int r = 0; r < COLO_DROP_REASONS; r++)
            by_reason += t->dropped_by[r];
        COLO_CHECK(by_reason == t->dropped, "tenant %s: %llu dropped, %llu with a reason", name,
                   (unsigned long long)t->dropped, (unsigned long long)by_reason);
        uint64_t in_flight = 0; /* of the window's arrivals: waiting, or in a running batch */
        for (size_t k = 0; k < t->qlen; k++)
            in_flight += colo_serving_in_window(sim, t->queue[(t->qhead + k) % t->qcap].arrival);
        for (int k = 0; k < t->n_streams; k++)
            for (int b = 0; b < t->streams[k].n_batch; b++)
                in_flight += colo_serving_in_window(sim, t->streams[k].batch[b].arrival);
        if (t->llm) {
            colo_serving_llm_check(t);
            in_flight += colo_serving_llm_in_flight(t);
        }
        COLO_CHECK(t->arrived == t->completed + t->dropped + in_flight,
                   "tenant %s: %llu requests arrived in the window, %llu completed, %llu dropped, "
                   "%llu in flight at the end",
                   name, (unsigned long long)t->arrived, (unsigned long long)t->completed,
                   (unsigned long long)t->dropped, (unsigned long long)in_flight);
        COLO_CHECK(t->latency.count == t->completed, "tenant %s: %llu latencies for %llu requests",
                   name, (unsigned long long)t->latency.count, (unsigned long long)t->completed);
    }
    COLO_CHECK(running == sim->kernels_running, "%d kernels running by tenant, %d in all", running,
               sim->kernels_running);
    /* the host's cores asked for: each process's busy streams, its GIL-bound ones one core */
    int demand = 0;
    for (size_t p = 0; p < sim->n; p++) {
        int gil = 0, other = 0;
        for (size_t i = 0; i < sim->n; i++) {
            const colo_tenant_run_t *t = &sim->t[i];
            if (t->llm || t->host_proc != (int)p) continue;
            *(t->host_gil ? &gil : &other) += t->busy_streams;
        }
        COLO_CHECK(gil == sim->host.gil_busy[p] && other == sim->host.busy[p],
                   "host process %zu: %d and %d busy streams, counted %d and %d", p, gil, other,
                   sim->host.gil_busy[p], sim->host.busy[p]);
        demand += (gil > 0) + other;
    }
    COLO_CHECK(demand == sim->host.demand, "the host's cores: %d asked for, counted %d", demand,
               sim->host.demand);
}
