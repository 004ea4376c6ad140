/* study_internal.h: what study.c (the study file, sweeps), search.c and point_pool.c share. */
#ifndef COLO_STUDY_INTERNAL_H
#define COLO_STUDY_INTERNAL_H

#include "errors.h"
#include "study.h"

#include <jansson.h>
#include <stddef.h>

/* rel joined to dir, or NULL when out of memory. */
char *colo_study_joined(const char *dir, const char *rel);

/* A number to digits significant digits as --set takes it, kept a float for the loader:
 * 2 -> "2.0". */
void colo_study_float_text(char *buf, size_t n, int digits, double v);

/* Simulates the study's scenario, one GPU or a cluster, with these overrides (a point's, as
 * colo_study_point gives them, and search's key and seed after them) into *res (results JSON,
 * new): colo_simulate_file. An error in an override is blamed on the study's line that wrote
 * it. */
int colo_study_simulate(const colo_study_t *s, char **sets, size_t n, json_t **res,
                        colo_error_t *err);

/* Refuses two of the study's overrides (its set, its axes, its search key) on one key: the later
 * would undo the earlier at every point. Blamed on the later, at its line. */
int colo_study_one_key_each(const colo_study_t *s, colo_error_t *err);

/* The search's "key=value" override at x (a count as a whole number, else as --set takes a
 * number), into buf. */
void colo_study_search_kv(const colo_study_t *s, double x, char *buf, size_t n);

/* The simulations the study's points have made so far, counted across the pool's processes
 * (point_pool.c) for the progress bar: a search's probes. colo_study_runs_open before the pool
 * forks (0, or nonzero when the count cannot be shared: then it stays 0), _close after. */
int colo_study_runs_open(void);
void colo_study_runs_close(void);
void colo_study_count_run(void);
unsigned long long colo_study_runs(void);

/* The accuracy that applies to the study's answers (accuracy.h), from its points' scenarios
 * (each value of each axis; a search's key at its top): colo_accuracy_find's object. */
json_t *colo_study_accuracy(const colo_study_t *s);

/* The n strings as a new JSON array (copied), or NULL when out of memory. */
json_t *colo_study_string_array(char **v, size_t n);

/* Point i's axis values as a new JSON object { key: value }, or NULL when out of memory. */
json_t *colo_study_values_json(const colo_study_t *s, size_t i);

/* The number at key k of o (0 when it is absent or not a number). */
double colo_study_num(json_t *o, const char *k);

/* Runs every point of the study into DIR/sub (by o's runner, or here), then reads them into
 * *points and starts the result document of this kind (*doc, with the points). 1 when another
 * process gathers the results (an MPI worker); 0; or a negative code with err set. */
int colo_study_run_and_gather(const colo_study_t *s, const colo_sweep_opts_t *o, const char *sub,
                              colo_point_fn fn, const char *kind, json_t **points, json_t **doc,
                              colo_error_t *err);

#endif
