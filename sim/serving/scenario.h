/* scenario.h: scenario files (libconfig): the GPU, the sharing mechanism and the tenants. */
#ifndef COLO_SCENARIO_H
#define COLO_SCENARIO_H

#include "arrival.h"
#include "cfg.h"
#include "errors.h"
#include "gpu.h"
#include "host.h"
#include "router.h"
#include "scheduler.h"
#include "simtime.h"
#include "trace.h"

#include <stdbool.h>
#include <stdint.h>

#define COLO_MAX_BATCH 65536   /* requests in one batch */
#define COLO_MAX_INSTANCES 64  /* requests in flight at once per tenant */

typedef enum {
    COLO_SHARE_TIMESLICE,
    COLO_SHARE_MPS,
    COLO_SHARE_MIG,
    COLO_SHARE_GREEN,
} colo_share_mode_t;

/* A MIG GPU instance of the layout. */
typedef struct colo_mig_instance {
    char *name;
    const colo_mig_profile_t *profile; /* borrowed from the GPU */
    int placement;                     /* start slot on the memory-slice axis */
    colo_share_mode_t share;           /* inside it: COLO_SHARE_TIMESLICE or COLO_SHARE_MPS */
    int first_sm;                      /* its SMs: [first_sm, first_sm + profile->sms) */
} colo_mig_instance_t;

/* A fatal fault injected into a tenant. */
typedef struct colo_fault {
    size_t tenant;
    colo_time_t at;
} colo_fault_t;

/* One of a tenant's traces: the same model measured at one batch size. */
typedef struct colo_variant {
    const colo_trace_t *trace; /* borrowed from the scenario's trace table */
    const colo_gpu_t *gpu;     /* the GPU it was measured on (borrowed, ditto) */
    char *path;
    bool aligned; /* has the same ops, in order and by name, as the variant before it */
} colo_variant_t;

struct colo_llm_cfg;

typedef struct colo_tenant_cfg {
    char *name;
    struct colo_llm_cfg *llm; /* an LLM tenant (llm_cfg.h): its trace is the prefill of a
                               * typical request; NULL: a tenant of kernel traces */
    char *trace_path;            /* resolved against the scenario's folder */
    const colo_trace_t *trace;   /* borrowed from the scenario's trace table */
    const colo_gpu_t *trace_gpu; /* the GPU the trace was measured on (borrowed, ditto) */
    colo_arrival_cfg_t arrival;
    double slo_ms; /* 0: no SLO given */
    colo_time_t slo;
    double memory_gib; /* device memory it holds; 0: not given */
    /* traces by batch size, ascending; variants[0] is also trace/trace_gpu/trace_path */
    size_t n_variants;
    colo_variant_t *variants;
    /* how it runs its kernels */
    int instances;                /* requests in flight at once, each on its own stream */
    bool cuda_graphs;             /* a request is one CUDA graph launch */
    colo_fp32_math_t fp32_math;   /* FP32 convolutions and matmuls on TF32 tensor cores */
    colo_framework_t framework;   /* what issues its kernels (host.h) */
    colo_time_t host_launch;      /* its host time per launch alone (0: the trace's gaps) */
    colo_math_t precision;        /* its GEMMs and convolutions run at this class; AUTO: the
                                   * trace's own (docs/model.md, "Precision") */
    /* dynamic batching: requests are samples, up to max_batch run together (0: off) */
    int max_batch;
    colo_time_t max_delay; /* the oldest waits at most this for a batch to fill */
    long long queue_limit; /* requests waiting at most (0: unbounded) */
    colo_time_t deadline;  /* a request still waiting after this is dropped (0: none) */
    /* MPS */
    int active_thread_percentage; /* 100 when not given */
    int priority;                 /* 0 normal, 1 below normal */
    colo_class_t cls;             /* for kernel schedulers: latency-sensitive or best-effort */
    double memory_limit_gib;      /* 0: none */
    /* Green Contexts and MPS static partitions: SMs asked for (0: not given) */
    int sms_asked;
    char *instance_name; /* MIG: the instance it runs in, as written */
    char *command;       /* live runs: a real program serving it (docs/live.md); NULL: synthetic */
    /* resolved placement */
    size_t instance;        /* MIG: index into sharing.instances */
    int sm_first, sm_count; /* its own SM range (Green Context, static partition); 0 count: none */
    int sm_cap;             /* MPS: most SMs its kernels may use (0: no cap) */
    /* DRAM channel colouring: the channels its memory is on (owned; 0: all of its part's) */
    int *channels;
    int n_channels;
    int colour; /* of sharing.colours, -1: none */
    double pcie_weight; /* its copies' weight under fair PCIe (pcie.scheduler = "fair"); 1 */
    /* routing among copies (router.h): the service it is a copy of, its router; the leader
     * (the first copy, whose arrivals the router deals out); routed: a copy other than the
     * leader, with no arrivals of its own. route.ops NULL: not routed */
    colo_route_cfg_t route;
    char *service;
    size_t leader;
    bool routed;
} colo_tenant_cfg_t;

typedef struct colo_scenario {
    char *path;        /* as given */
    char *dir;         /* its folder, for relative paths */
    char *description; /* may be NULL */
    colo_gpu_t *gpu;
    char *calibration; /* NULL: the GPU's own calibration file if any; "none"; or a path */
    uint64_t seed;
    double load_scale;    /* every open-loop tenant's rate multiplied by this (1: as written) */
    colo_time_t duration; /* arrivals happen in [0, duration) */
    colo_time_t warmup;   /* requests arriving before this are not measured */
    colo_time_t drain;    /* after duration, time allowed for requests in flight */
    size_t exact_samples; /* per tenant, latencies kept exactly before the histogram */
    colo_time_t util_interval; /* utilisation sampled this often from warmup */
    struct {
        const colo_sched_ops_t *ops; /* NULL: kernels launch as soon as they are ready */
        double param[COLO_SCHED_MAX_PARAMS];
    } scheduler;
    struct {
        colo_share_mode_t mode;
        char *timeslice_name; /* "default", "short", "medium", "long", or "custom" */
        colo_time_t timeslice;
        colo_time_t switch_cost;
        int mps_clients; /* MPS client limit per GPU: 48, or 60 from CUDA 13.1 */
        bool cuda_13_1;
        bool static_partitions; /* MPS -S */
        bool overlap;           /* Green Contexts may overlap */
        int colours;            /* DRAM channels cut into this many colours (0: none) */
        colo_time_t recovery;   /* a crashed process or MPS server is back after this */
        bool auto_layout;       /* instances / SM counts were chosen by colosim */
        size_t n_instances;
        colo_mig_instance_t *instances;
    } sharing;
    /* fidelity = { kernels = "merged"; tolerance; }: runs of similar kernels as one (merge.c) */
    bool merge;
    double merge_tolerance;
    bool pcie_fair; /* pcie.scheduler = "fair": copies share the link by tenant weights */
    /* host = { cores; speed; } (docs/model.md, "The host"): the CPU cores the tenants' dispatching
     * threads share (0: as many as they need; default the GPU file's host.cores), and the host's
     * speed relative to the hosts the frameworks' launch costs were measured on (1) */
    struct {
        int cores;
        double speed;
    } host;
    /* k8s = { sharing; replicas; }: NVIDIA's device plugin's sharing, expanded (docs/sharing.md) */
    struct {
        bool on;
        bool mps;            /* "mps"; false: "time-slicing" */
        int replicas;
        int thread_percentage;   /* mps: 100 / replicas, integer division */
        long long mem_limit_mib; /* mps: total memory / replicas, whole MiB */
    } k8s;
    size_t n_faults;
    colo_fault_t *faults;
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

/* As colo_scenario_load, with edit(reader, root, ctx) called on the file's settings after the
 * overrides and before they are read: for scenarios made from another (one GPU of a cluster,
 * cluster.c). edit returns 0 or a negative code (err set through the reader). */
typedef int (*colo_scenario_edit_fn)(const colo_cfg_reader_t *r, config_setting_t *root,
                                     void *ctx);
int colo_scenario_load_edited(const char *path, const char *const *overrides, size_t n_overrides,
                              colo_scenario_edit_fn edit, void *ctx, colo_scenario_t **out,
                              colo_error_t *err);

const char *colo_share_mode_name(colo_share_mode_t m);

#endif
