/* request_time.c: the cost of one request alone: its part of the GPU as rates, the host's
 * schedule of its ops, the plan of a batch, and its time alone. */
#include "serving.h"
#include "alloc.h"
#include "errors.h"
#include "gpu.h"
#include "hardware.h"
#include "kernel_model.h"
#include "llm_cfg.h"
#include "llm_model.h"
#include "scenario.h"
#include "serving_internal.h"
#include "simtime.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- placement ---- */

colo_place_rates_t colo_place_rates_of(const colo_gpu_t *g, const colo_mig_profile_t *prof, int sms)
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
    if (t->n_channels > 0) /* a colour: the bandwidth of its channels */
        p.dram_rate *= (double)t->n_channels / sc->gpu->memory.channels;
    return p;
}

colo_time_t colo_request_schedule(const colo_trace_t *tr, const colo_time_t *op_time,
                                  const colo_gpu_t *gpu, const colo_tenant_cfg_t *c)
{
    return colo_request_schedule_ops(tr, op_time, gpu, c, NULL);
}

colo_time_t colo_request_schedule_ops(const colo_trace_t *tr, const colo_time_t *op_time,
                                      const colo_gpu_t *gpu, const colo_tenant_cfg_t *c,
                                      colo_time_t *starts)
{
    bool graphs = c->cuda_graphs;
    double host_us = graphs ? gpu->launch.graph_us : gpu->launch.host_us;
    colo_time_t spacing = colo_time_from_ns(host_us * 1e3);
    double lead = gpu->launch.start_us - gpu->launch.dispatch_us; /* its time has the dispatch */
    colo_time_t start = colo_time_from_ns(lead > 0 ? lead * 1e3 : 0);
    colo_time_t host = 0, end = 0;
    bool after_sync = false;
    for (size_t i = 0; i < tr->n_ops; i++) {
        const colo_op_t *op = &tr->ops[i];
        host += colo_host_step(op, i == 0, graphs, after_sync, c->host_launch, spacing);
        colo_time_t ready = op->type == COLO_OP_KERNEL ? host + start : host;
        if (starts) starts[i] = ready > end ? ready : end;
        end = (ready > end ? ready : end) + op_time[i];
        after_sync = op->type == COLO_OP_COPY && !graphs;
        if (after_sync) host = end; /* the host waited for the copy */
    }
    return end;
}

/* Time alone of a kernel of work w at a place: the kernel model's, at least 1 ns. */
colo_time_t colo_request_alone_at(const colo_kernel_work_t *w, colo_place_rates_t pr)
{
    colo_time_t d = colo_time_from_ns(colo_kernel_alone_at(w, pr.sms, pr.dram_rate, pr.l2_rate));
    return d < 1 ? 1 : d;
}

/* Per-op works (kernels) and times alone at pr of trace k of tenant c. */
int colo_request_variant_ops(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                             colo_place_rates_t pr, colo_time_t *op_time, colo_kernel_work_t *work,
                             colo_error_t *err)
{
    const colo_variant_t *v = &c->variants[k];
    const colo_trace_t *tr = v->trace;
    colo_precision_t prec = colo_precision_of(tr, c->precision);
    for (size_t i = 0; i < tr->n_ops; i++) {
        const colo_op_t *op = &tr->ops[i];
        if (op->type == COLO_OP_KERNEL) {
            colo_kernel_work_t w;
            int rc =
                colo_kernel_work_at(op, v->gpu, gpu, c->fp32_math, &prec, &w, tr->path, i, err);
            if (rc) return rc;
            op_time[i] = colo_request_alone_at(&w, pr);
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
    int rc = colo_request_variant_ops(c, k, gpu, rates, t, NULL, err);
    if (!rc) *total = colo_request_schedule(tr, t, gpu, c);
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

bool colo_plan_kernel(const colo_batch_plan_t *p, const struct colo_variant_run *var, size_t i,
                      colo_kernel_work_t *out)
{
    const colo_kernel_work_t *w = &var[p->var].work[i];
    if (p->f != 1.0) {
        colo_kernel_at_batch(w, p->f, out);
        return false;
    }
    *out = *w;
    double hi = (double)var[p->var].op_time[i], target;
    if (p->lo != p->var)
        target = (double)var[p->lo].op_time[i] + p->alpha * (hi - (double)var[p->lo].op_time[i]);
    else if (p->scale != 1.0)
        target = hi * p->scale;
    else
        return true;
    /* the fixed part stays; what SMs and bandwidth do takes the rest of the target */
    double v = hi - w->fixed_ns, g = v > 0 ? (target - w->fixed_ns) / v : 1.0;
    if (g < 0) g = 0;
    out->wave_ns *= g;
    out->dram_bytes *= g;
    out->l2_bytes *= g;
    return false;
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
        if (!rc) rc = colo_request_variant_ops(c, k, gpu, pr, var[k].op_time, var[k].work, err);
        if (!rc) totals[k] = colo_request_schedule(c->variants[k].trace, var[k].op_time, gpu, c);
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
            times[k] = colo_request_alone_at(&w, pr);
            sum += (double)times[k] - w.dispatch_ns;
        }
        if (!rc && request) *request = colo_request_schedule(tr, times, gpu, c);
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
    colo_tenant_cfg_of_trace_as(c, v, t, src, batch, fp32,
                                graphs ? COLO_FW_CUDA_GRAPHS : COLO_FW_TRACE, COLO_MATH_AUTO, NULL);
}

void colo_tenant_cfg_of_trace_as(colo_tenant_cfg_t *c, colo_variant_t *v, const colo_trace_t *t,
                                 const colo_gpu_t *src, int batch, colo_fp32_math_t fp32,
                                 colo_framework_t fw, colo_math_t precision, const colo_gpu_t *gpu)
{
    memset(c, 0, sizeof *c);
    *v = (colo_variant_t){t, src, t->path, false};
    c->trace = t;
    c->trace_gpu = src;
    c->trace_path = t->path;
    c->n_variants = 1;
    c->variants = v;
    c->instances = 1;
    c->framework = fw;
    c->cuda_graphs = fw == COLO_FW_CUDA_GRAPHS;
    c->host_launch = gpu ? colo_framework_launch(fw, gpu, 1.0) : 0;
    c->precision = precision;
    c->fp32_math = fp32;
    c->max_batch = batch; /* batches of that many samples */
}

int colo_tenant_request_time(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr, int b,
                             colo_time_t *t, colo_error_t *err)
{
    if (sc->tenants[i].llm) return colo_serving_llm_alone(&sc->tenants[i], sc->gpu, pr, t, err);
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

/* An LLM tenant's typical request alone (serving_internal.h): its iterations' kernels one
 * after the other, each alone at pr. */
int colo_serving_llm_alone(const colo_tenant_cfg_t *tc, const colo_gpu_t *gpu,
                           colo_place_rates_t pr, colo_time_t *out, colo_error_t *err)
{
    const colo_llm_cfg_t *c = tc->llm;
    const colo_llm_profile_t *p = c->profile;
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, c->profile_gpu, gpu, c->layer_groups);
    m.precision = tc->precision;
    size_t cap = colo_llm_model_max_kernels(&m), n;
    colo_kernel_work_t *w = colo_malloc(cap * sizeof *w);
    if (!w) return COLO_ENOMEM;
    double lead = gpu->launch.start_us - gpu->launch.dispatch_us;
    colo_time_t start = colo_time_from_ns(lead > 0 ? lead * 1e3 : 0), total = 0;
    long long prompt = c->typical_prompt, out_tokens = c->typical_output;
    int budget = c->chunk_tokens > 0 ? c->chunk_tokens : c->max_num_batched_tokens;
    int rc = 0;
    long long cached = 0, generated = 0;
    while (!rc && generated < out_tokens) {
        colo_llm_iter_t it;
        memset(&it, 0, sizeof it);
        if (cached < prompt) {
            long long q = prompt - cached < budget ? prompt - cached : budget;
            colo_llm_iter_prefill(&it, p, (int)q, cached, cached + q == prompt);
            cached += q;
            generated += cached == prompt;
        } else {
            colo_llm_iter_decode(&it, cached);
            cached++;
            generated++;
        }
        rc = colo_llm_model_kernels(&m, &it, NULL, w, NULL, &n, err);
        total += start;
        for (size_t k = 0; k < n && !rc; k++)
            total += colo_request_alone_at(&w[k], pr);
    }
    colo_free(w);
    *out = total;
    return rc;
}
