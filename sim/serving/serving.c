/* serving.c: the serving loop: tenants, their instances (streams) and requests, the launch of a
 * request's ops, batches, faults, utilisation samples and the run. Execution domains are in
 * domain.c, a request alone in request_time.c. */
#include "serving.h"
#include "alloc.h"
#include "invariant.h"
#include "rng.h"
#include "serving_internal.h"
#include "stop.h"

#include <math.h>
#include <string.h>

const char *colo_drop_reason_name(colo_drop_reason_t r)
{
    static const char *const names[] = {"fault", "unavailable", "queue_full", "deadline"};
    return r < COLO_DROP_REASONS ? names[r] : "?";
}

void colo_serving_fail(colo_sim_t *sim, int rc)
{
    if (rc && !sim->failed) sim->failed = rc;
}

bool colo_serving_in_window(const colo_sim_t *sim, colo_time_t t)
{
    return t >= sim->sc->warmup && t < sim->sc->duration;
}

const colo_trace_t *colo_serving_stream_trace(const colo_stream_run_t *s)
{
    if (s->t->llm) return colo_serving_llm_trace(s->t);
    const colo_trace_t *m = &s->t->var[s->plan.var].merged;
    return m->n_ops ? m : s->t->cfg->variants[s->plan.var].trace;
}

/* The tenants' timeline track of a stream: the tenant's own when it has one instance. */
int colo_serving_stream_tid(const colo_stream_run_t *s)
{
    return (int)s->t->idx + 1 + 100000 * s->idx;
}

/* ---- requests ---- */

#define issue_op colo_serving_issue_op
#define client_done colo_serving_client_done
#define drop colo_serving_drop
static void maybe_start(colo_tenant_run_t *t);
#define in_window colo_serving_in_window
#define queue_counter colo_serving_queue_counter
static size_t waiting(const colo_tenant_run_t *t);

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
        colo_domain_request_dropped(t, &q, -1, COLO_DROP_DEADLINE);
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
    colo_host_busy(&sim->host, t->host_proc, t->host_gil, 1, now);
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
    if (t->llm) {
        colo_serving_llm_start(t);
        return;
    }
    while (t->busy_streams < t->n_streams && !t->down && t->qlen) {
        colo_time_t due = t->queue[t->qhead].arrival + c->max_delay;
        if (c->max_batch > 1 && (int)t->qlen < c->max_batch && due > sim->eq.now) {
            if (!t->batch_timer) {
                t->batch_timer = true;
                colo_serving_fail(sim, colo_eq_schedule(&sim->eq, due, on_batch_timer, t,
                                                        (int64_t)t->incarnation, NULL));
            }
            return;
        }
        start_batch(t);
    }
}

void colo_serving_queue_counter(colo_tenant_run_t *t)
{
    if (!t->sim->tl) return;
    char name[96];
    snprintf(name, sizeof name, "queue %s", t->cfg->name);
    colo_timeline_counter(t->sim->tl, COLO_TL_COUNTERS, name, t->sim->eq.now, (double)waiting(t));
}

static void request_done(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    s->busy = false;
    t->busy_streams--;
    colo_host_busy(&sim->host, t->host_proc, t->host_gil, -1, now);
    if (sim->tl) colo_domain_timeline_batch(s); /* and its requests' spans */
    for (int k = 0; k < s->n_batch; k++) {
        struct colo_request q = s->batch[k];
        t->done_all++;
        t->good_all += t->cfg->slo > 0 && now - q.arrival <= t->cfg->slo;
        t->last_done = now;
        if (in_window(sim, now)) {
            t->finished_in_window++;
            if (t->cfg->slo > 0 && now - q.arrival <= t->cfg->slo) t->good_in_window++;
        }
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
            colo_serving_fail(sim, colo_samples_push(&t->latency, lat));
        }
        if (t->lg)
            colo_serving_fail(
                sim, colo_loadgen_sample_done(&t->cfg->arrival.lg, t->lg, now - q.arrival, now));
        client_done(t, q.client);
    }
    s->n_batch = 0;
    maybe_start(t);
}

void colo_serving_op_done(colo_stream_run_t *s)
{
    if (++s->cur_op < colo_serving_stream_trace(s)->n_ops)
        issue_op(s);
    else if (s->t->llm)
        colo_serving_llm_iteration_done(s);
    else
        request_done(s);
}

/* The host issues the stream's next op (docs/model.md, "Requests" and "The host"): a host gap
 * after the one before, no sooner than one launch per launch.host_us (in a CUDA graph, per
 * launch.graph_us, with no host gaps; with a framework, its launch cost instead of the gaps),
 * host work stretched when the host's cores are too few; a kernel is ready launch.start_us after
 * its launch, less the dispatch gap its time includes. */
void colo_serving_issue_op(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    const colo_op_t *op = &colo_serving_stream_trace(s)->ops[s->cur_op];
    colo_time_t now = sim->eq.now;
    bool graphs = t->cfg->cuda_graphs;
    colo_time_t step =
        colo_host_step(op, s->cur_op == 0, graphs, s->after_sync, t->cfg->host_launch,
                       graphs ? sim->graph_spacing : sim->host_spacing);
    /* merged kernels: the host launches the rest after the first */
    const colo_time_t *more = t->var[s->plan.var].host_more;
    colo_time_t after = more ? more[s->cur_op] : 0;
    if (!graphs && !t->llm) { /* an LLM engine's host is not modelled: it neither holds nor
                               * waits for a core */
        double x = colo_host_stretch(&sim->host, t->host_proc, t->host_gil);
        if (x > 1.0) {
            step = (colo_time_t)((double)step * x + 0.5);
            after = (colo_time_t)((double)after * x + 0.5);
        }
    }
    s->host_clock += step;
    s->after_sync = false;
    s->op_done = 0;
    colo_time_t ready = s->host_clock;
    s->host_clock += after;
    if (op->type == COLO_OP_KERNEL) {
        bool traced = false; /* the trace's own kernel: its time alone known from the start */
        if (t->llm)
            colo_serving_llm_work(t, s->cur_op, &s->w);
        else
            traced = colo_plan_kernel(&s->plan, t->var, s->cur_op, &s->w);
        s->alone = traced ? t->var[s->plan.var].op_time[s->cur_op]
                          : colo_request_alone_at(&s->w, t->rates);
        ready += sim->start_lead;
        s->op_ready = ready;
    }
    if (ready > now)
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, ready, colo_domain_op_ready, s,
                                                (int64_t)t->incarnation, NULL));
    else
        colo_domain_op_ready(s, (int64_t)t->incarnation);
}
void colo_serving_drop(colo_tenant_run_t *t, colo_time_t arrival, colo_drop_reason_t why)
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
    t->queue[(t->qhead + t->qlen) % t->qcap] =
        (struct colo_request){arrival, client, colo_domain_request_lane(t)};
    t->qlen++;
    queue_counter(t);
    return 0;
}

/* Requests waiting to be served. */
static size_t waiting(const colo_tenant_run_t *t)
{
    return t->llm ? colo_serving_llm_waiting(t) : t->qlen;
}

/* Schedules the tenant's next open-loop arrival after the one at now. */
static void next_arrival(colo_tenant_run_t *t, colo_time_t now);

/* A request that arrived at `from` at time `arrival` reaches d, a replica of from's service or
 * from itself (routed: now may be later, by the routing delay). */
static void deliver(colo_tenant_run_t *d, colo_tenant_run_t *from, colo_time_t arrival)
{
    colo_sim_t *sim = d->sim;
    if (in_window(sim, arrival)) d->arrived++;
    if (d->down) {
        drop(d, arrival, COLO_DROP_UNAVAILABLE);
        return;
    }
    if (d->cfg->queue_limit > 0 && (long long)waiting(d) >= d->cfg->queue_limit) {
        drop(d, arrival, COLO_DROP_QUEUE_FULL);
        return;
    }
    colo_serving_fail(sim, d->llm ? colo_serving_llm_push_from(d, from, -1)
                                  : push_request(d, arrival, -1));
    if (d != from) maybe_start(d);
}

/* A routed request reaches its replica after the routing delay (arg: when it arrived). */
static void on_delivered(void *obj, int64_t arg)
{
    colo_tenant_run_t *d = obj;
    deliver(d, d, (colo_time_t)arg);
    maybe_start(d);
}

/* count requests arrive (open loop). */
static void on_arrival(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (t->llm) colo_serving_llm_arriving(t); /* before the next record is read */
    if (t->lg) colo_loadgen_issue(t->lg, -1, (int)arg, now);
    next_arrival(t, now);
    for (int64_t k = 0; k < arg; k++) {
        if (t->llm && t->router) /* its tokens and prefix, which the router may read */
            colo_serving_fail(sim, colo_serving_llm_draw(t));
        colo_tenant_run_t *d = colo_serving_route(t); /* a replica of a routed service, or t */
        if (t->router && t->router->cfg.delay > 0)    /* it reaches the replica later */
            colo_serving_fail(sim, colo_eq_schedule(&d->sim->eq, now + t->router->cfg.delay,
                                                    on_delivered, d, now, NULL));
        else
            deliver(d, t, now);
    }
    maybe_start(t);
}

static void next_arrival(colo_tenant_run_t *t, colo_time_t now)
{
    colo_sim_t *sim = t->sim;
    colo_time_t at;
    int count;
    /* an input error (a malformed log) lands in the run's own, clear until one happens: no
     * 1.5 KB cleared for every arrival (3.6 % of the MIG hour) */
    int rc = colo_arrival_next(&t->cfg->arrival, &t->arrivals, t->rng, now, &at, &count, &sim->err);
    if (rc < 0) {
        colo_serving_fail(sim, rc);
        return;
    }
    /* LoadGen ends a test once its minimum queries and duration are met (loadgen.h) */
    bool ended = rc > 0 || (t->lg && colo_serving_lg_stopped(t, at, now));
    if (rc > 0) colo_serving_arrivals_ended(t, now);
    if (!ended && t->llm) colo_serving_llm_pending(t);
    t->next_arrival = COLO_TIME_MAX;
    if (!ended && at < sim->sc->duration) {
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, at, on_arrival, t, count, NULL));
        t->next_arrival = at;
    }
}

/* A closed-loop client sends its next query (per_query requests at once). */
static void on_query(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    int32_t c = (int32_t)arg;
    if (t->down) { /* nobody answers until it is back: try again then */
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, t->up_at, on_query, t, arg, NULL));
        return;
    }
    int n = t->cfg->arrival.per_query;
    t->outstanding[c] += n;
    if (t->lg) colo_loadgen_issue(t->lg, c, n, now);
    for (int k = 0; k < n; k++) {
        if (in_window(sim, now)) t->arrived++;
        if (t->cfg->queue_limit > 0 && (long long)waiting(t) >= t->cfg->queue_limit) {
            drop(t, now, COLO_DROP_QUEUE_FULL);
            client_done(t, c);
            continue;
        }
        colo_serving_fail(sim, t->llm ? colo_serving_llm_push(t, c) : push_request(t, now, c));
    }
    maybe_start(t);
}

/* One of client's requests has been answered or dropped; when its whole query is, it thinks
 * and sends the next. */
void colo_serving_client_done(colo_tenant_run_t *t, int32_t client)
{
    if (client < 0 || --t->outstanding[client] > 0) return;
    colo_sim_t *sim = t->sim;
    colo_time_t at = sim->eq.now + colo_arrival_think(&t->cfg->arrival, t->rng);
    if (t->lg) { /* a LoadGen query is answered when its last sample is */
        colo_serving_fail(sim, colo_loadgen_query_done(t->lg, client, sim->eq.now));
        if (colo_serving_lg_stopped(t, at, sim->eq.now)) return;
    }
    if (at < sim->sc->duration)
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, at, on_query, t, client, NULL));
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
        colo_domain_halt_kernel(&t->streams[k]);
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
    if (t->llm) colo_serving_llm_crash(t);
    for (int k = 0; k < t->n_streams; k++) {
        colo_stream_run_t *s = &t->streams[k];
        s->kernel_left = 1.0;
        s->kernel_ready = false;
        s->busy = false;
        for (int b = 0; b < s->n_batch; b++) {
            colo_domain_request_dropped(t, &s->batch[b], s->batch_start, COLO_DROP_FAULT);
            client_done(t, s->batch[b].client);
        }
        s->n_batch = 0;
    }
    if (!t->llm)
        colo_host_busy(&sim->host, t->host_proc, t->host_gil, -t->busy_streams, sim->eq.now);
    t->busy_streams = 0;
    while (t->qlen) {
        struct colo_request q = pop_request(t);
        colo_domain_request_dropped(t, &q, -1, COLO_DROP_FAULT);
        client_done(t, q.client);
    }
    colo_serving_fail(
        sim, colo_eq_schedule(&sim->eq, t->up_at, on_recovered, t, (int64_t)t->incarnation, NULL));
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
    if (t->dom->sched) colo_domain_dispatch(t->dom);
}

/* ---- utilisation over time ---- */

/* Integrals of use so far: the solver's and the time-sliced kernels'. */
/* ---- set-up and the run ---- */

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
    sim->host.cores = sc->host.cores;
    sim->host.from = sc->warmup;
    sim->host.to = sc->duration;
    if (!(sim->host.busy = colo_calloc(sim->n, sizeof(int))) ||
        !(sim->host.gil_busy = colo_calloc(sim->n, sizeof(int))))
        goto fail;
    if (colo_eq_init(&sim->eq, 64 + 4 * sim->n)) goto fail;
    if (colo_hw_init(&sim->hw, sc->gpu, &sim->eq)) goto fail;
    sim->hw_ready = true;
    if (!(sim->t = colo_calloc(sim->n, sizeof *sim->t))) goto fail;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        t->sim = sim;
        t->idx = i;
        t->arrivals_ended = -1;
        t->cfg = &sc->tenants[i];
        /* one process per tenant; Green Contexts are made in one process (docs/model.md) */
        t->host_proc = sc->sharing.mode == COLO_SHARE_GREEN ? 0 : (int)i;
        t->host_gil = colo_framework_gil(t->cfg->framework);
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
        if (t->cfg->llm && colo_serving_llm_new(t)) goto fail;
        if (t->cfg->arrival.lg.scenario != COLO_LG_NONE &&
            (!(t->lg = colo_calloc(1, sizeof *t->lg)) || colo_loadgen_run_init(t->lg, clients)))
            goto fail;
    }
    for (size_t i = 0; i < sim->n; i++) /* copies beside kernels timed alone (time-slicing) */
        for (size_t v = 0; v < sim->t[i].cfg->n_variants; v++)
            if (sim->t[i].cfg->variants[v].trace->n_copies) sim->ts_dram_in_solver = true;
    if ((rc = colo_domain_build(sim))) goto fail;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        t->rates = colo_tenant_place_rates(sc, i);
        for (size_t v = 0; v < t->cfg->n_variants && !rc; v++) {
            const colo_trace_t *tr = t->cfg->variants[v].trace;
            rc = colo_request_variant_ops(t->cfg, v, sc->gpu, t->rates, t->var[v].op_time,
                                          t->var[v].work, err);
            if (rc) break;
            t->totals[v] = colo_request_schedule(tr, t->var[v].op_time, sc->gpu, t->cfg);
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
    if (colo_serving_routers_new(sim)) {
        colo_sim_free(sim);
        return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
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

int colo_sim_start(colo_sim_t *sim, colo_error_t *err)
{
    if (colo_merge_start(sim))
        return colo_error_set(err, COLO_ENOMEM, sim->sc->path, 0, NULL, "out of memory");
    for (size_t i = 0; i < sim->n && !sim->failed; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        const colo_arrival_cfg_t *a = &t->cfg->arrival;
        int rc = colo_arrival_start(a, &t->arrivals, err);
        if (rc) return rc;
        if (t->cfg->routed) continue; /* its requests come from its service's router */
        if (!colo_arrival_closed(a)) {
            next_arrival(t, 0);
            continue;
        }
        for (int c = 0; c < a->clients; c++) /* every client sends its first query at once */
            colo_serving_fail(sim, colo_eq_schedule(&sim->eq, 0, on_query, t, c, NULL));
    }
    colo_serving_fail(
        sim, colo_eq_schedule(&sim->eq, sim->sc->warmup, colo_serving_on_sample, sim, 0, NULL));
    colo_serving_watch(sim);
    colo_serving_fail(sim, colo_eq_schedule(&sim->eq, sim->sc->duration, colo_serving_on_window_end,
                                            sim, 0, NULL));
    for (size_t f = 0; f < sim->sc->n_faults; f++)
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, sim->sc->faults[f].at, on_fault, sim,
                                                (int64_t)sim->sc->faults[f].tenant, NULL));
    return 0;
}

int colo_sim_advance(colo_sim_t *sim, colo_time_t until, bool inclusive, colo_error_t *err)
{
    colo_event_t ev;
    uint32_t polled = sim->polled;
    uint64_t same_instant = sim->same_instant; /* events in a row at one simulated time */
    colo_time_t last = until < sim->end ? until : sim->end;
    for (;;) {
        colo_time_t at = colo_eq_peek_time(&sim->eq);
        if (at > last || (at == until && !inclusive) || failed(sim) || !colo_eq_pop(&sim->eq, &ev))
            break;
        same_instant = ev.time == sim->last_event ? same_instant + 1 : 0;
        sim->last_event = ev.time;
        if (same_instant > COLO_EVENTS_PER_INSTANT_MAX) {
            zero_time_loop(sim, &ev, err);
            return COLO_EINVAL;
        }
        ev.fn(ev.obj, ev.arg);
        if ((++polled & 4095) == 0) colo_serving_poll(sim);
    }
    sim->polled = polled;
    sim->same_instant = same_instant;
    return 0;
}

colo_time_t colo_sim_next_routing(const colo_sim_t *sim)
{
    colo_time_t at = COLO_TIME_MAX;
    for (size_t i = 0; i < sim->n && !failed(sim); i++)
        if (sim->t[i].router) { /* its arrivals and its autoscaler's decisions */
            if (sim->t[i].next_arrival < at) at = sim->t[i].next_arrival;
            if (sim->t[i].router->on && sim->t[i].router->next_tick < at)
                at = sim->t[i].router->next_tick;
        }
    return at <= sim->end ? at : COLO_TIME_MAX; /* nothing is decided after the run's end */
}

int colo_sim_finish(colo_sim_t *sim, colo_error_t *err)
{
    /* close the statistics (and the timeline's spans) of what is still running at the end */
    colo_domain_timeline_end(sim);
    const colo_scenario_t *sc = sim->sc;
    for (size_t i = 0; i < sim->n; i++)
        if (sim->t[i].kernels_running)
            colo_add_clipped(&sim->t[i].gpu_time, sim->t[i].gpu_since, sim->end, sc->warmup,
                             sc->duration);
    if (sim->kernels_running)
        colo_add_clipped(&sim->busy_time, sim->busy_since, sim->end, sc->warmup, sc->duration);
    colo_host_finish(&sim->host, sim->end);
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

int colo_sim_run(colo_sim_t *sim, colo_error_t *err)
{
    int rc = colo_sim_start(sim, err);
    if (!rc) rc = colo_sim_advance(sim, COLO_TIME_MAX, true, err);
    return rc ? rc : colo_sim_finish(sim, err);
}

void colo_sim_free(colo_sim_t *sim)
{
    if (!sim) return;
    colo_serving_routers_free(sim);
    colo_free(sim->host.busy);
    colo_free(sim->host.gil_busy);
    if (sim->t) {
        for (size_t i = 0; i < sim->n; i++) {
            colo_tenant_run_t *t = &sim->t[i];
            if (t->rng) gsl_rng_free(t->rng);
            colo_free(t->queue);
            colo_free(t->outstanding);
            if (t->lg) colo_loadgen_run_fini(t->lg);
            colo_free(t->lg);
            colo_arrival_stop(&t->arrivals);
            for (size_t k = 0; t->var && k < t->cfg->n_variants; k++) {
                colo_free(t->var[k].op_time);
                colo_free(t->var[k].work);
                colo_free(t->var[k].merged.ops);
                colo_free(t->var[k].host_more);
                colo_free(t->var[k].part_first);
                colo_free(t->var[k].n_parts);
                colo_free(t->var[k].part_time);
                colo_free(t->var[k].part_work);
                colo_free(t->var[k].part_use);
                colo_free(t->var[k].part_host);
                colo_free(t->var[k].solo);
            }
            colo_free(t->var);
            colo_free(t->totals);
            for (int k = 0; t->streams && k < t->n_streams; k++)
                colo_free(t->streams[k].batch);
            colo_free(t->streams);
            colo_samples_fini(&t->latency);
            colo_serving_llm_free(t);
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
