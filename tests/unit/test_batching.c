/* test_batching.c: dynamic batching, queue limits and deadlines. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(batching, .init = test_init);

static test_run_t run(const char *const *sets, size_t n)
{
    return run_scenario(src_path("tests/fixtures/batching.cfg"), sets, n);
}

Test(batching, at_low_load_every_batch_is_one_request_at_single_inference_latency)
{
    test_run_t r = run(NULL, 0);
    json_t *a = result_tenant(&r, 0);
    cr_assert_float_eq(result_num(a, "mean_batch"), 1.0, 1e-12);
    /* batch 1: the batch-1 trace's 600 us of kernels, its launch and dispatch gaps */
    colo_gpu_t *g = open_gpu("h100-sxm");
    double expect = 0.6 + (g->launch.start_us + 2 * g->launch.dispatch_us) * 1e-3;
    colo_gpu_free(g);
    cr_assert_float_eq(result_num(a, "isolated_ms"), expect, 1e-9, "batch 1: the batch-1 trace");
    cr_assert_float_eq(result_num(json_object_get(a, "latency_ms"), "p50"), expect, 1e-9);
    run_free(&r);
}

Test(batching, at_saturation_batches_fill_and_throughput_rises)
{
    const char *sat[] = {"tenants.a.arrival.rate=20000"};
    const char *one[] = {"tenants.a.arrival.rate=20000", "tenants.a.batching.max_batch=1"};
    test_run_t b = run(sat, 1), u = run(one, 2);
    json_t *ab = result_tenant(&b, 0), *au = result_tenant(&u, 0);
    cr_assert_gt(result_num(ab, "mean_batch"), 7.9, "batches fill: %g",
                 result_num(ab, "mean_batch"));
    cr_assert_float_eq(result_num(au, "mean_batch"), 1.0, 1e-12);
    /* batch 8 takes 1.2 ms for 8 requests, batch 1 0.6 ms for one (each and their launches
     * about 5 us more): about 4x the throughput */
    double tb = result_num(ab, "throughput_rps"), tu = result_num(au, "throughput_rps");
    cr_assert(fabs(tb / tu - 4.0) < 0.1, "throughput %.0f vs %.0f", tb, tu);
    cr_assert(fabs(tb - 8 / 1.2e-3) < 0.02 * 8 / 1.2e-3, "%.0f/s", tb);
    run_free(&b);
    run_free(&u);
}

Test(batching, sizes_between_traced_batches_are_interpolated)
{
    test_run_t r = run(NULL, 0);
    const colo_tenant_cfg_t *c = &r.sc->tenants[0];
    cr_assert_eq(c->variants[0].trace->batch, 1, "sorted by batch");
    cr_assert(c->variants[1].aligned, "the same three kernels at batch 1 and 8");
    colo_time_t totals[2] = {600000, 1200000};
    colo_batch_plan_t p;
    colo_batch_plan(c, totals, 4, &p);
    cr_assert_eq(p.var, 1, "the batch-8 trace runs a batch of 4");
    cr_assert_eq(p.lo, 0, "each kernel between its batch-1 and batch-8 times");
    cr_assert_float_eq(p.alpha, 3.0 / 7.0, 1e-12);
    cr_assert_float_eq(p.f, 1.0, 0);
    colo_batch_plan(c, totals, 1, &p);
    cr_assert(p.var == 0 && p.lo == 0 && p.f == 1.0, "a traced batch runs as traced");
    colo_batch_plan(c, totals, 8, &p);
    cr_assert(p.var == 1 && p.lo == 1 && p.f == 1.0);
    run_free(&r);
}

Test(batching, a_full_queue_and_a_deadline_drop_with_their_reasons)
{
    const char *full[] = {"tenants.a.arrival.rate=20000", "tenants.a.queue_limit=16"};
    const char *late[] = {"tenants.a.arrival.rate=20000", "tenants.a.deadline_ms=5"};
    test_run_t f = run(full, 2), l = run(late, 2);
    json_t *af = result_tenant(&f, 0), *al = result_tenant(&l, 0);
    json_t *wf = json_object_get(af, "dropped_by_reason"),
           *wl = json_object_get(al, "dropped_by_reason");
    cr_assert_gt(json_integer_value(json_object_get(wf, "queue_full")), 100000);
    cr_assert_eq(json_integer_value(json_object_get(wf, "deadline")), 0);
    cr_assert_gt(json_integer_value(json_object_get(wl, "deadline")), 100000);
    /* whoever is served waited less than the deadline, plus its batch's run (1.2 ms of
     * kernels, a few us of launches) */
    cr_assert_leq(result_num(json_object_get(al, "latency_ms"), "max"), 5 + 1.21);
    for (int k = 0; k < 2; k++) {
        json_t *a = k ? al : af;
        cr_assert_eq(json_integer_value(json_object_get(a, "arrived")),
                     json_integer_value(json_object_get(a, "completed")) +
                         json_integer_value(json_object_get(a, "dropped")) +
                         json_integer_value(json_object_get(a, "in_flight")));
    }
    run_free(&f);
    run_free(&l);
}
