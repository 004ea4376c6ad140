/* results.c: results JSON and the terminal summary. */
#include "results.h"
#include "results_warnings.h"
#include "router.h"
#include "atomic_file.h"
#include "csv.h"
#include "json_lines.h"
#include "llm_cfg.h"
#include "run_stats_internal.h"
#include "version.h"

#include <math.h>
#include <string.h>

json_t *colo_latency_json(const colo_latency_summary_t *s)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:s}", "mean", s->mean_ms, "p50", s->p50_ms, "p90",
                     s->p90_ms, "p99", s->p99_ms, "p999", s->p999_ms, "max", s->max_ms,
                     "percentiles", s->exact ? "exact" : "histogram");
}

/* The latency distribution of samples s as [ms, share] pairs: the share q of requests at or
 * below ms, at q = 1 - 10^(-k/8) for k = 0..28 (denser in the tail, to the 99.97th percentile)
 * and the maximum (q = 1); each the order statistic of rank floor(q (n - 1)), exact or from the
 * histogram (colo_samples_ranks). An empty array without samples; NULL when out of memory. */
static json_t *cdf_json(const colo_samples_t *s)
{
    enum { K = 29 };
    json_t *a = json_array();
    if (!a || s->count == 0) return a;
    uint64_t rank[K + 1];
    double q[K + 1];
    for (int k = 0; k <= K; k++) {
        q[k] = k < K ? 1 - pow(10, -k / 8.0) : 1.0;
        rank[k] = (uint64_t)floor(q[k] * (double)(s->count - 1));
    }
    colo_time_t v[K + 1];
    int bad = colo_samples_ranks(s, rank, K + 1, v);
    for (int k = 0; k <= K && !bad; k++)
        bad = json_array_append_new(a, json_pack("[f,f]", COLO_TO_MS(v[k]), q[k]));
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static double fraction(colo_time_t part, colo_time_t whole)
{
    return whole > 0 ? (double)part / (double)whole : 0.0;
}

/* Where the tenant ran: its SMs, memory share, and MIG instance or MPS settings. */
static json_t *placement_json(const colo_sim_t *sim, const colo_tenant_run_t *t)
{
    const colo_scenario_t *sc = sim->sc;
    const colo_tenant_cfg_t *c = t->cfg;
    colo_place_rates_t p = colo_tenant_place_rates(sc, t->idx);
    json_t *o =
        json_pack("{s:i,s:f,s:f}", "sms", p.sms, "dram_gbps", p.dram_rate, "l2_gbps", p.l2_rate);
    if (!o) return NULL;
    int bad = 0;
    if (sc->sharing.mode == COLO_SHARE_MIG) {
        const colo_mig_instance_t *in = &sc->sharing.instances[c->instance];
        bad |= json_object_set_new(o, "instance", json_string(in->name));
        bad |= json_object_set_new(o, "profile", json_string(in->profile->name));
    }
    if (c->sm_count > 0) bad |= json_object_set_new(o, "first_sm", json_integer(c->sm_first));
    if (c->n_channels > 0) bad |= json_object_set_new(o, "dram_channels", json_integer(c->n_channels));
    if (sc->pcie_fair) bad |= json_object_set_new(o, "pcie_weight", json_real(c->pcie_weight));
    if (t->dom->kind == COLO_DOM_CONCURRENT &&
        (sc->sharing.mode == COLO_SHARE_MPS ||
         (sc->sharing.mode == COLO_SHARE_MIG &&
          sc->sharing.instances[c->instance].share == COLO_SHARE_MPS))) {
        bad |= json_object_set_new(o, "active_thread_percentage",
                                   json_integer(c->active_thread_percentage));
        bad |= json_object_set_new(o, "priority", json_integer(c->priority));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *tokens_json(const colo_token_dist_t *d)
{
    switch (d->kind) {
    case COLO_TOKENS_LOG: return json_pack("{s:s}", "dist", "log");
    case COLO_TOKENS_FIXED: return json_pack("{s:s,s:I}", "dist", "fixed", "value", d->value);
    case COLO_TOKENS_UNIFORM:
        return json_pack("{s:s,s:I,s:I}", "dist", "uniform", "min", d->min, "max", d->max);
    case COLO_TOKENS_LOGNORMAL:
        return json_pack("{s:s,s:f,s:f,s:I}", "dist", "lognormal", "median", d->median, "sigma",
                         d->sigma, "max", d->max);
    case COLO_TOKENS_ZIPF:
        return json_pack("{s:s,s:f,s:I}", "dist", "zipf", "s", d->s, "max", d->max);
    case COLO_TOKENS_SESSION:
        return json_pack("{s:s,s:I,s:I}", "dist", "sessions", "min", d->min, "max", d->max);
    }
    return NULL;
}

static json_t *ms_or_null(double ms)
{
    return ms > 0 ? json_real(ms) : json_null();
}

/* A tenant's shared-prefix workload (docs/llm.md, "Prefix caching"). */
static json_t *workload_json(const colo_llm_cfg_t *c)
{
    const colo_prompts_cfg_t *g = &c->prompts;
    if (g->kind == COLO_PROMPTS_GROUPS)
        return json_pack("{s:s,s:I,s:I,s:I,s:I}", "kind", "shared_prefix", "groups",
                         (json_int_t)g->groups, "users", (json_int_t)g->users, "prefix",
                         (json_int_t)g->prefix, "question", (json_int_t)g->question);
    return json_pack("{s:s,s:I,s:I,s:I,s:I}", "kind", "sessions", "sessions",
                     (json_int_t)g->sessions, "turns", (json_int_t)g->turns, "system",
                     (json_int_t)g->system, "message", (json_int_t)g->message);
}

/* A share, or null without anything to share. */
static json_t *share_or_null(uint64_t part, uint64_t whole)
{
    return whole ? json_real((double)part / (double)whole) : json_null();
}

/* Prefix caching's figures: first admissions in the window, blocks evicted over the run. */
static json_t *prefix_json(const colo_llm_stats_t *st)
{
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:I}", "requests",
                     (json_int_t)st->prefix_requests, "prompt_blocks",
                     (json_int_t)st->prefix_prompt_blocks, "hit_blocks",
                     (json_int_t)st->prefix_hit_blocks, "prompt_tokens",
                     (json_int_t)st->prefix_prompt_tokens, "hit_tokens",
                     (json_int_t)st->prefix_hit_tokens, "hit_rate_blocks",
                     share_or_null(st->prefix_hit_blocks, st->prefix_prompt_blocks),
                     "hit_rate_tokens",
                     share_or_null(st->prefix_hit_tokens, st->prefix_prompt_tokens),
                     "evicted_blocks", (json_int_t)st->prefix_evicted_blocks);
}

/* An LLM tenant's settings and figures (docs/llm.md, "Results"). */
static json_t *llm_json(const colo_sim_t *sim, const colo_tenant_run_t *t)
{
    const colo_llm_cfg_t *c = t->cfg->llm;
    colo_llm_stats_t st;
    if (colo_tenant_llm_stats(sim, t->idx, &st)) return NULL;
    /* no completed request (or none of more than one token): no figure, not 0 */
    json_t *ttft = st.ttft.n ? colo_latency_json(&st.ttft) : json_null();
    json_t *tpot = st.tpot.n ? colo_latency_json(&st.tpot) : json_null();
    json_t *o = json_pack(
        "{s:s,s:s,s:s,s:{s:i,s:i,s:i,s:i,s:i,s:f,s:f},s:{s:o,s:o,s:I,s:I},s:o,s:o,s:o,s:o,s:f,"
        "s:f,s:{s:s,s:f,s:s,s:f,s:f,s:f,s:I,s:i,s:f,s:f},s:I,s:I,s:I,s:I}",
        "profile", c->profile_path, "model", c->profile->model, "profiled_on", c->profile->gpu,
        "engine", "max_num_seqs", c->max_num_seqs, "max_num_batched_tokens",
        c->max_num_batched_tokens, "chunk_tokens", c->chunk_tokens, "block_tokens",
        c->block_tokens, "layer_groups", c->layer_groups, "gpu_memory_utilization",
        c->gpu_memory_utilization, "watermark", c->watermark, "tokens", "prompt",
        tokens_json(&c->prompt), "output", tokens_json(&c->output), "typical_prompt",
        (json_int_t)c->typical_prompt, "typical_output", (json_int_t)c->typical_output,
        "slo_ttft_ms", ms_or_null(c->slo_ttft_ms), "slo_tpot_ms", ms_or_null(c->slo_tpot_ms),
        "ttft_ms", ttft, "tpot_ms", tpot, "output_tokens_per_s", st.output_tokens_per_s,
        "prompt_tokens_per_s", st.prompt_tokens_per_s, "kv_cache", "sized_from",
        c->kv_cache_gib_given > 0 ? "kv_cache_gib" : "memory", "memory_gib", c->memory_gib,
        "memory_from", c->memory_from, "weights_gib", c->weights_gib, "activations_gib",
        c->activations_gib, "gib", c->kv_cache_gib, "blocks", (json_int_t)c->kv_blocks,
        "block_tokens", c->block_tokens, "utilisation_mean", st.kv_utilisation_mean,
        "utilisation_max", st.kv_utilisation_max, "preemptions", (json_int_t)st.preemptions,
        "iterations", (json_int_t)st.iterations, "prefill_iterations",
        (json_int_t)st.prefill_iterations, "decode_iterations", (json_int_t)st.decode_iterations);
    /* tensor parallelism only where it is on: results without it stay as they were */
    if (o && c->tensor_parallel > 1 &&
        json_object_set_new(json_object_get(o, "engine"), "tensor_parallel",
                            json_integer(c->tensor_parallel))) {
        json_decref(o);
        return NULL;
    }
    /* prefix caching and the shared-prefix workloads: only where they are on, so that the
     * results of a scenario without them stay as they were */
    if (o && c->prompts.kind != COLO_PROMPTS_DRAWN &&
        json_object_set_new(json_object_get(o, "tokens"), "workload", workload_json(c))) {
        json_decref(o);
        return NULL;
    }
    if (o && c->prefix_caching && json_object_set_new(o, "prefix_cache", prefix_json(&st))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *num_or_null(double v)
{
    return v >= 0 ? json_real(v) : json_null();
}

/* An MLPerf tenant's LoadGen settings and verdict (docs/arrivals.md, "MLPerf LoadGen"). */
static json_t *mlperf_json(const colo_tenant_run_t *t)
{
    const colo_loadgen_cfg_t *c = &t->cfg->arrival.lg;
    colo_loadgen_verdict_t v;
    if (colo_loadgen_verdict(c, t->lg, &v)) return NULL;
    json_t *o = json_pack(
        "{s:s,s:{s:o,s:f,s:f,s:f,s:f,s:I,s:I,s:I},s:s,s:b,s:b,s:b,s:b,s:f,s:I,s:I,s:I,s:I,s:I,"
        "s:o,s:o,s:o}",
        "scenario", colo_loadgen_scenario_name(c->scenario), "settings", "target_qps",
        num_or_null(c->scenario == COLO_LG_SERVER || c->scenario == COLO_LG_OFFLINE ? c->target_qps
                                                                                    : -1),
        "target_latency_ms", COLO_TO_MS(c->target_latency), "target_latency_percentile",
        100 * c->percentile, "min_duration_ms", COLO_TO_MS(c->min_duration), "max_duration_ms",
        COLO_TO_MS(c->max_duration), "min_query_count", (json_int_t)c->min_query_count,
        "max_query_count", (json_int_t)c->max_query_count, "samples_per_query",
        (json_int_t)(c->scenario == COLO_LG_OFFLINE ? c->samples : c->samples_per_query),
        "result_validity", v.valid ? "VALID" : "INVALID", "min_duration_met", v.min_duration_met,
        "min_queries_met", v.min_queries_met, "early_stopping_met", v.early_stopping_met,
        "all_samples_answered", v.all_answered, "duration_s", v.duration_s, "queries",
        (json_int_t)v.queries, "samples", (json_int_t)v.samples, "unanswered_samples",
        (json_int_t)v.unanswered, "overlatency_samples", (json_int_t)v.over_latency,
        "early_stopping_queries", (json_int_t)v.early_stopping_queries,
        "target_percentile_latency_ms", num_or_null(v.percentile_latency_ms),
        "early_stopping_latency_ms", num_or_null(v.early_stopping_latency_ms), "samples_per_s",
        num_or_null(v.samples_per_s));
    if (o && v.has_perf_constraints &&
        json_object_set_new(o, "perf_constraints_met", json_boolean(v.perf_constraints_met))) {
        json_decref(o);
        return NULL;
    }
    if (o && c->scenario == COLO_LG_OFFLINE && /* Offline has no latency bound to exceed */
        json_object_set_new(o, "overlatency_samples", json_null())) {
        json_decref(o);
        return NULL;
    }
    if (o && !v.valid && json_object_set_new(o, "invalid_reason", json_string(v.reason))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *tenant_json(const colo_sim_t *sim, const colo_tenant_run_t *t)
{
    const colo_tenant_cfg_t *c = t->cfg;
    colo_latency_summary_t lat;
    if (colo_latency_summarise(&t->latency, &lat)) return NULL;
    colo_run_stats_t st;
    colo_run_stats_of(sim, t->idx, &lat, &st);
    json_t *slo = st.slo_ms > 0 ? json_real(st.slo_ms) : json_null();
    json_t *att = st.slo_attainment >= 0 ? json_real(st.slo_attainment) : json_null();
    json_t *place = placement_json(sim, t);
    json_t *o = json_pack(
        "{s:s,s:s,s:i,s:s,s:{s:s,s:f},s:o,s:o,s:f,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I},s:I,s:I,"
        "s:o,s:f,s:o,s:f,s:I,s:f}",
        "name", c->name, "model", c->trace->model, "batch", c->trace->batch, "trace", c->trace_path,
        "arrival", "process", c->arrival.ops->name, "rate", colo_arrival_rate(&c->arrival),
        "slo_ms", slo, "placement", place, "isolated_ms", COLO_TO_MS(t->isolated), "arrived",
        (json_int_t)t->arrived, "completed", (json_int_t)t->completed, "dropped",
        (json_int_t)t->dropped, "dropped_by_reason", "fault",
        (json_int_t)t->dropped_by[COLO_DROP_FAULT], "unavailable",
        (json_int_t)t->dropped_by[COLO_DROP_UNAVAILABLE], "queue_full",
        (json_int_t)t->dropped_by[COLO_DROP_QUEUE_FULL], "deadline",
        (json_int_t)t->dropped_by[COLO_DROP_DEADLINE], "in_flight", (json_int_t)st.in_flight,
        "faults", (json_int_t)t->faults, "latency_ms", colo_latency_json(&lat), "throughput_rps",
        st.throughput_rps, "slo_attainment", att, "gpu_share", st.gpu_share, "batches",
        (json_int_t)t->batches, "mean_batch",
        t->batches ? (double)t->batched / (double)t->batches : 0.0);
    double done = t->completed ? (double)t->completed : 1.0;
    if (o &&
        (json_object_set_new(o, "goodput_rps",
                             st.goodput_rps >= 0 ? json_real(st.goodput_rps) : json_null()) ||
         (c->llm && json_object_set_new(o, "llm", llm_json(sim, t))) ||
         (t->lg && json_object_set_new(o, "mlperf", mlperf_json(t))) ||
         json_object_set_new(json_object_get(o, "latency_ms"), "cdf", cdf_json(&t->latency)) ||
         json_object_set_new(o, "instances", json_integer(t->n_streams)) ||
         json_object_set_new(o, "trace_gpu",
                             c->trace_gpu && !c->llm ? json_string(c->trace_gpu->name)
                                                     : json_null()) ||
         json_object_set_new(o, "service", c->service ? json_string(c->service) : json_null()) ||
         json_object_set_new(o, "router",
                             c->route.ops ? json_string(c->route.ops->name) : json_null()) ||
         (t->router && t->router->on &&
          json_object_set_new(o, "autoscale", colo_results_autoscale(sim, t))) ||
         json_object_set_new(o, "offered_rps", json_real(st.offered_rps)) ||
         json_object_set_new(o, "overloaded", json_boolean(st.overloaded)) ||
         json_object_set_new(o, "arrivals_ended_s",
                             t->arrivals_ended >= 0 && t->arrivals_ended < sim->sc->duration
                                 ? json_real(COLO_TO_S(t->arrivals_ended))
                                 : json_null()) ||
         json_object_set_new(o, "instances_busy_max", json_integer(t->peak_busy)) ||
         json_object_set_new(o, "queue_ms_mean", json_real(t->queue_ns / done / 1e6)) ||
         json_object_set_new(o, "execution_ms_mean", json_real(t->exec_ns / done / 1e6)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Utilisation of the GPU's resources: the window's mean and the series per interval. */
static json_t *utilisation_json(const colo_sim_t *sim)
{
    const colo_scenario_t *sc = sim->sc;
    double window = (double)(sc->duration - sc->warmup);
    json_t *mean = json_object(), *series = json_object();
    double per = sim->util_merge > 1 ? (double)sim->util_merge : 1; /* intervals per point */
    json_t *o = json_pack("{s:f,s:f,s:o,s:o}", "interval_s", per * COLO_TO_S(sc->util_interval),
                          "start_s", COLO_TO_S(sc->warmup), "mean", mean, "series", series);
    int bad = !o;
    for (int k = 0; k < COLO_USE_KINDS && !bad; k++) {
        double c = sim->util_cap[k] * window;
        double m = sim->util_ended && c > 0 ? (sim->util_end[k] - sim->util_first[k]) / c : 0;
        json_t *a = json_array();
        bad |= json_object_set_new(series, colo_use_names[k], a); /* takes a, even on failure */
        bad |= json_object_set_new(mean, colo_use_names[k], json_real(m));
        for (size_t i = 0; i < sim->n_util && !bad; i++)
            bad |= json_array_append_new(a, json_real(sim->util[k][i]));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *colo_results_scenario_json(const colo_scenario_t *sc, const char *const *overrides,
                                  size_t n)
{
    json_t *ovr = json_array();
    for (size_t i = 0; i < n && ovr; i++)
        if (json_array_append_new(ovr, json_string(overrides[i]))) {
            json_decref(ovr);
            ovr = NULL;
        }
    if (!ovr) return NULL;
    json_t *sharing = json_pack(
        "{s:s,s:s,s:f,s:f,s:b,s:f}", "mode", colo_share_mode_name(sc->sharing.mode), "timeslice",
        sc->sharing.timeslice_name, "timeslice_us", (double)sc->sharing.timeslice / 1e3,
        "switch_us", (double)sc->sharing.switch_cost / 1e3, "automatic_layout",
        sc->sharing.auto_layout, "recovery_s", COLO_TO_S(sc->sharing.recovery));
    if (sharing && sc->sharing.mode == COLO_SHARE_MPS)
        json_object_set_new(sharing, "mps_client_limit", json_integer(sc->sharing.mps_clients));
    if (sharing && sc->sharing.colours)
        json_object_set_new(sharing, "colours", json_integer(sc->sharing.colours));
    if (sharing && sc->pcie_fair) json_object_set_new(sharing, "pcie_scheduler", json_string("fair"));
    if (sharing && sc->k8s.on)
        json_object_set_new(sharing, "k8s",
                            sc->k8s.mps ? json_pack("{s:s,s:i,s:i,s:I}", "sharing", "mps",
                                                    "replicas", sc->k8s.replicas,
                                                    "active_thread_percentage",
                                                    sc->k8s.thread_percentage,
                                                    "pinned_mem_limit_mib",
                                                    (json_int_t)sc->k8s.mem_limit_mib)
                                        : json_pack("{s:s,s:i}", "sharing", "time-slicing",
                                                    "replicas", sc->k8s.replicas));
    if (sharing && sc->sharing.mode == COLO_SHARE_MIG) {
        json_t *ins = json_array();
        for (size_t k = 0; k < sc->sharing.n_instances && ins; k++) {
            const colo_mig_instance_t *in = &sc->sharing.instances[k];
            json_array_append_new(ins, json_pack("{s:s,s:s,s:i,s:i,s:s}", "name", in->name,
                                                 "profile", in->profile->name, "placement",
                                                 in->placement, "sms", in->profile->sms, "share",
                                                 colo_share_mode_name(in->share)));
        }
        json_object_set_new(sharing, "instances", ins);
    }
    const colo_gpu_t *g = sc->gpu;
    json_t *cal = g->calibration.path
                      ? json_pack("{s:s,s:s,s:s}", "file", g->calibration.path, "device",
                                  g->calibration.device, "date", g->calibration.date)
                      : json_null();
    json_t *scenario = json_pack(
        "{s:s,s:o,s:s,s:o,s:f,s:f,s:f,s:o,s:o}", "file", sc->path, "description",
        sc->description ? json_string(sc->description) : json_null(), "gpu", g->name,
        "calibration", cal, "duration_s", COLO_TO_S(sc->duration), "warmup_s",
        COLO_TO_S(sc->warmup), "drain_s", COLO_TO_S(sc->drain), "sharing", sharing, "overrides", ovr);
    return scenario;
}

json_t *colo_results_json(const colo_sim_t *sim, const char *const *overrides, size_t n)
{
    const colo_scenario_t *sc = sim->sc;
    colo_time_t window = sc->duration - sc->warmup;
    json_t *tenants = json_array();
    for (size_t i = 0; i < sim->n && tenants; i++)
        if (json_array_append_new(tenants, tenant_json(sim, &sim->t[i]))) {
            json_decref(tenants);
            tenants = NULL;
        }
    json_t *scenario = tenants ? colo_results_scenario_json(sc, overrides, n) : NULL;
    if (!scenario) {
        json_decref(tenants);
        return NULL;
    }
    colo_time_t switching = 0;
    uint64_t switches = 0, preemptions = 0;
    for (size_t k = 0; k < sim->n_dom; k++) {
        switching += sim->dom[k].ts.switching;
        switches += sim->dom[k].ts.switches;
        preemptions += sim->dom[k].ts.preemptions;
    }
    json_t *gpu = json_pack("{s:f,s:f,s:I,s:I}", "busy_fraction", fraction(sim->busy_time, window),
                            "switching_fraction", fraction(switching, window), "context_switches",
                            (json_int_t)switches, "preemptions", (json_int_t)preemptions);
    json_t *pcie =
        json_pack("{s:f,s:f}", "h2d_busy_fraction", fraction(sim->pcie[0].busy_time, window),
                  "d2h_busy_fraction", fraction(sim->pcie[1].busy_time, window));
    return json_pack("{s:{s:s,s:i},s:o,s:I,s:o,s:o*,s:o,s:o,s:o,s:{s:I,s:f}}", "colosim", "version",
                     COLO_VERSION, "results_format", 1, "scenario", scenario, "seed",
                     (json_int_t)sc->seed, "tenants", tenants, "warnings",
                     colo_results_warnings(sim), "gpu", gpu, "pcie", pcie, "utilisation",
                     utilisation_json(sim), "engine", "events", (json_int_t)sim->eq.popped,
                     "simulated_s", COLO_TO_S(colo_eq_size(&sim->eq) ? sim->end : sim->last_event));
}

int colo_results_write(json_t *results, const char *path, colo_error_t *err)
{
    return colo_json_write_file(results,
                                JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10),
                                path, "cannot write results", err);
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* A latency in ms, 8 columns wide, with as many decimals as fit: 0.123, 12.35, 1234.6, 123457 */
static const char *ms8(double v, char buf[16])
{
    int decimals = v < 10 ? 3 : v < 100 ? 2 : v < 10000 ? 1 : 0;
    snprintf(buf, 16, "%8.*f", decimals, v);
    return buf;
}

/* A tenant's time alone in the table's 8 columns; "-" where it was not known (a live run's). */
static const char *alone8(json_t *t, char *buf)
{
    if (json_is_number(json_object_get(t, "isolated_ms"))) return ms8(num(t, "isolated_ms"), buf);
    snprintf(buf, 16, "%8s", "-");
    return buf;
}

/* "colosim VERSION: FILE on GPU, seed N" and then tail. */
static void print_heading(json_t *r, FILE *f, const char *tail)
{
    json_t *sc = json_object_get(r, "scenario");
    fprintf(f, "colosim %s: %s on %s (%s), seed %lld%s",
            json_string_value(json_object_get(json_object_get(r, "colosim"), "version")),
            json_string_value(json_object_get(sc, "file")),
            json_string_value(json_object_get(sc, "gpu")),
            json_is_object(json_object_get(sc, "calibration")) ? "calibrated" : "datasheet values",
            (long long)json_integer_value(json_object_get(r, "seed")), tail);
}

/* The LLM tenants' own figures, below the table of all tenants. */
static void print_llm(json_t *r, FILE *f)
{
    size_t i;
    json_t *t;
    bool head = false;
    json_array_foreach(json_object_get(r, "tenants"), i, t)
    {
        json_t *l = json_object_get(t, "llm");
        if (!l) continue;
        if (!head)
            fprintf(f, "\n%-16s %8s %8s | %8s %8s | %9s %9s | %6s %6s | %10s | %s\n", "LLM tenant",
                    "TTFT p50", "p99", "TPOT p50", "p99", "out tok/s", "in tok/s", "KV avg",
                    "max", "KV preempt", "SLO TTFT/TPOT ms");
        head = true;
        json_t *ttft = json_object_get(l, "ttft_ms"), *tpot = json_object_get(l, "tpot_ms");
        json_t *kv = json_object_get(l, "kv_cache");
        char b[4][16], slo[40] = "-";
        if (!json_is_object(ttft)) snprintf(b[0], sizeof b[0], "%8s", "-");
        if (!json_is_object(ttft)) snprintf(b[1], sizeof b[1], "%8s", "-");
        if (!json_is_object(tpot)) snprintf(b[2], sizeof b[2], "%8s", "-");
        if (!json_is_object(tpot)) snprintf(b[3], sizeof b[3], "%8s", "-");
        json_t *st = json_object_get(l, "slo_ttft_ms"), *sp = json_object_get(l, "slo_tpot_ms");
        if (json_is_number(st) || json_is_number(sp)) {
            char x[16] = "-", y[16] = "-";
            if (json_is_number(st)) snprintf(x, sizeof x, "%g", json_number_value(st));
            if (json_is_number(sp)) snprintf(y, sizeof y, "%g", json_number_value(sp));
            snprintf(slo, sizeof slo, "%s/%s", x, y);
        }
        fprintf(f, "%-16.16s %s %s | %s %s | %9.1f %9.1f | %5.1f%% %5.1f%% | %10lld | %s\n",
                json_string_value(json_object_get(t, "name")),
                json_is_object(ttft) ? ms8(num(ttft, "p50"), b[0]) : b[0],
                json_is_object(ttft) ? ms8(num(ttft, "p99"), b[1]) : b[1],
                json_is_object(tpot) ? ms8(num(tpot, "p50"), b[2]) : b[2],
                json_is_object(tpot) ? ms8(num(tpot, "p99"), b[3]) : b[3], num(l, "output_tokens_per_s"),
                num(l, "prompt_tokens_per_s"), 100 * num(kv, "utilisation_mean"),
                100 * num(kv, "utilisation_max"),
                (long long)json_integer_value(json_object_get(l, "preemptions")), slo);
    }
}

/* The MLPerf tenants' LoadGen verdicts, below the table of all tenants. */
static void print_mlperf(json_t *r, FILE *f)
{
    size_t i;
    json_t *t;
    bool head = false;
    json_array_foreach(json_object_get(r, "tenants"), i, t)
    {
        json_t *m = json_object_get(t, "mlperf");
        if (!m) continue;
        if (!head)
            fprintf(f, "\n%-16s %-12s %8s %11s %12s %10s  %s\n", "MLPerf tenant", "scenario",
                    "queries", "pct lat ms", "early stop ms", "samples/s", "LoadGen result");
        head = true;
        char b[3][24];
        const char *k[] = {"target_percentile_latency_ms", "early_stopping_latency_ms",
                           "samples_per_s"};
        for (int j = 0; j < 3; j++) {
            json_t *x = json_object_get(m, k[j]);
            if (json_is_number(x))
                snprintf(b[j], sizeof b[j], j == 2 ? "%.1f" : "%.3f", json_number_value(x));
            else
                snprintf(b[j], sizeof b[j], "-");
        }
        const char *why = json_string_value(json_object_get(m, "invalid_reason"));
        fprintf(f, "%-16.16s %-12s %8lld %11s %12s %10s  %s%s%s\n",
                json_string_value(json_object_get(t, "name")),
                json_string_value(json_object_get(m, "scenario")),
                (long long)json_integer_value(json_object_get(m, "queries")), b[0], b[1], b[2],
                json_string_value(json_object_get(m, "result_validity")), why ? ": " : "",
                why ? why : "");
    }
}

void colo_results_print(json_t *r, FILE *f)
{
    json_t *sc = json_object_get(r, "scenario"), *sh = json_object_get(sc, "sharing");
    json_t *gpu = json_object_get(r, "gpu");
    print_heading(r, f, "\n");
    const char *mode = json_string_value(json_object_get(sh, "mode"));
    char how[512] = "";
    if (strcmp(mode, "timeslice") == 0) {
        snprintf(how, sizeof how, "%s slice %.0f us, switch %.0f us",
                 json_string_value(json_object_get(sh, "timeslice")), num(sh, "timeslice_us"),
                 num(sh, "switch_us"));
    } else if (strcmp(mode, "mps") == 0) {
        snprintf(how, sizeof how, "one server, up to %lld clients",
                 (long long)json_integer_value(json_object_get(sh, "mps_client_limit")));
    } else if (strcmp(mode, "green") == 0) {
        snprintf(how, sizeof how, "one process, a Green Context per tenant");
    } else {
        size_t k, used = 0;
        json_t *in;
        json_array_foreach(json_object_get(sh, "instances"), k, in)
        {
            int w = snprintf(how + used, sizeof how - used, "%s%s %s (%s)", k ? ", " : "",
                             json_string_value(json_object_get(in, "name")),
                             json_string_value(json_object_get(in, "profile")),
                             json_string_value(json_object_get(in, "share")));
            if (w < 0 || (size_t)w >= sizeof how - used) break;
            used += (size_t)w;
        }
    }
    fprintf(f, "sharing: %s (%s%s); measured %.1f s after %.1f s warm-up\n\n", mode, how,
            json_is_true(json_object_get(sh, "automatic_layout")) ? ", layout chosen by colosim"
                                                                  : "",
            num(sc, "duration_s") - num(sc, "warmup_s"), num(sc, "warmup_s"));
    fprintf(f, "%-16s %8s %7s %7s %5s %5s %8s | %8s %8s %8s %8s %8s | %7s %7s\n", "tenant",
            "alone ms", "rate/s", "arrived", "drop", "left", "tput/s", "mean ms", "p50", "p90",
            "p99", "p99.9", "SLO ms", "met %");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(r, "tenants"), i, t)
    {
        json_t *lat = json_object_get(t, "latency_ms");
        json_t *slo = json_object_get(t, "slo_ms"), *att = json_object_get(t, "slo_attainment");
        char slo_s[16] = "-", att_s[16] = "-";
        if (json_is_number(slo)) snprintf(slo_s, sizeof slo_s, "%.1f", json_number_value(slo));
        json_t *l = json_object_get(t, "llm"); /* an LLM tenant's TTFT/TPOT SLOs */
        if (!json_is_number(slo) && l &&
            (json_is_number(json_object_get(l, "slo_ttft_ms")) ||
             json_is_number(json_object_get(l, "slo_tpot_ms"))))
            snprintf(slo_s, sizeof slo_s, "see LLM");
        if (json_is_number(att))
            snprintf(att_s, sizeof att_s, "%.2f", 100.0 * json_number_value(att));
        char b[6][16];
        char rate[16] = "-";
        double rv = num(json_object_get(t, "arrival"), "rate");
        if (rv > 0) snprintf(rate, sizeof rate, "%.1f", rv);
        bool none = json_integer_value(json_object_get(t, "completed")) == 0;
        bool over = json_is_true(json_object_get(t, "overloaded")); /* "!" after its tput */
        if (none) { /* no latency to show: "-", not 0 */
            fprintf(f,
                    "%-16.16s %s %7s %7lld %5lld %5lld %7.1f%c | %8s %8s %8s %8s %8s | %7s %7s\n",
                    json_string_value(json_object_get(t, "name")),
                    alone8(t, b[0]), rate,
                    (long long)json_integer_value(json_object_get(t, "arrived")),
                    (long long)json_integer_value(json_object_get(t, "dropped")),
                    (long long)json_integer_value(json_object_get(t, "in_flight")),
                    num(t, "throughput_rps"), over ? '!' : ' ', "-", "-", "-", "-", "-", slo_s,
                    att_s);
            continue;
        }
        fprintf(f, "%-16.16s %s %7s %7lld %5lld %5lld %7.1f%c | %s %s %s %s %s | %7s %7s\n",
                json_string_value(json_object_get(t, "name")), alone8(t, b[0]),
                rate, (long long)json_integer_value(json_object_get(t, "arrived")),
                (long long)json_integer_value(json_object_get(t, "dropped")),
                (long long)json_integer_value(json_object_get(t, "in_flight")),
                num(t, "throughput_rps"), over ? '!' : ' ', ms8(num(lat, "mean"), b[1]),
                ms8(num(lat, "p50"), b[2]), ms8(num(lat, "p90"), b[3]), ms8(num(lat, "p99"), b[4]), ms8(num(lat, "p999"), b[5]),
                slo_s, att_s);
    }
    print_llm(r, f);
    print_mlperf(r, f);
    colo_results_print_warnings(r, f);
    if (!json_is_object(gpu)) return; /* a live run's: the GPU's busy time was not measured */
    fprintf(f, "\nGPU busy %.1f %%, switching %.1f %%, %lld context switches, %lld preemptions\n",
            100.0 * num(gpu, "busy_fraction"), 100.0 * num(gpu, "switching_fraction"),
            (long long)json_integer_value(json_object_get(gpu, "context_switches")),
            (long long)json_integer_value(json_object_get(gpu, "preemptions")));
}

/* Where a tenant ran under a run's mechanism, for --compare-modes' "on" row: the MIG profile
 * and instance, the Green Context's SMs, an MPS thread cap; "*" where colosim chose the
 * layout. */
static const char *part_cell(json_t *res, json_t *u, char *buf, size_t n)
{
    json_t *pl = json_object_get(u, "placement");
    json_t *sh = json_object_get(json_object_get(res, "scenario"), "sharing");
    const char *mode = json_string_value(json_object_get(sh, "mode"));
    const char *chosen = json_is_true(json_object_get(sh, "automatic_layout")) ? "*" : "";
    json_t *prof = json_object_get(pl, "profile"), *first = json_object_get(pl, "first_sm");
    json_t *cap = json_object_get(pl, "active_thread_percentage");
    if (json_is_string(prof))
        snprintf(buf, n, "%s %s%s", json_string_value(prof),
                 json_string_value(json_object_get(pl, "instance")), chosen);
    else if (json_is_integer(first))
        snprintf(buf, n, "SMs %lld-%lld%s", (long long)json_integer_value(first),
                 (long long)(json_integer_value(first) + (json_int_t)num(pl, "sms") - 1), chosen);
    else if (mode && strcmp(mode, "mps") == 0 && json_is_number(cap))
        snprintf(buf, n, "%g %% threads", json_number_value(cap));
    else
        snprintf(buf, n, "%g SMs, shared", num(pl, "sms"));
    return buf;
}

void colo_results_print_compare(json_t *const *results, const char *const *names, size_t n, FILE *f)
{
    json_t *first = NULL;
    for (size_t m = 0; m < n && !first; m++)
        first = results[m];
    if (!first) return;
    print_heading(first, f, ": the same tenants under each sharing mechanism\n\n");
    bool any_over = false;
    fprintf(f, "%-16s", "p99 ms, SLO met");
    for (size_t m = 0; m < n; m++)
        fprintf(f, " | %19s", names[m]);
    fprintf(f, "\n");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(first, "tenants"), i, t)
    {
        fprintf(f, "%-16.16s", json_string_value(json_object_get(t, "name")));
        for (size_t m = 0; m < n; m++) {
            json_t *u =
                results[m] ? json_array_get(json_object_get(results[m], "tenants"), i) : NULL;
            if (!u) {
                fprintf(f, " | %19s", "-");
                continue;
            }
            char p99[16], met[16] = "-";
            ms8(num(json_object_get(u, "latency_ms"), "p99"), p99);
            json_t *att = json_object_get(u, "slo_attainment");
            bool over = json_is_true(json_object_get(u, "overloaded"));
            any_over |= over;
            if (json_is_number(att))
                snprintf(met, sizeof met, "%.1f %%%s", 100 * json_number_value(att),
                         over ? "!" : " ");
            else if (over)
                snprintf(met, sizeof met, "!");
            fprintf(f, " | %s %10s", p99, met);
        }
        fprintf(f, "\n%-16s", "  on");
        for (size_t m = 0; m < n; m++) {
            json_t *u =
                results[m] ? json_array_get(json_object_get(results[m], "tenants"), i) : NULL;
            char cell[64] = "-";
            if (u) part_cell(results[m], u, cell, sizeof cell);
            fprintf(f, " | %19.19s", cell);
        }
        fprintf(f, "\n");
        if (!json_object_get(t, "llm")) continue;
        static const char *const rows[][2] = {{"ttft_ms", "  TTFT p99"}, {"tpot_ms", "  TPOT p99"}};
        for (int k = 0; k < 2; k++) { /* an LLM tenant's time to first token and per token */
            fprintf(f, "%-16s", rows[k][1]);
            for (size_t m = 0; m < n; m++) {
                json_t *u =
                    results[m] ? json_array_get(json_object_get(results[m], "tenants"), i) : NULL;
                json_t *l = json_object_get(json_object_get(u, "llm"), rows[k][0]);
                char v[16] = "-";
                if (json_is_object(l)) ms8(num(l, "p99"), v);
                fprintf(f, " | %8s %10s", v, "");
            }
            fprintf(f, "\n");
        }
    }
    fprintf(f, "%-16s", "GPU busy");
    for (size_t m = 0; m < n; m++) {
        if (results[m])
            fprintf(f, " | %17.1f %%",
                    100 * num(json_object_get(results[m], "gpu"), "busy_fraction"));
        else
            fprintf(f, " | %19s", "-");
    }
    fprintf(f, "\n");
    if (any_over)
        fprintf(f, "! overloaded: offered more than it served, its queue still growing at the "
                   "window's end (docs/results.md)\n");
    for (size_t m = 0; m < n; m++) /* a footnote when any layout was colosim's choice */
        if (results[m] && json_is_true(json_object_get(
                              json_object_get(json_object_get(results[m], "scenario"), "sharing"),
                              "automatic_layout"))) {
            fprintf(f, "* layout chosen by colosim (docs/sharing.md); the results' "
                       "scenario.sharing and tenants' placement give it in full\n");
            break;
        }
}


/* One CSV cell from a JSON value: numbers in full precision, null empty. */
static void csv_value(FILE *f, json_t *v)
{
    fputc(',', f);
    if (json_is_integer(v))
        fprintf(f, "%lld", (long long)json_integer_value(v));
    else if (json_is_number(v))
        fprintf(f, "%.10g", json_number_value(v));
    else if (json_is_string(v))
        colo_csv_write_field(f, json_string_value(v));
}

int colo_results_write_csv(json_t *const *runs, size_t n, const char *path, colo_error_t *err)
{
    static const char *const keys[] = {
        "model",        "batch",          "arrived",       "completed",     "dropped",
        "in_flight",    "throughput_rps", "goodput_rps",   "slo_ms",        "slo_attainment",
        "isolated_ms",  "queue_ms_mean",  "execution_ms_mean", "gpu_share", "mean_batch", NULL};
    static const char *const lat[] = {"mean", "p50", "p90", "p99", "p999", "max", NULL};
    static const char *const llm_cols[] = {"ttft_p50_ms", "ttft_p99_ms", "tpot_p50_ms",
                                           "tpot_p99_ms", "output_tokens_per_s",
                                           "kv_utilisation_mean", "preemptions", NULL};
    colo_atomic_file_t af;
    int rc = colo_atomic_open(&af, path, err);
    if (rc) return rc;
    FILE *f = af.f;
    fputs("scenario,gpu,mode,seed,tenant", f);
    for (const char *const *k = keys; *k; k++)
        fprintf(f, ",%s", *k);
    for (const char *const *k = lat; *k; k++)
        fprintf(f, ",latency_%s_ms", *k);
    fputs(",percentiles,gpu_busy_fraction", f);
    for (const char *const *k = llm_cols; *k; k++)
        fprintf(f, ",%s", *k);
    fputc('\n', f);
    for (size_t r = 0; r < n; r++) {
        if (!runs[r]) continue;
        json_t *sc = json_object_get(runs[r], "scenario");
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(runs[r], "tenants"), i, t)
        {
            colo_csv_write_field(f, json_string_value(json_object_get(sc, "file")));
            csv_value(f, json_object_get(sc, "gpu"));
            csv_value(f, json_object_get(json_object_get(sc, "sharing"), "mode"));
            csv_value(f, json_object_get(runs[r], "seed"));
            csv_value(f, json_object_get(t, "name"));
            for (const char *const *k = keys; *k; k++)
                csv_value(f, json_object_get(t, *k));
            json_t *l = json_object_get(t, "latency_ms");
            for (const char *const *k = lat; *k; k++)
                csv_value(f, json_object_get(l, *k));
            csv_value(f, json_object_get(l, "percentiles"));
            csv_value(f, json_object_get(json_object_get(runs[r], "gpu"), "busy_fraction"));
            json_t *m = json_object_get(t, "llm"); /* LLM tenants; empty cells for others */
            csv_value(f, json_object_get(json_object_get(m, "ttft_ms"), "p50"));
            csv_value(f, json_object_get(json_object_get(m, "ttft_ms"), "p99"));
            csv_value(f, json_object_get(json_object_get(m, "tpot_ms"), "p50"));
            csv_value(f, json_object_get(json_object_get(m, "tpot_ms"), "p99"));
            csv_value(f, json_object_get(m, "output_tokens_per_s"));
            csv_value(f, json_object_get(json_object_get(m, "kv_cache"), "utilisation_mean"));
            csv_value(f, json_object_get(m, "preemptions"));
            fputc('\n', f);
        }
    }
    if (ferror(f)) {
        colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot write the CSV file");
        colo_atomic_abort(&af);
        return COLO_EIO;
    }
    return colo_atomic_commit(&af, err);
}
