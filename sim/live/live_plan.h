/* live_plan.h: what colosim-live would execute for a scenario on a real GPU: which process and
 * which context runs each tenant, the MPS settings, and every open-loop arrival, drawn from the
 * same generators and seeds as the simulator's. CPU-only, so that `--dry-run` and the tests need
 * no GPU (docs/live.md). */
#ifndef COLO_LIVE_PLAN_H
#define COLO_LIVE_PLAN_H

#include "errors.h"
#include "scenario.h"
#include "serving.h"

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
    int daemon;    /* the MPS daemon (index into plan.daemons) it is a client of, or -1 */
    int partition; /* MPS static partitions: the SMs of its partition (the simulator's), else 0 */
    /* Green Contexts: groups [group_first, group_first + group_count) of the run's one split */
    int group_first, group_count;
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

/* A private MPS control daemon the run starts and stops: one for the whole GPU under MPS, or one
 * per MPS-shared MIG instance (NVIDIA's MIG user guide, "MIG with CUDA MPS": one daemon per
 * instance, each with its own pipe folder and CUDA_VISIBLE_DEVICES=MIG-UUID). */
typedef struct colo_live_daemon {
    int instance;           /* the scenario's MIG instance, or -1: the whole GPU */
    bool static_partitions; /* started with -S; each client gets an sm_partition */
} colo_live_daemon_t;

typedef struct colo_live_plan {
    colo_share_mode_t mode;
    int n_processes;
    bool mps_daemon; /* the run starts private MPS control daemons and stops them at the end */
    bool needs_mig;  /* MIG instances must already exist; colosim never changes MIG mode */
    int n_daemons;
    colo_live_daemon_t *daemons;
    /* Green Contexts: the run splits the device's SMs once into green_groups groups of
     * green_unit SMs (cuDevSmResourceSplitByCount keeps groups disjoint only within one call) */
    int green_unit, green_groups;
    size_t n;
    colo_live_tenant_t *t;
} colo_live_plan_t;

/* What a planned process is started for: fitting its synthetic kernels alone (one process at a
 * time, before any MPS daemon starts), or the run itself. */
typedef enum { COLO_LIVE_FIT, COLO_LIVE_RUN } colo_live_phase_t;

#define COLO_LIVE_ENV_MAX 8
#define COLO_LIVE_ENV_LEN 4400

/* The environment process proc starts with in a phase: entries "KEY=VALUE" to set and "KEY" to
 * remove, n returned. run_dir: the run's folder (MPS pipe folders live in it); uuid: the MIG
 * instance (MIG-...) the process was given, or NULL; partition: its MPS static partition ID, or
 * NULL. Processes that are not MPS clients get an empty pipe folder, so that a system MPS daemon
 * does not take them as clients. */
size_t colo_live_env(const colo_live_plan_t *plan, int proc, colo_live_phase_t phase,
                     const char *run_dir, const char *uuid, const char *partition,
                     char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN]);

/* The environment daemon d starts with (same form). uuid: its MIG instance, or NULL. */
size_t colo_live_daemon_env(const colo_live_plan_t *plan, int d, const char *run_dir,
                            const char *uuid, char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN]);

/* The pipe folder of daemon d (d < 0: the empty one non-clients get), under run_dir. */
void colo_live_pipe_dir(const char *run_dir, int d, char *buf, size_t len);

/* Where a tenant's synthetic kernels are fitted and what their targets are: the whole GPU (time
 * slicing, MPS, Green Contexts: the placement is applied after the fit, so that the run shows
 * its slowdown), or the MIG instance (no whole GPU exists under MIG mode). *rates gets the
 * simulator's place; where (if not NULL) a short description. */
void colo_live_fit_place(const colo_scenario_t *sc, const colo_live_plan_t *plan, size_t i,
                         colo_place_rates_t *rates, char *where, size_t where_len);

/* The Green Context split as the driver granted it: group_sms[g] SMs in group g (n_groups
 * created). Checks that the plan's groups exist and that each tenant gets the SMs the simulator
 * assumed; granted[i] (scenario tenant i) gets what it got. 0 or COLO_EUNSUPPORTED with err
 * naming the tenant. */
int colo_live_green_check(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                          const unsigned *group_sms, int n_groups, int *granted,
                          colo_error_t *err);

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
