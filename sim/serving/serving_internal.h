/* serving_internal.h: what the files of the serving loop share, not part of the layer's
 * interface (serving.h): serving.c (the loop), domain.c (execution domains) and request_time.c
 * (a request alone). */
#ifndef COLO_SERVING_INTERNAL_H
#define COLO_SERVING_INTERNAL_H

#include "kernel_model.h"
#include "serving.h"
#include "simtime.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The host's time from issuing the op before (or the request's start, when first) to issuing
 * op (docs/model.md, "Requests" and "The host"): a framework's launch cost when it has one
 * (launch > 0), else the op's host gap, at least spacing (one CUDA launch, or a graph's node,
 * where the gaps vanish) unless the host has just returned from a synchronous copy. */
static inline colo_time_t colo_host_step(const colo_op_t *op, bool first, bool graphs,
                                         bool after_sync, colo_time_t launch, colo_time_t spacing)
{
    if (launch) return launch;
    if (first) return op->gap;
    if (graphs) return spacing;
    return after_sync || op->gap > spacing ? op->gap : spacing;
}

/* serving.c */

/* Keeps rc (0: none) as the run's first error met inside an event; colo_sim_run stops on it. */
void colo_serving_fail(colo_sim_t *sim, int rc);
/* The trace the stream's batch runs: its plan's variant. */
const colo_trace_t *colo_serving_stream_trace(const colo_stream_run_t *s);
/* The tenants' timeline track of a stream: the tenant's own when it has one instance. */
int colo_serving_stream_tid(const colo_stream_run_t *s);
/* The stream's current op has ended: the host issues the next one, or the batch is done. */
void colo_serving_op_done(colo_stream_run_t *s);

/* Whether time t is in the measured window [warmup, duration). */
bool colo_serving_in_window(const colo_sim_t *sim, colo_time_t t);
/* The timeline's counter of the tenant's waiting requests, now. */
void colo_serving_queue_counter(colo_tenant_run_t *t);
/* The host issues the stream's current op (docs/model.md, "Requests"). */
void colo_serving_issue_op(colo_stream_run_t *s);
/* A request of t that arrived at arrival is dropped for why (counted when in the window). */
void colo_serving_drop(colo_tenant_run_t *t, colo_time_t arrival, colo_drop_reason_t why);
/* One of a closed-loop client's requests is answered or dropped (client < 0: open loop). */
void colo_serving_client_done(colo_tenant_run_t *t, int32_t client);

/* router.c */

/* Each routed service's router, at its leader (colo_tenant_run_t.router). 0 or COLO_ENOMEM. */
int colo_serving_routers_new(colo_sim_t *sim);

/* Events of the utilisation samples (sampling.c): every metrics.interval from warmup, and at
 * duration. */
void colo_serving_on_sample(void *obj, int64_t arg);
void colo_serving_on_window_end(void *obj, int64_t arg);
void colo_serving_routers_free(colo_sim_t *sim);

/* autoscale.c: a leader's router's autoscaler: started when the router is attached (the
 * minimum on, the first decision an interval later); freed with the router. */
int colo_autoscale_start(colo_tenant_run_t *leader);
void colo_autoscale_free(struct colo_router *r);
/* The replicas that take requests now, as indices into r->map; how many. */
size_t colo_autoscale_view(struct colo_router *r, colo_time_t now);

/* Where a request arriving at t goes: a replica of t's service by its router; t itself when t
 * has none. */
colo_tenant_run_t *colo_serving_route(colo_tenant_run_t *t);

/* overload.c */

/* Schedules the check at the end of the window that marks overloaded tenants
 * (colo_tenant_run_t.overloaded). */
void colo_serving_watch(colo_sim_t *sim);
/* t's open-loop arrivals have run out at now (a replayed log's end, LoadGen's stop): kept the
 * first time. */
void colo_serving_arrivals_ended(colo_tenant_run_t *t, colo_time_t now);
/* Whether LoadGen issues no query at `at` (loadgen.h: its test is over); if so, t's arrivals
 * ended at now. */
bool colo_serving_lg_stopped(colo_tenant_run_t *t, colo_time_t at, colo_time_t now);
/* Every 4096 events: stops the run when a stop was asked for (stop.h), and tells the progress
 * display (colo_sim_set_progress) where it is. */
void colo_serving_poll(colo_sim_t *sim);

/* llm.c: LLM tenants (docs/llm.md) */

int colo_serving_llm_new(colo_tenant_run_t *t);
void colo_serving_llm_free(colo_tenant_run_t *t);
/* A replayed log's record was read for the next arrival: keep its tokens (pending), and make
 * them the tokens of the requests arriving now (arriving) before the next record is read. */
void colo_serving_llm_pending(colo_tenant_run_t *t);
void colo_serving_llm_arriving(colo_tenant_run_t *t);
/* A request arrives (client: closed loop, or -1): its tokens drawn or from the log. 0 or a
 * negative code (sim->err set for input errors). */
int colo_serving_llm_push(colo_tenant_run_t *t, int32_t client);
/* The request arriving now at t, a routed service's leader, drawn before it is routed: its
 * tokens, prefix units and session key (docs/llm.md, "Prefix caching"), for the router to read
 * and for colo_serving_llm_push_from to carry to the replica. 0 or a negative code. */
int colo_serving_llm_draw(colo_tenant_run_t *t);
/* The request drawn at `from` (drawn now when it was not) arrives at t, a replica of from's
 * service (or from itself). 0 or a negative code. */
int colo_serving_llm_push_from(colo_tenant_run_t *t, colo_tenant_run_t *from, int32_t client);

/* What a router may read of LLM replicas (prefix caching, docs/llm.md). O(blocks matched) for
 * the first, O(1) for the others. */
/* blocks (the engine's KV blocks) of the request now arriving at leader that replica holds
   in its prefix cache, from the front; 0 when caching is off or no hashes */
long long colo_serving_llm_prefix_hit(const colo_tenant_run_t *replica,
                                      const colo_tenant_run_t *leader);
/* KV blocks of the request now arriving at leader (its prompt), for scoring */
long long colo_serving_llm_prompt_blocks(const colo_tenant_run_t *leader);
/* share of replica's KV blocks held by running requests now, 0..1 (cached free blocks
   do not count) */
double colo_serving_llm_kv_usage(const colo_tenant_run_t *replica);
/* session key of the request now arriving at leader, -1 when none */
long long colo_serving_llm_session(const colo_tenant_run_t *leader);
size_t colo_serving_llm_waiting(const colo_tenant_run_t *t);
/* Requests the engine runs now (admitted, holding KV blocks): a router's outstanding, with the
 * waiting ones. */
size_t colo_serving_llm_running(const colo_tenant_run_t *t);
/* The prompt of the request now arriving at leader as hashed units (NULL when the tenant does
 * not cache prefixes or none is drawn), and its engine's KV block size into *b. */
struct colo_prefix;
const struct colo_prefix *colo_serving_llm_arriving_prefix(const colo_tenant_run_t *leader, int *b);

/* Starts the next iteration on the tenant's stream when it is idle and work waits. */
void colo_serving_llm_start(colo_tenant_run_t *t);
/* The iteration in flight as a trace, and the work of its kernel op on the tenant's GPU. */
const colo_trace_t *colo_serving_llm_trace(const colo_tenant_run_t *t);
void colo_serving_llm_work(const colo_tenant_run_t *t, size_t op, colo_kernel_work_t *w);
/* The iteration's last kernel ended: tokens, completions, the next iteration. */
void colo_serving_llm_iteration_done(colo_stream_run_t *s);
/* Its process died: every request waiting or running is dropped. */
void colo_serving_llm_crash(colo_tenant_run_t *t);
/* Its accounts (colo_sim_check): KV blocks, and every generated token in a completed, dropped
 * or running request. Aborts when one does not hold. */
void colo_serving_llm_check(const colo_tenant_run_t *t);
/* Requests that arrived in the window and wait or run. */
uint64_t colo_serving_llm_in_flight(const colo_tenant_run_t *t);
/* A typical request of LLM tenant tc alone at pr on gpu: its iterations' kernels alone. */
int colo_serving_llm_alone(const colo_tenant_cfg_t *tc, const colo_gpu_t *gpu,
                           colo_place_rates_t pr, colo_time_t *out, colo_error_t *err);

/* domain.c */

/* Domains and partitions of the hardware for the scenario's sharing mechanism. O(tenants +
 * streams + domains), and the kernel schedulers' init. */
int colo_domain_build(colo_sim_t *sim);
/* Writes the time-slicing owner spans still open at the end of a run to the timeline, and the
 * spans of the requests still in flight. */
void colo_domain_timeline_end(colo_sim_t *sim);
/* The stream's batch has run [batch_start, now): its span, and its requests' (timeline only). */
void colo_domain_timeline_batch(colo_stream_run_t *s);
/* A lane of t's requests track for a request arriving now (-1: no timeline, or none free). */
int32_t colo_domain_request_lane(colo_tenant_run_t *t);
/* Request q of t is dropped for why (started: when its batch began, -1 if it had not): its
 * span ends on the timeline, and it is counted (colo_serving_drop). */
void colo_domain_request_dropped(colo_tenant_run_t *t, const struct colo_request *q,
                                 colo_time_t started, colo_drop_reason_t why);
/* A kernel's use alone where the time-slicing policy times it (t's place): SMs, L2 and DRAM
 * bytes per ns. */
void colo_domain_ts_use(const colo_kernel_work_t *w, const colo_tenant_run_t *t, double use[3]);
/* Statistics (and timeline) of the stream's kernel starting to run, and ending or stopping. */
void colo_domain_kernel_started(colo_stream_run_t *s);
void colo_domain_kernel_ran(colo_stream_run_t *s);
/* The hardware model's done callback of the stream's (obj) kernel (arg: its incarnation). */
void colo_domain_on_kernel_done(void *obj, int64_t arg);
/* Launches what the scheduler picks, until it holds the rest. */
void colo_domain_dispatch(colo_domain_t *d);
/* Stops the stream's running kernel, keeping its progress in kernel_left. */
void colo_domain_halt_kernel(colo_stream_run_t *s);
/* Event: the stream's (obj) current op is ready (arg: its tenant's incarnation, stale ones are
 * ignored): a copy goes to the copy engines, a kernel to its domain (time-slicing policy,
 * kernel scheduler, or straight onto the hardware model). */
void colo_domain_op_ready(void *obj, int64_t arg);

/* merge.c */

/* Runs of trace v's consecutive kernels whose use differs by at most tol, back to back alone, as
 * one kernel each in t->var[v], whose op_time and work (the trace's ops') it replaces; keep_last:
 * each run's last kernel stays its own op (docs/engine.md, "Fewer events than kernels"). 0 or
 * COLO_ENOMEM. */
int colo_merge_variant(colo_tenant_run_t *t, size_t v, const colo_gpu_t *gpu, double tol,
                       bool keep_last);
/* Before a run: merges the kernels of every tenant that may (colo_merge_variant): with
 * fidelity "merged", runs within its tolerance; with "exact", runs that the time-slicing policy
 * times alone (a MIG instance, or time-slicing, one stream per context) where the result is
 * the same, byte for byte, as kernel by kernel (docs/engine.md). 0 or COLO_ENOMEM. */
int colo_merge_start(colo_sim_t *sim);
/* Adds to acc the use of the stream's timed op over [s->ts_since, now): its use times the time,
 * or, for merged kernels, each one's use over its part of that time, as each would have added
 * it; commit: the op's progress moves on. */
void colo_merge_ts_add(colo_stream_run_t *s, colo_time_t now, double acc[3], bool commit);

/* A merged op on the solver (var->solo): its kernels run one by one on the hardware model, or,
 * while nothing else is on it, alone, timed as each was seen to run alone there
 * (docs/engine.md). colo_merge_run starts the stream's current op when it is one (false: it is
 * not; the caller runs it). */
bool colo_merge_run(colo_stream_run_t *s);
/* Its kernel has ended (after colo_domain_kernel_ran): the next one of its merged op is started
 * or waits for the host (true), or it was the last or no merged op (false). */
bool colo_merge_part_done(colo_stream_run_t *s);
/* Before any change to the hardware model: the kernel running alone, if any, goes onto it as
 * kernel by kernel it would be at this instant. */
void colo_merge_alone_stop(colo_sim_t *sim);

/* request_time.c */

/* Time alone of a kernel of work w at a place: the kernel model's, at least 1 ns. */
colo_time_t colo_request_alone_at(const colo_kernel_work_t *w, colo_place_rates_t pr);
/* Per-op works (kernels) and times alone at pr of trace k of tenant c. O(ops of the trace). */
int colo_request_variant_ops(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                             colo_place_rates_t pr, colo_time_t *op_time, colo_kernel_work_t *work,
                             colo_error_t *err);

#endif
