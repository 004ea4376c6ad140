/* test_loadgen.c: MLPerf LoadGen's settings, stopping rule and verdict (loadgen.c), on a tenant
 * whose requests take a constant 0.605 ms alone (tests/fixtures/mlperf_offline.cfg). */
#include "helpers.h"
#include "loadgen.h"
#include "scenario.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(loadgen, .init = test_init);

/* The fixture with its arrival group replaced and the run made duration_s long. */
static test_run_t run_with(const char *arrival, const char *duration_s, const char *drain_s)
{
    char a[512], d[64], dr[64];
    snprintf(a, sizeof a, "tenants.[0].arrival={ process = \"mlperf\"; %s }", arrival);
    snprintf(d, sizeof d, "duration_s=%s", duration_s);
    snprintf(dr, sizeof dr, "drain_s=%s", drain_s);
    const char *sets[] = {a, d, dr};
    return run_scenario(src_path("tests/fixtures/mlperf_offline.cfg"), sets, 3);
}

static json_t *mlperf(const test_run_t *r)
{
    json_t *m = json_object_get(result_tenant(r, 0), "mlperf");
    cr_assert(json_is_object(m), "the tenant's results have an mlperf object");
    return m;
}

static const char *validity(json_t *m)
{
    return json_string_value(json_object_get(m, "result_validity"));
}

Test(loadgen, early_stopping_needs_the_queries_loadgens_binomial_rule_gives)
{
    /* I_p(h, t + 1) < 0.01: with t = 0 and p = 0.99, 0.99^h < 0.01 first at h = 459
     * (0.99^458 = 0.01004); with t = 1, p = 0.9: p^(h+1) + (h+1)(1-p)p^h is 0.00959 at h = 63
     * and 0.01051 at h = 62 */
    cr_assert_eq(colo_loadgen_min_passing(0, 0.99), 459);
    cr_assert_eq(colo_loadgen_min_passing(1, 0.9), 63);
    /* at the 99th percentile, 661 + 1 = 662 queries: mlperf.conf's MultiStream min_query_count */
    cr_assert_eq(colo_loadgen_min_passing(1, 0.99), 661);
    /* more queries over the bound need more within it */
    cr_assert_gt(colo_loadgen_min_passing(100, 0.99), colo_loadgen_min_passing(10, 0.99));
    /* t = 10000 at p = 0.99: near 1.02 million (the binomial tail is 0.0014 at 1.02e6 and 0.16
     * at 1e6) */
    uint64_t h = colo_loadgen_min_passing(10000, 0.99);
    cr_assert(h > 1000000 && h <= 1020000, "h = %llu", (unsigned long long)h);
}

Test(loadgen, single_stream_ends_once_min_duration_and_queries_are_met)
{
    test_run_t r = run_with("scenario = \"SingleStream\"; min_duration = 1000;", "5.0", "1.0");
    json_t *a = result_tenant(&r, 0), *m = mlperf(&r);
    double alone = result_num(a, "isolated_ms");
    /* back to back: the first query issued at or after 1 s ends the test */
    long long q = json_integer_value(json_object_get(m, "queries"));
    long long expect = (long long)ceil(1000.0 / alone) + 1;
    cr_assert(llabs(q - expect) <= 1, "%lld queries, expected about %lld", q, expect);
    cr_assert_eq(json_integer_value(json_object_get(a, "arrived")), q);
    cr_assert_str_eq(validity(m), "VALID");
    cr_assert(json_is_true(json_object_get(m, "early_stopping_met")));
    /* every latency the same: the 90th percentile and its early-stopping estimate are it */
    cr_assert_float_eq(result_num(m, "target_percentile_latency_ms"), alone,
                       alone * COLO_HIST_REL_ERROR);
    cr_assert_float_eq(result_num(m, "early_stopping_latency_ms"), alone,
                       alone * COLO_HIST_REL_ERROR);
    run_free(&r);
}

Test(loadgen, single_stream_is_invalid_below_min_duration_and_early_stopping)
{
    /* mlperf.conf's 600 s against a 2 s run */
    test_run_t r = run_with("scenario = \"SingleStream\";", "2.0", "1.0");
    json_t *m = mlperf(&r);
    cr_assert_str_eq(validity(m), "INVALID");
    cr_assert(json_is_false(json_object_get(m, "min_duration_met")));
    cr_assert_float_eq(result_num(json_object_get(m, "settings"), "min_duration_ms"), 600000, 1e-9);
    cr_assert(strstr(json_string_value(json_object_get(m, "invalid_reason")), "min duration"));
    run_free(&r);
    /* 63 queries: one short of what early stopping needs at the 90th percentile */
    r = run_with("scenario = \"SingleStream\"; min_duration = 0; min_query_count = 63;", "2.0",
                 "1.0");
    m = mlperf(&r);
    cr_assert_eq(json_integer_value(json_object_get(m, "queries")), 63);
    cr_assert_eq(json_integer_value(json_object_get(m, "early_stopping_queries")), 64);
    cr_assert(json_is_false(json_object_get(m, "early_stopping_met")));
    cr_assert_str_eq(validity(m), "INVALID");
    run_free(&r);
    r = run_with("scenario = \"SingleStream\"; min_duration = 0; min_query_count = 64;", "2.0",
                 "1.0");
    m = mlperf(&r);
    cr_assert_eq(json_integer_value(json_object_get(m, "queries")), 64);
    cr_assert_str_eq(validity(m), "VALID");
    run_free(&r);
}

Test(loadgen, multi_stream_reports_the_latency_of_whole_queries)
{
    test_run_t r = run_with("scenario = \"MultiStream\"; min_duration = 500;", "2.0", "1.0");
    json_t *a = result_tenant(&r, 0), *m = mlperf(&r);
    double alone = result_num(a, "isolated_ms");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(m, "settings"),
                                                    "samples_per_query")),
                 8);
    /* 8 samples served one after another: a query takes 8 of them (and the context loaded
     * once at the start: within 0.1 ms) */
    double q = result_num(m, "target_percentile_latency_ms");
    cr_assert(fabs(q - 8 * alone) < 0.1, "query p99 %.4f ms, 8 x alone %.4f", q, 8 * alone);
    /* mlperf.conf's MultiStream min_query_count is 662: 500 ms of 4.8 ms queries is too few */
    cr_assert(json_is_false(json_object_get(m, "min_queries_met")));
    cr_assert_str_eq(validity(m), "INVALID");
    run_free(&r);
}

Test(loadgen, server_is_valid_only_when_its_percentile_is_within_target_latency)
{
    /* 1000/s against a 0.605 ms service (60 % busy): p99 within 5 ms, beyond 1 ms */
    test_run_t r = run_with("scenario = \"Server\"; target_qps = 1000.0; min_duration = 2000; "
                            "target_latency = 5.0;",
                            "4.0", "1.0");
    json_t *m = mlperf(&r);
    cr_assert_str_eq(validity(m), "VALID");
    cr_assert(json_is_true(json_object_get(m, "perf_constraints_met")));
    cr_assert_leq(result_num(m, "target_percentile_latency_ms"), 5.0);
    run_free(&r);
    r = run_with("scenario = \"Server\"; target_qps = 1000.0; min_duration = 2000; "
                 "target_latency = 1.0;",
                 "4.0", "1.0");
    m = mlperf(&r);
    cr_assert_str_eq(validity(m), "INVALID");
    cr_assert(json_is_false(json_object_get(m, "perf_constraints_met")));
    cr_assert_gt(result_num(m, "target_percentile_latency_ms"), 1.0);
    cr_assert_gt(json_integer_value(json_object_get(m, "overlatency_samples")), 0);
    /* the test ends at its min duration: no query after the first at or beyond 2 s */
    cr_assert(result_num(m, "duration_s") >= 2.0 && result_num(m, "duration_s") < 2.05);
    run_free(&r);
}

Test(loadgen, offline_sizes_its_query_from_target_qps_and_counts_unanswered_samples)
{
    /* 1.1 x 1 s x 2000/s = 2200 samples, more than min_query_count 100 */
    test_run_t r = run_with("scenario = \"Offline\"; target_qps = 2000.0; min_duration = 1000;",
                            "2.0", "1.0");
    json_t *a = result_tenant(&r, 0), *m = mlperf(&r);
    cr_assert_eq(json_integer_value(json_object_get(a, "arrived")), 2200);
    /* 2200 x 0.605 ms = 1.33 s >= 1 s */
    cr_assert_str_eq(validity(m), "VALID");
    cr_assert_float_eq(result_num(m, "samples_per_s"), result_num(a, "throughput_rps"), 1e-9);
    run_free(&r);
    /* the run ends (0.5 s, no drain) before the samples are answered: LoadGen would wait */
    r = run_with("scenario = \"Offline\"; samples = 2200; min_duration = 0;", "0.5", "0.0");
    m = mlperf(&r);
    cr_assert_str_eq(validity(m), "INVALID");
    cr_assert_gt(json_integer_value(json_object_get(m, "unanswered_samples")), 0);
    cr_assert(strstr(json_string_value(json_object_get(m, "invalid_reason")), "drain_s"));
    run_free(&r);
}

Test(loadgen, settings_belonging_to_another_scenario_are_refused)
{
    static const char *const bad[][2] = {
        {"scenario = \"SingleStream\"; target_qps = 10.0;", "target_qps"},
        {"scenario = \"Server\"; target_qps = 10.0; rate = 10.0;", "not both"},
        {"scenario = \"Server\";", "target_qps"},
        {"scenario = \"Server\"; target_qps = 10.0; samples_per_query = 4;", "samples_per_query"},
        {"scenario = \"Offline\";", "target_qps"},
        {"scenario = \"SingleStream\"; target_latency_percentile = 100.0;", "below 100"},
        {"scenario = \"Server\"; target_qps = 10.0; target_latency_percentile = 0.99;",
         "99 for the 99th"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char a[256];
        snprintf(a, sizeof a, "tenants.[0].arrival={ process = \"mlperf\"; %s }", bad[i][0]);
        colo_error_t err;
        colo_error_clear(&err);
        colo_scenario_t *sc = NULL;
        const char *sets[] = {a};
        int rc = colo_scenario_load(src_path("tests/fixtures/mlperf_offline.cfg"), sets, 1, &sc, &err);
        colo_scenario_free(sc);
        cr_assert_lt(rc, 0, "%s is refused", bad[i][0]);
        cr_assert(strstr(err.text, bad[i][1]) || strstr(err.key, bad[i][1]), "%s: %s: %s",
                  bad[i][0], err.key, err.text);
    }
}
