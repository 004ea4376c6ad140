/* test_kernel_model.c: decomposition of traced kernels and their durations on other GPUs. */
#include "helpers.h"
#include "kernel_model.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(kernel_model, .init = test_init);

static colo_op_t kernel(unsigned blocks, unsigned threads, colo_time_t dur, colo_kclass_t c)
{
    colo_op_t k;
    memset(&k, 0, sizeof k);
    k.type = COLO_OP_KERNEL;
    k.name = "k";
    k.grid[0] = blocks;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = threads;
    k.block[1] = k.block[2] = threads ? 1 : 0;
    k.registers = k.shared_bytes = -1;
    k.dram_bytes = k.l2_bytes = k.flops = -1;
    k.duration = dur;
    k.kclass = c;
    return k;
}

static colo_kernel_work_t work(const colo_op_t *k, const colo_gpu_t *src, const colo_gpu_t *dst)
{
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(k, src, dst, &w, "t.json", 0, &err), 0, "%s", err.text);
    return w;
}

Test(kernel_model, every_traced_kernel_alone_on_its_gpu_takes_its_traced_time)
{
    static const char *const traces[] = {"traces/resnet50_b4_v100.json", "traces/bert_b2_v100.json",
                                         "traces/mobilenetv2_b4_v100.json",
                                         "traces/transformer_xl_b4_v100.json",
                                         "tests/fixtures/tiny_h100.json"};
    for (size_t t = 0; t < sizeof traces / sizeof traces[0]; t++) {
        colo_error_t err;
        colo_error_clear(&err);
        colo_trace_t *tr;
        cr_assert_eq(colo_trace_load(src_path(traces[t]), &tr, &err), 0);
        colo_gpu_t *g = open_gpu(tr->gpu);
        for (size_t i = 0; i < tr->n_ops; i++) {
            if (tr->ops[i].type != COLO_OP_KERNEL) continue;
            colo_kernel_work_t w = work(&tr->ops[i], g, g);
            double d = (double)colo_kernel_duration(&w, g), T = (double)tr->ops[i].duration;
            cr_assert(fabs(d - T) <= 0.01 * T, "%s op %zu: %g ns vs traced %g", traces[t], i, d, T);
        }
        colo_gpu_free(g);
        colo_trace_free(tr);
    }
}

Test(kernel_model, a_quarter_of_the_sms_costs_four_times_only_with_enough_waves)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    int n = h->sm.count, q = n / 4;
    /* 256 threads: 8 blocks per SM; one full wave on the whole GPU is 8 x 132 blocks */
    colo_op_t few = kernel((unsigned)(8 * q), 256, 100000, COLO_KCLASS_COMPUTE);
    colo_op_t many = kernel((unsigned)(8 * 8 * n), 256, 100000, COLO_KCLASS_COMPUTE);
    colo_op_t tiny = kernel(20, 256, 100000, COLO_KCLASS_COMPUTE);
    colo_kernel_work_t wf = work(&few, h, h), wm = work(&many, h, h), wt = work(&tiny, h, h);
    cr_assert_float_eq(colo_kernel_compute_ns(&wf, q) / colo_kernel_compute_ns(&wf, n), 1.0, 1e-9,
                       "one wave fits on the quarter: no slower");
    cr_assert_float_eq(colo_kernel_compute_ns(&wt, q), colo_kernel_compute_ns(&wt, n), 1e-9,
                       "fewer blocks than SMs: no slower");
    double r = colo_kernel_compute_ns(&wm, q) / colo_kernel_compute_ns(&wm, n);
    cr_assert(fabs(r - 4.0) < 0.05 * 4, "8 waves on all, 32 on a quarter: %g", r);
    colo_gpu_free(h);
}

Test(kernel_model, few_sms_cannot_saturate_dram)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    colo_op_t wide = kernel(1056, 256, 100000, COLO_KCLASS_MEMORY);
    colo_op_t narrow = kernel(4, 256, 100000, COLO_KCLASS_MEMORY);
    colo_kernel_work_t ww = work(&wide, h, h), wn = work(&narrow, h, h);
    double full = colo_gpu_dram_rate(h);
    cr_assert_float_eq(colo_kernel_memory_rate(&ww, h->sm.count, full), full, 1e-9);
    cr_assert_float_eq(colo_kernel_memory_rate(&wn, h->sm.count, full), 4 * h->memory.per_sm_gbps,
                       1e-9);
    cr_assert_float_eq(wn.dram_bytes, 100000 * 4 * h->memory.per_sm_gbps, 1e-3,
                       "its bytes are what 4 SMs move in its duration");
    colo_gpu_free(h);
}

Test(kernel_model, moving_to_a_bigger_gpu_scales_compute_and_memory_apart)
{
    colo_gpu_t *v = open_gpu("v100-sxm2"), *h = open_gpu("h100-sxm");
    /* 16 waves on the V100 (80 SMs x 8 blocks) */
    colo_op_t c = kernel(80 * 8 * 16, 256, 1000000, COLO_KCLASS_COMPUTE);
    colo_op_t m = kernel(80 * 8 * 16, 256, 1000000, COLO_KCLASS_MEMORY);
    colo_kernel_work_t wc = work(&c, v, h), wm = work(&m, v, h);
    double tc = (double)colo_kernel_duration(&wc, h), tm = (double)colo_kernel_duration(&wm, h);
    /* compute: per-SM FP32 rate 1980x128 vs 1530x64 and 132 vs 80 SMs (waves: 10 vs 16) */
    double expect_c = 1e6 * (10.0 / 16.0) * (1530.0 * 64) / (1980.0 * 128);
    cr_assert(fabs(tc - expect_c) < 0.01 * expect_c, "compute-bound: %g vs %g", tc, expect_c);
    double expect_m = 1e6 * colo_gpu_dram_rate(v) / colo_gpu_dram_rate(h);
    cr_assert(fabs(tm - expect_m) < 0.01 * expect_m, "memory-bound: %g vs %g", tm, expect_m);
    colo_gpu_free(v);
    colo_gpu_free(h);
}

Test(kernel_model, a_block_too_big_for_the_target_is_refused)
{
    colo_gpu_t *h = open_gpu("h100-sxm"), *v = open_gpu("v100-sxm2");
    colo_op_t k = kernel(100, 256, 1000, COLO_KCLASS_COMPUTE);
    k.shared_bytes = 200 * 1024; /* fits Hopper's 227 KB, not Volta's 96 KB */
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(&k, h, v, &w, "t.json", 7, &err), COLO_ERANGE);
    cr_assert_str_eq(err.key, "ops[7]");
    cr_assert(strstr(err.text, "shared memory"), "%s", err.text);
    colo_gpu_free(h);
    colo_gpu_free(v);
}
