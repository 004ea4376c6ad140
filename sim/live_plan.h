/* live_plan.h: what colosim-live would execute for a scenario on a real GPU: which process and
 * which context runs each tenant, the MPS settings, and every open-loop arrival, drawn from the
 * same generators and seeds as the simulator's. CPU-only, so that `--dry-run` and the tests need
 * no GPU (docs/live.md). */
#ifndef COLO_LIVE_PLAN_H
#define COLO_LIVE_PLAN_H

#include "errors.h"
#include "scenario.h"

#include <stdio.h>

typedef enum {
    COLO_LIVE_PRIMARY, /* the process's own (primary) context: time-slicing */
    COLO_LIVE_MPS,     /* an MPS client of the run's private MPS daemon */
    COLO_LIVE_GREEN,   /* a Green Context of its own SMs inside the shared process */
    COLO_LIVE_MIG,     /* the primary context on an existing MIG instance */
} colo_live_ctx_t;

typedef struct colo_live_tenant {
    size_t tenant; /* index into the scenario's tenants */
    int process;   /* OS process that runs it, from 0 */
    colo_live_ctx_t ctx;
    int sms;                      /* Green Context SMs, or the SMs an MPS cap leaves; 0: all */
    int active_thread_percentage; /* MPS: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE; 100: no cap */
    const char *instance;         /* MIG: the instance (profile) it needs, else NULL */
    /* open loop: every arrival in [0, duration) and how many requests arrive then */
    size_t n_arrivals;
    colo_time_t *arrivals;
    int *counts;
    long long requests;
    /* closed loop */
    int clients;
    colo_time_t think;
} colo_live_tenant_t;

typedef struct colo_live_plan {
    colo_share_mode_t mode;
    int n_processes;
    bool mps_daemon; /* the run starts a private MPS control daemon and stops it at the end */
    bool needs_mig;  /* MIG instances must already exist; colosim never changes MIG mode */
    size_t n;
    colo_live_tenant_t *t;
} colo_live_plan_t;

/* Builds the plan. Refuses what a live run cannot do (with the scenario's file and key):
 * request-log replays longer than a run may hold, batch-size variants. 0 or a negative code. */
int colo_live_plan(const colo_scenario_t *sc, colo_live_plan_t *plan, colo_error_t *err);
void colo_live_plan_free(colo_live_plan_t *plan);

/* Prints the plan: processes, contexts, MPS settings, per-tenant arrivals (count, first few
 * times, rate) and each request's ops with the synthetic kernels' launch shapes. */
void colo_live_plan_print(const colo_scenario_t *sc, const colo_live_plan_t *plan, FILE *f);

/* Every open-loop arrival of one tenant in [0, duration), as the simulator draws them (same
 * seed derivation, same generator calls). *at and *count are new arrays (colo_free). */
int colo_arrival_times(const colo_arrival_cfg_t *cfg, uint64_t seed, const char *tenant,
                       colo_time_t duration, colo_time_t **at, int **count, size_t *n,
                       colo_error_t *err);

#endif
