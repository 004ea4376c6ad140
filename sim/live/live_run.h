/* live_run.h: the executor of live runs (docs/live.md). The parent process loads the scenario,
 * builds its plan (live_plan.h), starts a private MPS daemon when the plan needs one, re-executes
 * itself once per planned process, holds every process at a start barrier, injects the
 * scenario's faults as real crashes, and gathers each tenant's request records into results in
 * the simulator's schema. What runs a request is a backend: the CUDA one in calibrate/live.cu
 * (colosim-live), or the CPU stand-in here, which sleeps each request's simulated isolated time
 * and so checks the harness on any machine. Tenants with a `command` run a real program instead,
 * whatever the backend. */
#ifndef COLO_LIVE_RUN_H
#define COLO_LIVE_RUN_H

#include "errors.h"
#include "live_plan.h"
#include "scenario.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One fitted kernel: op of scenario tenant `tenant` runs `iters` work iterations, which took
 * fitted_ns alone where the simulator gives it target_ns there (colo_live_fit_place). */
typedef struct colo_live_fit_entry {
    size_t tenant, op;
    long long iters;
    double target_ns, fitted_ns;
} colo_live_fit_entry_t;

/* The fit of one process: what its backend's fit wrote, read back by its run. */
typedef struct colo_live_fit {
    colo_live_fit_entry_t *e;
    size_t n, cap;
} colo_live_fit_t;

/* Appends an entry; 0 or COLO_ENOMEM. */
int colo_live_fit_add(colo_live_fit_t *f, size_t tenant, size_t op, long long iters,
                      double target_ns, double fitted_ns);
void colo_live_fit_free(colo_live_fit_t *f);

typedef struct colo_live_backend {
    const char *name;    /* --backend NAME */
    const char *summary; /* one line for --help */
    bool uses_gpu;       /* it needs the MPS daemon and MIG instances the plan asks for */
    /* In a fitting child, alone on the GPU (one process at a time, before any MPS daemon
     * starts): sizes the synthetic kernels of process proc's tenants (those whose plan entry has
     * that process and whose scenario entry has no command) against their targets where
     * colo_live_fit_place says, and adds one entry per kernel to fit. */
    int (*fit)(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
               colo_live_fit_t *fit, char *device, size_t device_len, colo_error_t *err);
    /* In a run child, before the barrier: sets up process proc's synthetic tenants in their
     * placement with the fit its fitting child made. Writes a one-line description of the
     * device into device. 0 or a negative code with err set. */
    int (*prepare)(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                   const colo_live_fit_t *fit, char *device, size_t device_len, colo_error_t *err);
    /* Runs one request of tenant t (an index into the scenario) to completion. Called from the
     * tenant's own thread, concurrently with other tenants'. 0 or a negative code. */
    int (*request)(size_t t, colo_error_t *err);
    void (*finish)(void);
    /* --self-test: each tenant's trace alone; prints a report. 0: all within the goal, 1: not,
     * negative: could not run. NULL when the backend has none. */
    int (*self_test)(const colo_scenario_t *sc, FILE *report, colo_error_t *err);
} colo_live_backend_t;

/* Sleeps each request's isolated time as the simulator computes it (no contention). */
extern const colo_live_backend_t colo_live_cpu_backend;

/* One request as a tenant's thread saw it, in ns from the start barrier. */
typedef struct colo_live_record {
    long long arrival, start, end;
    int dropped; /* 0 served; 1 dropped (waited past the tenant's deadline) */
} colo_live_record_t;

/* What a live run measured for one tenant. */
typedef struct colo_live_outcome {
    colo_live_record_t *rec;
    size_t n;
    char error[640]; /* empty: its process ended normally */
} colo_live_outcome_t;

/* Results in the simulator's schema (docs/results.md) from the outcomes of every tenant of the
 * plan (out[i] for scenario tenant i). live is the run's own record (backend, device, processes),
 * taken over. A new reference, or NULL when out of memory. */
json_t *colo_live_results(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                          const colo_live_outcome_t *out, const char *const *overrides,
                          size_t n_overrides, json_t *live);

/* Why a CUDA call of a live process may have failed, in words a user can act on, for the CUDA
 * runtime error called name ("cudaErrorNoDevice", as cudaGetErrorName gives it): no driver or
 * one too old, no device visible, the GPU busy in another compute mode, the MPS daemon refusing
 * or unreachable (mps_client: the process was meant to be one of its clients), a build without
 * this GPU's architecture. NULL for other errors. A static string. */
const char *colo_live_cuda_hint(const char *name, bool mps_client);

/* The whole command: `PROG SCENARIO [options]` (see the usage it prints). self_argv (n_self
 * strings) re-executes this program as a child ("/proc/self/exe" and any subcommand). The first
 * backend is the default. Returns the exit status: 0 done; 1 failure while running (no results,
 * or results written but a tenant's process failed unexpectedly, said so); 2 bad input or
 * usage, or MIG instances the scenario needs do not exist; 3 --self-test missed its goal;
 * 130 interrupted (nothing written). */
int colo_live_main(int argc, char **argv, const char *prog, const char *const *self_argv,
                   size_t n_self, const colo_live_backend_t *const *backends, size_t n_backends);

#endif
