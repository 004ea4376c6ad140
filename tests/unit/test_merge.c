/* test_merge.c: fewer events than kernels (docs/engine.md, "Fewer events than kernels"),
 * properties that could be false: where the time-slicing policy times a tenant's kernels alone
 * (a MIG instance of its own, time-slicing with preemptions), the run that merges them gives
 * the results of the run kernel by kernel, byte for byte, with a tenth of the events; under MPS
 * and Green Contexts the kernels with the GPU to themselves are timed without the solver, with
 * the same results; with fidelity "merged" a request alone takes what it takes kernel by
 * kernel, and a run under MPS has fewer events; a bad fidelity is refused. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(merge, .init = test_init);

static long long events_of(json_t *res)
{
    return (long long)json_integer_value(json_object_get(json_object_get(res, "engine"), "events"));
}

/* The results without the count of events popped (what the shortcut changes) as text. */
static char *text_without_events(json_t *res)
{
    json_t *c = json_deep_copy(res);
    json_object_del(json_object_get(c, "engine"), "events");
    char *s = json_dumps(c, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    json_decref(c);
    return s;
}

/* A run with a timeline (every kernel an event: its span is drawn, which turns both shortcuts
 * off) against one without: the same results; events `fewer` times fewer (1: as many), and the
 * solver's completions (each a solve) `fewer_solves` times fewer (0: not compared). */
static void expect_same_as_kernel_by_kernel(const char *cfg, const char *const *sets, size_t n,
                                            double fewer, double fewer_solves)
{
    test_run_t plain = run_scenario(src_path(cfg), sets, n);
    test_run_t drawn = run_scenario_tl(src_path(cfg), sets, n, 1.0, 1.001);
    char *a = text_without_events(plain.results), *b = text_without_events(drawn.results);
    cr_assert(a && b);
    cr_expect_str_eq(a, b, "%s: the results differ with kernels merged", cfg);
    long long ea = events_of(plain.results), eb = events_of(drawn.results);
    if (fewer > 1)
        cr_expect_lt((double)ea * fewer, (double)eb,
                     "%s: %lld events merged, %lld kernel by kernel", cfg, ea, eb);
    else
        cr_expect_eq(ea, eb, "%s", cfg);
    double ca = (double)plain.sim->hw.fl.completions, cb = (double)drawn.sim->hw.fl.completions;
#ifdef COLOSIM_CHECKS
    /* every second start of a kernel seen alone runs on the solver, to be checked: half the
     * completions saved */
    if (fewer_solves > 0) fewer_solves = 1 / (1 - (1 - 1 / fewer_solves) / 2);
#endif
    if (fewer_solves > 0)
        cr_expect_lt(ca * fewer_solves, cb, "%s: %.0f solver completions timed alone, %.0f solved",
                     cfg, ca, cb);
    free(a);
    free(b);
    run_free(&plain);
    run_free(&drawn);
}

static void expect_same_with_fewer_events(const char *cfg, const char *const *sets, size_t n,
                                          double fewer)
{
    expect_same_as_kernel_by_kernel(cfg, sets, n, fewer, 0);
}

Test(merge, mig_instances_of_one_tenant_give_the_same_results_with_a_tenth_of_the_events)
{
    const char *sets[] = {"duration_s=4", "warmup_s=1"};
    expect_same_with_fewer_events("tests/bench/data/mig_hour_7x1g.cfg", sets, 2, 5.0);
}

Test(merge, time_slicing_with_preemptions_gives_the_same_results)
{
    /* four tenants at 80 % of the GPU's time, 200 us slices: kernels merged are preempted
     * inside and resumed where they stopped */
    const char *sets[] = {"duration_s=4", "warmup_s=1", "sharing.timeslice=200"};
    const char *cfg = "tests/bench/data/timeslice_hour_4tenants.cfg";
    test_run_t r = run_scenario(src_path(cfg), sets, 3);
    cr_expect_gt(result_num(json_object_get(r.results, "gpu"), "preemptions"), 1000);
    run_free(&r);
    expect_same_with_fewer_events(cfg, sets, 3, 3.0);
}

Test(merge, an_arrival_at_the_nanosecond_a_request_ends_comes_in_the_same_order)
{
    /* a request takes 1,053,600 ns alone and arrivals come every 526,800 ns with one place in
     * the queue: whether the arrival at a request's end finds the queue full depends on which
     * of the two events comes first at that nanosecond (a reviewer's case) */
    const char *sets[] = {"duration_s=2", "warmup_s=0.5", "sharing.switch_us=0",
                          "tenants=({name=\"a\"; trace=\"synthetic50_h100.json\"; queue_limit=1; "
                          "arrival={process=\"constant\"; rate=1898.2536066818527;};})"};
    expect_same_with_fewer_events("tests/bench/data/timeslice_hour_4tenants.cfg", sets, 4, 3.0);
}

/* Under MPS and Green Contexts the kernels of a merged op that run with nothing else on the GPU
 * are timed as they were seen to run alone, without the solver: the same results, byte for
 * byte, with fewer of the solver's completions (each a solve); a crash while one runs so puts it
 * back on the solver first. */
static void expect_same_with_fewer_solves(const char *cfg, const char *const *sets, size_t n,
                                          double fewer)
{
    expect_same_as_kernel_by_kernel(cfg, sets, n, 1, fewer);
}

Test(merge, mps_kernels_alone_are_timed_without_the_solver_with_the_same_results)
{
    const char *sets[] = {"duration_s=3", "warmup_s=1"};
    expect_same_with_fewer_solves("tests/bench/data/mps_hour_4tenants.cfg", sets, 2, 1.3);
}

Test(merge, green_contexts_and_a_crash_under_mps_give_the_same_results)
{
    const char *gc[] = {"duration_s=3", "warmup_s=1"};
    expect_same_with_fewer_solves("scenarios/green_contexts_h100.cfg", gc, 2, 1.2);
    /* the MPS server's fault at 10 s takes down the tenants with kernels running */
    const char *fault[] = {"duration_s=14", "warmup_s=1"};
    expect_same_with_fewer_solves("scenarios/fault_mps_vs_mig_h100.cfg", fault, 2, 1.05);
}

Test(merge, a_kernel_alone_keeps_its_own_use_when_its_slot_is_taken_before_its_callback)
{
    /* MIG instances under MPS: a kernel ending alone frees its solver slot, and a kernel of
     * another instance (or one waiting for SMs) may start there before its callback reads
     * what it used; the utilisation was 0.05-0.25 % low when the record read the newcomer's */
    const char *sets[] = {"seed=4"};
    expect_same_as_kernel_by_kernel("scenarios/mig_layout_h100.cfg", sets, 1, 1.5, 1.01);
}

static double p50(const test_run_t *r, size_t i)
{
    return result_num(json_object_get(result_tenant(r, i), "latency_ms"), "p50");
}

Test(merge, a_request_alone_takes_as_long_merged)
{
    /* one request at a time: every kernel of the trace merged into one (tolerance 1) */
    const char *exact[] = {"duration_s=20",
                           "warmup_s=1",
                           "tenants.a.arrival.rate=2",
                           "tenants.b.arrival.rate=2",
                           "tenants.c.arrival.rate=2",
                           "tenants.d.arrival.rate=2"};
    const char *merged[] = {"duration_s=20",
                            "warmup_s=1",
                            "tenants.a.arrival.rate=2",
                            "tenants.b.arrival.rate=2",
                            "tenants.c.arrival.rate=2",
                            "tenants.d.arrival.rate=2",
                            "fidelity.kernels=merged",
                            "fidelity.tolerance=1"};
    const char *cfg = "tests/bench/data/mps_hour_4tenants.cfg";
    test_run_t e = run_scenario(src_path(cfg), exact, 6);
    test_run_t m = run_scenario(src_path(cfg), merged, 8);
    double iso = result_num(result_tenant(&e, 0), "isolated_ms");
    /* a nanosecond per kernel merged at most (50 of them), within the histogram's 0.1 % */
    cr_expect_lt(fabs(p50(&m, 0) - p50(&e, 0)), 0.002 * iso, "p50 %.6f merged, %.6f exact",
                 p50(&m, 0), p50(&e, 0));
    cr_expect_lt(events_of(m.results) * 10, events_of(e.results));
    run_free(&e);
    run_free(&m);
}

Test(merge, merged_kernels_make_fewer_events_under_mps)
{
    const char *exact[] = {"duration_s=3", "warmup_s=1"};
    const char *merged[] = {"duration_s=3", "warmup_s=1", "fidelity.kernels=merged"};
    const char *cfg = "scenarios/compare_three_tenants_h100.cfg";
    test_run_t e = run_scenario(src_path(cfg), exact, 2);
    test_run_t m = run_scenario(src_path(cfg), merged, 3);
    cr_expect_lt((double)events_of(m.results), 0.8 * (double)events_of(e.results));
    for (size_t i = 0; i < 3; i++) {
        double te = result_num(result_tenant(&e, i), "throughput_rps");
        double tm = result_num(result_tenant(&m, i), "throughput_rps");
        cr_expect_lt(fabs(tm - te), 0.02 * te, "tenant %zu: %.2f merged, %.2f exact", i, tm, te);
    }
    run_free(&e);
    run_free(&m);
}

Test(merge, a_bad_fidelity_is_refused)
{
    const char *cfg = src_path("tests/bench/data/mps_hour_4tenants.cfg");
    const char *kind[] = {"fidelity.kernels=fast"};
    cr_expect(strstr(scenario_load_error(cfg, kind, 1), "fidelity.kernels") ||
              strstr(scenario_load_error(cfg, kind, 1), "kernels"));
    const char *tol[] = {"fidelity.kernels=merged", "fidelity.tolerance=2"};
    cr_expect(strstr(scenario_load_error(cfg, tol, 2), "tolerance"));
}
