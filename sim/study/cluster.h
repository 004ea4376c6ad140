/* cluster.h: what-if studies of a node or small cluster of GPUs (docs/cluster.md). A scenario
 * with a `cluster` section lists GPUs (models and counts, or as many as needed) and a placement
 * policy; colosim packs the tenants (and their replicas) onto the GPUs and onto MIG instances,
 * MPS clients or Green Context SM partitions of each, simulates every GPU that got tenants, and
 * reports per GPU, per service and overall, including how many GPUs the load needs. */
#ifndef COLO_CLUSTER_H
#define COLO_CLUSTER_H

#include "errors.h"
#include "fleet.h" /* colo_simulate_scenario */

#include <jansson.h>
#include <stdio.h>

/* 1 when the scenario at path (after the overrides) has a cluster section, 0 when it has not,
 * or a negative code (err set) when it cannot be read. */
int colo_cluster_detect(const char *path, const char *const *sets, size_t n, colo_error_t *err);

/* Reads a cluster scenario and, for each GPU model in it, the one-GPU scenario its GPUs will
 * run (traces, GPU descriptions), without placing or simulating anything: what `colosim check`
 * does with a cluster. Describes it on describe unless NULL. 0 or a negative code with err set. */
int colo_cluster_check(const char *path, const char *const *sets, size_t n, FILE *describe,
                       colo_error_t *err);

/* Places and simulates a cluster scenario. *out gets the results (results_format 1, kind
 * "cluster"): "tenants" holds one entry per service (replicas merged), "cluster" the placement,
 * every GPU's own results and the summary. 0 or a negative code with err set. */
int colo_cluster_run(const char *path, const char *const *sets, size_t n, json_t **out,
                     colo_error_t *err);

/* The same, recording each simulated GPU's timeline (tl: fleet.h; NULL: none). */
int colo_cluster_run_timeline(const char *path, const char *const *sets, size_t n,
                              const colo_fleet_timeline_t *tl, json_t **out, colo_error_t *err);

/* The placement and per-service table of a cluster's results, for people. */
void colo_cluster_print(json_t *results, FILE *f);


/* Reads a scenario file, one GPU or a cluster, with the overrides, as colo_simulate_file would,
 * and simulates nothing. 0 or a negative code with err set. */
int colo_check_file(const char *path, const char *const *sets, size_t n, colo_error_t *err);

/* Simulates a scenario file, one GPU or a cluster, into *out (results JSON). */
int colo_simulate_file(const char *path, const char *const *sets, size_t n, json_t **out,
                       colo_error_t *err);

#endif
