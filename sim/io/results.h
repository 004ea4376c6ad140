/* results.h: results of a run as JSON (docs/results.md) and as a table for the terminal. */
#ifndef COLO_RESULTS_H
#define COLO_RESULTS_H

#include "errors.h"
#include "serving.h"

#include <jansson.h>
#include <stdio.h>

/* Builds the results object of a finished run. overrides (n of them) are recorded as given.
 * Returns a new reference, or NULL when out of memory. Deterministic: the same run gives the
 * same bytes when dumped with colo_results_write. */
json_t *colo_results_json(const colo_sim_t *sim, const char *const *overrides, size_t n);

/* The "scenario" object of a results file (file, GPU, calibration, window, sharing, overrides),
 * shared by simulated and live results. A new reference, or NULL when out of memory. */
json_t *colo_results_scenario_json(const colo_scenario_t *sc, const char *const *overrides,
                                   size_t n);

/* A latency summary as the results' "latency_ms" object. NULL when out of memory. */
json_t *colo_latency_json(const colo_latency_summary_t *s);

/* Writes results atomically to path ("-": standard output). 0 or a negative code, err set. */
int colo_results_write(json_t *results, const char *path, colo_error_t *err);

/* Prints the per-tenant summary table of a results object. */
void colo_results_print(json_t *results, FILE *f);

/* Prints several runs of the same tenants side by side (names[i] heads results[i]; a NULL
 * result is shown as not run). */
void colo_results_print_compare(json_t *const *results, const char *const *names, size_t n,
                                FILE *f);

/* Writes one CSV row per tenant of each of the n runs (NULL entries skipped) to path,
 * atomically: the columns are listed in docs/results.md. 0 or a negative code, err set. */
int colo_results_write_csv(json_t *const *runs, size_t n, const char *path, colo_error_t *err);

/* A routed service's autoscaler (its leader t's router has one): bounds, the replicas on over
 * time as [s, count] pairs at each change, and their mean over the window (results_route.c). */
json_t *colo_results_autoscale(const colo_sim_t *sim, const colo_tenant_run_t *t);

#endif
