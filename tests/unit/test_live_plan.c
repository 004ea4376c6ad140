/* test_live_plan.c: the live plan replays the simulator's arrivals exactly and maps each
 * sharing mechanism onto processes and contexts as docs/live.md says. */
#include "helpers.h"
#include "live_plan.h"
#include "live_run.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(live_plan, .init = test_init);

static colo_scenario_t *load(const char *rel, const char *const *sets, size_t n)
{
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(src_path(rel), sets, n, &sc, &err), 0, "%s: %s", rel, err.text);
    return sc;
}

static void plan(const colo_scenario_t *sc, colo_live_plan_t *p)
{
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_live_plan(sc, p, &err), 0, "%s", err.text);
}

/* Requests the plan sends in the measured window equal what the simulator counted as arrived. */
Test(live_plan, arrivals_are_the_simulators)
{
    const char *sets[] = {"duration_s=5", "warmup_s=1"};
    test_run_t r = run_scenario(src_path("scenarios/compare_three_tenants_h100.cfg"), sets, 2);
    colo_live_plan_t p;
    plan(r.sc, &p);
    cr_assert_eq(p.n, 3);
    for (size_t i = 0; i < p.n; i++) {
        long long in_window = 0;
        for (size_t k = 0; k < p.t[i].n_arrivals; k++) {
            cr_assert(k == 0 || p.t[i].arrivals[k] >= p.t[i].arrivals[k - 1], "in order");
            cr_assert_lt(p.t[i].arrivals[k], r.sc->duration);
            if (p.t[i].arrivals[k] >= r.sc->warmup) in_window += p.t[i].counts[k];
        }
        double arrived = result_num(result_tenant(&r, i), "arrived");
        cr_expect_eq(in_window, (long long)arrived, "tenant %zu: plan %lld, simulator %.0f", i,
                     in_window, arrived);
        cr_expect_gt(in_window, 0);
    }
    colo_live_plan_free(&p);
    run_free(&r);
}

Test(live_plan, mechanisms_map_to_processes_and_contexts)
{
    colo_live_plan_t p;
    colo_scenario_t *sc = load("scenarios/compare_three_tenants_h100.cfg", NULL, 0);
    plan(sc, &p); /* MPS */
    cr_expect(p.mps_daemon);
    cr_expect_eq(p.n_processes, 3, "one MPS client process per tenant");
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(p.t[i].ctx, COLO_LIVE_MPS);
        cr_expect_eq(p.t[i].process, (int)i);
    }
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    const char *ts[] = {"sharing.mode=timeslice"};
    sc = load("scenarios/compare_three_tenants_h100.cfg", ts, 1);
    plan(sc, &p);
    cr_expect_not(p.mps_daemon);
    cr_expect_eq(p.n_processes, 3);
    cr_expect_eq(p.t[2].ctx, COLO_LIVE_PRIMARY);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/green_contexts_h100.cfg", NULL, 0);
    plan(sc, &p);
    cr_expect_eq(p.n_processes, 1, "Green Contexts live in one process");
    int total = 0;
    for (size_t i = 0; i < p.n; i++) {
        cr_expect_eq(p.t[i].ctx, COLO_LIVE_GREEN);
        cr_expect_gt(p.t[i].sms, 0);
        total += p.t[i].sms;
    }
    cr_expect_leq(total, sc->gpu->sm.count);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/mig_layout_h100.cfg", NULL, 0);
    plan(sc, &p);
    cr_expect(p.needs_mig, "MIG is only measured where instances exist");
    cr_expect_not_null(p.t[0].instance);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/mps_caps_h100.cfg", NULL, 0);
    plan(sc, &p);
    int capped = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.t[i].active_thread_percentage == 40) {
            capped++;
            cr_expect_lt(p.t[i].sms, sc->gpu->sm.count);
        }
    cr_expect_eq(capped, 1, "the capped BERT tenant");
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

Test(live_plan, the_plan_prints_every_process_and_tenant)
{
    colo_scenario_t *sc = load("scenarios/compare_three_tenants_h100.cfg", NULL, 0);
    colo_live_plan_t p;
    plan(sc, &p);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    colo_live_plan_print(sc, &p, f);
    fclose(f);
    cr_expect(strstr(buf, "private MPS control daemon"));
    cr_expect(strstr(buf, "process 2"));
    cr_expect(strstr(buf, "tenant bert"));
    cr_expect(strstr(buf, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"));
    free(buf);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

/* Live results from hand-made records: the window, the SLO and what is left in flight. */
Test(live_plan, results_from_records)
{
    const char *sets[] = {"duration_s=2", "warmup_s=1"};
    colo_scenario_t *sc = load("tests/fixtures/two_tenants.cfg", sets, 2);
    colo_live_plan_t p;
    plan(sc, &p);
    long long ms = 1000000;
    colo_live_outcome_t out[2];
    memset(out, 0, sizeof out);
    colo_live_record_t ra[] = {
        {500 * ms, 500 * ms, 502 * ms, 0},   /* before the window: not measured */
        {1000 * ms, 1000 * ms, 1004 * ms, 0}, /* 4 ms, meets the 10 ms SLO */
        {1500 * ms, 1501 * ms, 1520 * ms, 0}, /* 20 ms, misses it */
        {1600 * ms, 1600 * ms, 1600 * ms, 1}, /* dropped */
        {1990 * ms, 1995 * ms, 2010 * ms, 0}, /* finishes after the window */
    };
    out[0].rec = ra;
    out[0].n = 5;
    snprintf(out[1].error, sizeof out[1].error, "process killed by signal 9 (Killed)");
    json_t *live = json_pack("{s:s}", "backend", "test");
    json_t *r = colo_live_results(sc, &p, out, sets, 2, live);
    cr_assert_not_null(r);
    json_t *a = json_array_get(json_object_get(r, "tenants"), 0);
    json_t *b = json_array_get(json_object_get(r, "tenants"), 1);
    long long arrived = 0;
    for (size_t k = 0; k < p.t[0].n_arrivals; k++)
        if (p.t[0].arrivals[k] >= sc->warmup) arrived += p.t[0].counts[k];
    cr_assert_eq(json_integer_value(json_object_get(a, "arrived")), arrived);
    cr_assert_eq(json_integer_value(json_object_get(a, "completed")), 3);
    cr_assert_eq(json_integer_value(json_object_get(a, "dropped")), 1);
    cr_assert_eq(json_integer_value(json_object_get(a, "in_flight")), arrived - 4);
    json_t *lat = json_object_get(a, "latency_ms");
    cr_assert_float_eq(json_real_value(json_object_get(lat, "p50")), 20.0, 1e-9);
    cr_assert_float_eq(json_real_value(json_object_get(lat, "max")), 20.0, 1e-9);
    /* finished in the window: the 4 ms and 20 ms requests, over 1 s */
    cr_assert_float_eq(json_real_value(json_object_get(a, "throughput_rps")), 2.0, 1e-9);
    cr_assert_float_eq(json_real_value(json_object_get(a, "slo_attainment")),
                       1.0 / (double)arrived, 1e-12);
    cr_assert_float_eq(json_real_value(json_object_get(a, "queue_ms_mean")), 2.0, 1e-9);
    cr_assert(json_is_null(json_object_get(a, "error")));
    cr_assert_str_eq(json_string_value(json_object_get(b, "error")),
                     "process killed by signal 9 (Killed)");
    cr_assert_eq(json_integer_value(json_object_get(b, "completed")), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "live"), "backend")),
                     "test");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(r, "colosim"),
                                                    "results_format")),
                 1);
    json_decref(r);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

/* A tenant with a real program cannot share a Green Context process. */
Test(live_plan, command_tenants_refuse_green)
{
    const char *sets[] = {"sharing.mode=green", "tenants.[0].command=./serve"};
    colo_scenario_t *sc = load("tests/fixtures/two_tenants.cfg", sets, 2);
    colo_live_plan_t p;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_live_plan(sc, &p, &err), COLO_EUNSUPPORTED);
    cr_assert(strstr(err.text, "Green Contexts share one process"), "%s", err.text);
    cr_assert_str_eq(err.key, "a");
    colo_scenario_free(sc);
}
