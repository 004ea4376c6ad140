/* test_run.c: properties of whole runs: determinism, conservation, independent streams, and
 * the results document. */
#include "helpers.h"
/* beside the internal headers helpers.h brings: the compiler checks that the public header's
 * declarations agree with them */
#include "colosim.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(run, .init = test_init);

static char *dump(const test_run_t *r)
{
    return json_dumps(r->results, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
}

Test(run, same_seed_same_bytes_other_seed_other_numbers)
{
    const char *demo = src_path("scenarios/resnet50_bert_timeslice.cfg");
    const char *seed2[] = {"seed=2"};
    test_run_t a = run_scenario(demo, NULL, 0), b = run_scenario(demo, NULL, 0);
    test_run_t c = run_scenario(demo, seed2, 1);
    char *sa = dump(&a), *sb = dump(&b);
    cr_assert_str_eq(sa, sb);
    cr_assert_neq(result_num(json_object_get(result_tenant(&a, 0), "latency_ms"), "p99"),
                  result_num(json_object_get(result_tenant(&c, 0), "latency_ms"), "p99"));
    free(sa);
    free(sb);
    run_free(&a);
    run_free(&b);
    run_free(&c);
}

static void check_conservation(const test_run_t *r)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(r->results, "tenants"), i, t)
    {
        json_int_t arrived = json_integer_value(json_object_get(t, "arrived"));
        json_int_t done = json_integer_value(json_object_get(t, "completed"));
        json_int_t dropped = json_integer_value(json_object_get(t, "dropped"));
        json_int_t left = json_integer_value(json_object_get(t, "in_flight"));
        cr_assert_geq(left, 0);
        cr_assert_eq(arrived, done + dropped + left);
        cr_assert_eq((uint64_t)done, r->sim->t[i].latency.count, "one latency per completed request");
    }
}

Test(run, every_request_is_completed_dropped_or_in_flight)
{
    test_run_t over = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    check_conservation(&over);
    cr_assert_gt(json_integer_value(json_object_get(result_tenant(&over, 0), "in_flight")), 0,
                 "overloaded with no drain: requests are left");
    const char *light[] = {"tenants.a.arrival.rate=100", "tenants.b.arrival.rate=100", "drain_s=1"};
    test_run_t ok = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), light, 3);
    check_conservation(&ok);
    cr_assert_eq(json_integer_value(json_object_get(result_tenant(&ok, 0), "in_flight")), 0);
    run_free(&over);
    run_free(&ok);
}

Test(run, adding_a_tenant_leaves_the_others_arrivals_unchanged)
{
    test_run_t one = run_scenario(src_path("tests/fixtures/only_a.cfg"), NULL, 0);
    test_run_t two = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    cr_assert_eq(json_integer_value(json_object_get(result_tenant(&one, 0), "arrived")),
                 json_integer_value(json_object_get(result_tenant(&two, 0), "arrived")));
    run_free(&one);
    run_free(&two);
}

Test(run, results_hold_the_documented_keys)
{
    test_run_t r = run_scenario(src_path("scenarios/resnet50_bert_timeslice.cfg"), NULL, 0);
    json_t *res = r.results;
    cr_assert(json_is_string(json_object_get(json_object_get(res, "colosim"), "version")));
    cr_assert_eq(json_integer_value(json_object_get(res, "seed")), 1);
    json_t *sc = json_object_get(res, "scenario");
    cr_assert_str_eq(json_string_value(json_object_get(sc, "gpu")), "h100-sxm");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode")),
                     "timeslice");
    static const char *const keys[] = {"name",        "completed",      "dropped",
                                       "in_flight",   "throughput_rps", "slo_attainment",
                                       "isolated_ms", "gpu_share",      NULL};
    static const char *const lat[] = {"mean", "p50", "p90", "p99", "p999", "max", NULL};
    for (size_t i = 0; i < 2; i++) {
        json_t *t = result_tenant(&r, i);
        for (const char *const *k = keys; *k; k++)
            cr_assert(json_object_get(t, *k), "tenant %zu lacks %s", i, *k);
        json_t *l = json_object_get(t, "latency_ms");
        for (const char *const *k = lat; *k; k++)
            cr_assert(json_is_number(json_object_get(l, *k)), "latency_ms lacks %s", *k);
        cr_assert_leq(result_num(l, "p50"), result_num(l, "p90"));
        cr_assert_leq(result_num(l, "p90"), result_num(l, "p99"));
        cr_assert_leq(result_num(l, "p99"), result_num(l, "p999"));
        cr_assert_leq(result_num(l, "p999"), result_num(l, "max"));
        cr_assert_geq(result_num(l, "p50"), result_num(t, "isolated_ms") - 1e-9,
                      "nobody runs faster than alone");
    }
    run_free(&r);
}

Test(run, results_are_written_whole_or_not_at_all)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/one_tenant.cfg"), NULL, 0);
    colo_error_t err;
    colo_error_clear(&err);
    char dir[] = "/tmp/colosim-out-XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/r.json", dir);
    cr_assert_eq(colo_results_write(r.results, path, &err), 0);
    json_error_t jerr;
    json_t *back = json_load_file(path, 0, &jerr);
    cr_assert(back, "%s", jerr.text);
    cr_assert(json_equal(back, r.results) || json_object_size(back) == json_object_size(r.results));
    json_decref(back);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
    cr_assert_eq(system(cmd), 0, "a temporary file was left beside the results");
    unlink(path);
    rmdir(dir);
    colo_error_clear(&err);
    cr_assert_lt(colo_results_write(r.results, "/nonexistent-dir/r.json", &err), 0);
    cr_assert(strstr(err.source, "/nonexistent-dir/r.json"));
    run_free(&r);
}

/* By default the percentiles come from the histogram, within COLO_HIST_REL_ERROR (0.1 %) of the
 * exact ones (metrics.exact_samples keeps that many exactly); queueing and execution add up to
 * the mean latency; goodput counts requests within the SLO. */
Test(run, histogram_percentiles_and_latency_breakdown)
{
    const char *exact[] = {"metrics.exact_samples=100000000"};
    test_run_t ex = run_scenario(src_path("scenarios/resnet50_bert_timeslice.cfg"), exact, 1);
    test_run_t hi = run_scenario(src_path("scenarios/resnet50_bert_timeslice.cfg"), NULL, 0);
    for (size_t i = 0; i < 2; i++) {
        json_t *a = result_tenant(&ex, i), *b = result_tenant(&hi, i);
        json_t *la = json_object_get(a, "latency_ms"), *lb = json_object_get(b, "latency_ms");
        cr_assert_str_eq(json_string_value(json_object_get(la, "percentiles")), "exact");
        cr_assert_str_eq(json_string_value(json_object_get(lb, "percentiles")), "histogram");
        cr_assert_float_eq(result_num(la, "mean"), result_num(lb, "mean"), 1e-9);
        cr_assert_float_eq(result_num(la, "max"), result_num(lb, "max"), 1e-12);
        static const char *const keys[] = {"p50", "p90", "p99", "p999"};
        for (int k = 0; k < 4; k++) {
            double want = result_num(la, keys[k]), got = result_num(lb, keys[k]);
            cr_assert_leq(fabs(got - want), want * COLO_HIST_REL_ERROR,
                          "%s: histogram %g ms, exact %g ms", keys[k], got, want);
        }
        cr_assert_float_eq(result_num(a, "queue_ms_mean") + result_num(a, "execution_ms_mean"),
                           result_num(la, "mean"), 1e-6);
        cr_assert_gt(result_num(a, "queue_ms_mean"), 0);
        cr_assert_leq(result_num(a, "goodput_rps"), result_num(a, "throughput_rps"),
                      "goodput counts those of the throughput's requests that met the SLO");
    }
    run_free(&ex);
    run_free(&hi);
}

/* Utilisation over time: time-sliced kernels (timed outside the solver) and MPS kernels (in it)
 * give the same figures for a tenant alone; the series averages to the window's mean; PCIe
 * carries exactly the trace's bytes per request. */
Test(run, utilisation_series_and_means)
{
    const char *mps[] = {"sharing.mode=mps"};
    test_run_t ts = run_scenario(src_path("tests/fixtures/one_tenant.cfg"), NULL, 0);
    test_run_t mp = run_scenario(src_path("tests/fixtures/one_tenant.cfg"), mps, 1);
    json_t *ua = json_object_get(json_object_get(ts.results, "utilisation"), "mean");
    json_t *ub = json_object_get(json_object_get(mp.results, "utilisation"), "mean");
    static const char *const kinds[] = {"sm", "l2", "dram", "pcie_h2d", "pcie_d2h"};
    for (int k = 0; k < 5; k++) {
        double a = result_num(ua, kinds[k]), b = result_num(ub, kinds[k]);
        cr_assert_gt(a, 0, "%s is used", kinds[k]);
        cr_assert_float_eq(a, b, 1e-6 * a, "%s: time-sliced %g vs MPS %g", kinds[k], a, b);
    }
    /* 100 requests/s, each moving the trace's H2D bytes over the link */
    const colo_trace_t *tr = ts.sc->tenants[0].trace;
    double bytes = 0;
    for (size_t i = 0; i < tr->n_ops; i++)
        if (tr->ops[i].type == COLO_OP_COPY && tr->ops[i].dir == COLO_COPY_H2D)
            bytes += (double)tr->ops[i].bytes;
    double want = 100.0 * bytes / (ts.sc->gpu->pcie.h2d_gbps * 1e9);
    cr_assert_float_eq(result_num(ua, "pcie_h2d"), want, want * 0.01);
    run_free(&ts);
    run_free(&mp);

    test_run_t r = run_scenario(src_path("scenarios/mps_caps_h100.cfg"), NULL, 0);
    json_t *u = json_object_get(r.results, "utilisation");
    cr_assert_float_eq(result_num(u, "interval_s"), 1.0, 1e-12);
    for (int k = 0; k < 5; k++) {
        json_t *s = json_object_get(json_object_get(u, "series"), kinds[k]), *v;
        cr_assert_eq(json_array_size(s), 28, "28 s window, 1 s intervals");
        double sum = 0;
        size_t i;
        json_array_foreach(s, i, v)
        {
            double x = json_number_value(v);
            cr_assert(x >= 0 && x <= 1 + 1e-9, "%s[%zu] = %g", kinds[k], i, x);
            sum += x;
        }
        cr_assert_float_eq(sum / 28, result_num(json_object_get(u, "mean"), kinds[k]), 1e-9);
    }
    run_free(&r);
}

/* Issue 22: a request of one 1-ns kernel (no launch cost) took 0 ns under MPS and Green
 * Contexts, less than alone: the solver rounded the kernel's time left to the nearest
 * nanosecond, and less than half of one to none. Work left now takes at least 1 ns. */
Test(run, a_one_nanosecond_kernel_is_never_faster_than_alone)
{
    const char *modes[] = {"sharing.mode=mps", "sharing.mode=green"};
    for (int m = 0; m < 2; m++) {
        test_run_t r = run_scenario(src_path("tests/fixtures/one_ns_mps.cfg"), &modes[m], 1);
        for (size_t i = 0; i < 2; i++) {
            json_t *t = result_tenant(&r, i);
            double alone = result_num(t, "isolated_ms");
            json_t *lat = json_object_get(t, "latency_ms");
            cr_assert_gt(result_num(t, "completed"), 0);
            cr_assert_geq(result_num(lat, "p50"), alone, "%s: p50 %g < alone %g", modes[m],
                          result_num(lat, "p50"), alone);
            cr_assert_gt(result_num(lat, "mean"), 0, "%s", modes[m]);
        }
        run_free(&r);
    }
}

/* Every shipped scenario (6 s of it): each tenant's percentiles from the histogram, the default,
 * within COLO_HIST_REL_ERROR (0.1 %) of the exact ones (metrics.exact_samples), LLM tenants'
 * time to first token and per output token too; everything else the same. */
static size_t scenarios_checked;

static void same_but_percentiles(const char *dir, const char *stem)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.cfg", dir, stem);
    const char *base[] = {"duration_s=6", "warmup_s=1"};
    const char *exact[] = {"duration_s=6", "warmup_s=1", "metrics.exact_samples=100000000"};
    test_run_t h = run_scenario(path, base, 2), e = run_scenario(path, exact, 3);
    json_t *th = json_object_get(h.results, "tenants"), *te = json_object_get(e.results, "tenants");
    cr_assert_eq(json_array_size(th), json_array_size(te));
    for (size_t i = 0; i < json_array_size(th); i++) {
        json_t *a = json_array_get(th, i), *b = json_array_get(te, i);
        cr_assert_eq(json_integer_value(json_object_get(a, "completed")),
                     json_integer_value(json_object_get(b, "completed")), "%s", stem);
        json_t *la[3] = {json_object_get(a, "latency_ms"),
                         json_object_get(json_object_get(a, "llm"), "ttft_ms"),
                         json_object_get(json_object_get(a, "llm"), "tpot_ms")};
        json_t *lb[3] = {json_object_get(b, "latency_ms"),
                         json_object_get(json_object_get(b, "llm"), "ttft_ms"),
                         json_object_get(json_object_get(b, "llm"), "tpot_ms")};
        static const char *const keys[] = {"p50", "p90", "p99", "p999"};
        for (int m = 0; m < 3; m++) {
            if (!json_is_object(la[m])) continue;
            cr_assert_float_eq(result_num(la[m], "mean"), result_num(lb[m], "mean"), 1e-9);
            cr_assert_float_eq(result_num(la[m], "max"), result_num(lb[m], "max"), 1e-12);
            for (int k = 0; k < 4; k++) {
                double got = result_num(la[m], keys[k]), want = result_num(lb[m], keys[k]);
                cr_assert_leq(fabs(got - want), want * COLO_HIST_REL_ERROR + 1e-12,
                              "%s, tenant %zu, %s: histogram %.9g ms, exact %.9g ms", stem, i,
                              keys[k], got, want);
            }
        }
    }
    run_free(&h);
    run_free(&e);
    scenarios_checked++;
}

Test(run, shipped_scenarios_percentiles_from_the_histogram_are_within_0_1_percent,
     .timeout = 300)
{
    for_each_file(src_path("scenarios"), "cfg", same_but_percentiles);
    cr_assert_geq(scenarios_checked, 14);
}

/* The utilisation series keeps at most COLO_UTIL_POINTS points whatever the run's length: 28,000
 * intervals of 1 ms become 3,500 points of 8 ms, each the mean of its 8, so the series still
 * averages to the window's mean. */
Test(run, the_utilisation_series_is_bounded)
{
    const char *fine[] = {"metrics.interval_ms=1"};
    test_run_t r = run_scenario(src_path("scenarios/resnet50_bert_timeslice.cfg"), fine, 1);
    json_t *u = json_object_get(r.results, "utilisation");
    json_t *sm = json_object_get(json_object_get(u, "series"), "sm");
    cr_assert_leq(json_array_size(sm), COLO_UTIL_POINTS);
    cr_assert_eq(json_array_size(sm), 3500);
    cr_assert_float_eq(result_num(u, "interval_s"), 0.008, 1e-12);
    double sum = 0;
    size_t i;
    json_t *x;
    json_array_foreach(sm, i, x) sum += json_number_value(x);
    cr_assert_float_eq(sum / 3500, result_num(json_object_get(u, "mean"), "sm"), 1e-9);
    run_free(&r);
}
