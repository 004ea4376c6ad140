/* test_host.c: the host side of inference and a deployment's precision (docs/model.md, "The
 * host" and "Precision"), properties that could be false: a host-bound request keeps its
 * latency on a 1g slice and under a 20 % MPS cap where a GPU-bound one does not; more dispatching
 * processes than cores stretch host time in proportion, and tenants of one process (Green
 * Contexts) take turns in its interpreter; an FP16 GEMM beats its FP32 form on tensor-core GPUs;
 * a precision without its unit is refused; an FP8 KV cache holds twice the tokens. */
#include "helpers.h"
#include "kernel_model.h"
#include "llm_cfg.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(host, .init = test_init);

static double mean_latency(const char *fixture, const char *const *sets, size_t n, size_t tenant)
{
    test_run_t r = run_scenario(src_path(fixture), sets, n);
    json_t *lat = json_object_get(result_tenant(&r, tenant), "latency_ms");
    double v = result_num(lat, "mean");
    run_free(&r);
    cr_assert_gt(v, 0);
    return v;
}

static const char *const SLICE = "tests/fixtures/host/one_slice.cfg";

/* 1g.10gb over 7g.80gb, for a trace at a batch and a framework */
static double slice_ratio(const char *trace, int batch, const char *framework)
{
    char t[160], f[96], b[64], c[64];
    snprintf(t, sizeof t, "tenants.a.trace=../../../traces/%s", trace);
    snprintf(f, sizeof f, "tenants.a.framework=%s", framework);
    snprintf(b, sizeof b, "tenants.a.batching.max_batch=%d", batch);
    snprintf(c, sizeof c, "tenants.a.arrival.clients=%d", batch);
    const char *whole[] = {t, f, b, c};
    const char *slice[] = {t, f, b, c, "sharing.instances.i.profile=1g.10gb"};
    return mean_latency(SLICE, slice, 5, 0) / mean_latency(SLICE, whole, 4, 0);
}

Test(host, a_host_bound_request_keeps_its_latency_on_a_1g_slice)
{
    /* ResNet-50 at batch 1 in eager PyTorch: 175 launches of 34.8 us (6.1 ms), more than its
     * kernels take even on the slice */
    double eager = slice_ratio("resnet50_b4_v100.json", 1, "pytorch_eager");
    cr_expect_lt(eager, 1.05, "host-bound: 1g over 7g %.3f", eager);
    double graphs = slice_ratio("resnet50_b4_v100.json", 1, "cuda_graphs");
    cr_expect_gt(graphs, 1.3, "the same kernels from a CUDA graph: 1g over 7g %.3f", graphs);
    /* batch 32: GPU-bound even in eager mode */
    double big = slice_ratio("resnet50_b32_v100.json", 32, "pytorch_eager");
    cr_expect_gt(big, 3.0, "GPU-bound: 1g over 7g %.3f", big);
}

/* One eager tenant of a trace alone under MPS (the host at reference speed): its latency under a
 * 20 % active-thread cap over none. */
static double cap_ratio(const char *trace)
{
    char t[256];
    snprintf(t, sizeof t,
             "tenants=({ name = \"a\"; trace = \"../../../traces/%s\"; framework = "
             "\"pytorch_eager\"; arrival = { process = \"closed\"; clients = 1; }; })",
             trace);
    const char *alone[] = {t, "host.speed=1.0"};
    const char *capped[] = {t, "host.speed=1.0", "tenants.a.active_thread_percentage=20"};
    static const char *const F = "tests/fixtures/host/four_eager.cfg";
    return mean_latency(F, capped, 3, 0) / mean_latency(F, alone, 2, 0);
}

Test(host, a_host_bound_request_keeps_its_latency_under_a_20_percent_mps_cap)
{
    double host = cap_ratio("resnet50_b4_v100.json"), gpu = cap_ratio("resnet50_b32_v100.json");
    cr_expect_lt(host, 1.05, "eager ResNet-50 b4: 20 %% cap over none %.3f", host);
    cr_expect_gt(gpu, 2.0, "eager ResNet-50 b32 (GPU-bound): 20 %% cap over none %.3f", gpu);
}

static const char *const FOUR = "tests/fixtures/host/four_eager.cfg";

Test(host, one_interpreter_stays_one_with_unlimited_cores_or_no_host_in_the_gpu_file)
{
    const char *green8[] = {"host.cores=8",     "sharing.mode=green", "tenants.a.sms=32",
                            "tenants.b.sms=32", "tenants.c.sms=32",   "tenants.d.sms=32"};
    const char *green0[] = {"host.cores=0",     "sharing.mode=green", "tenants.a.sms=32",
                            "tenants.b.sms=32", "tenants.c.sms=32",   "tenants.d.sms=32"};
    /* h100-pcie's file gives no host cores: not limited, as 0 */
    const char *pcie[] = {"gpu=h100-pcie",    "host={ speed = 0.25; }", "sharing.mode=green",
                          "tenants.a.sms=24", "tenants.b.sms=24",       "tenants.c.sms=24",
                          "tenants.d.sms=24"};
    double g8 = mean_latency(FOUR, green8, 6, 0), g0 = mean_latency(FOUR, green0, 6, 0),
           gp = mean_latency(FOUR, pcie, 7, 0);
    cr_expect_float_eq(g0, g8, 1e-9, "cores 0 %.3f ms, 8 %.3f", g0, g8);
    cr_expect(gp > 80.0, "four threads of one interpreter on an H100 PCIe: %.2f ms", gp);
}

Test(host, a_crashed_process_gives_its_cores_back)
{
    /* tenant a crashes at 1 s and recovers; the run's end checks the host's accounts
     * (colo_sim_check), and the others' host time is back to their own once it is down */
    const char *sets[] = {"host.cores=2", "faults=({ tenant = \"a\"; at_s = 1.0; })",
                          "sharing.recovery_s=0.5"};
    test_run_t r = run_scenario(src_path(FOUR), sets, 3);
    cr_expect_gt(result_num(result_tenant(&r, 0), "faults"), 0);
    run_free(&r);
}

Test(host, more_dispatching_processes_than_cores_stretch_host_time_in_proportion)
{
    const char *c4[] = {"host.cores=4"}, *c2[] = {"host.cores=2"}, *c1[] = {"host.cores=1"};
    double l4 = mean_latency(FOUR, c4, 1, 0), l2 = mean_latency(FOUR, c2, 1, 0),
           l1 = mean_latency(FOUR, c1, 1, 0);
    /* host-bound: 151 launches of 139 us, 21 ms a request, alone on its core */
    cr_expect(l4 > 20.0 && l4 < 24.0, "four processes on four cores: %.2f ms", l4);
    cr_expect(l2 / l4 > 1.85 && l2 / l4 < 2.1, "on two cores: x%.3f", l2 / l4);
    cr_expect(l1 / l4 > 3.7 && l1 / l4 < 4.2, "on one core: x%.3f", l1 / l4);
    /* unlimited cores: as with four */
    const char *c0[] = {"host.cores=0"};
    cr_expect_float_eq(mean_latency(FOUR, c0, 1, 0), l4, 1e-9);
    /* the results say when the cores were all asked for, and not when they were not */
    test_run_t r1 = run_scenario(src_path(FOUR), c1, 1), r4 = run_scenario(src_path(FOUR), c4, 1);
    json_t *w1 = json_array_get(json_object_get(r1.results, "warnings"), 0);
    cr_expect(w1 && strcmp(json_string_value(json_object_get(w1, "kind")), "host_saturated") == 0);
    cr_expect_eq(json_array_size(json_object_get(r4.results, "warnings")), 0);
    run_free(&r1);
    run_free(&r4);
}

Test(host, green_contexts_put_every_tenant_in_one_process_and_its_interpreter)
{
    /* under MPS four processes on four cores; Green Contexts are made in one process, whose
     * Python threads take turns: four times the host time however many cores */
    const char *mps[] = {"host.cores=8"};
    const char *green[] = {"host.cores=8",     "sharing.mode=green", "tenants.a.sms=32",
                           "tenants.b.sms=32", "tenants.c.sms=32",   "tenants.d.sms=32"};
    double m = mean_latency(FOUR, mps, 1, 0), g = mean_latency(FOUR, green, 6, 0);
    cr_expect(g / m > 3.7 && g / m < 4.2, "green over MPS: x%.3f", g / m);
    /* a C++ runtime's threads run side by side */
    const char *trt[] = {"host.cores=8",
                         "sharing.mode=green",
                         "tenants.a.sms=32",
                         "tenants.b.sms=32",
                         "tenants.c.sms=32",
                         "tenants.d.sms=32",
                         "tenants.a.framework=tensorrt",
                         "tenants.b.framework=tensorrt",
                         "tenants.c.framework=tensorrt",
                         "tenants.d.framework=tensorrt"};
    const char *trt_mps[] = {"host.cores=8", "tenants.a.framework=tensorrt",
                             "tenants.b.framework=tensorrt", "tenants.c.framework=tensorrt",
                             "tenants.d.framework=tensorrt"};
    double tg = mean_latency(FOUR, trt, 10, 0), tm = mean_latency(FOUR, trt_mps, 5, 0);
    cr_expect_lt(tg / tm, 1.5, "tensorrt: green over MPS x%.3f", tg / tm);
}

/* One FP32 GEMM kernel traced on src, alone on the whole of g, at precision p (AUTO: its own). */
static double gemm_us(const char *src, const char *g, colo_math_t p)
{
    colo_gpu_t *s = open_gpu(src), *d = open_gpu(g);
    colo_op_t k;
    memset(&k, 0, sizeof k);
    k.type = COLO_OP_KERNEL;
    k.name = (char *)"volta_sgemm_128x64_nn";
    k.grid[0] = 512;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.registers = -1;
    k.shared_bytes = -1;
    k.dram_bytes = -1;
    k.l2_bytes = -1;
    k.flops = -1;
    k.duration = 400000; /* 400 us on the V100 */
    k.kclass = COLO_KCLASS_COMPUTE;
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    colo_precision_t prec = {p, 4};
    cr_assert_eq(colo_kernel_work_at(&k, s, d, COLO_FP32_IEEE, &prec, &w, "t", 0, &err), 0, "%s",
                 err.text);
    double us =
        colo_kernel_alone_at(&w, d->sm.count, colo_gpu_dram_rate(d), colo_gpu_l2_rate(d)) / 1e3;
    colo_gpu_free(s);
    colo_gpu_free(d);
    return us;
}

Test(host, an_fp16_gemm_is_faster_than_its_fp32_form_on_tensor_core_gpus)
{
    const char *gpus[] = {"v100-sxm2", "tesla-t4", "a100-40gb", "h100-sxm", "l4"};
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++) {
        double fp32 = gemm_us("v100-sxm2", gpus[i], COLO_MATH_AUTO),
               fp16 = gemm_us("v100-sxm2", gpus[i], COLO_MATH_FP16);
        cr_expect_lt(fp16 * 1.5, fp32, "%s: FP16 %.1f us, FP32 %.1f us", gpus[i], fp16, fp32);
    }
    /* INT8 and FP8 at least as fast as FP16 where the GPU has them */
    cr_expect_leq(gemm_us("v100-sxm2", "h100-sxm", COLO_MATH_FP8),
                  gemm_us("v100-sxm2", "h100-sxm", COLO_MATH_FP16));
    cr_expect_leq(gemm_us("v100-sxm2", "a100-40gb", COLO_MATH_INT8),
                  gemm_us("v100-sxm2", "a100-40gb", COLO_MATH_FP16));
}

Test(host, a_precision_without_its_unit_is_refused)
{
    const char *fp8[] = {"tenants.a.precision=fp8"};
    const char *e = scenario_load_error(src_path(SLICE), fp8, 1);
    cr_expect(strstr(e, "tenants.[0].precision"), "%s", e);
    cr_expect(strstr(e, "FP8 tensor cores came with Hopper and Ada"), "%s", e);
    const char *v100[] = {"gpu=v100-sxm2", "tenants.a.precision=bf16"};
    e = scenario_load_error(src_path(FOUR), v100, 2);
    cr_expect(strstr(e, "BF16 tensor cores came with Ampere"), "%s", e);
    const char *bad[] = {"tenants.a.precision=fp4"};
    e = scenario_load_error(src_path(FOUR), bad, 1);
    cr_expect(strstr(e, "'fp4'"), "%s", e);
    const char *both[] = {"tenants.a.cuda_graphs=true"};
    e = scenario_load_error(src_path(FOUR), both, 1);
    cr_expect(strstr(e, "cuda_graphs = true"), "%s", e);
}

Test(host, an_fp8_kv_cache_holds_twice_the_tokens)
{
    const char *L = src_path("tests/fixtures/llm/one_llm.cfg");
    const char *fp16[] = {"tenants.llm.llm.kv_cache_gib=8.0"};
    const char *fp8[] = {"tenants.llm.llm.kv_cache_gib=8.0", "tenants.llm.precision=fp8"};
    colo_scenario_t *a = NULL, *b = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(L, fp16, 1, &a, &err), 0, "%s", err.text);
    cr_assert_eq(colo_scenario_load(L, fp8, 2, &b, &err), 0, "%s", err.text);
    long long ka = a->tenants[0].llm->kv_blocks, kb = b->tenants[0].llm->kv_blocks;
    cr_expect(kb >= 2 * ka && kb <= 2 * ka + 1, "FP16 %lld blocks, FP8 %lld", ka, kb);
    cr_expect_float_eq(b->tenants[0].llm->weights_gib, a->tenants[0].llm->weights_gib / 2, 1e-9);
    colo_scenario_free(a);
    colo_scenario_free(b);
    /* and its decode runs faster (FP8 weights stream half the bytes) */
    const char *i16[] = {"tenants.vision.arrival.rate=0.001"};
    const char *i8[] = {"tenants.vision.arrival.rate=0.001", "tenants.llm.precision=fp8"};
    test_run_t r16 = run_scenario(L, i16, 1), r8 = run_scenario(L, i8, 2);
    double t16 = result_num(
        json_object_get(json_object_get(result_tenant(&r16, 0), "llm"), "tpot_ms"), "mean");
    double t8 = result_num(
        json_object_get(json_object_get(result_tenant(&r8, 0), "llm"), "tpot_ms"), "mean");
    cr_expect_lt(t8, t16 * 0.9, "TPOT FP8 %.3f ms, FP16 %.3f", t8, t16);
    run_free(&r16);
    run_free(&r8);
}
