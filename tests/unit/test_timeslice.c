/* test_timeslice.c: the time-slicing policy alone (exact schedules) and in whole runs. */
#include "helpers.h"
#include "timeslice.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(timeslice, .init = test_init);

struct log {
    colo_eq_t *eq;
    colo_time_t done_at[4];
    int order[8];
    int n;
};

static void record(void *obj, size_t ctx)
{
    struct log *l = obj;
    l->done_at[ctx] = l->eq->now;
    l->order[l->n++] = (int)ctx;
}

static void drain(colo_eq_t *eq)
{
    colo_event_t ev;
    while (colo_eq_pop(eq, &ev))
        ev.fn(ev.obj, ev.arg);
}

Test(timeslice, two_contexts_alternate_by_slice)
{
    colo_eq_t eq;
    colo_eq_init(&eq, 0);
    struct log l = {.eq = &eq};
    colo_ts_t ts;
    cr_assert_eq(colo_ts_init(&ts, &eq, 2, 1000, 0, record, &l, NULL), 0);
    colo_ts_submit(&ts, 0, 2500);
    colo_ts_submit(&ts, 1, 2500);
    drain(&eq);
    /* 0:[0,1000) 1:[1000,2000) 0:[2000,3000) 1:[3000,4000) 0:[4000,4500) 1:[4500,5000) */
    cr_assert_eq(l.done_at[0], 4500);
    cr_assert_eq(l.done_at[1], 5000);
    cr_assert_eq(ts.preemptions, 4);
    cr_assert_eq(ts.busy, 5000, "the GPU never runs two kernels at once");
    colo_ts_fini(&ts);
    colo_eq_fini(&eq);
}

Test(timeslice, switch_cost_is_paid_when_the_context_changes)
{
    colo_eq_t eq;
    colo_eq_init(&eq, 0);
    struct log l = {.eq = &eq};
    colo_ts_t ts;
    colo_ts_init(&ts, &eq, 2, 1000, 100, record, &l, NULL);
    colo_ts_submit(&ts, 0, 1500);
    colo_ts_submit(&ts, 1, 500);
    drain(&eq);
    /* load 0: [0,100) switch, [100,1100) run; slice ends with 1 waiting: switch [1100,1200),
     * 1 runs [1200,1700) done; switch back [1700,1800), 0 runs [1800,2300) done */
    cr_assert_eq(l.done_at[1], 1700);
    cr_assert_eq(l.done_at[0], 2300);
    cr_assert_eq(ts.switches, 3);
    cr_assert_eq(ts.switching, 300);
    colo_ts_fini(&ts);
    colo_eq_fini(&eq);
}

Test(timeslice, a_lone_context_keeps_the_gpu_past_its_slice)
{
    colo_eq_t eq;
    colo_eq_init(&eq, 0);
    struct log l = {.eq = &eq};
    colo_ts_t ts;
    colo_ts_init(&ts, &eq, 2, 1000, 100, record, &l, NULL);
    colo_ts_submit(&ts, 0, 5000);
    drain(&eq);
    cr_assert_eq(l.done_at[0], 5100, "one load, then 5 slices uninterrupted");
    cr_assert_eq(ts.preemptions, 0);
    cr_assert_eq(ts.switches, 1);
    cr_assert_eq(colo_ts_submit(&ts, 0, 10), 0);
    cr_assert_eq(colo_ts_submit(&ts, 0, 10), COLO_ESTATE, "one kernel at a time per context");
    colo_ts_fini(&ts);
    colo_eq_fini(&eq);
}

/* Whole runs: two identical tenants far above capacity. */
static double tput(const test_run_t *r, size_t i)
{
    return result_num(result_tenant(r, i), "throughput_rps");
}

Test(timeslice, two_saturating_tenants_each_get_about_half)
{
    const char *alone_sets[] = {"tenants.b.arrival.rate=0.001"};
    test_run_t alone = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), alone_sets, 1);
    test_run_t both = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    double solo = tput(&alone, 0), a = tput(&both, 0), b = tput(&both, 1);
    /* alone: one request per 600 us of kernels and their launches (isolated_ms) */
    double per_s = 1e3 / result_num(result_tenant(&alone, 0), "isolated_ms");
    cr_assert_float_eq(solo, per_s, per_s * 0.01);
    cr_assert(a > 0.45 * solo && a < 0.5 * solo, "a gets %.1f of %.1f", a, solo);
    cr_assert(b > 0.45 * solo && b < 0.5 * solo, "b gets %.1f of %.1f", b, solo);
    cr_assert_float_eq(a, b, 0.02 * a, "round robin is fair: %.1f vs %.1f", a, b);
    /* what is lost is the switching: the GPU runs kernels (600 us and three dispatch gaps per
     * request) or switches contexts (43 us each), nothing else. A request ends with its
     * context's stream empty while the host launches the next one, so the other context gets
     * the GPU at every request, not only when a 1024 us slice expires. */
    json_t *gpu = json_object_get(both.results, "gpu");
    double busy = result_num(gpu, "busy_fraction"), sw = result_num(gpu, "switching_fraction");
    cr_assert_float_eq(busy + sw, 1.0, 1e-3, "busy %g + switching %g", busy, sw);
    colo_gpu_t *g = open_gpu("h100-sxm");
    double expect = busy * 1e6 / (600.0 + 3 * g->launch.dispatch_us);
    colo_gpu_free(g);
    cr_assert_float_eq(a + b, expect, 0.01 * expect, "a+b = %.1f, expected %.1f", a + b, expect);
    cr_assert_gt(json_integer_value(json_object_get(gpu, "context_switches")),
                 (long long)(0.9 * (a + b) * 18), "a switch per request (18 s measured)");
    run_free(&alone);
    run_free(&both);
}

Test(timeslice, without_switch_cost_the_split_is_exactly_half)
{
    const char *sets[] = {"sharing.switch_us=0"};
    test_run_t both = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), sets, 1);
    double half = 1e3 / result_num(result_tenant(&both, 0), "isolated_ms") / 2;
    cr_assert_float_eq(tput(&both, 0), half, 0.005 * half);
    cr_assert_float_eq(tput(&both, 1), half, 0.005 * half);
    json_t *gpu = json_object_get(both.results, "gpu");
    cr_assert_float_eq(result_num(gpu, "busy_fraction"), 1.0, 1e-9,
                       "busy all the time, never more");
    run_free(&both);
}

Test(timeslice, a_tenant_alone_runs_at_its_traced_speed)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/one_tenant.cfg"), NULL, 0);
    json_t *t = result_tenant(&r, 0), *lat = json_object_get(t, "latency_ms");
    /* h2d: 10 us + 1 MiB / 54.8 GB/s = 29135 ns; the host returns and launches the first
     * kernel, which starts launch.start_us later; kernels 100+200+300 us back to back, each after
     * the stream's dispatch gap (the host's 5 us gap and launches are hidden behind the first
     * kernel); d2h: 10 us + 4096 B / 46.8 GB/s = 10088 ns */
    colo_gpu_t *g = open_gpu("h100-sxm");
    double expect =
        (29135 + g->launch.start_us * 1e3 + 2 * g->launch.dispatch_us * 1e3 + 600000 + 10088) / 1e6;
    colo_gpu_free(g);
    cr_assert_float_eq(result_num(t, "isolated_ms"), expect, 1e-12);
    cr_assert_float_eq(result_num(lat, "p50"), expect, 1e-12);
    cr_assert_float_eq(result_num(lat, "max"), expect, 1e-12, "no request ever waits");
    cr_assert_eq(json_integer_value(json_object_get(t, "completed")), 450);
    cr_assert_float_eq(result_num(t, "slo_attainment"), 1.0, 0);
    run_free(&r);
}

Test(timeslice, a_neighbour_slows_a_tenant_down)
{
    const char *quiet[] = {"tenants.a.arrival.rate=200", "tenants.b.arrival.rate=0.001"};
    const char *busy[] = {"tenants.a.arrival.rate=200", "tenants.b.arrival.rate=1000"};
    test_run_t q = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), quiet, 2);
    test_run_t b = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), busy, 2);
    double p99q = result_num(json_object_get(result_tenant(&q, 0), "latency_ms"), "p99");
    double p99b = result_num(json_object_get(result_tenant(&b, 0), "latency_ms"), "p99");
    cr_assert_gt(p99b, 1.5 * p99q, "time-slicing does not isolate: p99 %.3f vs %.3f", p99b, p99q);
    run_free(&q);
    run_free(&b);
}

/* Copies move bytes through the DRAM while a context's kernel, timed alone, streams through it:
 * the kernel keeps its rate and the copies get what is left, so no interval draws more than the
 * DRAM can give (before issue 40 each was given the whole of it: 1.0004 of the bandwidth). */
Test(timeslice, copies_share_the_dram_with_the_kernel_that_owns_the_gpu)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/timeslice_copies.cfg"), NULL, 0);
    json_t *dram = json_object_get(
        json_object_get(json_object_get(r.results, "utilisation"), "series"), "dram");
    cr_assert_gt(json_array_size(dram), 1000);
    size_t i;
    json_t *x;
    double most = 0;
    json_array_foreach(dram, i, x) most = fmax(most, json_number_value(x));
    cr_expect_leq(most, 1 + 1e-9, "an interval drew %.9f of the DRAM's bandwidth", most);
    cr_expect_gt(most, 0.95, "the kernel streams through the DRAM: %.9f", most);
    run_free(&r);
}
