/* cluster_internal.h: what cluster.c, placement.c and cluster_results.c share: the cluster
 * read from the file, its replicas and GPUs, and the one-GPU scenarios made from it. */
#ifndef COLO_CLUSTER_INTERNAL_H
#define COLO_CLUSTER_INTERNAL_H

#include "errors.h"
#include "gpu.h"
#include "router.h"
#include "scenario.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAX_GPUS 1024

typedef enum {
    COLO_CLUSTER_FIRST_FIT,
    COLO_CLUSTER_BEST_FIT,
    COLO_CLUSTER_INTERFERENCE
} colo_cluster_policy_t;
/* The policies' names, in colo_cluster_policy_t order (cluster.c). */
extern const char *const colo_cluster_policy_names[];

/* The part of a GPU a replica gets: the whole GPU (timeslice, MPS), a MIG profile, or SMs. */
typedef struct part {
    const colo_mig_profile_t *prof;
    int sms;
} colo_cluster_part_t;

typedef struct replica {
    size_t tenant;
    int k;   /* 1-based replica number */
    int gpu; /* index into gpus; -1: not placed */
    colo_cluster_part_t part;
    double demand; /* share of its part it keeps busy alone: rate x time alone */
    double size;   /* on the first GPU model, for the placement order */
} colo_cluster_replica_t;

typedef struct gpu {
    size_t pool, model;
    size_t n;
    size_t *members; /* replica indices, in placement order */
    double util;     /* timeslice, MPS: sum of demands */
    int sms_used;    /* Green Contexts */
    int taken[COLO_MIG_MAX_SLOTS], slices, counts[COLO_MIG_MAX_PROFILES]; /* MIG */
    int *placement; /* MIG: start slot of each member's instance */
    double memory;
    int tp_ranks; /* a tensor-parallel replica's other ranks: GPUs of its pool it also holds
                   * (not simulated: they run rank 0's kernels in lockstep, docs/llm.md) */
} colo_cluster_gpu_t;

typedef struct cluster {
    const char *path;
    const char *const *sets;
    size_t n_sets;
    colo_error_t *err;
    /* read from the file */
    colo_cluster_policy_t policy;
    bool given_order;
    bool fit_memory; /* fit = "memory": time-slicing and MPS place by memory alone */
    const struct colo_fleet_timeline *tl; /* timelines of the placed GPUs' runs (NULL: none) */
    double headroom, attainment, trial_s;
    colo_share_mode_t mode;
    int mps_clients;
    size_t n_pools;
    struct pool {
        char *model;
        int count; /* -1: as many as needed */
        int opened;
        size_t model_idx;
    } * pools;
    size_t n_tenants;
    struct tenant {
        int replicas; /* 0: auto */
        double memory_gib;
        double rate; /* offered requests/s of the whole service; < 0: closed loop */
        colo_route_cfg_t route; /* routed among its replicas (route.ops NULL: load split) */
        int router_line;                      /* where the file says so */
    } * tenants;
    /* one template scenario per distinct model: every tenant, for times alone */
    size_t n_models;
    colo_scenario_t **models;
    /* placement */
    size_t n_replicas;
    colo_cluster_replica_t *replicas;
    size_t n_gpus;
    colo_cluster_gpu_t *gpus;
    uint64_t seed;
    size_t *model_pool; /* a pool of each model */
    /* per tenant and model: its replicas' part, demand, SLO attainment alone (trial) */
    struct choice {
        bool done;
        colo_cluster_part_t part;
        double demand, att;
    } * choices;
} colo_cluster_t;

/* What one generated scenario holds. */
typedef struct gen {
    const colo_cluster_t *c;
    const char *model;
    const size_t *members; /* replica indices; NULL with n = SIZE_MAX: every tenant, alone */
    size_t n;
    const colo_cluster_part_t *parts;
    const int *placements;
    double duration_s; /* 0: the file's */
    uint64_t seed;
    const size_t *leaders; /* in a fleet: per tenant, its leader replica (NULL: not a fleet) */
} colo_cluster_gen_t;

/* ---- cluster_gpu.c ---- */

/* A service's name, as the scenario reader read it. */
const char *colo_cluster_tenant_name(const colo_cluster_t *c, size_t t);

/* A replica's tenant name: NAME, or NAME-rK when its service has several. */
void colo_cluster_replica_name(const colo_cluster_t *c, const colo_cluster_replica_t *r, char *buf,
                               size_t n);

/* The template scenario of a GPU model: every tenant on one GPU of it, time-sliced, for their
 * times alone. */
int colo_cluster_load_template(const colo_cluster_t *c, const char *model, colo_scenario_t **out);

/* Simulates one GPU's scenario into *res. */
int colo_cluster_simulate_gpu(const colo_cluster_t *c, const colo_cluster_gen_t *g, json_t **res);

/* Simulates every placed GPU into gpu_res[0 .. n_gpus): each alone, or, when a service routes
 * among its replicas, all in one event order (fleet.h); then svc_lat[t] gets routed service t's
 * latency over all its requests ({mean, p50, p90, p99, p999, max} ms; NULL for the others). */
int colo_cluster_simulate_all(const colo_cluster_t *c, json_t **gpu_res, json_t **svc_lat);

/* ---- placement.c ---- */

/* Expands services into replicas, sized on the first GPU model, in placement order. "auto":
 * as many as keep each within headroom of the largest part; interference-aware, more while one
 * alone on the largest part misses the SLO goal in a trial run. */
int colo_cluster_make_replicas(colo_cluster_t *c);

/* Places one replica by the policy; leaves it unplaced when no GPU is left. */
int colo_cluster_place(colo_cluster_t *c, size_t ri);

/* ---- cluster_results.c ---- */

/* The results document of a placed and simulated cluster (gpu_res[i]: GPU i's results,
 * svc_lat[t]: a routed service's latency over all its requests, or NULL; borrowed: the
 * document takes references of its own): new, or NULL when out of memory. */
json_t *colo_cluster_results_json(const colo_cluster_t *c, json_t *const *gpu_res,
                                  json_t *const *svc_lat);

#endif
