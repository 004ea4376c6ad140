/* live_run_internal.h: what the files of the live-run executor share (not part of live_run.h). */
#ifndef COLO_LIVE_RUN_INTERNAL_H
#define COLO_LIVE_RUN_INTERNAL_H

#include "errors.h"
#include "live_plan.h"
#include "live_run.h"
#include "scenario.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

enum { EXIT_RUN = 1, EXIT_INPUT = 2, EXIT_GOAL = 3, EXIT_INTERRUPTED = 130 };

#define MAX_PROCS 256

/* ---- clocks and processes (live_run.c) ---- */

/* CLOCK_MONOTONIC in ns. */
long long colo_live_now_ns(void);
/* Sleeps until colo_live_now_ns() reaches t, through signals. */
void colo_live_sleep_until(long long t);
/* Sleeps d ns (nothing when d <= 0). */
void colo_live_sleep_ns(long long d);
/* Waits up to ms for pid to exit, then kills it. True when it exited by itself; *st is its
 * status either way. */
bool colo_live_reap_within(pid_t pid, int ms, int *st);
/* Sets ("KEY=VALUE") and removes ("KEY") environment entries in this process. */
void colo_live_apply_env(char env[][COLO_LIVE_ENV_LEN], size_t n);

/* ---- options (live_options.c) ---- */

struct colo_live_opts {
    const char *file, *output, *backend;
    const char **sets;
    size_t n_sets;
    char seed_set[64];
    bool dry_run, self_test, quiet;
    double ready_timeout_s;
    /* children: --child PROC,CTL_FD,STATUS_FD,RUN_DIR */
    const char *child;
};

/* Prints the usage, with the nb backends b (the first the default), to f. */
void colo_live_usage(FILE *f, const char *prog, const colo_live_backend_t *const *b, size_t nb);
/* Parses the command line into o (o->sets allocated, the caller frees it whatever the result).
 * 0 to go on, or an exit status (-1: --help printed, exit 0). */
int colo_live_parse_opts(int argc, char **argv, const char *prog,
                         const colo_live_backend_t *const *b, size_t nb, struct colo_live_opts *o);

/* ---- fit files (live_fit.c) ---- */

/* "TENANT OP ITERS TARGET_NS FITTED_NS" per line; written whole (atomic rename). */
int colo_live_fit_save(const char *run_dir, int proc, const colo_live_fit_t *f);
/* 0, or COLO_EIO when the process's fit file is missing (its fit failed). */
int colo_live_fit_load(const char *run_dir, int proc, colo_live_fit_t *f);

/* ---- a child process (live_child.c) ---- */

/* The child started with --child (o->child): fits, or runs, the tenants of its planned process.
 * Returns its exit status. */
int colo_live_child_main(const struct colo_live_opts *o, const colo_scenario_t *sc,
                         const colo_live_plan_t *plan, const colo_live_backend_t *b);

/* ---- the parent's state (live_run.c) ---- */

struct colo_live_proc {
    pid_t pid;
    int ctl, st; /* our ends of its pipes */
    bool ready, done;
    int status;
    char error[640];
    char device[256];
    const char *uuid;              /* MIG instance */
    char env[1024], fit_env[1024]; /* as given to the run and the fit, the run folder as RUN */
    long long fit_start, fit_end;  /* ns, from the parent's start */
    char fit_error[640];
};

/* What must be undone however the parent ends: children, the MPS daemon, the run folder. */
#define MAX_DAEMONS 8 /* at most 7 MIG instances, or the one of the whole GPU */

struct colo_live_parent_state {
    struct colo_live_proc *procs;
    int n;
    char run_dir[4096];
    const colo_live_plan_t *plan;
    bool mps_running[MAX_DAEMONS];
    char partition[MAX_PROCS][128]; /* MPS static partition ID of each process */
    bool keep_run_dir;              /* a daemon could not be stopped: its folders stay */
    const char *mps_control;
};

extern struct colo_live_parent_state colo_live_parent;

/* ---- MPS control daemons (live_mps.c) ---- */

/* Starts the plan's MPS control daemons in the run folder, and their static partitions, one per
 * client that has one (on gpu_uuid, or a daemon's MIG instance). 0 or a negative code with err
 * set; the daemons started so far are stopped by colo_live_mps_stop. */
int colo_live_mps_start(const colo_scenario_t *sc, const char *gpu_uuid, colo_error_t *err);
/* Stops every daemon this run started. Children are gone first (cleanup's order): a daemon told
 * to quit while its clients live waits for them. When `quit` fails, the daemon's PID (from its
 * pid file) is killed; when that cannot be done either, its folders are kept so that the command
 * printed to stop it still points at them. */
void colo_live_mps_stop(void);

/* ---- nvidia-smi (live_nvidia_smi.c) ---- */

/* Gives each planned MIG process an instance of its profile. 0, or an exit status after saying
 * why. */
int colo_live_assign_mig(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                         struct colo_live_proc *procs, char prof[][32], char uuid[][96],
                         const char *prog);
/* The UUID (GPU-...) of the first GPU `nvidia-smi -L` lists into out; empty when none. */
void colo_live_first_gpu_uuid(char *out, size_t len);
/* EXCLUSIVE_PROCESS lets one process hold the GPU: time-slicing between processes fails (a
 * second context gets CUDA_ERROR_DEVICE_UNAVAILABLE) and only MPS clients share it; PROHIBITED
 * lets none. 0, or an exit status after saying why. */
int colo_live_check_compute_mode(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                                 const char *prog);

/* ---- results (live_results.c) ---- */

/* Reads a tenant's records; its error file, if any, into out->error. */
int colo_live_read_outcome(size_t tenant, colo_live_outcome_t *out);
/* Each tenant's fit, from the fit files: where it was fitted and how close each kernel came. */
int colo_live_fit_results(const colo_scenario_t *sc, const colo_live_plan_t *plan, json_t *tenants);

#endif
