/* scenario.h: scenario files (libconfig): the GPU, the sharing mechanism and the tenants. */
#ifndef COLO_SCENARIO_H
#define COLO_SCENARIO_H

#include "arrival.h"
#include "errors.h"
#include "gpu.h"
#include "simtime.h"
#include "trace.h"

#include <stdint.h>

typedef enum {
    COLO_SHARE_TIMESLICE,
    COLO_SHARE_MPS,
    COLO_SHARE_MIG,
    COLO_SHARE_GREEN,
} colo_share_mode_t;

typedef struct colo_tenant_cfg {
    char *name;
    char *trace_path;            /* resolved against the scenario's folder */
    const colo_trace_t *trace;   /* borrowed from the scenario's trace table */
    const colo_gpu_t *trace_gpu; /* the GPU the trace was measured on (borrowed, ditto) */
    colo_arrival_cfg_t arrival;
    double slo_ms; /* 0: no SLO given */
    colo_time_t slo;
} colo_tenant_cfg_t;

typedef struct colo_scenario {
    char *path;        /* as given */
    char *dir;         /* its folder, for relative paths */
    char *description; /* may be NULL */
    colo_gpu_t *gpu;
    uint64_t seed;
    colo_time_t duration; /* arrivals happen in [0, duration) */
    colo_time_t warmup;   /* requests arriving before this are not measured */
    colo_time_t drain;    /* after duration, time allowed for requests in flight */
    struct {
        colo_share_mode_t mode;
        char *timeslice_name; /* "default", "short", "medium", "long", or "custom" */
        colo_time_t timeslice;
        colo_time_t switch_cost;
    } sharing;
    size_t n_tenants;
    colo_tenant_cfg_t *tenants;
    /* Traces and their source GPUs, each loaded once however many tenants use it. */
    size_t n_traces;
    colo_trace_t **traces;
    colo_gpu_t **trace_gpus;
} colo_scenario_t;

/* Loads, overrides and validates a scenario. overrides are "key.path=value" strings applied in
 * order after reading (the CLI's --set); an override of a key the file lacks creates it.
 * Everything the scenario refers to (GPU, traces) is loaded and checked. *out is new
 * (colo_scenario_free). Errors: FILE:LINE: key: what, in err, and a negative code. */
int colo_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
                       colo_scenario_t **out, colo_error_t *err);
void colo_scenario_free(colo_scenario_t *sc);

const char *colo_share_mode_name(colo_share_mode_t m);

#endif
