/* serving.h: the serving layer: tenants, their requests, the execution domains that run their
 * kernels under the scenario's sharing mechanism, faults, and one simulation run. */
#ifndef COLO_SERVING_H
#define COLO_SERVING_H

#include "event_queue.h"
#include "hardware.h"
#include "metrics.h"
#include "scenario.h"
#include "scheduler.h"
#include "timeline.h"
#include "timeslice.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdint.h>

struct colo_sim;

/* Where a tenant runs, as numbers: its SMs, and the DRAM and L2 bandwidth of its part. */
typedef struct colo_place_rates {
    int sms;
    double dram_rate, l2_rate;
} colo_place_rates_t;

/* Why a request was dropped. */
typedef enum {
    COLO_DROP_FAULT,       /* in flight or queued in a process (or MPS server) that crashed */
    COLO_DROP_UNAVAILABLE, /* arrived while its process or server was recovering */
    COLO_DROP_QUEUE_FULL,  /* arrived to a full queue (queue_limit) */
    COLO_DROP_DEADLINE,    /* waited longer than deadline_ms before being served */
    COLO_DROP_REASONS
} colo_drop_reason_t;

const char *colo_drop_reason_name(colo_drop_reason_t r);

/* How the kernels of a group of tenants share their part of the GPU. */
typedef enum {
    COLO_DOM_TIMESLICE,  /* one context at a time (time-slicing, on the GPU or a MIG instance) */
    COLO_DOM_CONCURRENT, /* kernels run together (an MPS server; the one process of Green
                          * Contexts): a fatal fault takes every member down */
} colo_domain_kind_t;

typedef struct colo_domain {
    struct colo_sim *sim;
    colo_domain_kind_t kind;
    colo_ts_t ts; /* time-slicing domains; context i is tenant members[i] */
    bool ts_ready;
    bool ts_exec; /* time-slicing with several streams in a context: kernels run on the
                   * hardware model while their context owns the GPU */
    struct colo_stream_run *ts_done; /* the stream whose kernel the executor reports ended */
    size_t *members;
    size_t n_members;
    struct colo_stream_run **items; /* concurrent domains: every member's streams, in order;
                                     * the scheduler's items */
    size_t n_items;
    colo_hw_place_t place; /* the domain's part of the GPU */
    uint32_t ce;           /* its copy-engine domain */
    int sms;               /* SMs in its part */
    double dram_rate, l2_rate;
    colo_sched_t *sched; /* concurrent domains with a kernel scheduler; NULL: none */
    uint64_t *launches;  /* per item: launches so far (stale preemption timers) */
    bool dispatching;
    /* time-slicing on the timeline: who holds the GPU since when (owner -1: nobody) */
    long tl_owner;
    bool tl_switching;
    colo_time_t tl_since;
    uint64_t tl_switches; /* switches so far when it began */
} colo_domain_t;

/* How a batch of b requests runs (colo_batch_plan): the trace whose kernels run, and how each
 * kernel is changed to the batch. */
typedef struct colo_batch_plan {
    size_t var;   /* the trace that runs */
    double f;     /* != 1: every kernel at f x the trace's batch by the kernel model */
    size_t lo;    /* interpolation: the trace below var (lo == var: none) */
    double alpha; /* where b lies from lo's batch (0) to var's (1) */
    double scale; /* traces whose kernels differ: var's whole time is scaled by this */
} colo_batch_plan_t;

/* One instance of a tenant (Triton's instance_group count): a request or batch in flight on its
 * own CUDA stream, its ops in stream order. */
typedef struct colo_stream_run {
    struct colo_tenant_run *t;
    int idx;     /* among its tenant's instances */
    size_t item; /* its item in a concurrent domain's scheduler */
    bool busy;
    struct colo_request *batch; /* the requests being served together */
    int n_batch;
    colo_batch_plan_t plan;
    colo_time_t batch_start;
    colo_time_t copy_start; /* its copy in progress: when it was issued */
    int lane;               /* its running kernel's lane on its partition's timeline */
    int copy_lane;          /* its copy's lane on its copy engines' timeline */
    double ts_use[3];       /* time-sliced kernel running: its SMs, L2 and DRAM bytes per ns */
    double ts_int[3];       /* ... their integral over its timed kernels so far */
    colo_time_t ts_since;   /* ... since when its op runs (ts_on) or when it stopped */
    bool ts_on;
    colo_time_t op_done;    /* of a merged op: its kernels' time alone done so far */
    double ts_dram_held;    /* ... its DRAM rate held back from the copies (or 0) */
    colo_time_t host_clock; /* when the host issued the last op (or returned from a copy) */
    bool after_sync;        /* the host has just returned from a synchronous copy */
    size_t cur_op;
    colo_kernel_work_t w;     /* the current kernel at this batch */
    colo_time_t alone;        /* its time alone at the tenant's place */
    colo_hw_kernel_t *kernel; /* its kernel on the hardware model, NULL when none runs */
    bool kernel_ready;        /* time-slicing executor: submitted, waiting for its context */
    double kernel_left;       /* fraction of the current kernel's work left */
    colo_time_t kernel_since; /* when the running kernel last started or resumed */
    bool kernel_running;      /* its kernel runs (on the hardware model or the policy's timer) */
    colo_time_t op_ready;     /* when its current op was ready (the host had launched it) */
    /* a merged op on the solver (merge.c): the kernel of it that runs (part), since when, and
     * whether it started on an idle GPU with nothing else on it (learn) */
    uint32_t part;
    bool learn;
    colo_time_t part_start;
} colo_stream_run_t;

/* A kernel seen to run alone on an idle GPU, as the solver timed it (colo_hw_done_solo): its
 * duration (0: not seen yet) and its use of its resources. */
struct colo_solo {
    colo_time_t dur;
    uint32_t uses; /* times it was timed alone (the checks run every second one on the solver) */
    struct colo_fluid_use use;
};

/* One tenant's state during a run: a FIFO of waiting requests, its instances (streams), and
 * counters for requests arriving in the window. */
#define COLO_OVERLOAD_MARKS 9 /* the window's eighths, 0 ... 8 (overload.c) */

typedef struct colo_tenant_run {
    struct colo_sim *sim;
    size_t idx;
    const colo_tenant_cfg_t *cfg;
    gsl_rng *rng;
    colo_domain_t *dom;
    size_t ctx;               /* its index in dom->members */
    colo_hw_place_t place;    /* where its kernels run */
    colo_place_rates_t rates; /* and that place as numbers */
    /* per trace (batch size) of the tenant: per op, alone at its place */
    struct colo_variant_run {
        colo_time_t *op_time;             /* kernel (with its dispatch gap) or copy time */
        colo_kernel_work_t *work;         /* kernels only */
        size_t first_kernel, last_kernel; /* op indices of its first and last kernels */
        /* fidelity "merged" (merge.c): the ops that run, runs of kernels merged (n_ops 0: the
         * trace's own; then op_time and work are the trace's ops'), and per op the host's time
         * for the kernels merged into it after the first (NULL: none) */
        colo_trace_t merged;
        colo_time_t *host_more;
        /* ... and its kernels: the first of op i's in part_time and part_work (the trace's
         * op_time and work), and how many */
        size_t *part_first;
        uint32_t *n_parts;
        colo_time_t *part_time;
        colo_kernel_work_t *part_work;
        double *part_use; /* 3 per kernel: its use alone where timed (colo_domain_ts_use) */
        /* on the solver: per kernel, the host's launches from its op's first kernel to it, and
         * how it ran alone (NULL: its merged ops run as one kernel, timed) */
        colo_time_t *part_host;
        struct colo_solo *solo;
    } * var;
    colo_time_t *totals;  /* one run of each trace alone, for colo_batch_plan */
    colo_time_t isolated; /* one request alone, start to finish */
    /* waiting requests: ring buffer */
    struct colo_request {
        colo_time_t arrival;
        int32_t client; /* closed loop: the client that sent it; -1 open loop */
        int32_t lane;   /* its lane on the timeline's requests track; -1: none */
    } * queue;
    size_t qcap, qhead, qlen;
    colo_arrival_state_t arrivals; /* the arrival process's state (a replayed log) */
    int *outstanding;              /* closed loop: requests each client waits for */
    colo_time_t up_at;             /* while down: when it is back */
    colo_stream_run_t *streams;    /* its instances */
    int n_streams, busy_streams;
    int peak_busy;                       /* most instances busy at once */
    bool batch_timer;                    /* waiting for a batch to fill */
    uint64_t kernel_starts, kernel_ends; /* kernels started or resumed, and stopped or ended */
    int kernels_running;                 /* of its streams */
    /* faults */
    bool down;
    uint64_t incarnation; /* changes when its process dies: stale completions are ignored */
    /* requests that arrived in [warmup, duration): every one is completed, dropped or still
     * in flight at the end */
    uint64_t arrived, completed, dropped, slo_met;
    uint64_t dropped_by[COLO_DROP_REASONS];
    uint64_t faults;
    uint64_t batches, batched; /* executions, and the requests they carried (in the window) */
    /* requests of any arrival time that completed in [warmup, duration): the throughput */
    uint64_t finished_in_window;
    uint64_t good_in_window;     /* of those, within the tenant's SLO: the goodput */
    uint64_t done_all, good_all; /* requests completed over the whole run, within the SLO */
    colo_time_t last_done;       /* when the last of them completed */
    /* overload.c: its requests in the system (up to a constant) at marks 1 ... 8 of the
     * window's eighths; how much they grew from its first three marks to its last three; whether that
     * marks it overloaded; when its arrivals ran out (a replayed log's end, LoadGen's stop; -1:
     * they did not) */
    int64_t marks[COLO_OVERLOAD_MARKS];
    int64_t backlog_growth;
    bool overloaded;
    colo_time_t arrivals_ended;
    colo_time_t gpu_time; /* time its kernels ran (any of its streams), in the window */
    colo_time_t gpu_since;
    double queue_ns, exec_ns; /* completed requests: time waiting, and from start to end */
    colo_samples_t latency;   /* LLM tenants: end to end */
    struct colo_llm_run *llm; /* LLM tenants (llm.c); NULL for others */
    struct colo_router *router; /* a routed service's leader: its router (router.h); else NULL */
    colo_time_t next_arrival; /* open loop: when its next arrival event is (COLO_TIME_MAX: none) */
    colo_loadgen_run_t *lg;   /* MLPerf LoadGen tenants: the test's progress; NULL for others */
    int host_proc;            /* its process, among the host's (host.h) */
    bool host_gil;            /* its streams share its process's interpreter */
} colo_tenant_run_t;

/* Statistics of one PCIe direction: time with at least one copy in progress. */
struct colo_pcie_dir {
    int active;
    colo_time_t since, busy_time;
};

/* The most points the utilisation series keeps (results.md): past them, each point stands for
 * twice as many intervals. */
#define COLO_UTIL_POINTS 4096

typedef struct colo_sim {
    const colo_scenario_t *sc; /* borrowed */
    colo_eq_t eq;
    colo_hw_t hw; /* the GPU's resources */
    bool hw_ready;
    colo_domain_t *dom;
    size_t n_dom;
    size_t n;
    colo_tenant_run_t *t;
    struct colo_pcie_dir pcie[2];
    int kernels_running; /* for the busy fraction */
    colo_time_t busy_since, busy_time;
    colo_time_t end; /* duration + drain: nothing runs past this */
    /* the launch of a request's ops (issue_op): spacing of launches, plain and in a CUDA graph,
     * and from launch to the start of a kernel's time (which includes its dispatch gap) */
    colo_time_t host_spacing, graph_spacing, start_lead;
    colo_host_load_t host; /* the host's cores and the processes' demand for them */
    colo_time_t last_event;
    colo_timeline_t *tl; /* borrowed; NULL: no timeline */
    colo_stream_run_t *alone; /* the stream whose kernel runs alone, timed (merge.c) */
    /* colo_sim_set_progress: told every 4096 events how far the run is (NULL: not) */
    void (*progress)(void *ctx, colo_time_t now, colo_time_t end);
    void *progress_ctx;
    /* time-sliced kernels (outside the solver) use the GPU by their rates alone (each stream's
     * integral: colo_stream_run_t.ts_int) */
    bool ts_dram_in_solver; /* some trace has copies: timed kernels' DRAM bytes contend with them */
    /* samples every metrics.interval from warmup: utilisation per COLO_USE_* kind */
    double *util[COLO_USE_KINDS];
    size_t n_util, cap_util;
    size_t util_merge, util_acc_n;   /* intervals per point (a power of two), and so far */
    double util_acc[COLO_USE_KINDS]; /* their sum so far */
    double util_last[COLO_USE_KINDS], util_first[COLO_USE_KINDS], util_end[COLO_USE_KINDS];
    double util_cap[COLO_USE_KINDS];
    bool util_started, util_ended;
    uint64_t *lanes;      /* per SM set: timeline lanes in use, lanes named (lane_take); and
                           * per tenant, its request lanes (domain.c, request_lanes) */
    uint64_t *copy_lanes; /* per copy-engine domain and direction: lanes in use, lanes named */
    int failed;           /* first error met inside an event */
    colo_error_t err;     /* and its message, when it was an input error (a log line) */
    /* colo_sim_advance: events since the last poll, events in a row at one instant */
    uint32_t polled;
    uint64_t same_instant;
} colo_sim_t;

/* An LLM tenant's figures after a run (docs/llm.md, "Results"): time to first token and time
 * per output token of requests that arrived in the window and completed; tokens per second,
 * KV-cache use, preemptions and iterations in the window. */
typedef struct colo_llm_stats {
    colo_latency_summary_t ttft, tpot;
    double output_tokens_per_s, prompt_tokens_per_s;
    double kv_utilisation_mean, kv_utilisation_max; /* share of the cache's blocks in use */
    uint64_t preemptions, iterations, prefill_iterations, decode_iterations;
    uint64_t tokens_generated, tokens_of_completed; /* the whole run */
    /* prefix caching (docs/llm.md, "Prefix caching"): on or off; of the requests first admitted
     * in the window, their prompts' blocks and tokens and those found cached; cached blocks
     * evicted over the run */
    bool prefix_caching;
    uint64_t prefix_requests, prefix_prompt_blocks, prefix_hit_blocks;
    uint64_t prefix_prompt_tokens, prefix_hit_tokens, prefix_evicted_blocks;
} colo_llm_stats_t;

/* Fills *out for tenant i, an LLM tenant of a finished run. 0, COLO_EINVAL (not one) or
 * COLO_ENOMEM. */
int colo_tenant_llm_stats(const struct colo_sim *sim, size_t i, colo_llm_stats_t *out);

/* An LLM tenant's time-to-first-token samples, or its time-per-output-token ones (tpot): what
 * colo_tenant_llm_stats summarises, for a service's replicas merged (sim/fleet). */
const colo_samples_t *colo_serving_llm_samples(const colo_tenant_run_t *t, bool tpot);

/* Builds a run of scenario sc (borrowed; must outlive the run): the GPU's partitions for the
 * sharing mechanism, every kernel placed on its tenant's part, each tenant's stream seeded from
 * the seed and its name. *out is new. */
int colo_sim_new(const colo_scenario_t *sc, colo_sim_t **out, colo_error_t *err);

/* Runs to the end: arrivals in [0, duration), then up to drain more for requests in flight.
 * 0, or COLO_ENOMEM with err set. The same as colo_sim_start, colo_sim_advance to the end and
 * colo_sim_finish, which a fleet (sim/fleet) calls to run several GPUs' runs in one event order. */
int colo_sim_run(colo_sim_t *sim, colo_error_t *err);

/* Schedules the run's first events (arrivals, closed loops' first queries, samples, faults).
 * 0, or a negative code with err set (a log that cannot be opened). */
int colo_sim_start(colo_sim_t *sim, colo_error_t *err);
/* Runs the events before until (and at until when inclusive), in order, up to the run's end.
 * 0, or COLO_EINVAL with err set when time stands still (too many events at one instant); an
 * error met inside an event is reported by colo_sim_finish. */
int colo_sim_advance(colo_sim_t *sim, colo_time_t until, bool inclusive, colo_error_t *err);
/* When the run's next routing decision is: the earliest next arrival of a tenant with a router
 * (a routed service's leader), COLO_TIME_MAX when none is due (or an event failed). */
colo_time_t colo_sim_next_routing(const colo_sim_t *sim);
/* Closes the statistics of what still runs at the end and checks the accounts; 0, or the error
 * an event met (err set). */
int colo_sim_finish(colo_sim_t *sim, colo_error_t *err);

void colo_sim_free(colo_sim_t *sim);

/* Checks a finished run's accounts (invariant.h; colo_sim_run does, in every build): every
 * kernel that started ended or still runs, every request that arrived in the window completed,
 * was dropped with a reason or is in flight, one latency per completed request. Aborts with a
 * message when one does not hold. */
void colo_sim_check(const colo_sim_t *sim);

/* Records the run's timeline into tl (borrowed, open; see timeline.h) and names its tracks: a
 * tenant's batches and kernels, each SM partition's kernels, each copy engine domain's copies,
 * kernels running and queue lengths. Call before colo_sim_run. 0 or COLO_ENOMEM. */
int colo_sim_set_timeline(colo_sim_t *sim, colo_timeline_t *tl);

/* Calls fn(ctx, now, end) every 4096 events of colo_sim_run, with the simulated time reached
 * and the time the run ends at (duration plus drain), for a progress display; fn must be cheap
 * (it sees the wall clock itself). Call before colo_sim_run. */
void colo_sim_set_progress(colo_sim_t *sim, void (*fn)(void *ctx, colo_time_t now, colo_time_t end),
                           void *ctx);

/* The part of the GPU tenant i of sc runs on (whole GPU, MIG instance, Green Context, MPS cap
 * or partition). */
colo_place_rates_t colo_tenant_place_rates(const colo_scenario_t *sc, size_t i);
/* The same for a part of gpu: a MIG profile's instance (prof, or NULL for the whole GPU), and
 * at most sms of its SMs (0: all). */
colo_place_rates_t colo_place_rates_of(const colo_gpu_t *g, const colo_mig_profile_t *prof,
                                       int sms);

/* Per-op times of trace k of tenant c alone at rates on gpu (kernels from the kernel model with
 * their dispatch gap, copies at the link's full rate), into op_time (may be NULL), and the time
 * of one run of it alone into *total: ops in stream order, launched by the host as
 * colo_request_schedule says. Errors when a kernel cannot run on gpu. */
int colo_variant_times(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                       colo_place_rates_t rates, colo_time_t *op_time, colo_time_t *total,
                       colo_error_t *err);

/* When a request's ops end, run alone on one stream from time 0: the host issues op i a host
 * gap after op i-1 (at least launch.host_us between launches, or launch.graph_us between the
 * kernels of a CUDA graph, where the host gaps vanish; with a framework's launch cost,
 * c->host_launch, that cost after each instead of the gaps); a kernel starts launch.start_us
 * after its launch, and not before the op before it ends (its time includes the dispatch gap);
 * the host waits for a copy unless the request is a graph. op_time[i] is op i's time. */
colo_time_t colo_request_schedule(const colo_trace_t *tr, const colo_time_t *op_time,
                                  const colo_gpu_t *gpu, const colo_tenant_cfg_t *c);
/* The same, with when each op starts into starts[i] (n_ops of them). */
colo_time_t colo_request_schedule_ops(const colo_trace_t *tr, const colo_time_t *op_time,
                                      const colo_gpu_t *gpu, const colo_tenant_cfg_t *c,
                                      colo_time_t *starts);

/* How a batch of b requests runs (docs/arrivals.md, "Batching"): a traced batch of b runs as
 * traced; between two traced batches, each kernel's time is interpolated between its two traces
 * when they have the same kernels in the same order, else the upper trace is scaled to the
 * interpolated total; below the smallest or above the largest traced batch, the nearest trace
 * runs at b / its batch by the kernel model. totals[k] is trace k's time alone. Without
 * batching a request is one run of the first trace. */
void colo_batch_plan(const colo_tenant_cfg_t *c, const colo_time_t *totals, int b,
                     colo_batch_plan_t *p);

/* Kernel op i of the plan's trace at the plan's batch: into out, from the traces' works and
 * times alone at the place (var[] as in colo_tenant_run_t). True when out is the trace's work as
 * it is (the plan's own batch, unscaled): its time alone is then var[p->var].op_time[i]. */
bool colo_plan_kernel(const colo_batch_plan_t *p, const struct colo_variant_run *var, size_t i,
                      colo_kernel_work_t *out);

/* One batch of b requests of a tenant c alone on a part (pr) of gpu: its time from start to
 * finish into *request, and the sum of its kernels' durations alone (without dispatch gaps,
 * what a profiler reports) into *kernels; either may be NULL. */
int colo_request_time(const colo_tenant_cfg_t *c, const colo_gpu_t *gpu, colo_place_rates_t pr,
                      int b, colo_time_t *request, colo_time_t *kernels, colo_error_t *err);

/* A tenant made of one trace t (measured on src; both borrowed), for its time alone outside a
 * scenario (colosim trace --on, colosim validate): batch > 0 runs it as batches of that many
 * samples (the kernel model scales the trace), 0 at its traced batch. v is its one variant. */
void colo_tenant_cfg_of_trace(colo_tenant_cfg_t *c, colo_variant_t *v, const colo_trace_t *t,
                              const colo_gpu_t *src, int batch, colo_fp32_math_t fp32, bool graphs);
/* The same with a framework (its launch cost on gpu's host) and a precision (COLO_MATH_AUTO: the
 * trace's own); gpu may be NULL for the trace's framework. */
void colo_tenant_cfg_of_trace_as(colo_tenant_cfg_t *c, colo_variant_t *v, const colo_trace_t *t,
                                 const colo_gpu_t *src, int batch, colo_fp32_math_t fp32,
                                 colo_framework_t fw, colo_math_t precision, const colo_gpu_t *gpu);

/* One batch of b requests of tenant i alone on its part of the GPU (rates): start to finish. */
int colo_tenant_request_time(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr, int b,
                             colo_time_t *t, colo_error_t *err);

/* One request alone on tenant i's part of the GPU: a batch of one. */
int colo_tenant_isolated(const colo_scenario_t *sc, size_t i, colo_time_t *isolated,
                         colo_error_t *err);
/* The same on another part of sc's GPU (colo_place_rates_of), for placement. */
int colo_tenant_isolated_at(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr,
                            colo_time_t *isolated, colo_error_t *err);

#endif
