/* domain.c: execution domains: kernels on the hardware model and their timeline lanes, the
 * hooks of time-slicing, copies, kernel schedulers (dispatch, preemption), and the domains and
 * partitions built for the scenario's sharing mechanism, and the names of the timeline's tracks. */
#include "serving_internal.h"
#include "alloc.h"
#include "errors.h"
#include "event_queue.h"
#include "gpu.h"
#include "hardware.h"
#include "invariant.h"
#include "kernel_model.h"
#include "scenario.h"
#include "scheduler.h"
#include "serving.h"
#include "simtime.h"
#include "timeline.h"
#include "timeslice.h"
#include "trace.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- requests on the timeline ---- */

/* A tenant's requests take lanes of the requests track (thread tenant * 1000 + lane + 1): the
 * lowest free one on arrival, until their span ends, so requests in flight together (queued or
 * in one batch) never overlap on a lane, and each span is a complete ("X") event on a thread of
 * its own, to which flow arrows can bind. Past REQ_LANES at once a request is not drawn. */
#define REQ_LANES 256
#define REQ_WORDS (REQ_LANES / 64)

/* The tenant's request lanes, after the SM sets' in sim->lanes: REQ_WORDS words of lanes in
 * use, then REQ_WORDS of lanes named. */
static uint64_t *request_lanes(const colo_tenant_run_t *t)
{
    const colo_sim_t *sim = t->sim;
    return sim->lanes + 2 * sim->hw.sm.n_sets + 1 + 2 * REQ_WORDS * t->idx;
}

/* The thread of lane l of t's requests. */
static int request_tid(const colo_tenant_run_t *t, int l)
{
    return (int)t->idx * 1000 + l + 1;
}

int32_t colo_domain_request_lane(colo_tenant_run_t *t)
{
    if (!t->sim->tl) return -1;
    uint64_t *use = request_lanes(t);
    for (int l = 0; l < REQ_LANES; l++)
        if (!(use[l / 64] >> (l % 64) & 1)) {
            use[l / 64] |= (uint64_t)1 << (l % 64);
            return l;
        }
    return -1;
}

/* Request q of t ends now (outcome: how); started: when its batch began (-1: it had not). Writes
 * its span, naming its lane's track the first time, and frees the lane. */
static void request_end(colo_tenant_run_t *t, const struct colo_request *q, colo_time_t started,
                        const char *outcome)
{
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (!sim->tl) return;
    bool wanted = colo_timeline_wants(sim->tl, q->arrival, now);
    if (q->lane < 0) {
        if (wanted) colo_timeline_undrawn(sim->tl);
        return;
    }
    uint64_t *use = request_lanes(t), *named = use + REQ_WORDS, bit = (uint64_t)1 << (q->lane % 64);
    use[q->lane / 64] &= ~bit;
    if (!wanted) return;
    int tid = request_tid(t, q->lane);
    char name[160], args[200];
    if (!(named[q->lane / 64] & bit)) {
        named[q->lane / 64] |= bit;
        snprintf(name, sizeof name, "%s requests, lane %d", t->cfg->name, q->lane + 1);
        colo_timeline_name(sim->tl, COLO_TL_REQUESTS, tid, name, tid);
    }
    colo_time_t waited = (started >= 0 ? started : now) - q->arrival;
    snprintf(args, sizeof args,
             "{\"tenant\":\"%s\",\"outcome\":\"%s\",\"latency_ms\":%.6f,\"queued_ms\":%.6f}",
             t->cfg->name, outcome, COLO_TO_MS(now - q->arrival), COLO_TO_MS(waited));
    colo_timeline_span(sim->tl, COLO_TL_REQUESTS, tid,
                       strcmp(outcome, "completed") ? outcome : "request", "request", q->arrival,
                       now, args);
}

void colo_domain_request_dropped(colo_tenant_run_t *t, const struct colo_request *q,
                                 colo_time_t started, colo_drop_reason_t why)
{
    char outcome[48];
    snprintf(outcome, sizeof outcome, "dropped (%s)", colo_drop_reason_name(why));
    request_end(t, q, started, outcome);
    colo_serving_drop(t, q->arrival, why);
}

/* The span of the stream's batch, from batch_start to now. */
static void batch_span(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    if (!colo_timeline_wants(sim->tl, s->batch_start, sim->eq.now)) return;
    char name[96], args[128];
    snprintf(name, sizeof name, "%s x%d", t->cfg->trace->model, s->n_batch);
    colo_time_t oldest = s->n_batch ? s->batch[0].arrival : s->batch_start;
    snprintf(args, sizeof args, "{\"requests\":%d,\"oldest_waited_ms\":%.6f}", s->n_batch,
             COLO_TO_MS(s->batch_start - oldest));
    colo_timeline_span(sim->tl, COLO_TL_TENANTS, colo_serving_stream_tid(s), name, "batch",
                       s->batch_start, sim->eq.now, args);
}

void colo_domain_timeline_batch(colo_stream_run_t *s)
{
    for (int k = 0; k < s->n_batch; k++)
        request_end(s->t, &s->batch[k], s->batch_start, "completed");
    batch_span(s);
}

/* ---- kernels on the hardware model ---- */

/* The timeline: the kernel that ran [kernel_since, now) on the stream's and its partition's
 * tracks, and the number of kernels running. */
static void timeline_kernel(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (!colo_timeline_wants(sim->tl, s->kernel_since, now)) return;
    const char *name = colo_serving_stream_trace(s)->ops[s->cur_op].name;
    char args[160];
    snprintf(args, sizeof args, "{\"tenant\":\"%s\",\"op\":%zu}", t->cfg->name, s->cur_op);
    colo_timeline_span(sim->tl, COLO_TL_TENANTS, colo_serving_stream_tid(s), name, "kernel",
                       s->kernel_since, now, args);
    colo_timeline_span(sim->tl, COLO_TL_PARTITIONS + (int)t->place.sm_set, s->lane + 1, name,
                       "kernel", s->kernel_since, now, args);
    /* an arrow from each request of the batch to it, at the middle of its span in the window,
     * which lies inside the request's span too (it arrived before and ends after) */
    colo_time_t a = s->kernel_since > sim->tl->t0 ? s->kernel_since : sim->tl->t0;
    colo_time_t b = now < sim->tl->t1 ? now : sim->tl->t1;
    for (int k = 0; k < s->n_batch; k++)
        if (s->batch[k].lane >= 0)
            colo_timeline_flow(sim->tl, COLO_TL_REQUESTS, request_tid(t, s->batch[k].lane),
                               COLO_TL_TENANTS, colo_serving_stream_tid(s), a + (b - a) / 2);
}

/* Lanes of one group of timeline tracks: pair[0] the lanes in use, pair[1] those already named.
 * Takes the lowest free lane (the 64th is shared beyond); *fresh: it needs its name written. */
static int lane_take(uint64_t pair[2], bool *fresh)
{
    int l = 0;
    while (l < 63 && (pair[0] >> l & 1))
        l++;
    pair[0] |= (uint64_t)1 << l;
    *fresh = !(pair[1] >> l & 1);
    pair[1] |= (uint64_t)1 << l;
    return l;
}

static void lane_free(uint64_t pair[2], int l)
{
    pair[0] &= ~((uint64_t)1 << l);
}

/* A lane of its partition's timeline for the stream's kernel that starts: the lowest free one,
 * so kernels that co-reside stack and those that cannot stay on lane 1. */
static void take_lane(colo_stream_run_t *s)
{
    colo_sim_t *sim = s->t->sim;
    uint32_t set = s->t->place.sm_set;
    bool fresh;
    s->lane = lane_take(&sim->lanes[2 * set], &fresh);
    if (fresh) { /* its first kernel: name the track */
        char name[32];
        snprintf(name, sizeof name, "kernels, lane %d", s->lane + 1);
        colo_timeline_name(sim->tl, COLO_TL_PARTITIONS + (int)set, s->lane + 1, name, s->lane + 1);
    }
}

static void count_kernels(colo_sim_t *sim)
{
    if (sim->tl)
        colo_timeline_counter(sim->tl, COLO_TL_COUNTERS, "kernels running", sim->eq.now,
                              sim->kernels_running);
}

void colo_domain_kernel_ran(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    COLO_CHECK(s->kernel_running && sim->kernels_running > 0 && t->kernels_running > 0,
               "tenant %s: a kernel ends at %lld ns that was not running", t->cfg->name,
               (long long)now);
    s->kernel_running = false;
    t->kernel_ends++;
    if (--t->kernels_running == 0)
        colo_add_clipped(&t->gpu_time, t->gpu_since, now, sim->sc->warmup, sim->sc->duration);
    if (--sim->kernels_running == 0)
        colo_add_clipped(&sim->busy_time, sim->busy_since, now, sim->sc->warmup, sim->sc->duration);
    if (sim->tl) {
        timeline_kernel(s);
        count_kernels(sim);
        lane_free(&sim->lanes[2 * t->place.sm_set], s->lane);
    }
}

void colo_domain_on_kernel_done(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_tenant_run_t *t = s->t;
    s->kernel = NULL;
    colo_domain_kernel_ran(s);
    if ((uint64_t)arg != t->incarnation) return;
    if (colo_merge_part_done(s)) return; /* the next kernel of its merged op */
    s->kernel_left = 1.0;
    colo_domain_t *d = t->dom;
    if (d->ts_exec) { /* its context hears of it first, and may keep the GPU for the next one */
        s->kernel_ready = false;
        d->ts_done = s;
        colo_ts_kernel_done(&d->ts, t->ctx);
        return;
    }
    colo_sched_t *sc = d->sched;
    if (sc) {
        sc->item[s->item].state = COLO_ITEM_IDLE;
        sc->item[s->item].preempting = false;
        if (sc->ops->on_complete) sc->ops->on_complete(sc, s->item);
    }
    colo_serving_op_done(s);
    if (sc) colo_domain_dispatch(d);
}

/* Statistics and timeline of a kernel that starts (or resumes) running. */
void colo_domain_kernel_started(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    COLO_CHECK(!s->kernel_running, "tenant %s: a kernel starts at %lld ns while one runs",
               t->cfg->name, (long long)sim->eq.now);
    if (sim->kernels_running++ == 0) sim->busy_since = sim->eq.now;
    if (t->kernels_running++ == 0) t->gpu_since = sim->eq.now;
    s->kernel_since = sim->eq.now;
    s->kernel_running = true;
    t->kernel_starts++;
    if (sim->tl) {
        take_lane(s);
        count_kernels(sim);
    }
}

/* Starts (or resumes) the stream's current kernel on its tenant's place, at the stream priority
 * and under the SM limit its scheduler gave it. */
static void run_kernel(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_domain_kernel_started(s);
    if (colo_merge_run(s)) return;
    colo_merge_alone_stop(sim);
    colo_hw_place_t place = t->place;
    const colo_sched_t *sc = t->dom->sched;
    if (sc) {
        const colo_sched_item_t *it = &sc->item[s->item];
        place.priority += it->priority;
        if (it->sm_limit > 0 && (place.sm_limit == 0 || it->sm_limit < place.sm_limit))
            place.sm_limit = it->sm_limit;
    }
    colo_serving_fail(sim, colo_hw_kernel_start(&sim->hw, &s->w, place, s->kernel_left,
                                                colo_domain_on_kernel_done, s,
                                                (int64_t)t->incarnation, &s->kernel));
}

/* Stops the stream's running kernel, keeping its progress in kernel_left. */
void colo_domain_halt_kernel(colo_stream_run_t *s)
{
    colo_sim_t *sim = s->t->sim;
    colo_merge_alone_stop(sim); /* (its own kernel, maybe) onto the solver first */
    if (!s->kernel) return;
    colo_serving_fail(sim, colo_hw_kernel_stop(&sim->hw, s->kernel, &s->kernel_left));
    s->kernel = NULL;
    colo_domain_kernel_ran(s);
}

/* Under time-slicing a context's kernels run alone on its domain's part of the GPU (the GPU, or
 * a MIG instance that shares nothing with the others but the PCIe link). With one stream per
 * context, a kernel's duration is its duration alone there: the policy times it itself and
 * tells us when it runs. With several, they run together on the hardware model while their
 * context owns the GPU (ts_exec_start, ts_exec_stop). */
/* A timed kernel's use alone: SMs, L2 and DRAM bytes per ns. Its rates over its time alone
 * before rounding to the nanosecond: over the rounded time a 2 us kernel at the bandwidth limit
 * drew 1.00024 of it (issue 22); the SMs as the solver counts them, busy for its compute part. */
void colo_domain_ts_use(const colo_kernel_work_t *w, const colo_tenant_run_t *t, double use[3])
{
    const colo_place_rates_t *pr = &t->rates;
    int sms = t->dom->sms;
    double dur = colo_kernel_alone_at(w, pr->sms, pr->dram_rate, pr->l2_rate);
    use[0] = dur > 0 ? colo_kernel_sms_used(w, sms) * colo_kernel_compute_ns(w, sms) / dur : 0;
    use[1] = dur > 0 ? w->l2_bytes / dur : 0;
    use[2] = dur > 0 ? w->dram_bytes / dur : 0;
}

/* Utilisation of kernels the solver does not see (timed ones): each stream's own integral of
 * their use alone (colo_merge_ts_add), so that the sum does not depend on the order in which
 * streams' kernels start and stop. */
static void ts_account(colo_stream_run_t *s, bool running)
{
    colo_time_t now = s->t->sim->eq.now;
    if (!running) colo_merge_ts_add(s, now, s->ts_int, true);
    s->ts_on = running;
    s->ts_since = now;
}

static colo_tenant_run_t *member(const colo_domain_t *d, size_t ctx)
{
    return &d->sim->t[d->members[ctx]];
}

static void ts_observe(void *obj, size_t ctx, bool running)
{
    colo_domain_t *d = obj;
    colo_stream_run_t *s = &member(d, ctx)->streams[0];
    if (!running) {
        ts_account(s, false);
        colo_serving_fail(
            d->sim, colo_hw_reserve_dram(&d->sim->hw, s->t->place.channel_set, -s->ts_dram_held));
        s->ts_dram_held = 0;
        colo_domain_kernel_ran(s);
        return;
    }
    colo_domain_ts_use(&s->w, s->t, s->ts_use);
    if (d->sim->ts_dram_in_solver) { /* copies move bytes too: they get what it leaves */
        s->ts_dram_held = s->ts_use[2];
        colo_serving_fail(
            d->sim, colo_hw_reserve_dram(&d->sim->hw, s->t->place.channel_set, s->ts_dram_held));
    }
    ts_account(s, true);
    colo_domain_kernel_started(s);
}

static void ts_exec_start(void *obj, size_t ctx)
{
    colo_tenant_run_t *t = member(obj, ctx);
    for (int k = 0; k < t->n_streams; k++)
        if (t->streams[k].kernel_ready && !t->streams[k].kernel_running) run_kernel(&t->streams[k]);
}

static void ts_exec_stop(void *obj, size_t ctx)
{
    colo_tenant_run_t *t = member(obj, ctx);
    for (int k = 0; k < t->n_streams; k++)
        colo_domain_halt_kernel(&t->streams[k]);
}

/* The name of a time-slicing domain's track: the GPU, or its MIG instance. */
static const char *owner_track(const colo_domain_t *d)
{
    const colo_scenario_t *sc = d->sim->sc;
    if (sc->sharing.mode == COLO_SHARE_MIG && d->n_members)
        return sc->sharing.instances[member(d, 0)->cfg->instance].name;
    return "GPU";
}

/* The span of who held the GPU until now, on the domain's owner track. */
static void owner_span(colo_domain_t *d)
{
    colo_sim_t *sim = d->sim;
    colo_time_t now = sim->eq.now;
    if (d->tl_owner < 0 || now <= d->tl_since || !colo_timeline_wants(sim->tl, d->tl_since, now))
        return;
    const char *who = member(d, (size_t)d->tl_owner)->cfg->name;
    char name[160], args[64];
    snprintf(name, sizeof name, "%s%s", d->tl_switching ? "switch to " : "", who);
    snprintf(args, sizeof args, "{\"switches\":%llu}", (unsigned long long)d->tl_switches);
    colo_timeline_span(sim->tl, COLO_TL_OWNER, (int)(d - sim->dom) + 1, name,
                       d->tl_switching ? "context switch" : "context", d->tl_since, now, args);
}

/* The GPU changes hands under time-slicing: the timeline's owner track and switch counter. */
static void ts_owner(void *obj, long owner, bool switching)
{
    colo_domain_t *d = obj;
    colo_sim_t *sim = d->sim;
    if (!sim->tl || (owner == d->tl_owner && switching == d->tl_switching)) return;
    owner_span(d);
    d->tl_owner = owner;
    d->tl_switching = switching;
    d->tl_since = sim->eq.now;
    d->tl_switches = d->ts.switches;
    if (switching) {
        char name[160];
        snprintf(name, sizeof name, "context switches (%s)", owner_track(d));
        colo_timeline_counter(sim->tl, COLO_TL_COUNTERS, name, sim->eq.now, (double)d->ts.switches);
    }
}

void colo_domain_timeline_end(colo_sim_t *sim)
{
    for (size_t k = 0; sim->tl && k < sim->n_dom; k++)
        if (sim->dom[k].ts_ready) owner_span(&sim->dom[k]);
    for (size_t i = 0; sim->tl && i < sim->n; i++) { /* requests waiting or running */
        colo_tenant_run_t *t = &sim->t[i];
        for (size_t k = 0; k < t->qlen; k++)
            request_end(t, &t->queue[(t->qhead + k) % t->qcap], -1, "in flight at the end");
        for (int k = 0; k < t->n_streams; k++) { /* and their batch, its kernels inside */
            colo_stream_run_t *s = &t->streams[k];
            for (int b = 0; b < s->n_batch; b++)
                request_end(t, &s->batch[b], s->batch_start, "in flight at the end");
            if (s->busy && !t->llm) batch_span(s);
        }
    }
}

static void on_ts_done(void *obj, size_t ctx)
{
    colo_domain_t *d = obj;
    if (!d->ts_exec) {
        colo_serving_op_done(&member(d, ctx)->streams[0]);
        return;
    }
    colo_stream_run_t *s = d->ts_done;
    d->ts_done = NULL;
    if (s) colo_serving_op_done(s);
}

/* ---- copies ---- */

/* Timeline track of the stream's copy in direction dir: its domain's direction, lane copy_lane. */
static int copy_tid(const colo_stream_run_t *s, colo_copy_dir_t dir)
{
    return (int)(s->t->dom->ce * 2 + (uint32_t)dir) * 64 + s->copy_lane + 1;
}

/* A lane for the stream's copy that is issued: the lowest free one of its domain's direction,
 * so copies in flight together (on several engines, or waiting for one) do not overlap. */
static void take_copy_lane(colo_stream_run_t *s, colo_copy_dir_t dir)
{
    colo_sim_t *sim = s->t->sim;
    uint32_t ce = s->t->dom->ce;
    bool fresh;
    s->copy_lane = lane_take(&sim->copy_lanes[2 * (ce * 2 + (uint32_t)dir)], &fresh);
    if (fresh) {
        char name[64];
        snprintf(name, sizeof name, "copies %u %s, lane %d", ce,
                 dir == COLO_COPY_H2D ? "H2D" : "D2H", s->copy_lane + 1);
        colo_timeline_name(sim->tl, COLO_TL_COPIES, copy_tid(s, dir), name, copy_tid(s, dir));
    }
}

static void on_copy_done(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_copy_dir_t dir = (colo_copy_dir_t)(arg & 1);
    struct colo_pcie_dir *p = &sim->pcie[dir];
    if (--p->active == 0)
        colo_add_clipped(&p->busy_time, p->since, sim->eq.now, sim->sc->warmup, sim->sc->duration);
    if (sim->tl && colo_timeline_wants(sim->tl, s->copy_start, sim->eq.now)) {
        char args[96];
        snprintf(args, sizeof args, "{\"tenant\":\"%s\"}", t->cfg->name);
        colo_timeline_span(sim->tl, COLO_TL_COPIES, copy_tid(s, dir),
                           dir == COLO_COPY_H2D ? "H2D copy" : "D2H copy", "copy", s->copy_start,
                           sim->eq.now, args);
    }
    if (sim->tl) lane_free(&sim->copy_lanes[2 * (t->dom->ce * 2 + (uint32_t)dir)], s->copy_lane);
    if ((uint64_t)(arg >> 1) != t->incarnation) return; /* its process died meanwhile */
    if (!t->cfg->cuda_graphs) {                         /* the host waited for the copy */
        s->host_clock = sim->eq.now;
        s->after_sync = true;
    }
    colo_serving_op_done(s);
}

/* ---- kernel schedulers (concurrent domains) ---- */

/* Launches what the scheduler picks, until it holds the rest. */
void colo_domain_dispatch(colo_domain_t *d)
{
    colo_sched_t *s = d->sched;
    if (d->dispatching) return; /* a launch inside a launch: the outer loop goes on */
    d->dispatching = true;
    long m;
    while (!d->sim->failed && (m = s->ops->pick_next(s)) >= 0) {
        if ((size_t)m >= s->n || s->item[m].state != COLO_ITEM_READY) {
            colo_serving_fail(d->sim,
                              COLO_ESTATE); /* the scheduler picked an item with nothing ready */
            break;
        }
        s->item[m].state = COLO_ITEM_RUNNING;
        d->launches[m]++;
        run_kernel(d->items[m]);
    }
    d->dispatching = false;
}

/* The stream's current kernel is ready: describe it to the scheduler. */
static void offer_kernel(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sched_t *sc = t->dom->sched;
    colo_sched_item_t *it = &sc->item[s->item];
    const struct colo_variant_run *v = &t->var[s->plan.var];
    it->state = COLO_ITEM_READY;
    it->ready = t->sim->eq.now;
    it->deadline = t->cfg->slo > 0 && s->n_batch ? s->batch[0].arrival + t->cfg->slo : INT64_MAX;
    it->alone = colo_time_from_ns((double)s->alone * s->kernel_left);
    it->wave = colo_time_from_ns(s->w.wave_ns);
    it->blocks = s->w.blocks > (unsigned long long)INT32_MAX ? INT32_MAX : (int)s->w.blocks;
    int bps = s->w.occ.blocks_per_sm > 0 ? s->w.occ.blocks_per_sm : 1;
    unsigned long long need = (s->w.blocks + (unsigned long long)bps - 1) / (unsigned long long)bps;
    it->sms_needed = need < (unsigned long long)sc->sms ? (int)need : sc->sms;
    if (t->llm) { /* an LLM iteration is all kernels */
        it->first_of_request = s->cur_op == 0;
        it->last_of_request = s->cur_op + 1 == colo_serving_stream_trace(s)->n_ops;
    } else {
        it->first_of_request = s->cur_op == v->first_kernel;
        it->last_of_request = s->cur_op == v->last_kernel;
    }
    if (sc->ops->on_arrival) sc->ops->on_arrival(sc, s->item);
    colo_domain_dispatch(t->dom);
}

/* A preemption asked by the scheduler comes due: the kernel leaves the SMs with its progress. */
static void on_preempt(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_domain_t *d = s->t->dom;
    colo_sched_t *sc = d->sched;
    colo_sched_item_t *it = &sc->item[s->item];
    if ((uint64_t)arg != d->launches[s->item] || it->state != COLO_ITEM_RUNNING || !it->preempting)
        return; /* it ended (or its process died) first */
    colo_domain_halt_kernel(s);
    it->preempting = false;
    it->state = COLO_ITEM_READY;
    it->ready = d->sim->eq.now;
    if (sc->ops->on_arrival) sc->ops->on_arrival(sc, s->item);
    colo_domain_dispatch(d);
}

static void sched_preempt(void *engine, size_t m, colo_time_t delay)
{
    colo_domain_t *d = engine;
    colo_serving_fail(d->sim,
                      colo_eq_schedule(&d->sim->eq, d->sim->eq.now + (delay > 0 ? delay : 0),
                                       on_preempt, d->items[m], (int64_t)d->launches[m], NULL));
}

void colo_domain_op_ready(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_tenant_run_t *t = s->t;
    if ((uint64_t)arg != t->incarnation) return;
    colo_sim_t *sim = t->sim;
    const colo_op_t *op = &colo_serving_stream_trace(s)->ops[s->cur_op];
    colo_domain_t *d = t->dom;
    if (op->type == COLO_OP_COPY) {
        struct colo_pcie_dir *p = &sim->pcie[op->dir];
        if (p->active++ == 0) p->since = sim->eq.now;
        s->copy_start = sim->eq.now;
        if (sim->tl) take_copy_lane(s, op->dir);
        colo_hw_copy_opts_t o = {t->place.channel_set, (int)t->idx, t->cfg->pcie_weight};
        colo_merge_alone_stop(sim);
        colo_serving_fail(
            sim, colo_hw_copy_start_at(&sim->hw, op->dir, op->bytes, d->ce, &o, on_copy_done, s,
                                       (int64_t)((t->incarnation << 1) | (uint64_t)op->dir)));
    } else if (d->kind == COLO_DOM_TIMESLICE) {
        s->kernel_ready = d->ts_exec;
        colo_serving_fail(sim, colo_ts_submit(&d->ts, t->ctx, s->alone));
    } else if (d->sched) {
        offer_kernel(s);
    } else {
        run_kernel(s);
    }
}

/* ---- set-up ---- */

static int range_set(colo_hw_t *hw, int first, int n, uint32_t *idx)
{
    int ids[COLO_HW_MAX_UNITS];
    for (int i = 0; i < n && i < COLO_HW_MAX_UNITS; i++)
        ids[i] = first + i;
    return colo_hw_add_sm_set(hw, ids, n, idx);
}

/* The scenario's kernel scheduler for concurrent domain d: one item per stream. */
static int sched_new(colo_sim_t *sim, colo_domain_t *d)
{
    const colo_scenario_t *sc = sim->sc;
    colo_sched_t *s = colo_calloc(1, sizeof *s);
    if (!s) return COLO_ENOMEM;
    d->sched = s;
    s->ops = sc->scheduler.ops;
    memcpy(s->param, sc->scheduler.param, sizeof s->param);
    s->n = d->n_items;
    s->sms = d->sms;
    s->now = &sim->eq.now;
    s->preempt = sched_preempt;
    s->engine = d;
    s->item = colo_calloc(s->n, sizeof *s->item);
    d->launches = colo_calloc(s->n, sizeof *d->launches);
    if (!s->item || !d->launches) return COLO_ENOMEM;
    for (size_t m = 0; m < s->n; m++) {
        s->item[m].tenant = d->items[m]->t->idx;
        s->item[m].cls = d->items[m]->t->cfg->cls;
        s->item[m].deadline = INT64_MAX;
    }
    int rc = s->ops->init ? s->ops->init(s) : 0;
    if (rc) {
        s->ops = NULL; /* no fini for what did not start */
        return rc;
    }
    return 0;
}

/* Domains and partitions of the hardware for the scenario's sharing mechanism. */
int colo_domain_build(colo_sim_t *sim)
{
    const colo_scenario_t *sc = sim->sc;
    const colo_gpu_t *g = sc->gpu;
    colo_hw_t *hw = &sim->hw;
    bool mig = sc->sharing.mode == COLO_SHARE_MIG;
    hw->pcie_fair = sc->pcie_fair;
    size_t n_dom = mig ? sc->sharing.n_instances : 1;
    if (!(sim->dom = colo_calloc(n_dom, sizeof *sim->dom))) return COLO_ENOMEM;
    sim->n_dom = n_dom;
    size_t streams = 0;
    for (size_t i = 0; i < sim->n; i++)
        streams += (size_t)sim->t[i].n_streams;
    int rc = 0;
    for (size_t k = 0; k < sim->n_dom && !rc; k++) {
        colo_domain_t *d = &sim->dom[k];
        d->sim = sim;
        d->place = (colo_hw_place_t){0, 0, 0, 0, 0};
        d->sms = g->sm.count;
        d->dram_rate = colo_gpu_dram_rate(g);
        d->l2_rate = colo_gpu_l2_rate(g);
        colo_share_mode_t share = sc->sharing.mode;
        if (mig) {
            const colo_mig_instance_t *in = &sc->sharing.instances[k];
            const colo_mig_profile_t *p = in->profile;
            int per_slice = g->memory.channels / g->mig.memory_slices, ch[COLO_HW_MAX_UNITS], n = 0;
            for (int s = in->placement; s < in->placement + p->memory_slices; s++)
                for (int c = 0; c < per_slice; c++)
                    ch[n++] = s * per_slice + c;
            d->sms = p->sms;
            d->dram_rate *= (double)p->memory_slices / g->mig.memory_slices;
            d->l2_rate *= p->l2_eighths / 8.0;
            rc = range_set(hw, in->first_sm, p->sms, &d->place.sm_set);
            if (!rc)
                rc = colo_hw_add_l2_group(hw, colo_gpu_l2_capacity(g) * p->l2_eighths / 8.0,
                                          d->l2_rate, &d->place.l2_group);
            if (!rc) rc = colo_hw_add_channel_set(hw, ch, n, &d->place.channel_set);
            if (!rc) rc = colo_hw_add_ce_domain(hw, p->copy_engines, &d->ce);
            share = in->share;
        }
        d->kind = share == COLO_SHARE_TIMESLICE ? COLO_DOM_TIMESLICE : COLO_DOM_CONCURRENT;
        if (!rc && (!(d->members = colo_calloc(sc->n_tenants, sizeof *d->members)) ||
                    !(d->items = colo_calloc(streams, sizeof *d->items))))
            rc = COLO_ENOMEM;
    }
    for (size_t i = 0; i < sim->n && !rc; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        const colo_tenant_cfg_t *c = t->cfg;
        colo_domain_t *d = &sim->dom[mig ? c->instance : 0];
        t->dom = d;
        t->ctx = d->n_members;
        d->members[d->n_members++] = i;
        for (int k = 0; k < t->n_streams; k++) {
            t->streams[k].item = d->n_items;
            d->items[d->n_items++] = &t->streams[k];
        }
        if (d->kind == COLO_DOM_TIMESLICE && t->n_streams > 1) d->ts_exec = true;
        t->place = d->place;
        /* a below-normal MPS client's kernels: their pending blocks after normal ones' (the
         * client priority acts as a stream priority; docs/sharing.md) */
        t->place.priority = c->priority ? -1 : 0;
        if (c->sm_count > 0) rc = range_set(hw, c->sm_first, c->sm_count, &t->place.sm_set);
        if (!rc && c->n_channels > 0) /* its colour: its memory on these channels only */
            rc = colo_hw_add_channel_set(hw, c->channels, c->n_channels, &t->place.channel_set);
        t->place.sm_limit = c->sm_cap;
    }
    for (size_t k = 0; k < sim->n_dom && !rc; k++)
        if (sc->scheduler.ops && sim->dom[k].kind == COLO_DOM_CONCURRENT && sim->dom[k].n_members)
            rc = sched_new(sim, &sim->dom[k]);
    for (size_t k = 0; k < sim->n_dom && !rc; k++) {
        colo_domain_t *d = &sim->dom[k];
        if (d->kind != COLO_DOM_TIMESLICE || d->n_members == 0) continue;
        colo_ts_exec_t timer = {NULL, NULL, d, ts_observe, ts_owner};
        colo_ts_exec_t hw_exec = {ts_exec_start, ts_exec_stop, d, NULL, ts_owner};
        d->tl_owner = -1;
        rc = colo_ts_init(&d->ts, &sim->eq, d->n_members, sc->sharing.timeslice,
                          sc->sharing.switch_cost, on_ts_done, d, d->ts_exec ? &hw_exec : &timer);
        if (!rc) {
            d->ts_ready = true;
            colo_ts_set_window(&d->ts, sc->warmup, sc->duration);
        }
    }
    return rc;
}

/* ---- the timeline's tracks ---- */

int colo_sim_set_timeline(colo_sim_t *sim, colo_timeline_t *tl)
{
    sim->tl = tl;
    if (!tl) return 0;
    colo_free(sim->lanes);
    colo_free(sim->copy_lanes);
    /* per SM set, and per copy-engine domain and direction: lanes in use, lanes named; then
     * each tenant's request lanes (request_lanes) */
    sim->lanes =
        colo_calloc(2 * sim->hw.sm.n_sets + 1 + 2 * REQ_WORDS * sim->n, sizeof *sim->lanes);
    sim->copy_lanes = colo_calloc(4 * sim->hw.n_ce + 1, sizeof *sim->copy_lanes);
    if (!sim->lanes || !sim->copy_lanes) {
        sim->tl = NULL;
        return COLO_ENOMEM;
    }
    char name[160];
    colo_timeline_name(tl, COLO_TL_TENANTS, 0, "tenants (batches, kernels)", 1);
    colo_timeline_name(tl, COLO_TL_COPIES, 0, "copy engines", 2);
    colo_timeline_name(tl, COLO_TL_COUNTERS, 0, "counters", 3);
    colo_timeline_name(tl, COLO_TL_REQUESTS, 0, "requests (arrival to end; arrows to kernels)", 5);
    for (size_t k = 0; k < sim->n_dom; k++)
        if (sim->dom[k].ts_ready) { /* time-slicing: who holds the GPU, and the switches */
            colo_timeline_name(tl, COLO_TL_OWNER, 0, "time-slicing: who holds the GPU", 4);
            snprintf(name, sizeof name, "%s: owning context, and switches",
                     owner_track(&sim->dom[k]));
            colo_timeline_name(tl, COLO_TL_OWNER, (int)k + 1, name, (int)k + 1);
        }
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        for (int k = 0; k < t->n_streams; k++) {
            if (t->n_streams == 1)
                snprintf(name, sizeof name, "%s (%s)", t->cfg->name, t->cfg->trace->model);
            else
                snprintf(name, sizeof name, "%s (%s), instance %d", t->cfg->name,
                         t->cfg->trace->model, k + 1);
            colo_timeline_name(tl, COLO_TL_TENANTS, colo_serving_stream_tid(&t->streams[k]), name,
                               (int)i * 64 + k);
        }
        /* a partition's track, named once by its first tenant */
        bool first = true;
        for (size_t j = 0; j < i; j++)
            first &= sim->t[j].place.sm_set != t->place.sm_set;
        if (first) {
            int sharers = 0;
            for (size_t j = 0; j < sim->n; j++)
                sharers += sim->t[j].place.sm_set == t->place.sm_set ? sim->t[j].n_streams : 0;
            const char *how = sharers == 1 ? "one stream"
                              : t->dom->kind == COLO_DOM_CONCURRENT || t->dom->ts_exec
                                  ? "kernels co-reside"
                                  : "one context at a time";
            int pid = COLO_TL_PARTITIONS + (int)t->place.sm_set;
            snprintf(name, sizeof name, "SM partition %u: %d SMs, %s", t->place.sm_set,
                     colo_hw_set_sms(&sim->hw, t->place.sm_set), how);
            colo_timeline_name(tl, pid, 0, name, pid);
        }
    }
    return 0;
}
