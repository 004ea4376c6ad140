/* study.h: studies of many simulations (docs/studies.md): a base scenario and axes of scenario
 * keys to vary, as a grid or a list of points; `colosim sweep` runs every point in parallel on
 * local cores and resumes an interrupted study; `colosim search` finds, for every point, the
 * highest value of one key (usually load_scale) at which every tenant still meets its SLO. */
#ifndef COLO_STUDY_H
#define COLO_STUDY_H

#include "errors.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct colo_axis {
    char *key;     /* a scenario key, as --set takes it */
    int line;      /* where the study file names it */
    size_t n;      /* values */
    char **values; /* as --set values: "mps", "0.5" */
} colo_axis_t;

typedef struct colo_study {
    char *path, *dir;
    char *scenario; /* the base scenario, resolved against the study's folder */
    int scenario_line;
    char *out_dir; /* where results go: the study's "output", else NAME.out beside it */
    bool grid;     /* grid: every combination; list: points as written */
    size_t n_axes;
    colo_axis_t *axes;
    size_t n_sets;
    char **sets;    /* fixed overrides for every point */
    int *set_lines; /* where the study file writes each */
    /* list mode: points[i] has one value per axis (axes then name the columns) */
    size_t n_points;
    char ***points;
    /* search */
    struct {
        bool given;
        char *key;
        int line;
        bool integer; /* lo and hi written as integers: the key is a count (copies), bisected
                       * exactly to the largest integer that meets the goal */
        double lo, hi, tolerance;
        int replications;
        int max_replications; /* a value its replications cannot decide runs more seeds, up
                               * to this many (4 x replications unless given) */
        double confidence;    /* of the Wilson bounds on each tenant's SLO attainment */
        double attainment;    /* the share of requests within SLO every tenant must reach */
    } search;
    /* plot */
    struct {
        char *x, *by; /* axis keys; by may be NULL */
        char *y;      /* "p50", "p90", "p99", "p999", "mean", "throughput", "slo_attainment" */
    } plot;
} colo_study_t;

/* Reads a study file (libconfig). Errors name the file, line and key. *out is new. */
int colo_study_load(const char *path, colo_study_t **out, colo_error_t *err);
void colo_study_free(colo_study_t *s);

/* Refuses a study that names itself as its scenario, or no point of which can be set up (each
 * point's scenario loaded with its overrides, and the search key at lo when with_search, none
 * simulated, until one loads): the first point's error, blamed on the study's line. 0 or a
 * negative code with err set. */
int colo_study_check(const colo_study_t *s, bool with_search, colo_error_t *err);

/* Number of points, and the overrides of point i: the study's sets, then one "key=value" per
 * axis. *sets is a new array of n_sets strings (colo_study_point_free). */
size_t colo_study_n_points(const colo_study_t *s);
int colo_study_point(const colo_study_t *s, size_t i, char ***sets, size_t *n_sets);
void colo_study_point_free(char **sets, size_t n);
/* The value of axis a at point i (borrowed). */
const char *colo_study_value(const colo_study_t *s, size_t i, size_t a);

typedef struct colo_sweep_opts colo_sweep_opts_t;

/* Computes one point: the document its file holds (NULL when out of memory). */
typedef json_t *(*colo_point_fn)(const colo_study_t *s, size_t i, char **sets, size_t n);

/* Runs fn for every point not yet finished in dir (colo_study_todo), each written whole to
 * colo_study_point_file(dir, i). 0 when every point is done and this process should gather
 * them; 1 when another process gathers them (an MPI worker rank); negative with err set. */
typedef int (*colo_points_runner_fn)(const colo_study_t *s, const colo_sweep_opts_t *o,
                                     const char *dir, colo_point_fn fn, colo_error_t *err);

struct colo_sweep_opts {
    int jobs;      /* worker processes; 0: all online cores */
    bool progress; /* a progress bar on standard error */
    bool quiet;
    const char *out_dir;          /* overrides the study's */
    colo_points_runner_fn runner; /* NULL: forked processes on this machine */
};

/* Runs every point not already finished in the output folder (points/NNNNNN.json, written
 * whole or not at all), then writes sweep.json and sweep.csv there (deterministic: the same
 * bytes on 1 core or many). Points that fail (a layout a mechanism cannot hold) are recorded
 * with their error. 0, or a negative code with err set. */
int colo_sweep_run(const colo_study_t *s, const colo_sweep_opts_t *o, colo_error_t *err);

/* The finest search tolerance: a relative step a double can still take many times over (its
 * precision is 2.2e-16), and the most bisection steps of one search (2^-200 of any range). */
#define COLO_SEARCH_MIN_TOLERANCE 1e-12
#define COLO_SEARCH_MAX_STEPS 200

/* For each point, bisects the search key between lo and hi (colo_search_point): the highest
 * value at which every tenant's SLO attainment, its requests pooled over the replications, is
 * at least the goal. Writes search.json and search.csv to the output folder and prints the
 * table. 0 or a negative code. */
int colo_search_run(const colo_study_t *s, const colo_sweep_opts_t *o, colo_error_t *err);

/* Runs the search at one point: *capacity gets the answer (lo when even lo fails, with
 * *lo_fails; hi when hi passes, with *hi_passes): the highest value at which every tenant's
 * attainment, pooled over the replications, is at least the goal. A value whose replications
 * cannot decide that at the study's confidence (Wilson score bounds on the pooled requests) is
 * run with more seeds, a batch of replications at a time, up to max_replications. *sure (when
 * not NULL): whether the values that fix the capacity (the one it passed at, the lowest above
 * that it failed at) were decided so. rep_caps
 * (replications doubles, or NULL: not wanted) gets each replication's own capacity by the same rule
 * on its requests alone: the same bisection on its seed, started from what the shared probes showed
 * of it, so it costs a few single runs more. *probes (when not NULL) gets every value tried, in
 * order (value, requests, attainment, its bounds, runs, verdict): new JSON. For tests and for
 * colo_search_run. */
int colo_search_point(const colo_study_t *s, char **sets, size_t n_sets, double *capacity,
                      bool *lo_fails, bool *hi_passes, bool *sure, double *rep_caps,
                      json_t **probes, colo_error_t *err);

/* ---- the pieces a points runner is made of (the local one in study.c, MPI in study_mpi.c) ---- */

/* dir/NNNNNN.json */
void colo_study_point_file(char *buf, size_t n, const char *dir, size_t i);

/* Makes dir if needed and lists, in order, the points without a finished file there (one made
 * with the same overrides): the resume rule. *todo is new (colo_free). */
int colo_study_todo(const colo_study_t *s, const char *dir, size_t **todo, size_t *n_todo,
                    colo_error_t *err);

/* A pool of forked processes, each computing one point and writing its file. The children
 * never return to the caller; a point that crashes its child is reported as not ok. */
typedef struct colo_point_pool colo_point_pool_t;
colo_point_pool_t *colo_pool_new(int jobs); /* NULL when out of memory */
void colo_pool_free(colo_point_pool_t *p);
bool colo_pool_full(const colo_point_pool_t *p);
int colo_pool_running(const colo_point_pool_t *p);
int colo_pool_start(colo_point_pool_t *p, const colo_study_t *s, colo_point_fn fn, size_t i,
                    const char *file, colo_error_t *err);
/* Starts todo[*next], todo[*next + 1], ... (each into colo_study_point_file(dir, i)) while the
 * pool has room. */
int colo_pool_fill(colo_point_pool_t *p, const colo_study_t *s, colo_point_fn fn, const char *dir,
                   const size_t *todo, size_t n_todo, size_t *next, colo_error_t *err);
/* Waits (block) or looks (not block) for a child to finish: 1 with its point and whether its
 * file was written, 0 when none finished or none is running. */
int colo_pool_reap(colo_point_pool_t *p, bool block, size_t *point, bool *ok);

/* The progress bar on standard error (when on), redrawn at most ten times a second. */
typedef struct colo_study_progress {
    bool on;
    size_t total, skipped;
    double t0, last;
} colo_study_progress_t;
void colo_study_progress(colo_study_progress_t *pr, size_t done, bool final);
/* "N of M points were already done" unless quiet. */
void colo_study_say_skipped(const colo_sweep_opts_t *o, size_t skipped, size_t total);
/* 0, or the error for failed points whose files could not be written. */
int colo_study_points_failed(const char *dir, int failed, colo_error_t *err);

/* COLO_EINTR with the message of a study stopped by a signal: how many of its points are
 * written, and that running it again finishes it. */
int colo_study_stopped(const char *dir, size_t written, size_t total, colo_error_t *err);

#endif
