/* test_requests.c: how a request runs: the host's launches and the GPU's dispatch gaps, CUDA
 * graphs, a launch-bound request on a small partition, several requests in flight per tenant
 * (instances), and batches beyond the traced sizes. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(requests, .init = test_init);

/* A tenant of the fixture trace path on gpu, as colosim trace --on builds one. */
static colo_tenant_cfg_t tenant(colo_trace_t *t, colo_gpu_t *src, colo_variant_t *v, bool graphs)
{
    *v = (colo_variant_t){t, src, t->path, false};
    colo_tenant_cfg_t c;
    memset(&c, 0, sizeof c);
    c.trace = t;
    c.trace_gpu = src;
    c.n_variants = 1;
    c.variants = v;
    c.instances = 1;
    c.cuda_graphs = graphs;
    return c;
}

static double request_us(const char *trace, const char *gpu, const char *mig, int sms,
                         bool graphs)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    cr_assert_eq(colo_trace_load(src_path(trace), &t, &err), 0, "%s", err.text);
    colo_gpu_t *src = open_gpu(t->gpu), *g = open_gpu(gpu);
    colo_variant_t v;
    colo_tenant_cfg_t c = tenant(t, src, &v, graphs);
    colo_place_rates_t pr =
        colo_place_rates_of(g, mig ? colo_gpu_mig_profile(g, mig) : NULL, sms);
    colo_time_t req;
    cr_assert_eq(colo_request_time(&c, g, pr, t->batch, &req, NULL, &err), 0, "%s", err.text);
    colo_gpu_free(src);
    colo_gpu_free(g);
    colo_trace_free(t);
    return (double)req / 1e3;
}

/* 200 kernels of 2 us: each costs its dispatch gap and duration (3 us) or the host's launch
 * (2.6 us on an A100), whichever is longer; a CUDA graph takes the host out. */
Test(requests, launches_and_dispatch_gaps_set_a_launch_bound_request)
{
    colo_gpu_t *g = open_gpu("a100-40gb");
    double per = g->launch.dispatch_us + 2.0;
    double plain = request_us("tests/fixtures/tiny_kernels_a100.json", "a100-40gb", NULL, 0, false);
    double expect = g->launch.start_us - g->launch.dispatch_us +
                    200 * (per > g->launch.host_us ? per : g->launch.host_us);
    cr_assert_float_eq(plain, expect, 0.01, "%g us, expected %g", plain, expect);
    double graph = request_us("tests/fixtures/tiny_kernels_a100.json", "a100-40gb", NULL, 0, true);
    cr_assert_leq(graph, plain, "a graph is never slower");
    /* make the host the bottleneck: with 4 us per launch the graph saves 1 us per kernel */
    g->launch.host_us = 4.0;
    colo_gpu_free(g);
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    cr_assert_eq(colo_trace_load(src_path("tests/fixtures/tiny_kernels_a100.json"), &t, &err), 0);
    colo_gpu_t *slow = open_gpu("a100-40gb"), *src = open_gpu("a100-40gb");
    slow->launch.host_us = 4.0;
    colo_variant_t v;
    colo_tenant_cfg_t c = tenant(t, src, &v, false);
    colo_place_rates_t pr = colo_place_rates_of(slow, NULL, 0);
    colo_time_t a, b;
    cr_assert_eq(colo_request_time(&c, slow, pr, 1, &a, NULL, &err), 0);
    c.cuda_graphs = true;
    cr_assert_eq(colo_request_time(&c, slow, pr, 1, &b, NULL, &err), 0);
    cr_assert_float_eq((double)(a - b) / 1e3, 199 * (4.0 - 3.0), 0.5,
                       "host-bound: %g us plain, %g us in a graph", (double)a / 1e3,
                       (double)b / 1e3);
    colo_gpu_free(slow);
    colo_gpu_free(src);
    colo_trace_free(t);
}

/* As measured MIG studies report: a launch-bound request keeps its latency on a 1g instance;
 * a compute-heavy one slows with its share of the SMs. */
Test(requests, a_launch_bound_request_keeps_its_latency_on_a_1g_instance)
{
    const char *tiny = "tests/fixtures/tiny_kernels_a100.json";
    double whole = request_us(tiny, "a100-40gb", NULL, 0, false);
    double small = request_us(tiny, "a100-40gb", "1g.5gb", 0, false);
    cr_assert_leq(fabs(small - whole), 0.10 * whole, "launch-bound: %g us whole, %g us on 1g",
                  whole, small);
    const char *heavy = "traces/resnet50_b32_v100.json";
    double hw = request_us(heavy, "a100-40gb", NULL, 0, false);
    double hs = request_us(heavy, "a100-40gb", "1g.5gb", 0, false);
    cr_assert_gt(hs, 4.0 * hw, "compute-heavy: %g us whole, %g us on 14 of 108 SMs", hw, hs);
    cr_assert_lt(hs, 108.0 / 14.0 * hw * 1.05, "no worse than the SM share");
}

static json_t *tenant_a(test_run_t *r)
{
    return result_tenant(r, 0);
}

/* instances = N: at most N requests in flight, every request accounted for, and more
 * throughput when one request does not fill the GPU. */
Test(requests, instances_overlap_requests_and_never_exceed_n)
{
    static const char *const modes[] = {"mps", "timeslice", "green", "mig"};
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        char mode[64];
        snprintf(mode, sizeof mode, "sharing.mode=%s", modes[m]);
        const char *one[] = {mode};
        const char *four[] = {mode, "tenants.a.instances=4"};
        test_run_t r1 = run_scenario(src_path("tests/fixtures/instances.cfg"), one, 1);
        test_run_t r4 = run_scenario(src_path("tests/fixtures/instances.cfg"), four, 2);
        json_t *a1 = tenant_a(&r1), *a4 = tenant_a(&r4);
        cr_assert_eq(json_integer_value(json_object_get(a4, "instances")), 4);
        cr_assert_eq(json_integer_value(json_object_get(a4, "instances_busy_max")), 4,
                     "%s: saturated, all four instances busy at once", modes[m]);
        cr_assert_eq(json_integer_value(json_object_get(a1, "instances_busy_max")), 1);
        for (int k = 0; k < 2; k++) {
            json_t *a = k ? a4 : a1;
            cr_assert_eq(json_integer_value(json_object_get(a, "arrived")),
                         json_integer_value(json_object_get(a, "completed")) +
                             json_integer_value(json_object_get(a, "dropped")) +
                             json_integer_value(json_object_get(a, "in_flight")),
                         "%s: every request accounted for", modes[m]);
        }
        double t1 = result_num(a1, "throughput_rps"), t4 = result_num(a4, "throughput_rps");
        cr_assert_gt(t4, 1.05 * t1, "%s: requests overlap: %g/s with 4 instances, %g/s with one",
                     modes[m], t4, t1);
        cr_assert_lt(t4, 4.0 * t1, "%s: no more than four at once", modes[m]);
        run_free(&r1);
        run_free(&r4);
    }
}

/* Under time-slicing several instances share their process's context: a neighbour still gets
 * the GPU in slices, and the instances' kernels run together inside their context's slices. */
Test(requests, instances_under_time_slicing_share_their_context)
{
    const char *sets[] = {"sharing.mode=timeslice", "tenants.a.instances=3",
                          "tenants.b.arrival.rate=2000"};
    test_run_t r = run_scenario_tl(src_path("tests/fixtures/instances.cfg"), sets, 3, 1.0, 1.05);
    json_t *a = result_tenant(&r, 0), *b = result_tenant(&r, 1);
    cr_assert_gt(result_num(b, "throughput_rps"), 100, "the neighbour is served");
    cr_assert_eq(json_integer_value(json_object_get(a, "instances_busy_max")), 3);
    json_t *gpu = json_object_get(r.results, "gpu");
    cr_assert_gt(json_integer_value(json_object_get(gpu, "context_switches")), 100);
    /* on the timeline, two of a's instances run kernels at the same moment */
    json_t *ev = json_is_array(r.timeline) ? r.timeline
                                            : json_object_get(r.timeline, "traceEvents");
    size_t n = json_array_size(ev);
    cr_assert_gt(n, 100);
    int overlap = 0;
    for (size_t i = 0; i < n && !overlap; i++) {
        json_t *e = json_array_get(ev, i);
        if (json_integer_value(json_object_get(e, "pid")) != COLO_TL_TENANTS) continue;
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (!cat || strcmp(cat, "kernel")) continue;
        double s = json_number_value(json_object_get(e, "ts"));
        double d = json_number_value(json_object_get(e, "dur"));
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        for (size_t j = 0; j < n && !overlap; j++) {
            json_t *f = json_array_get(ev, j);
            const char *cf = json_string_value(json_object_get(f, "cat"));
            if (!cf || strcmp(cf, "kernel") ||
                json_integer_value(json_object_get(f, "pid")) != COLO_TL_TENANTS)
                continue;
            json_int_t tf = json_integer_value(json_object_get(f, "tid"));
            if (tf == tid || (tf - 1) % 100000 != 0 || (tid - 1) % 100000 != 0) continue;
            double s2 = json_number_value(json_object_get(f, "ts"));
            overlap = s2 >= s && s2 < s + d;
        }
    }
    cr_assert(overlap, "kernels of two instances of one context overlap");
    run_free(&r);
}

/* A batch larger than every traced one runs the largest trace's kernels grown by the kernel
 * model; a smaller one, the smallest trace's shrunk: not refused, not padded. */
Test(requests, batches_beyond_the_traced_sizes_scale_by_the_kernel_model)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    cr_assert_eq(colo_trace_load(src_path("traces/resnet50_b4_v100.json"), &t, &err), 0);
    colo_gpu_t *g = open_gpu("v100-sxm2"), *src = open_gpu("v100-sxm2");
    colo_variant_t v;
    colo_tenant_cfg_t c = tenant(t, src, &v, false);
    c.max_batch = 64;
    colo_place_rates_t pr = colo_place_rates_of(g, NULL, 0);
    double prev = 0, at4 = 0;
    for (int b = 1; b <= 64; b *= 2) {
        colo_time_t req, ker;
        cr_assert_eq(colo_request_time(&c, g, pr, b, &req, &ker, &err), 0);
        if (b == 4) {
            at4 = (double)ker;
            cr_assert_eq(ker, t->kernel_time, "the traced batch runs as traced");
        }
        cr_assert_gt((double)req, prev, "batch %d takes longer than the one before", b);
        prev = (double)req;
    }
    colo_time_t k1, k32;
    cr_assert_eq(colo_request_time(&c, g, pr, 1, NULL, &k1, &err), 0);
    cr_assert_eq(colo_request_time(&c, g, pr, 32, NULL, &k32, &err), 0);
    cr_assert_gt((double)k1, at4 / 4, "sub-linear below: batch 1 costs more than a quarter");
    cr_assert_lt((double)k32, 8 * at4, "no more than linear above");
    colo_gpu_free(g);
    colo_gpu_free(src);
    colo_trace_free(t);
}
