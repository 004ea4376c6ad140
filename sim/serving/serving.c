/* serving.c: tenants, their instances (streams) and requests, the launch of a request's ops,
 * batches, execution domains, faults and the run loop. */
#include "serving.h"
#include "alloc.h"
#include "invariant.h"
#include "kernel_model.h"
#include "rng.h"
#include "stop.h"

#include <string.h>

const char *colo_drop_reason_name(colo_drop_reason_t r)
{
    static const char *const names[] = {"fault", "unavailable", "queue_full", "deadline"};
    return r < COLO_DROP_REASONS ? names[r] : "?";
}

/* ---- placement ---- */

colo_place_rates_t colo_place_rates_of(const colo_gpu_t *g, const colo_mig_profile_t *prof,
                                       int sms)
{
    colo_place_rates_t p = {g->sm.count, colo_gpu_dram_rate(g), colo_gpu_l2_rate(g)};
    if (prof) {
        p.sms = prof->sms;
        p.dram_rate *= (double)prof->memory_slices / g->mig.memory_slices;
        p.l2_rate *= prof->l2_eighths / 8.0;
    }
    if (sms > 0 && sms < p.sms) p.sms = sms;
    return p;
}

colo_place_rates_t colo_tenant_place_rates(const colo_scenario_t *sc, size_t i)
{
    const colo_tenant_cfg_t *t = &sc->tenants[i];
    const colo_mig_profile_t *prof =
        sc->sharing.mode == COLO_SHARE_MIG ? sc->sharing.instances[t->instance].profile : NULL;
    colo_place_rates_t p = colo_place_rates_of(sc->gpu, prof, 0);
    if (t->sm_count > 0) p.sms = t->sm_count;
    if (t->sm_cap > 0 && t->sm_cap < p.sms) p.sms = t->sm_cap;
    return p;
}

colo_time_t colo_request_schedule(const colo_trace_t *tr, const colo_time_t *op_time,
                                  const colo_gpu_t *gpu, bool graphs)
{
    double host_us = graphs ? gpu->launch.graph_us : gpu->launch.host_us;
    colo_time_t spacing = colo_time_from_ns(host_us * 1e3);
    double lead = gpu->launch.start_us - gpu->launch.dispatch_us; /* its time has the dispatch */
    colo_time_t start = colo_time_from_ns(lead > 0 ? lead * 1e3 : 0);
    colo_time_t host = 0, end = 0;
    bool after_sync = false;
    for (size_t i = 0; i < tr->n_ops; i++) {
        const colo_op_t *op = &tr->ops[i];
        if (i == 0)
            host = op->gap;
        else if (graphs)
            host += spacing;
        else
            host += after_sync || op->gap > spacing ? op->gap : spacing;
        colo_time_t ready = op->type == COLO_OP_KERNEL ? host + start : host;
        end = (ready > end ? ready : end) + op_time[i];
        after_sync = op->type == COLO_OP_COPY && !graphs;
        if (after_sync) host = end; /* the host waited for the copy */
    }
    return end;
}

/* Time alone of a kernel of work w at a place: the kernel model's, at least 1 ns. */
static colo_time_t alone_at(const colo_kernel_work_t *w, colo_place_rates_t pr)
{
    colo_time_t d = colo_time_from_ns(colo_kernel_alone_at(w, pr.sms, pr.dram_rate, pr.l2_rate));
    return d < 1 ? 1 : d;
}

/* Per-op works (kernels) and times alone at pr of trace k of tenant c. */
static int variant_ops(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                       colo_place_rates_t pr, colo_time_t *op_time, colo_kernel_work_t *work,
                       colo_error_t *err)
{
    const colo_variant_t *v = &c->variants[k];
    const colo_trace_t *tr = v->trace;
    for (size_t i = 0; i < tr->n_ops; i++) {
        const colo_op_t *op = &tr->ops[i];
        if (op->type == COLO_OP_KERNEL) {
            colo_kernel_work_t w;
            int rc = colo_kernel_work(op, v->gpu, gpu, c->fp32_math, &w, tr->path, i, err);
            if (rc) return rc;
            op_time[i] = alone_at(&w, pr);
            if (work) work[i] = w;
        } else {
            op_time[i] = colo_hw_copy_alone(gpu, op->dir, op->bytes);
        }
    }
    return 0;
}

int colo_variant_times(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                       colo_place_rates_t rates, colo_time_t *op_time, colo_time_t *total,
                       colo_error_t *err)
{
    const colo_trace_t *tr = c->variants[k].trace;
    colo_time_t *t = op_time ? op_time : colo_malloc(tr->n_ops * sizeof *t);
    if (!t) return colo_error_set(err, COLO_ENOMEM, tr->path, 0, NULL, "out of memory");
    int rc = variant_ops(c, k, gpu, rates, t, NULL, err);
    if (!rc) *total = colo_request_schedule(tr, t, gpu, c->cuda_graphs);
    if (!op_time) colo_free(t);
    return rc;
}

void colo_batch_plan(const colo_tenant_cfg_t *c, const colo_time_t *totals, int b,
                     colo_batch_plan_t *p)
{
    *p = (colo_batch_plan_t){0, 1.0, 0, 0.0, 1.0};
    if (c->max_batch == 0) return; /* a request is one run of the trace, at its batch */
    size_t j = 0;
    while (j + 1 < c->n_variants && c->variants[j].trace->batch < b)
        j++;
    p->var = p->lo = j;
    int hi = c->variants[j].trace->batch;
    if (hi == b) return;
    if (b > hi || j == 0) { /* beyond the traced sizes: the kernel model */
        p->f = (double)b / hi;
        return;
    }
    int lo = c->variants[j - 1].trace->batch;
    p->alpha = (double)(b - lo) / (double)(hi - lo);
    if (c->variants[j].aligned) {
        p->lo = j - 1;
    } else { /* different kernels: the upper trace, scaled to the interpolated total */
        double t = (double)totals[j - 1] + p->alpha * (double)(totals[j] - totals[j - 1]);
        p->scale = t / (double)totals[j];
    }
}

void colo_plan_kernel(const colo_batch_plan_t *p, const struct colo_variant_run *var, size_t i,
                      colo_kernel_work_t *out)
{
    const colo_kernel_work_t *w = &var[p->var].work[i];
    if (p->f != 1.0) {
        colo_kernel_at_batch(w, p->f, out);
        return;
    }
    *out = *w;
    double hi = (double)var[p->var].op_time[i], target;
    if (p->lo != p->var)
        target = (double)var[p->lo].op_time[i] + p->alpha * (hi - (double)var[p->lo].op_time[i]);
    else if (p->scale != 1.0)
        target = hi * p->scale;
    else
        return;
    /* the fixed part stays; what SMs and bandwidth do takes the rest of the target */
    double v = hi - w->fixed_ns, g = v > 0 ? (target - w->fixed_ns) / v : 1.0;
    if (g < 0) g = 0;
    out->wave_ns *= g;
    out->dram_bytes *= g;
    out->l2_bytes *= g;
}

int colo_request_time(const colo_tenant_cfg_t *c, const colo_gpu_t *gpu, colo_place_rates_t pr,
                      int b, colo_time_t *request, colo_time_t *kernels, colo_error_t *err)
{
    size_t nv = c->n_variants;
    struct colo_variant_run *var = colo_calloc(nv, sizeof *var);
    colo_time_t *totals = colo_calloc(nv, sizeof *totals), *times = NULL;
    int rc = var && totals ? 0 : COLO_ENOMEM;
    for (size_t k = 0; k < nv && !rc; k++) {
        size_t n = c->variants[k].trace->n_ops;
        var[k].op_time = colo_malloc(n * sizeof *var[k].op_time);
        var[k].work = colo_malloc(n * sizeof *var[k].work);
        if (!var[k].op_time || !var[k].work) rc = COLO_ENOMEM;
        if (!rc) rc = variant_ops(c, k, gpu, pr, var[k].op_time, var[k].work, err);
        if (!rc)
            totals[k] = colo_request_schedule(c->variants[k].trace, var[k].op_time, gpu,
                                              c->cuda_graphs);
    }
    if (!rc) {
        colo_batch_plan_t p;
        colo_batch_plan(c, totals, b, &p);
        const colo_trace_t *tr = c->variants[p.var].trace;
        if (!(times = colo_malloc(tr->n_ops * sizeof *times))) rc = COLO_ENOMEM;
        double sum = 0;
        for (size_t k = 0; !rc && k < tr->n_ops; k++) {
            times[k] = var[p.var].op_time[k];
            if (tr->ops[k].type != COLO_OP_KERNEL) continue;
            colo_kernel_work_t w;
            colo_plan_kernel(&p, var, k, &w);
            times[k] = alone_at(&w, pr);
            sum += (double)times[k] - w.dispatch_ns;
        }
        if (!rc && request) *request = colo_request_schedule(tr, times, gpu, c->cuda_graphs);
        if (!rc && kernels) *kernels = colo_time_from_ns(sum);
    }
    for (size_t k = 0; var && k < nv; k++) {
        colo_free(var[k].op_time);
        colo_free(var[k].work);
    }
    colo_free(var);
    colo_free(totals);
    colo_free(times);
    if (rc == COLO_ENOMEM)
        return colo_error_set(err, rc, c->variants[0].trace->path, 0, NULL, "out of memory");
    return rc;
}

void colo_tenant_cfg_of_trace(colo_tenant_cfg_t *c, colo_variant_t *v, const colo_trace_t *t,
                              const colo_gpu_t *src, int batch, colo_fp32_math_t fp32, bool graphs)
{
    memset(c, 0, sizeof *c);
    *v = (colo_variant_t){t, src, t->path, false};
    c->trace = t;
    c->trace_gpu = src;
    c->trace_path = t->path;
    c->n_variants = 1;
    c->variants = v;
    c->instances = 1;
    c->cuda_graphs = graphs;
    c->fp32_math = fp32;
    c->max_batch = batch; /* batches of that many samples */
}

int colo_tenant_request_time(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr, int b,
                             colo_time_t *t, colo_error_t *err)
{
    return colo_request_time(&sc->tenants[i], sc->gpu, pr, b, t, NULL, err);
}

int colo_tenant_isolated(const colo_scenario_t *sc, size_t i, colo_time_t *isolated,
                         colo_error_t *err)
{
    return colo_tenant_isolated_at(sc, i, colo_tenant_place_rates(sc, i), isolated, err);
}

int colo_tenant_isolated_at(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr,
                            colo_time_t *isolated, colo_error_t *err)
{
    return colo_tenant_request_time(sc, i, pr, 1, isolated, err);
}

static void fail(colo_sim_t *sim, int rc)
{
    if (rc && !sim->failed) sim->failed = rc;
}

static bool in_window(const colo_sim_t *sim, colo_time_t t)
{
    return t >= sim->sc->warmup && t < sim->sc->duration;
}

/* ---- kernels on the hardware model ---- */

static const colo_trace_t *stream_trace(const colo_stream_run_t *s)
{
    return s->t->cfg->variants[s->plan.var].trace;
}

/* The tenants' timeline track of a stream: the tenant's own when it has one instance. */
static int stream_tid(const colo_stream_run_t *s)
{
    return (int)s->t->idx + 1 + 100000 * s->idx;
}

/* The timeline: the kernel that ran [kernel_since, now) on the stream's and its partition's
 * tracks, and the number of kernels running. */
static void timeline_kernel(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (!colo_timeline_wants(sim->tl, s->kernel_since, now)) return;
    const char *name = stream_trace(s)->ops[s->cur_op].name;
    char args[160];
    snprintf(args, sizeof args, "{\"tenant\":\"%s\",\"op\":%zu}", t->cfg->name, s->cur_op);
    colo_timeline_span(sim->tl, COLO_TL_TENANTS, stream_tid(s), name, "kernel", s->kernel_since,
                       now, args);
    colo_timeline_span(sim->tl, COLO_TL_PARTITIONS + (int)t->place.sm_set, s->lane + 1, name,
                       "kernel", s->kernel_since, now, args);
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

static void kernel_ran(colo_stream_run_t *s)
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

static void op_done(colo_stream_run_t *s);

static void dispatch(colo_domain_t *d);

static void on_hw_kernel_done(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_tenant_run_t *t = s->t;
    s->kernel = NULL;
    kernel_ran(s);
    if ((uint64_t)arg != t->incarnation) return;
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
    op_done(s);
    if (sc) dispatch(d);
}

/* Statistics and timeline of a kernel that starts (or resumes) running. */
static void kernel_started(colo_stream_run_t *s)
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

/* Starts (or resumes) the stream's current kernel on its tenant's place. */
static void run_kernel(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    kernel_started(s);
    fail(sim, colo_hw_kernel_start(&sim->hw, &s->w, t->place, s->kernel_left, on_hw_kernel_done,
                                   s, (int64_t)t->incarnation, &s->kernel));
    if (s->kernel && t->weight != 1.0)
        fail(sim, colo_hw_kernel_weight(&sim->hw, s->kernel, t->weight));
}

/* Stops the stream's running kernel, keeping its progress in kernel_left. */
static void halt_kernel(colo_stream_run_t *s)
{
    if (!s->kernel) return;
    colo_sim_t *sim = s->t->sim;
    fail(sim, colo_hw_kernel_stop(&sim->hw, s->kernel, &s->kernel_left));
    s->kernel = NULL;
    kernel_ran(s);
}

/* Under time-slicing a context's kernels run alone on its domain's part of the GPU (the GPU, or
 * a MIG instance that shares nothing with the others but the PCIe link). With one stream per
 * context, a kernel's duration is its duration alone there: the policy times it itself and
 * tells us when it runs. With several, they run together on the hardware model while their
 * context owns the GPU (ts_exec_start, ts_exec_stop). */
/* Utilisation of kernels the solver does not see (timed ones): their use alone, added
 * (sign 1) or removed (-1). */
static void ts_account(colo_stream_run_t *s, double sign)
{
    colo_sim_t *sim = s->t->sim;
    colo_time_t now = sim->eq.now;
    for (int k = 0; k < 3; k++) {
        if (now > sim->ts_since) sim->ts_integral[k] += sim->ts_used[k] * (double)(now - sim->ts_since);
        sim->ts_used[k] += sign * s->ts_use[k];
    }
    sim->ts_since = now;
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
        ts_account(s, -1);
        kernel_ran(s);
        return;
    }
    const colo_kernel_work_t *w = &s->w;
    /* its rates over its time alone before rounding to the nanosecond: over the rounded time a
     * 2 us kernel at the bandwidth limit drew 1.00024 of it (issue 22) */
    const colo_place_rates_t *pr = &s->t->rates;
    double dur = colo_kernel_alone_at(w, pr->sms, pr->dram_rate, pr->l2_rate);
    /* as the solver counts them: the SMs it keeps busy for its compute part */
    s->ts_use[0] = dur > 0 ? colo_kernel_sms_used(w, d->sms) *
                                 colo_kernel_compute_ns(w, d->sms) / dur
                           : 0;
    s->ts_use[1] = dur > 0 ? w->l2_bytes / dur : 0;
    s->ts_use[2] = dur > 0 ? w->dram_bytes / dur : 0;
    ts_account(s, 1);
    kernel_started(s);
}

static void ts_exec_start(void *obj, size_t ctx)
{
    colo_tenant_run_t *t = member(obj, ctx);
    for (int k = 0; k < t->n_streams; k++)
        if (t->streams[k].kernel_ready && !t->streams[k].kernel_running)
            run_kernel(&t->streams[k]);
}

static void ts_exec_stop(void *obj, size_t ctx)
{
    colo_tenant_run_t *t = member(obj, ctx);
    for (int k = 0; k < t->n_streams; k++)
        halt_kernel(&t->streams[k]);
}

static void on_ts_done(void *obj, size_t ctx)
{
    colo_domain_t *d = obj;
    if (!d->ts_exec) {
        op_done(&member(d, ctx)->streams[0]);
        return;
    }
    colo_stream_run_t *s = d->ts_done;
    d->ts_done = NULL;
    if (s) op_done(s);
}

/* ---- requests ---- */

static void issue_op(colo_stream_run_t *s);

static void client_done(colo_tenant_run_t *t, int32_t client);
static void drop(colo_tenant_run_t *t, colo_time_t arrival, colo_drop_reason_t why);
static void maybe_start(colo_tenant_run_t *t);
static void queue_counter(colo_tenant_run_t *t);

static struct colo_request pop_request(colo_tenant_run_t *t)
{
    struct colo_request q = t->queue[t->qhead];
    t->qhead = (t->qhead + 1) % t->qcap;
    t->qlen--;
    return q;
}

static colo_stream_run_t *idle_stream(colo_tenant_run_t *t)
{
    for (int k = 0; k < t->n_streams; k++)
        if (!t->streams[k].busy) return &t->streams[k];
    return NULL;
}

/* Takes up to max_batch waiting requests (one without batching) and runs the trace for them on
 * an idle stream. */
static void start_batch(colo_tenant_run_t *t)
{
    colo_sim_t *sim = t->sim;
    const colo_tenant_cfg_t *c = t->cfg;
    colo_time_t now = sim->eq.now;
    while (t->qlen && c->deadline > 0 && now - t->queue[t->qhead].arrival > c->deadline) {
        struct colo_request q = pop_request(t); /* waited too long to be worth serving */
        drop(t, q.arrival, COLO_DROP_DEADLINE);
        client_done(t, q.client);
    }
    colo_stream_run_t *s = idle_stream(t);
    if (!t->qlen || !s) return;
    int max = c->max_batch > 0 ? c->max_batch : 1;
    s->n_batch = 0;
    while (t->qlen && s->n_batch < max)
        s->batch[s->n_batch++] = pop_request(t);
    colo_batch_plan(c, t->totals, s->n_batch, &s->plan);
    if (in_window(sim, now)) {
        t->batches++;
        t->batched += (uint64_t)s->n_batch;
    }
    s->busy = true;
    t->busy_streams++;
    COLO_CHECK(t->busy_streams <= t->n_streams, "tenant %s: %d batches in flight on %d instances",
               c->name, t->busy_streams, t->n_streams);
    if (t->busy_streams > t->peak_busy) t->peak_busy = t->busy_streams;
    s->batch_start = now;
    queue_counter(t);
    s->cur_op = 0;
    s->host_clock = now;
    s->after_sync = false;
    issue_op(s);
}

static void on_batch_timer(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    if ((uint64_t)arg != t->incarnation) return;
    t->batch_timer = false;
    if (t->busy_streams < t->n_streams && !t->down && t->qlen) start_batch(t);
}

/* Starts batches while a stream is idle and work waits: at once without batching or when a full
 * batch waits; otherwise when the oldest request has waited max_delay. */
static void maybe_start(colo_tenant_run_t *t)
{
    const colo_tenant_cfg_t *c = t->cfg;
    colo_sim_t *sim = t->sim;
    while (t->busy_streams < t->n_streams && !t->down && t->qlen) {
        colo_time_t due = t->queue[t->qhead].arrival + c->max_delay;
        if (c->max_batch > 1 && (int)t->qlen < c->max_batch && due > sim->eq.now) {
            if (!t->batch_timer) {
                t->batch_timer = true;
                fail(sim, colo_eq_schedule(&sim->eq, due, on_batch_timer, t,
                                           (int64_t)t->incarnation, NULL));
            }
            return;
        }
        start_batch(t);
    }
}

static void queue_counter(colo_tenant_run_t *t)
{
    if (!t->sim->tl) return;
    char name[96];
    snprintf(name, sizeof name, "queue %s", t->cfg->name);
    colo_timeline_counter(t->sim->tl, COLO_TL_COUNTERS, name, t->sim->eq.now, (double)t->qlen);
}

/* The batch that ran [batch_start, now) on the stream's track. */
static void timeline_batch(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    if (!colo_timeline_wants(sim->tl, s->batch_start, sim->eq.now)) return;
    char name[96], args[128];
    snprintf(name, sizeof name, "%s x%d", t->cfg->trace->model, s->n_batch);
    colo_time_t oldest = s->n_batch ? s->batch[0].arrival : s->batch_start;
    snprintf(args, sizeof args, "{\"requests\":%d,\"oldest_waited_ms\":%.6f}", s->n_batch,
             COLO_TO_MS(s->batch_start - oldest));
    colo_timeline_span(sim->tl, COLO_TL_TENANTS, stream_tid(s), name, "batch", s->batch_start,
                       sim->eq.now, args);
}

static void request_done(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    s->busy = false;
    t->busy_streams--;
    if (sim->tl) timeline_batch(s);
    for (int k = 0; k < s->n_batch; k++) {
        struct colo_request q = s->batch[k];
        if (in_window(sim, now)) t->finished_in_window++;
        if (in_window(sim, q.arrival)) {
            colo_time_t lat = now - q.arrival;
            t->completed++;
            t->queue_ns += (double)(s->batch_start - q.arrival);
            t->exec_ns += (double)(now - s->batch_start);
            if (t->cfg->slo > 0 && lat <= t->cfg->slo) t->slo_met++;
            /* nothing is faster than alone on its part of the GPU, less the rounding of each op
             * to the nanosecond (docs/hardening.md), and nothing takes no time */
            COLO_DCHECK(lat >= 1 && lat + (colo_time_t)t->cfg->trace->n_ops >= t->isolated,
                        "tenant %s: a request took %lld ns, alone it takes %lld", t->cfg->name,
                        (long long)lat, (long long)t->isolated);
            fail(sim, colo_samples_push(&t->latency, lat));
        }
        client_done(t, q.client);
    }
    s->n_batch = 0;
    maybe_start(t);
}

static void op_done(colo_stream_run_t *s)
{
    if (++s->cur_op == stream_trace(s)->n_ops)
        request_done(s);
    else
        issue_op(s);
}

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
    if (sim->tl)
        lane_free(&sim->copy_lanes[2 * (t->dom->ce * 2 + (uint32_t)dir)], s->copy_lane);
    if ((uint64_t)(arg >> 1) != t->incarnation) return; /* its process died meanwhile */
    if (!t->cfg->cuda_graphs) {                          /* the host waited for the copy */
        s->host_clock = sim->eq.now;
        s->after_sync = true;
    }
    op_done(s);
}

/* ---- kernel schedulers (concurrent domains) ---- */

/* Launches what the scheduler picks, until it holds the rest. */
static void dispatch(colo_domain_t *d)
{
    colo_sched_t *s = d->sched;
    if (d->dispatching) return; /* a launch inside a launch: the outer loop goes on */
    d->dispatching = true;
    long m;
    while (!d->sim->failed && (m = s->ops->pick_next(s)) >= 0) {
        if ((size_t)m >= s->n || s->item[m].state != COLO_ITEM_READY) {
            fail(d->sim, COLO_ESTATE); /* the scheduler picked an item with nothing ready */
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
    it->first_of_request = s->cur_op == v->first_kernel;
    it->last_of_request = s->cur_op == v->last_kernel;
    if (sc->ops->on_arrival) sc->ops->on_arrival(sc, s->item);
    dispatch(t->dom);
}

/* A preemption asked by the scheduler comes due: the kernel leaves the SMs with its progress. */
static void on_preempt(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_domain_t *d = s->t->dom;
    colo_sched_t *sc = d->sched;
    colo_sched_item_t *it = &sc->item[s->item];
    if ((uint64_t)arg != d->launches[s->item] || it->state != COLO_ITEM_RUNNING ||
        !it->preempting)
        return; /* it ended (or its process died) first */
    halt_kernel(s);
    it->preempting = false;
    it->state = COLO_ITEM_READY;
    it->ready = d->sim->eq.now;
    if (sc->ops->on_arrival) sc->ops->on_arrival(sc, s->item);
    dispatch(d);
}

static void sched_preempt(void *engine, size_t m, colo_time_t delay)
{
    colo_domain_t *d = engine;
    fail(d->sim, colo_eq_schedule(&d->sim->eq, d->sim->eq.now + (delay > 0 ? delay : 0),
                                  on_preempt, d->items[m], (int64_t)d->launches[m], NULL));
}

static void op_ready(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    colo_tenant_run_t *t = s->t;
    if ((uint64_t)arg != t->incarnation) return;
    colo_sim_t *sim = t->sim;
    const colo_op_t *op = &stream_trace(s)->ops[s->cur_op];
    colo_domain_t *d = t->dom;
    if (op->type == COLO_OP_COPY) {
        struct colo_pcie_dir *p = &sim->pcie[op->dir];
        if (p->active++ == 0) p->since = sim->eq.now;
        s->copy_start = sim->eq.now;
        if (sim->tl) take_copy_lane(s, op->dir);
        fail(sim, colo_hw_copy_start(&sim->hw, op->dir, op->bytes, d->ce, on_copy_done, s,
                                     (int64_t)((t->incarnation << 1) | (uint64_t)op->dir)));
    } else if (d->kind == COLO_DOM_TIMESLICE) {
        s->kernel_ready = d->ts_exec;
        fail(sim, colo_ts_submit(&d->ts, t->ctx, s->alone));
    } else if (d->sched) {
        offer_kernel(s);
    } else {
        run_kernel(s);
    }
}

/* The host issues the stream's next op (docs/model.md, "Requests"): a host gap after the one
 * before, no sooner than one launch per launch.host_us (in a CUDA graph, per launch.graph_us, with
 * no host gaps); a kernel is ready launch.start_us after its launch, less the dispatch gap its
 * time includes. */
static void issue_op(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    const colo_op_t *op = &stream_trace(s)->ops[s->cur_op];
    colo_time_t now = sim->eq.now;
    bool graphs = t->cfg->cuda_graphs;
    colo_time_t spacing = graphs ? sim->graph_spacing : sim->host_spacing;
    if (s->cur_op == 0)
        s->host_clock += op->gap;
    else if (graphs)
        s->host_clock += spacing;
    else
        s->host_clock += s->after_sync || op->gap > spacing ? op->gap : spacing;
    s->after_sync = false;
    colo_time_t ready = s->host_clock;
    if (op->type == COLO_OP_KERNEL) {
        colo_plan_kernel(&s->plan, t->var, s->cur_op, &s->w);
        s->alone = alone_at(&s->w, t->rates);
        ready += sim->start_lead;
    }
    if (ready > now)
        fail(sim, colo_eq_schedule(&sim->eq, ready, op_ready, s, (int64_t)t->incarnation, NULL));
    else
        op_ready(s, (int64_t)t->incarnation);
}
static void drop(colo_tenant_run_t *t, colo_time_t arrival, colo_drop_reason_t why)
{
    if (!in_window(t->sim, arrival)) return;
    t->dropped++;
    t->dropped_by[why]++;
}

static int push_request(colo_tenant_run_t *t, colo_time_t arrival, int32_t client)
{
    if (t->qlen == t->qcap) {
        size_t ncap = t->qcap * 2;
        struct colo_request *q = colo_malloc(ncap * sizeof *q);
        if (!q) return COLO_ENOMEM;
        for (size_t i = 0; i < t->qlen; i++)
            q[i] = t->queue[(t->qhead + i) % t->qcap];
        colo_free(t->queue);
        t->queue = q;
        t->qcap = ncap;
        t->qhead = 0;
    }
    t->queue[(t->qhead + t->qlen) % t->qcap] = (struct colo_request){arrival, client};
    t->qlen++;
    queue_counter(t);
    return 0;
}

/* Schedules the tenant's next open-loop arrival after the one at now. */
static void next_arrival(colo_tenant_run_t *t, colo_time_t now);

/* count requests arrive (open loop). */
static void on_arrival(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    next_arrival(t, now);
    for (int64_t k = 0; k < arg; k++) {
        if (in_window(sim, now)) t->arrived++;
        if (t->down) {
            drop(t, now, COLO_DROP_UNAVAILABLE);
            continue;
        }
        if (t->cfg->queue_limit > 0 && (long long)t->qlen >= t->cfg->queue_limit) {
            drop(t, now, COLO_DROP_QUEUE_FULL);
            continue;
        }
        fail(sim, push_request(t, now, -1));
    }
    maybe_start(t);
}

static void next_arrival(colo_tenant_run_t *t, colo_time_t now)
{
    colo_sim_t *sim = t->sim;
    colo_time_t at;
    int count;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_arrival_next(&t->cfg->arrival, &t->arrivals, t->rng, now, &at, &count, &err);
    if (rc < 0) {
        sim->err = err;
        fail(sim, rc);
        return;
    }
    if (rc == 0 && at < sim->sc->duration)
        fail(sim, colo_eq_schedule(&sim->eq, at, on_arrival, t, count, NULL));
}

/* A closed-loop client sends its next query (per_query requests at once). */
static void on_query(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    int32_t c = (int32_t)arg;
    if (t->down) { /* nobody answers until it is back: try again then */
        fail(sim, colo_eq_schedule(&sim->eq, t->up_at, on_query, t, arg, NULL));
        return;
    }
    int n = t->cfg->arrival.per_query;
    t->outstanding[c] += n;
    for (int k = 0; k < n; k++) {
        if (in_window(sim, now)) t->arrived++;
        if (t->cfg->queue_limit > 0 && (long long)t->qlen >= t->cfg->queue_limit) {
            drop(t, now, COLO_DROP_QUEUE_FULL);
            client_done(t, c);
            continue;
        }
        fail(sim, push_request(t, now, c));
    }
    maybe_start(t);
}

/* One of client's requests has been answered or dropped; when its whole query is, it thinks
 * and sends the next. */
static void client_done(colo_tenant_run_t *t, int32_t client)
{
    if (client < 0 || --t->outstanding[client] > 0) return;
    colo_sim_t *sim = t->sim;
    colo_time_t at = sim->eq.now + colo_arrival_think(&t->cfg->arrival, t->rng);
    if (at < sim->sc->duration)
        fail(sim, colo_eq_schedule(&sim->eq, at, on_query, t, client, NULL));
}

/* ---- faults ---- */

static void on_recovered(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    if ((uint64_t)arg == t->incarnation) t->down = false;
}

/* Tenant t's process dies: its kernels stop, its requests are lost, and it comes back after
 * the scenario's recovery time. */
static void crash(colo_tenant_run_t *t)
{
    colo_sim_t *sim = t->sim;
    if (t->dom->kind == COLO_DOM_TIMESLICE)
        colo_ts_abort(&t->dom->ts, t->ctx); /* stops its kernels through the policy */
    for (int k = 0; k < t->n_streams; k++)
        halt_kernel(&t->streams[k]);
    colo_sched_t *sc = t->dom->sched;
    for (int k = 0; sc && k < t->n_streams; k++) {
        size_t m = t->streams[k].item;
        if (sc->item[m].state == COLO_ITEM_IDLE) continue; /* its kernel is lost with it */
        sc->item[m].state = COLO_ITEM_IDLE;
        sc->item[m].preempting = false;
        sc->item[m].last_of_request = true;
        t->dom->launches[m]++;
        if (sc->ops->on_complete) sc->ops->on_complete(sc, m);
    }
    t->incarnation++;
    t->faults++;
    t->down = true;
    t->up_at = sim->eq.now + sim->sc->sharing.recovery;
    t->batch_timer = false; /* a pending timer carries the old incarnation */
    for (int k = 0; k < t->n_streams; k++) {
        colo_stream_run_t *s = &t->streams[k];
        s->kernel_left = 1.0;
        s->kernel_ready = false;
        s->busy = false;
        for (int b = 0; b < s->n_batch; b++) {
            drop(t, s->batch[b].arrival, COLO_DROP_FAULT);
            client_done(t, s->batch[b].client);
        }
        s->n_batch = 0;
    }
    t->busy_streams = 0;
    while (t->qlen) {
        struct colo_request q = pop_request(t);
        drop(t, q.arrival, COLO_DROP_FAULT);
        client_done(t, q.client);
    }
    fail(sim, colo_eq_schedule(&sim->eq, t->up_at, on_recovered, t, (int64_t)t->incarnation, NULL));
}

/* A fatal fault in one tenant: under time-slicing only its own process dies; an MPS server or
 * the one process that holds all Green Contexts takes every member with it. */
static void on_fault(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    colo_tenant_run_t *t = &sim->t[arg];
    if (t->dom->kind == COLO_DOM_TIMESLICE) {
        crash(t);
        return;
    }
    for (size_t i = 0; i < t->dom->n_members; i++)
        crash(&sim->t[t->dom->members[i]]);
    if (t->dom->sched) dispatch(t->dom);
}

/* ---- utilisation over time ---- */

/* Integrals of use so far: the solver's and the time-sliced kernels'. */
static void usage_now(colo_sim_t *sim, double v[COLO_USE_KINDS])
{
    double cap[COLO_USE_KINDS];
    colo_hw_usage(&sim->hw, v, cap);
    colo_time_t dt = sim->eq.now > sim->ts_since ? sim->eq.now - sim->ts_since : 0;
    static const int kind[3] = {COLO_USE_SM, COLO_USE_L2, COLO_USE_DRAM};
    for (int k = 0; k < 3; k++)
        v[kind[k]] += sim->ts_integral[k] + sim->ts_used[k] * (double)dt;
    memcpy(sim->util_cap, cap, sizeof cap);
}

/* Every metrics.interval from warmup to duration: the utilisation of the interval just ended. */
static void on_sample(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    (void)arg;
    double v[COLO_USE_KINDS];
    usage_now(sim, v);
    colo_time_t iv = sim->sc->util_interval;
    if (sim->util_started) {
        if (sim->n_util == sim->cap_util) {
            size_t ncap = sim->cap_util ? 2 * sim->cap_util : 64;
            for (int k = 0; k < COLO_USE_KINDS; k++) {
                double *p = colo_realloc(sim->util[k], ncap * sizeof *p);
                if (!p) {
                    fail(sim, COLO_ENOMEM);
                    return;
                }
                sim->util[k] = p;
            }
            sim->cap_util = ncap;
        }
        for (int k = 0; k < COLO_USE_KINDS; k++) {
            double c = sim->util_cap[k] * (double)iv;
            sim->util[k][sim->n_util] = c > 0 ? (v[k] - sim->util_last[k]) / c : 0;
            /* a share of what the resource can do: the integrals are exact to about 1e-12 of
             * themselves (tolerance of the check) */
            COLO_DCHECK(sim->util[k][sim->n_util] >= -1e-9 && sim->util[k][sim->n_util] <= 1 + 1e-9,
                        "utilisation %s of the interval ending at %lld ns is %.17g",
                        colo_use_names[k], (long long)sim->eq.now, sim->util[k][sim->n_util]);
            if (sim->tl) {
                char name[48];
                snprintf(name, sizeof name, "utilisation %s", colo_use_names[k]);
                colo_timeline_counter(sim->tl, COLO_TL_COUNTERS, name, sim->eq.now - iv,
                                      sim->util[k][sim->n_util]);
            }
        }
        sim->n_util++;
    } else {
        memcpy(sim->util_first, v, sizeof v);
        sim->util_started = true;
    }
    memcpy(sim->util_last, v, sizeof v);
    if (sim->eq.now + iv <= sim->sc->duration)
        fail(sim, colo_eq_schedule(&sim->eq, sim->eq.now + iv, on_sample, sim, 0, NULL));
}

/* At duration: the integrals that close the window's mean. */
static void on_window_end(void *obj, int64_t arg)
{
    colo_sim_t *sim = obj;
    (void)arg;
    usage_now(sim, sim->util_end);
    sim->util_ended = true;
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
static int build_domains(colo_sim_t *sim)
{
    const colo_scenario_t *sc = sim->sc;
    const colo_gpu_t *g = sc->gpu;
    colo_hw_t *hw = &sim->hw;
    bool mig = sc->sharing.mode == COLO_SHARE_MIG;
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
        d->place = (colo_hw_place_t){0, 0, 0, 0};
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
                rc = colo_hw_add_l2_group(hw, colo_gpu_l2_capacity(g) * p->l2_eighths / 8.0, d->l2_rate,
                                          &d->place.l2_group);
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
        t->weight = c->priority ? 0.25 : 1.0; /* below-normal MPS clients: a quarter (docs) */
        if (c->sm_count > 0) rc = range_set(hw, c->sm_first, c->sm_count, &t->place.sm_set);
        t->place.sm_limit = c->sm_cap;
    }
    for (size_t k = 0; k < sim->n_dom && !rc; k++)
        if (sc->scheduler.ops && sim->dom[k].kind == COLO_DOM_CONCURRENT && sim->dom[k].n_members)
            rc = sched_new(sim, &sim->dom[k]);
    for (size_t k = 0; k < sim->n_dom && !rc; k++) {
        colo_domain_t *d = &sim->dom[k];
        if (d->kind != COLO_DOM_TIMESLICE || d->n_members == 0) continue;
        colo_ts_exec_t timer = {NULL, NULL, d, ts_observe};
        colo_ts_exec_t hw_exec = {ts_exec_start, ts_exec_stop, d, NULL};
        rc = colo_ts_init(&d->ts, &sim->eq, d->n_members, sc->sharing.timeslice,
                          sc->sharing.switch_cost, on_ts_done, d, d->ts_exec ? &hw_exec : &timer);
        if (!rc) {
            d->ts_ready = true;
            colo_ts_set_window(&d->ts, sc->warmup, sc->duration);
        }
    }
    return rc;
}

int colo_sim_new(const colo_scenario_t *sc, colo_sim_t **out, colo_error_t *err)
{
    *out = NULL;
    int rc = COLO_ENOMEM;
    colo_sim_t *sim = colo_calloc(1, sizeof *sim);
    if (!sim) goto fail;
    sim->sc = sc;
    sim->n = sc->n_tenants;
    sim->end = sc->duration + sc->drain;
    const colo_gpu_t *g = sc->gpu;
    sim->host_spacing = colo_time_from_ns(g->launch.host_us * 1e3);
    sim->graph_spacing = colo_time_from_ns(g->launch.graph_us * 1e3);
    double lead = g->launch.start_us - g->launch.dispatch_us;
    sim->start_lead = colo_time_from_ns(lead > 0 ? lead * 1e3 : 0);
    if (colo_eq_init(&sim->eq, 64 + 4 * sim->n)) goto fail;
    if (colo_hw_init(&sim->hw, sc->gpu, &sim->eq)) goto fail;
    sim->hw_ready = true;
    if (!(sim->t = colo_calloc(sim->n, sizeof *sim->t))) goto fail;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        t->sim = sim;
        t->idx = i;
        t->cfg = &sc->tenants[i];
        t->latency.limit = sc->exact_samples;
        t->qcap = 64;
        t->rng = colo_rng_new(sc->seed, t->cfg->name);
        t->queue = colo_malloc(t->qcap * sizeof *t->queue);
        size_t nv = t->cfg->n_variants;
        t->var = colo_calloc(nv, sizeof *t->var);
        t->totals = colo_calloc(nv, sizeof *t->totals);
        t->n_streams = t->cfg->instances > 0 ? t->cfg->instances : 1;
        t->streams = colo_calloc((size_t)t->n_streams, sizeof *t->streams);
        if (!t->rng || !t->queue || !t->var || !t->totals || !t->streams) goto fail;
        size_t per_batch = (size_t)(t->cfg->max_batch > 0 ? t->cfg->max_batch : 1);
        for (int k = 0; k < t->n_streams; k++) {
            colo_stream_run_t *s = &t->streams[k];
            s->t = t;
            s->idx = k;
            s->kernel_left = 1.0;
            if (!(s->batch = colo_calloc(per_batch, sizeof *s->batch))) goto fail;
        }
        for (size_t k = 0; k < nv; k++) {
            size_t n_ops = t->cfg->variants[k].trace->n_ops;
            t->var[k].op_time = colo_malloc(n_ops * sizeof *t->var[k].op_time);
            t->var[k].work = colo_calloc(n_ops, sizeof *t->var[k].work);
            if (!t->var[k].op_time || !t->var[k].work) goto fail;
        }
        int clients = t->cfg->arrival.clients;
        if (clients > 0 && !(t->outstanding = colo_calloc((size_t)clients, sizeof(int)))) goto fail;
    }
    if ((rc = build_domains(sim))) goto fail;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        t->rates = colo_tenant_place_rates(sc, i);
        for (size_t v = 0; v < t->cfg->n_variants && !rc; v++) {
            const colo_trace_t *tr = t->cfg->variants[v].trace;
            rc = variant_ops(t->cfg, v, sc->gpu, t->rates, t->var[v].op_time, t->var[v].work, err);
            if (rc) break;
            t->totals[v] = colo_request_schedule(tr, t->var[v].op_time, sc->gpu,
                                                 t->cfg->cuda_graphs);
            t->var[v].first_kernel = SIZE_MAX;
            for (size_t k = 0; k < tr->n_ops; k++)
                if (tr->ops[k].type == COLO_OP_KERNEL) {
                    if (t->var[v].first_kernel == SIZE_MAX) t->var[v].first_kernel = k;
                    t->var[v].last_kernel = k;
                }
        }
        if (!rc) rc = colo_tenant_request_time(sc, i, t->rates, 1, &t->isolated, err);
        if (rc) {
            colo_sim_free(sim);
            return rc;
        }
    }
    *out = sim;
    return 0;
fail:
    colo_sim_free(sim);
    return colo_error_set(err, rc ? rc : COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
}

static bool failed(const colo_sim_t *sim)
{
    if (sim->failed || sim->hw.failed || sim->hw.fl.failed) return true;
    for (size_t k = 0; k < sim->n_dom; k++)
        if (sim->dom[k].ts.failed) return true;
    return false;
}

/* Time stands still when events keep making events at the same instant: a closed loop whose
 * clients think 0 ms and are dropped by a full queue re-send at once, forever. No real run comes
 * near this many events at one instant (a closed loop's start is one per client, an Offline
 * burst one event): the run stops, naming the tenant whose events they are. */
#define COLO_EVENTS_PER_INSTANT_MAX 4000000u

static void zero_time_loop(colo_sim_t *sim, const colo_event_t *ev, colo_error_t *err)
{
    const char *who = NULL;
    const colo_tenant_run_t *t = NULL;
    if (ev->fn == on_query || ev->fn == on_arrival) t = ev->obj;
    if (t) who = t->cfg->name;
    bool closed = t && colo_arrival_closed(&t->cfg->arrival);
    char key[300];
    snprintf(key, sizeof key, "tenants.%s.arrival", who ? who : "");
    colo_error_set(err, COLO_EINVAL, sim->sc->path, 0, who ? key : NULL,
                   "simulated time stopped at %.6f s: more than %u events at that instant%s%s%s",
                   COLO_TO_S(ev->time), COLO_EVENTS_PER_INSTANT_MAX,
                   who ? ", the requests of tenant " : "", who ? who : "",
                   closed ? " (a closed loop whose clients think 0 ms re-sends each request its "
                            "full queue drops at once: give think_ms > 0 or a queue_limit of at "
                            "least its clients)"
                          : "");
}

int colo_sim_run(colo_sim_t *sim, colo_error_t *err)
{
    for (size_t i = 0; i < sim->n && !sim->failed; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        const colo_arrival_cfg_t *a = &t->cfg->arrival;
        int rc = colo_arrival_start(a, &t->arrivals, err);
        if (rc) return rc;
        if (!colo_arrival_closed(a)) {
            next_arrival(t, 0);
            continue;
        }
        for (int c = 0; c < a->clients; c++) /* every client sends its first query at once */
            fail(sim, colo_eq_schedule(&sim->eq, 0, on_query, t, c, NULL));
    }
    fail(sim, colo_eq_schedule(&sim->eq, sim->sc->warmup, on_sample, sim, 0, NULL));
    fail(sim, colo_eq_schedule(&sim->eq, sim->sc->duration, on_window_end, sim, 0, NULL));
    for (size_t f = 0; f < sim->sc->n_faults; f++)
        fail(sim, colo_eq_schedule(&sim->eq, sim->sc->faults[f].at, on_fault, sim,
                                   (int64_t)sim->sc->faults[f].tenant, NULL));
    colo_event_t ev;
    uint32_t polled = 0;
    uint64_t same_instant = 0; /* events in a row at one simulated time */
    while (!failed(sim) && colo_eq_peek_time(&sim->eq) <= sim->end && colo_eq_pop(&sim->eq, &ev)) {
        same_instant = ev.time == sim->last_event ? same_instant + 1 : 0;
        sim->last_event = ev.time;
        if (same_instant > COLO_EVENTS_PER_INSTANT_MAX) {
            zero_time_loop(sim, &ev, err);
            return COLO_EINVAL;
        }
        ev.fn(ev.obj, ev.arg);
        if ((++polled & 4095) == 0 && colo_stop_requested()) fail(sim, COLO_EINTR);
    }
    /* close the statistics of what is still running at the end */
    const colo_scenario_t *sc = sim->sc;
    for (size_t i = 0; i < sim->n; i++)
        if (sim->t[i].kernels_running)
            colo_add_clipped(&sim->t[i].gpu_time, sim->t[i].gpu_since, sim->end, sc->warmup,
                             sc->duration);
    if (sim->kernels_running)
        colo_add_clipped(&sim->busy_time, sim->busy_since, sim->end, sc->warmup, sc->duration);
    for (int d = 0; d < 2; d++)
        if (sim->pcie[d].active)
            colo_add_clipped(&sim->pcie[d].busy_time, sim->pcie[d].since, sim->end, sc->warmup,
                             sc->duration);
    int rc = sim->failed ? sim->failed : sim->hw.failed ? sim->hw.failed : sim->hw.fl.failed;
    for (size_t k = 0; k < sim->n_dom && !rc; k++)
        rc = sim->dom[k].ts.failed;
    if (rc && sim->err.code) { /* an input error found while running (a malformed log) */
        *err = sim->err;
        return rc;
    }
    if (rc)
        return colo_error_set(err, rc, sim->sc->path, 0, NULL, "simulation stopped: %s",
                              colo_strerror(rc));
    colo_sim_check(sim);
    return 0;
}

void colo_sim_check(const colo_sim_t *sim)
{
    int running = 0;
    for (size_t i = 0; i < sim->n; i++) {
        const colo_tenant_run_t *t = &sim->t[i];
        const char *name = t->cfg->name;
        int streams_running = 0, busy = 0;
        for (int k = 0; k < t->n_streams; k++) {
            streams_running += t->streams[k].kernel_running;
            busy += t->streams[k].busy;
            COLO_CHECK(t->streams[k].busy || t->streams[k].n_batch == 0,
                       "tenant %s: instance %d holds %d requests while idle", name, k,
                       t->streams[k].n_batch);
        }
        COLO_CHECK(streams_running == t->kernels_running && busy == t->busy_streams &&
                       busy <= t->n_streams,
                   "tenant %s: %d kernels and %d requests running on its %d instances; counted "
                   "%d and %d",
                   name, streams_running, busy, t->n_streams, t->kernels_running, t->busy_streams);
        COLO_CHECK(t->kernel_starts == t->kernel_ends + (uint64_t)t->kernels_running,
                   "tenant %s: %llu kernels started, %llu ended, %d still running", name,
                   (unsigned long long)t->kernel_starts, (unsigned long long)t->kernel_ends,
                   t->kernels_running);
        running += t->kernels_running;
        uint64_t by_reason = 0;
        for (int r = 0; r < COLO_DROP_REASONS; r++)
            by_reason += t->dropped_by[r];
        COLO_CHECK(by_reason == t->dropped, "tenant %s: %llu dropped, %llu with a reason", name,
                   (unsigned long long)t->dropped, (unsigned long long)by_reason);
        uint64_t in_flight = 0; /* of the window's arrivals: waiting, or in a running batch */
        for (size_t k = 0; k < t->qlen; k++)
            in_flight += in_window(sim, t->queue[(t->qhead + k) % t->qcap].arrival);
        for (int k = 0; k < t->n_streams; k++)
            for (int b = 0; b < t->streams[k].n_batch; b++)
                in_flight += in_window(sim, t->streams[k].batch[b].arrival);
        COLO_CHECK(t->arrived == t->completed + t->dropped + in_flight,
                   "tenant %s: %llu requests arrived in the window, %llu completed, %llu dropped, "
                   "%llu in flight at the end",
                   name, (unsigned long long)t->arrived, (unsigned long long)t->completed,
                   (unsigned long long)t->dropped, (unsigned long long)in_flight);
        COLO_CHECK(t->latency.count == t->completed, "tenant %s: %llu latencies for %llu requests",
                   name, (unsigned long long)t->latency.count, (unsigned long long)t->completed);
    }
    COLO_CHECK(running == sim->kernels_running, "%d kernels running by tenant, %d in all", running,
               sim->kernels_running);
}

void colo_sim_free(colo_sim_t *sim)
{
    if (!sim) return;
    if (sim->t) {
        for (size_t i = 0; i < sim->n; i++) {
            colo_tenant_run_t *t = &sim->t[i];
            if (t->rng) gsl_rng_free(t->rng);
            colo_free(t->queue);
            colo_free(t->outstanding);
            colo_arrival_stop(&t->arrivals);
            for (size_t k = 0; t->var && k < t->cfg->n_variants; k++) {
                colo_free(t->var[k].op_time);
                colo_free(t->var[k].work);
            }
            colo_free(t->var);
            colo_free(t->totals);
            for (int k = 0; t->streams && k < t->n_streams; k++)
                colo_free(t->streams[k].batch);
            colo_free(t->streams);
            colo_samples_fini(&t->latency);
        }
        colo_free(sim->t);
    }
    for (size_t k = 0; k < sim->n_dom; k++) {
        if (sim->dom[k].ts_ready) colo_ts_fini(&sim->dom[k].ts);
        colo_free(sim->dom[k].members);
        colo_free(sim->dom[k].items);
    }
    for (size_t k = 0; sim->dom && k < sim->n_dom; k++) {
        colo_sched_t *s = sim->dom[k].sched;
        if (s && s->ops && s->ops->fini) s->ops->fini(s);
        if (s) colo_free(s->item);
        colo_free(s);
        colo_free(sim->dom[k].launches);
    }
    colo_free(sim->dom);
    colo_free(sim->lanes);
    colo_free(sim->copy_lanes);
    for (int k = 0; k < COLO_USE_KINDS; k++)
        colo_free(sim->util[k]);
    if (sim->hw_ready) colo_hw_fini(&sim->hw);
    colo_eq_fini(&sim->eq);
    colo_free(sim);
}

int colo_sim_set_timeline(colo_sim_t *sim, colo_timeline_t *tl)
{
    sim->tl = tl;
    if (!tl) return 0;
    colo_free(sim->lanes);
    colo_free(sim->copy_lanes);
    /* per SM set, and per copy-engine domain and direction: lanes in use, lanes named */
    sim->lanes = colo_calloc(2 * sim->hw.sm.n_sets + 1, sizeof *sim->lanes);
    sim->copy_lanes = colo_calloc(4 * sim->hw.n_ce + 1, sizeof *sim->copy_lanes);
    if (!sim->lanes || !sim->copy_lanes) {
        sim->tl = NULL;
        return COLO_ENOMEM;
    }
    char name[160];
    colo_timeline_name(tl, COLO_TL_TENANTS, 0, "tenants (batches, kernels)", 1);
    colo_timeline_name(tl, COLO_TL_COPIES, 0, "copy engines", 2);
    colo_timeline_name(tl, COLO_TL_COUNTERS, 0, "counters", 3);
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        for (int k = 0; k < t->n_streams; k++) {
            if (t->n_streams == 1)
                snprintf(name, sizeof name, "%s (%s)", t->cfg->name, t->cfg->trace->model);
            else
                snprintf(name, sizeof name, "%s (%s), instance %d", t->cfg->name,
                         t->cfg->trace->model, k + 1);
            colo_timeline_name(tl, COLO_TL_TENANTS, stream_tid(&t->streams[k]), name,
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
            const char *how = sharers == 1                       ? "one stream"
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
