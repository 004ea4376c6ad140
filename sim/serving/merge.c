/* merge.c: fewer events than kernels (docs/engine.md, "Fewer events than kernels"). Runs of a
 * trace's consecutive kernels that run back to back when the request is alone become one op
 * each: exactly where the time-slicing policy times them alone (each run's last kernel kept
 * apart, so that its end is scheduled when it starts, as kernel by kernel), and, with fidelity
 * "merged", wherever their use of the SMs, L2 and DRAM is alike: the merged kernel takes as long
 * alone as the run, holds the widest grid's SMs and draws on each resource the run's average,
 * which loses the run's variation under contention. */
#include "serving_internal.h"
#include "alloc.h"
#include "errors.h"
#include "event_queue.h"
#include "hardware.h"
#include "invariant.h"

#include <math.h>
#include <string.h>

#define USES 4

/* Its use of the place alone, each a share of the place's: the SMs its blocks hold, their issue
 * rate, and L2 and DRAM bandwidth per ns. Returns its time alone. */
static double use_of(const colo_kernel_work_t *w, colo_place_rates_t pr, double u[USES])
{
    double t = colo_kernel_alone_at(w, pr.sms, pr.dram_rate, pr.l2_rate);
    double held = (double)colo_kernel_sms_used(w, pr.sms) / pr.sms;
    u[0] = held;
    u[1] = t > 0 ? held * colo_kernel_compute_ns(w, pr.sms) / t : 0;
    u[2] = t > 0 ? w->l2_bytes / t / pr.l2_rate : 0;
    u[3] = t > 0 ? w->dram_bytes / t / pr.dram_rate : 0;
    return t;
}

/* Whether a kernel of use u may join a run whose time-weighted use so far is avg: each within
 * tol. */
static bool joins(const double u[USES], const double avg[USES], double tol)
{
    for (int k = 0; k < USES; k++)
        if (fabs(u[k] - avg[k]) > tol) return false;
    return true;
}

/* Kernels w[0..n) as one: compute and bytes summed, the widest grid, the memory rate of the
 * fastest, and a fixed part that makes its time alone the sum of theirs. False when that part
 * would be negative (it cannot be: the widest grid and fastest rate never take longer). */
static bool merge_works(const colo_kernel_work_t *w, size_t n, colo_place_rates_t pr,
                        colo_kernel_work_t *out)
{
    size_t widest = 0, fastest = 0, longest = 0;
    double comp = 0, dram = 0, l2 = 0, ws = 0, target = 0, best_rate = -1, best_t = -1;
    bool weight_bound = true;
    for (size_t k = 0; k < n; k++) {
        double rate = colo_kernel_memory_rate(&w[k], pr.sms, pr.dram_rate);
        double t = colo_kernel_alone_at(&w[k], pr.sms, pr.dram_rate, pr.l2_rate);
        if (w[k].blocks > w[widest].blocks) widest = k;
        if (rate > best_rate) best_rate = rate, fastest = k;
        if (t > best_t) best_t = t, longest = k;
        comp += colo_kernel_compute_ns(&w[k], pr.sms);
        dram += w[k].dram_bytes;
        l2 += w[k].l2_bytes;
        if (w[k].working_set > ws) ws = w[k].working_set;
        target += t;
        weight_bound &= w[k].weight_bound;
    }
    *out = w[0];
    out->blocks = w[widest].blocks;
    out->occ = w[widest].occ;
    out->per_sm_rate = w[fastest].per_sm_rate;
    out->mem_eff = w[fastest].mem_eff;
    out->mem_cap = w[fastest].mem_cap;
    out->math = w[longest].math;
    out->math_src = w[longest].math_src;
    out->wave_ns = comp / (double)colo_kernel_waves(out, pr.sms);
    out->dram_bytes = dram;
    out->l2_bytes = l2;
    out->working_set = ws;
    out->weight_bound = weight_bound;
    out->fixed_ns = 0;
    double body = colo_kernel_alone_ns(out, pr.sms, pr.dram_rate, dram);
    out->fixed_ns = target - body;
    if (out->fixed_ns < 0 && out->fixed_ns > -1e-9 * target) out->fixed_ns = 0; /* rounding */
    return out->fixed_ns >= 0 &&
           colo_kernel_alone_at(out, pr.sms, pr.dram_rate, pr.l2_rate) <= target * (1 + 1e-12);
}

int colo_merge_variant(colo_tenant_run_t *t, size_t v, const colo_gpu_t *gpu, double tol,
                       bool keep_last)
{
    const colo_tenant_cfg_t *c = t->cfg;
    const colo_trace_t *tr = c->variants[v].trace;
    struct colo_variant_run *var = &t->var[v];
    colo_place_rates_t pr = t->rates;
    size_t n = tr->n_ops;
    colo_time_t *start = colo_malloc(n * sizeof *start);
    colo_op_t *ops = colo_malloc(n * sizeof *ops);
    colo_time_t *op_time = colo_malloc(n * sizeof *op_time);
    colo_time_t *more = colo_calloc(n, sizeof *more);
    colo_time_t *host_at = colo_calloc(n, sizeof *host_at);
    colo_kernel_work_t *work = colo_calloc(n, sizeof *work);
    size_t *first = colo_malloc(n * sizeof *first);
    uint32_t *parts = colo_malloc(n * sizeof *parts);
    double *use = colo_malloc(3 * n * sizeof *use);
    if (!start || !ops || !op_time || !more || !host_at || !work || !first || !parts || !use) {
        colo_free(start), colo_free(ops), colo_free(op_time), colo_free(more), colo_free(work);
        colo_free(host_at);
        colo_free(first), colo_free(parts), colo_free(use);
        return COLO_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) /* each kernel's use alone, as ts_observe works it out */
        if (tr->ops[i].type == COLO_OP_KERNEL)
            colo_domain_ts_use(&var->work[i], t, &use[3 * i]);
        else
            use[3 * i] = use[3 * i + 1] = use[3 * i + 2] = 0;
    colo_request_schedule_ops(tr, var->op_time, gpu, c, start);
    bool graphs = c->cuda_graphs;
    colo_time_t spacing =
        colo_time_from_ns((graphs ? gpu->launch.graph_us : gpu->launch.host_us) * 1e3);
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        if (tr->ops[i].type == COLO_OP_KERNEL) {
            double avg[USES], u[USES], wt = use_of(&var->work[i], pr, avg);
            while (j < n && tr->ops[j].type == COLO_OP_KERNEL &&
                   start[j] == start[j - 1] + var->op_time[j - 1]) {
                double tj = use_of(&var->work[j], pr, u);
                if (!joins(u, avg, tol)) break;
                for (int k = 0; k < USES && wt + tj > 0; k++)
                    avg[k] = (avg[k] * wt + u[k] * tj) / (wt + tj);
                wt += tj;
                j++;
            }
            /* keep_last: the run's last kernel its own op, its end scheduled when it starts, as
             * kernel by kernel: events due at the same nanosecond as the request's end come in
             * the same order */
            if (keep_last) j = j - i >= 3 ? j - 1 : i + 1;
            while (j > i + 1 && !merge_works(&var->work[i], j - i, pr, &work[m]))
                j--; /* never: merge_works says why */
            if (j == i + 1) work[m] = var->work[i];
        }
        ops[m] = tr->ops[i];
        op_time[m] = 0;
        first[m] = i;
        parts[m] = (uint32_t)(j - i);
        for (size_t k = i; k < j; k++) {
            op_time[m] += var->op_time[k];
            if (k > i) /* the host launches each, running ahead of the GPU */
                host_at[k] = host_at[k - 1] + colo_host_step(&tr->ops[k], false, graphs, false,
                                                             c->host_launch, spacing);
        }
        more[m] = host_at[j - 1];
        m++;
        i = j;
    }
    colo_free(start);
    var->part_time = var->op_time;
    var->part_work = var->work;
    var->op_time = op_time;
    var->work = work;
    var->host_more = more;
    var->part_first = first;
    var->n_parts = parts;
    var->part_use = use;
    var->part_host = host_at;
    var->merged = *tr;
    var->merged.ops = ops;
    var->merged.n_ops = var->merged.cap_ops = m;
    var->first_kernel = SIZE_MAX;
    for (size_t k = 0; k < m; k++)
        if (ops[k].type == COLO_OP_KERNEL) {
            if (var->first_kernel == SIZE_MAX) var->first_kernel = k;
            var->last_kernel = k;
        }
    return 0;
}

void colo_merge_ts_add(colo_stream_run_t *s, colo_time_t now, double acc[3], bool commit)
{
    colo_time_t piece = now > s->ts_since ? now - s->ts_since : 0;
    const struct colo_variant_run *v = s->t->llm ? NULL : &s->t->var[s->plan.var];
    if (!v || !v->n_parts || v->n_parts[s->cur_op] <= 1) {
        for (int k = 0; k < 3; k++)
            acc[k] += s->ts_use[k] * (double)piece;
        return;
    }
    /* the kernels merged into the op, one after the other in its time alone: each adds its
     * use over the part of [op_done, op_done + piece) it ran, as it would have alone */
    size_t first = v->part_first[s->cur_op];
    colo_time_t off = 0, from = s->op_done, to = s->op_done + piece;
    for (uint32_t j = 0; j < v->n_parts[s->cur_op] && off < to; j++) {
        colo_time_t d = v->part_time[first + j], a = off > from ? off : from;
        colo_time_t b = off + d < to ? off + d : to;
        if (b > a)
            for (int k = 0; k < 3; k++)
                acc[k] += v->part_use[3 * (first + j) + (size_t)k] * (double)(b - a);
        off += d;
    }
    if (commit) s->op_done = to;
}

int colo_merge_start(colo_sim_t *sim)
{
    const colo_scenario_t *sc = sim->sc;
    int streams = 0;
    for (size_t i = 0; i < sim->n; i++)
        streams += sim->t[i].n_streams;
    /* the host's steps never stretched: as many cores as streams may be busy */
    bool host_free = sc->host.cores == 0 || streams <= sc->host.cores;
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        /* one trace run as traced: batches of other sizes scale or interpolate it kernel by
         * kernel, which a merged kernel does not stand for */
        if (t->llm || t->cfg->n_variants != 1 || t->cfg->max_batch != 0 || t->var[0].merged.n_ops)
            continue;
        /* timed alone: only its own time-slice pieces, at integer times, decide when each ends */
        bool timed = t->dom->kind == COLO_DOM_TIMESLICE && !t->dom->ts_exec;
        /* on the solver, straight onto the hardware model (no kernel scheduler): a merged op's
         * kernels run one by one on it, or alone without it while the GPU is otherwise idle */
        bool solver = t->dom->kind == COLO_DOM_CONCURRENT && !t->dom->sched;
        double tol;
        if (sc->merge)
            tol = timed ? INFINITY : sc->merge_tolerance; /* timed: its use changes no time */
        else if ((timed || (solver && !t->host_gil)) && !sim->tl && !sim->ts_dram_in_solver &&
                 host_free)
            tol = INFINITY; /* not with kernel spans on a timeline, nor copies' DRAM beside its
                             * use, nor threads sharing an interpreter */
        else
            continue;
        if (colo_merge_variant(t, 0, sc->gpu, tol, !sc->merge)) return COLO_ENOMEM;
        if (!sc->merge && solver) {
            t->var[0].solo =
                colo_calloc(t->cfg->variants[0].trace->n_ops, sizeof(struct colo_solo));
            if (!t->var[0].solo) return COLO_ENOMEM;
        }
    }
    return 0;
}

/* ---- merged ops on the solver ---- */

static struct colo_variant_run *solo_var(const colo_stream_run_t *s)
{
    if (s->t->llm) return NULL;
    struct colo_variant_run *v = &s->t->var[s->plan.var];
    return v->solo && v->n_parts[s->cur_op] > 1 ? v : NULL;
}

/* The index of the stream's current kernel among v's merged kernels (part_work, solo, ...). */
static size_t part_of(const colo_stream_run_t *s, const struct colo_variant_run *v)
{
    return v->part_first[s->cur_op] + s->part;
}

/* Starts the op's current kernel on the hardware model now; learn: on an idle GPU. */
static void start_part(colo_stream_run_t *s, const struct colo_variant_run *v, bool learn)
{
    colo_tenant_run_t *t = s->t;
    colo_sim_t *sim = t->sim;
    s->learn = learn;
    s->part_start = sim->eq.now;
    colo_serving_fail(sim, colo_hw_kernel_start(&sim->hw, &v->part_work[part_of(s, v)], t->place,
                                                1.0, colo_domain_on_kernel_done, s,
                                                (int64_t)t->incarnation, &s->kernel));
}

/* The kernel alone has run: its use leaves the solver's resources, as its end would take it. */
static void on_alone_done(void *obj, int64_t arg)
{
    (void)arg;
    colo_stream_run_t *s = obj;
    colo_sim_t *sim = s->t->sim;
    sim->alone = NULL;
    colo_domain_on_kernel_done(s, (int64_t)s->t->incarnation);
}

/* Whether a kernel seen alone is timed so again: always, but with the checks on every second
 * time, when it runs on the solver instead and learn compares what it shows with the record. */
static bool time_alone(struct colo_solo *so)
{
#ifdef COLOSIM_CHECKS
    return so->uses++ % 2 == 0;
#else
    (void)so;
    return true;
#endif
}

/* The op's current kernel (its statistics started): alone, timed by what it was seen to take,
 * when nothing else is on the hardware model and it was seen alone before; else on it. */
static void run_part(colo_stream_run_t *s, struct colo_variant_run *v)
{
    colo_sim_t *sim = s->t->sim;
    colo_time_t now = sim->eq.now;
    bool idle = !sim->alone && !sim->hw.live && sim->hw.fl.n_active == 0;
    struct colo_solo *so = &v->solo[part_of(s, v)];
    if (idle && so->dur > 0 && time_alone(so)) {
        sim->alone = s;
        s->learn = false;
        s->part_start = now;
        colo_serving_fail(sim,
                          colo_fluid_alone(&sim->hw.fl, now + so->dur, &so->use, on_alone_done, s));
        return;
    }
    colo_merge_alone_stop(sim);
    start_part(s, v, idle);
}

bool colo_merge_run(colo_stream_run_t *s)
{
    struct colo_variant_run *v = solo_var(s);
    if (!v) return false;
    s->part = 0;
    run_part(s, v);
    return true;
}

/* The next kernel of the stream's merged op is launched (arg: its tenant's incarnation). */
static void on_part_ready(void *obj, int64_t arg)
{
    colo_stream_run_t *s = obj;
    if ((uint64_t)arg != s->t->incarnation) return;
    colo_domain_kernel_started(s);
    run_part(s, solo_var(s));
}

/* What the kernel that ended showed of itself alone, kept the first time (and, with the checks
 * on, the same every time after: docs/engine.md says why it must be). */
static void learn(colo_sim_t *sim, struct colo_solo *so, colo_time_t dur)
{
    const struct colo_fluid_use *u = colo_hw_done_solo(&sim->hw);
    if (!u) return;
    if (so->dur) {
        COLO_DCHECK(so->dur == dur && so->use.n == u->n &&
                        !memcmp(so->use.res, u->res, (size_t)u->n * sizeof *u->res) &&
                        !memcmp(so->use.used, u->used, (size_t)u->n * sizeof *u->used),
                    "a kernel alone on an idle GPU took %lld ns, and %lld ns before",
                    (long long)dur, (long long)so->dur);
        return;
    }
    so->dur = dur;
    so->use = *u;
}

bool colo_merge_part_done(colo_stream_run_t *s)
{
    struct colo_variant_run *v = solo_var(s);
    if (!v) return false;
    colo_sim_t *sim = s->t->sim;
    if (s->learn) learn(sim, &v->solo[part_of(s, v)], sim->eq.now - s->part_start);
    s->learn = false;
    if (++s->part == v->n_parts[s->cur_op]) return false;
    /* launched by now (the host ahead), or when the host launches it, as kernel by kernel */
    colo_time_t ready = s->op_ready + v->part_host[part_of(s, v)];
    if (ready > sim->eq.now) {
        colo_serving_fail(sim, colo_eq_schedule(&sim->eq, ready, on_part_ready, s,
                                                (int64_t)s->t->incarnation, NULL));
        return true;
    }
    colo_domain_kernel_started(s);
    run_part(s, v);
    return true;
}

void colo_merge_alone_stop(colo_sim_t *sim)
{
    colo_stream_run_t *s = sim->alone;
    if (!s) return;
    sim->alone = NULL;
    colo_time_t now = sim->eq.now;
    /* started when it started, nothing else having run since, and taking over the solver's
     * completion event at its end; nothing is deferred (no completion comes while the solver
     * has no activity) */
    COLO_CHECK(s->part_start == now || sim->hw.fl.depth == 0,
               "tenant %s: a kernel alone since %lld ns goes onto the solver at %lld ns inside a "
               "completion",
               s->t->cfg->name, (long long)s->part_start, (long long)now);
    colo_fluid_alone_clear(&sim->hw.fl);
    sim->eq.now = s->part_start;
    start_part(s, solo_var(s), false);
    sim->eq.now = now;
}
