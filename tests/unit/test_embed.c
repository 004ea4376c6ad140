/* test_embed.c: a program that embeds colosim through its one public header: it loads a
 * scenario, runs it, reads a tenant's figures (the same numbers as the results document), and
 * registers a scheduler and an arrival process of its own that a scenario then names. Includes
 * nothing of colosim but colosim.h. */
#include "colosim.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#define FIX COLO_TEST_SRC "/tests/fixtures/"

static colo_sim_t *run(const char *file, const char *const *sets, size_t n, colo_scenario_t **sc)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_sim_t *sim = NULL;
    int rc = colo_scenario_load(file, sets, n, sc, &err);
    if (!rc) rc = colo_sim_new(*sc, &sim, &err);
    if (!rc) rc = colo_sim_run(sim, &err);
    char msg[1024];
    colo_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    return sim;
}

Test(embed, tenant_figures_are_the_results_documents)
{
    colo_scenario_t *sc;
    colo_sim_t *sim = run(FIX "two_tenants.cfg", NULL, 0, &sc);
    cr_assert_eq(colo_sim_tenant_count(sim), 2);
    cr_assert_str_eq(colo_sim_tenant_name(sim, 1), "b");
    cr_assert_eq(colo_sim_tenant_find(sim, "b"), 1);
    cr_assert_eq(colo_sim_tenant_find(sim, "nobody"), -1);
    colo_run_stats_t st;
    cr_assert_eq(colo_sim_tenant_stats(sim, 2, &st), COLO_EINVAL);
    cr_assert_eq(colo_sim_tenant_stats(sim, 0, &st), 0);
    json_t *res = colo_results_json(sim, NULL, 0);
    cr_assert_not_null(res);
    json_t *t = json_array_get(json_object_get(res, "tenants"), 0);
    json_t *lat = json_object_get(t, "latency_ms");
    cr_assert_gt(st.completed, 1000);
    cr_assert_eq(st.arrived, (unsigned long long)json_integer_value(json_object_get(t, "arrived")));
    cr_assert_eq(st.completed,
                 (unsigned long long)json_integer_value(json_object_get(t, "completed")));
    cr_assert_eq(st.p99_ms, json_real_value(json_object_get(lat, "p99")));
    cr_assert_eq(st.p50_ms, json_real_value(json_object_get(lat, "p50")));
    cr_assert_eq(st.mean_ms, json_real_value(json_object_get(lat, "mean")));
    cr_assert_eq(st.throughput_rps, json_real_value(json_object_get(t, "throughput_rps")));
    cr_assert_eq(st.slo_attainment, json_real_value(json_object_get(t, "slo_attainment")));
    cr_assert_eq(st.gpu_share, json_real_value(json_object_get(t, "gpu_share")));
    cr_assert_eq(st.slo_ms, 10.0);
    json_decref(res);
    colo_sim_free(sim);
    colo_scenario_free(sc);
}

/* An LLM tenant's TTFT, TPOT and tokens per second through colosim.h are the results
 * document's (issue 41); a vision tenant has none (-1). */
Test(embed, an_llm_tenants_figures_are_the_results_documents)
{
    const char *const sets[] = {"duration_s=8", "warmup_s=1"};
    colo_scenario_t *sc;
    colo_sim_t *sim = run(FIX "llm/one_llm.cfg", sets, 2, &sc);
    colo_run_stats_t st, vis;
    cr_assert_eq(colo_sim_tenant_stats(sim, 0, &st), 0);
    cr_assert_eq(colo_sim_tenant_stats(sim, 1, &vis), 0);
    json_t *res = colo_results_json(sim, NULL, 0);
    json_t *llm = json_object_get(json_array_get(json_object_get(res, "tenants"), 0), "llm");
    json_t *ttft = json_object_get(llm, "ttft_ms"), *tpot = json_object_get(llm, "tpot_ms");
    cr_assert(json_is_object(ttft) && json_is_object(tpot));
    cr_assert_gt(st.ttft_p99_ms, 0);
    cr_assert_eq(st.ttft_p99_ms, json_real_value(json_object_get(ttft, "p99")));
    cr_assert_eq(st.ttft_p50_ms, json_real_value(json_object_get(ttft, "p50")));
    cr_assert_eq(st.tpot_p99_ms, json_real_value(json_object_get(tpot, "p99")));
    cr_assert_eq(st.tpot_mean_ms, json_real_value(json_object_get(tpot, "mean")));
    cr_assert_eq(st.output_tokens_per_s,
                 json_real_value(json_object_get(llm, "output_tokens_per_s")));
    cr_assert_eq(st.slo_ttft_ms, 200.0);
    cr_assert_eq(st.slo_tpot_ms, 30.0);
    cr_assert_leq(st.ttft_p99_ms, st.p99_ms, "the first token comes before the last");
    cr_assert_eq(vis.ttft_p99_ms, -1);
    cr_assert_eq(vis.tpot_p50_ms, -1);
    cr_assert_eq(vis.output_tokens_per_s, -1);
    cr_assert_eq(vis.slo_ttft_ms, 0);
    json_decref(res);
    colo_sim_free(sim);
    colo_scenario_free(sc);
}

/* A scheduler of the embedding program's: under a limit of `slots` kernels running, the READY
 * member of the highest tenant index first (fifo takes the one that became ready first). */
static double minus_index(const colo_sched_item_t *it)
{
    return -(double)it->tenant;
}
static long last_ready(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, minus_index);
}
static const colo_sched_ops_t last_first = {
    .name = "embed_last_first",
    .summary = "the READY member with the highest index first",
    .params = {"slots", NULL},
    .defaults = {1},
    .pick_next = last_ready,
};

static double mean_ms_of_first(const char *policy)
{
    char set[128];
    snprintf(set, sizeof set, "scheduler.policy=%s", policy);
    const char *const sets[] = {"duration_s=4", set};
    colo_scenario_t *sc;
    colo_sim_t *sim = run(FIX "sched_fifo.cfg", sets, 2, &sc);
    colo_run_stats_t st;
    cr_assert_eq(colo_sim_tenant_stats(sim, 0, &st), 0);
    cr_assert_gt(st.completed, 100);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return st.mean_ms;
}

Test(embed, a_registered_scheduler_is_named_by_a_scenario)
{
    cr_assert_eq(colo_sched_register(&last_first), 0);
    cr_assert_eq(colo_sched_register(&last_first), COLO_EINVAL); /* the name is taken */
    /* the latency-sensitive tenant (member 0) now goes after the best-effort one */
    double fifo = mean_ms_of_first("fifo"), last = mean_ms_of_first("embed_last_first");
    cr_assert_gt(last, fifo * 1.2, "fifo %g ms, last first %g ms", fifo, last);
}

/* An arrival process of the embedding program's: one request every gap_ms exactly. It keeps
 * its rate in rate, so load_scale scales it like the built-in processes. */
static int parse_every(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r,
                       const config_setting_t *g, const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "gap_ms", NULL};
    int rc = colo_cfg_check_keys(r, g, keys);
    if (!rc)
        rc = colo_cfg_double(r, g, "gap_ms", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE, &c->param[0]);
    if (!rc) c->rate = 1e3 / c->param[0];
    return rc;
}
static int next_every(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)st, (void)rng, (void)err;
    *at = now + colo_time_from_ns(1e9 / c->rate);
    *count = 1;
    return 0;
}
static const colo_arrival_ops_t every = {"embed_every", "one request every gap_ms", parse_every,
                                         next_every};

Test(embed, a_registered_arrival_process_is_named_by_a_scenario)
{
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(colo_scenario_load(FIX "embed_every.cfg", NULL, 0, &sc, &err), 0); /* unknown */
    cr_assert_eq(colo_arrival_register(&every), 0);
    cr_assert_eq(colo_arrival_register(&every), COLO_EINVAL);
    cr_assert(strstr(colo_arrival_names(), "embed_every"));
    colo_sim_t *sim = run(FIX "embed_every.cfg", NULL, 0, &sc);
    colo_run_stats_t st;
    cr_assert_eq(colo_sim_tenant_stats(sim, 0, &st), 0);
    /* 18 s of window at one request every 2 ms */
    cr_assert(fabs((double)st.arrived - 9000.0) <= 1.0, "arrived %llu", st.arrived);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    /* load_scale scales it */
    static const char *const twice[] = {"load_scale=2"};
    sim = run(FIX "embed_every.cfg", twice, 1, &sc);
    cr_assert_eq(colo_sim_tenant_stats(sim, 0, &st), 0);
    cr_assert(fabs((double)st.arrived - 18000.0) <= 1.0, "arrived %llu", st.arrived);
    colo_sim_free(sim);
    colo_scenario_free(sc);

    /* its own keys are checked like any other's: the error names where the value came from
     * (here the override) and the key */
    static const char *const bad[] = {"tenants.a.arrival.gap_ms=-1"};
    colo_error_clear(&err);
    cr_assert_lt(colo_scenario_load(FIX "embed_every.cfg", bad, 1, &sc, &err), 0);
    char msg[1024];
    colo_error_format(&err, msg, sizeof msg);
    cr_assert(strstr(msg, "--set:1: tenants.[0].arrival.gap_ms: must be greater than 0"), "%s",
              msg);
}
