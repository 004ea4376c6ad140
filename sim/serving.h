/* serving.h: the serving layer: tenants, their requests, and one simulation run. */
#ifndef COLO_SERVING_H
#define COLO_SERVING_H

#include "event_queue.h"
#include "hardware.h"
#include "metrics.h"
#include "scenario.h"
#include "timeslice.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

struct colo_sim;

/* One tenant's state during a run: a FIFO of waiting requests, the request being served (one
 * at a time, its ops in stream order), and counters for requests arriving in the window. */
typedef struct colo_tenant_run {
    struct colo_sim *sim;
    size_t idx;
    const colo_tenant_cfg_t *cfg;
    gsl_rng *rng;
    colo_time_t *op_time; /* per op: kernel duration on the target GPU, or copy time */
    colo_time_t isolated; /* one request alone, start to finish */
    /* waiting requests: ring buffer of arrival times */
    colo_time_t *queue;
    size_t qcap, qhead, qlen;
    /* the request being served */
    bool busy;
    colo_time_t cur_arrival, host_clock;
    size_t cur_op;
    /* requests that arrived in [warmup, duration): every one is completed, dropped or still
     * in flight at the end */
    uint64_t arrived, completed, dropped, slo_met;
    /* requests of any arrival time that completed in [warmup, duration): the throughput */
    uint64_t finished_in_window;
    colo_samples_t latency;
} colo_tenant_run_t;

/* Statistics of one PCIe direction: time with at least one copy in progress. */
struct colo_pcie_dir {
    int active;
    colo_time_t since, busy_time;
};

typedef struct colo_sim {
    const colo_scenario_t *sc; /* borrowed */
    colo_eq_t eq;
    colo_ts_t ts;
    colo_hw_t hw; /* the GPU's resources: copies run on them */
    bool hw_ready;
    size_t n;
    colo_tenant_run_t *t;
    struct colo_pcie_dir pcie[2];
    colo_time_t end; /* duration + drain: nothing runs past this */
    colo_time_t last_event;
    int failed; /* first error met inside an event */
} colo_sim_t;

/* Builds a run of scenario sc (borrowed; must outlive the run): scales every kernel to the
 * scenario's GPU and seeds each tenant's stream from the seed and its name. *out is new. */
int colo_sim_new(const colo_scenario_t *sc, colo_sim_t **out, colo_error_t *err);

/* Runs to the end: arrivals in [0, duration), then up to drain more for requests in flight.
 * 0, or COLO_ENOMEM with err set. */
int colo_sim_run(colo_sim_t *sim, colo_error_t *err);

void colo_sim_free(colo_sim_t *sim);

/* Per-op times of tenant cfg's trace on gpu, alone (kernels from the kernel model on all SMs,
 * copies at the link's full rate), into op_time (may be NULL), and the latency of one request
 * alone: ops in stream order, host gaps on the CPU's clock, copies synchronous. Errors when a
 * kernel cannot run on gpu. */
int colo_tenant_times(const colo_tenant_cfg_t *cfg, const colo_gpu_t *gpu, colo_time_t *op_time,
                      colo_time_t *isolated, colo_error_t *err);

#endif
