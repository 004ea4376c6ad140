/* serving.c: tenants, requests and the run loop. */
#include "serving.h"
#include "alloc.h"
#include "rng.h"
#include "kernel_model.h"

#include <string.h>

int colo_tenant_times(const colo_tenant_cfg_t *cfg, const colo_gpu_t *gpu, colo_time_t *op_time,
                      colo_time_t *isolated, colo_error_t *err)
{
    const colo_trace_t *tr = cfg->trace;
    colo_time_t host = 0, gpu_end = 0;
    for (size_t i = 0; i < tr->n_ops; i++) {
        const colo_op_t *op = &tr->ops[i];
        colo_time_t d;
        if (op->type == COLO_OP_KERNEL) {
            colo_kernel_work_t w;
            int rc = colo_kernel_work(op, cfg->trace_gpu, gpu, &w, tr->path, i, err);
            if (rc) return rc;
            d = colo_kernel_duration(&w, gpu);
        } else {
            d = colo_hw_copy_alone(gpu, op->dir, op->bytes);
        }
        if (op_time) op_time[i] = d;
        host += op->gap;
        colo_time_t start = host > gpu_end ? host : gpu_end;
        gpu_end = start + d;
        if (op->type == COLO_OP_COPY) host = gpu_end; /* synchronous copy */
    }
    *isolated = gpu_end;
    return 0;
}

static void fail(colo_sim_t *sim, int rc)
{
    if (rc && !sim->failed) sim->failed = rc;
}

static bool in_window(const colo_sim_t *sim, colo_time_t arrival)
{
    return arrival >= sim->sc->warmup && arrival < sim->sc->duration;
}

static void issue_op(colo_tenant_run_t *t);

static void start_next_request(colo_tenant_run_t *t)
{
    t->cur_arrival = t->queue[t->qhead];
    t->qhead = (t->qhead + 1) % t->qcap;
    t->qlen--;
    t->busy = true;
    t->cur_op = 0;
    t->host_clock = t->sim->eq.now;
    issue_op(t);
}

static void request_done(colo_tenant_run_t *t)
{
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (in_window(sim, now)) t->finished_in_window++;
    if (in_window(sim, t->cur_arrival)) {
        colo_time_t lat = now - t->cur_arrival;
        t->completed++;
        if (t->cfg->slo > 0 && lat <= t->cfg->slo) t->slo_met++;
        fail(sim, colo_samples_push(&t->latency, lat));
    }
    t->busy = false;
    if (t->qlen) start_next_request(t);
}

static void op_done(colo_tenant_run_t *t)
{
    if (++t->cur_op == t->cfg->trace->n_ops)
        request_done(t);
    else
        issue_op(t);
}

static void on_kernel_done(void *obj, size_t ctx)
{
    colo_sim_t *sim = obj;
    op_done(&sim->t[ctx]);
}

/* ---- copies: through the hardware model (copy engines, latency, shared link) ---- */

static void on_copy_done(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    struct colo_pcie_dir *p = &sim->pcie[arg];
    if (--p->active == 0)
        colo_add_clipped(&p->busy_time, p->since, sim->eq.now, sim->sc->warmup, sim->sc->duration);
    t->host_clock = sim->eq.now; /* the host waited for the copy */
    op_done(t);
}

static void copy_submit(colo_tenant_run_t *t, colo_copy_dir_t dir, long long bytes)
{
    colo_sim_t *sim = t->sim;
    struct colo_pcie_dir *p = &sim->pcie[dir];
    if (p->active++ == 0) p->since = sim->eq.now;
    fail(sim, colo_hw_copy_start(&sim->hw, dir, bytes, 0, on_copy_done, t, (int64_t)dir));
}

/* ---- ops ---- */

static void op_ready(void *obj, int64_t arg)
{
    (void)arg;
    colo_tenant_run_t *t = obj;
    const colo_op_t *op = &t->cfg->trace->ops[t->cur_op];
    if (op->type == COLO_OP_KERNEL)
        fail(t->sim, colo_ts_submit(&t->sim->ts, t->idx, t->op_time[t->cur_op]));
    else
        copy_submit(t, op->dir, op->bytes);
}

static void issue_op(colo_tenant_run_t *t)
{
    const colo_op_t *op = &t->cfg->trace->ops[t->cur_op];
    colo_time_t now = t->sim->eq.now;
    t->host_clock += op->gap;
    if (t->host_clock > now)
        fail(t->sim, colo_eq_schedule(&t->sim->eq, t->host_clock, op_ready, t, 0, NULL));
    else
        op_ready(t, 0);
}

/* ---- arrivals ---- */

static void on_arrival(void *obj, int64_t arg)
{
    (void)arg;
    colo_tenant_run_t *t = obj;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    if (in_window(sim, now)) t->arrived++;
    if (t->qlen == t->qcap) {
        size_t ncap = t->qcap * 2;
        colo_time_t *q = colo_malloc(ncap * sizeof *q);
        if (!q) {
            fail(sim, COLO_ENOMEM);
            return;
        }
        for (size_t i = 0; i < t->qlen; i++)
            q[i] = t->queue[(t->qhead + i) % t->qcap];
        colo_free(t->queue);
        t->queue = q;
        t->qcap = ncap;
        t->qhead = 0;
    }
    t->queue[(t->qhead + t->qlen) % t->qcap] = now;
    t->qlen++;
    colo_time_t next = now + t->cfg->arrival.ops->next_gap(&t->cfg->arrival, t->rng);
    if (next < sim->sc->duration)
        fail(sim, colo_eq_schedule(&sim->eq, next, on_arrival, t, 0, NULL));
    if (!t->busy) start_next_request(t);
}

/* ---- the run ---- */

int colo_sim_new(const colo_scenario_t *sc, colo_sim_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_sim_t *sim = colo_calloc(1, sizeof *sim);
    if (!sim) goto nomem;
    sim->sc = sc;
    sim->n = sc->n_tenants;
    sim->end = sc->duration + sc->drain;
    if (colo_eq_init(&sim->eq, 64 + 4 * sim->n)) goto nomem;
    if (colo_ts_init(&sim->ts, &sim->eq, sim->n, sc->sharing.timeslice, sc->sharing.switch_cost,
                     on_kernel_done, sim))
        goto nomem;
    colo_ts_set_window(&sim->ts, sc->warmup, sc->duration);
    if (colo_hw_init(&sim->hw, sc->gpu, &sim->eq)) goto nomem;
    sim->hw_ready = true;
    if (!(sim->t = colo_calloc(sim->n, sizeof *sim->t))) goto nomem;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        t->sim = sim;
        t->idx = i;
        t->cfg = &sc->tenants[i];
        t->qcap = 64;
        t->rng = colo_rng_new(sc->seed, t->cfg->name);
        t->queue = colo_malloc(t->qcap * sizeof *t->queue);
        t->op_time = colo_malloc(t->cfg->trace->n_ops * sizeof *t->op_time);
        if (!t->rng || !t->queue || !t->op_time) goto nomem;
        int rc = colo_tenant_times(t->cfg, sc->gpu, t->op_time, &t->isolated, err);
        if (rc) {
            colo_sim_free(sim);
            return rc;
        }
    }
    *out = sim;
    return 0;
nomem:
    colo_sim_free(sim);
    return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
}

int colo_sim_run(colo_sim_t *sim, colo_error_t *err)
{
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        colo_time_t first = t->cfg->arrival.ops->next_gap(&t->cfg->arrival, t->rng);
        if (first < sim->sc->duration)
            fail(sim, colo_eq_schedule(&sim->eq, first, on_arrival, t, 0, NULL));
    }
    colo_event_t ev;
    while (!sim->failed && !sim->ts.failed && !sim->hw.failed && !sim->hw.fl.failed &&
           colo_eq_peek_time(&sim->eq) <= sim->end && colo_eq_pop(&sim->eq, &ev)) {
        sim->last_event = ev.time;
        ev.fn(ev.obj, ev.arg);
    }
    colo_ts_close(&sim->ts, sim->end);
    for (int d = 0; d < 2; d++)
        if (sim->pcie[d].active)
            colo_add_clipped(&sim->pcie[d].busy_time, sim->pcie[d].since, sim->end, sim->sc->warmup,
                             sim->sc->duration);
    int rc = sim->failed ? sim->failed : sim->ts.failed ? sim->ts.failed : sim->hw.failed;
    if (rc)
        return colo_error_set(err, rc, sim->sc->path, 0, NULL, "simulation stopped: %s",
                              colo_strerror(rc));
    return 0;
}

void colo_sim_free(colo_sim_t *sim)
{
    if (!sim) return;
    if (sim->t) {
        for (size_t i = 0; i < sim->n; i++) {
            colo_tenant_run_t *t = &sim->t[i];
            if (t->rng) gsl_rng_free(t->rng);
            colo_free(t->queue);
            colo_free(t->op_time);
            colo_samples_fini(&t->latency);
        }
        colo_free(sim->t);
    }
    if (sim->hw_ready) colo_hw_fini(&sim->hw);
    colo_ts_fini(&sim->ts);
    colo_eq_fini(&sim->eq);
    colo_free(sim);
}
