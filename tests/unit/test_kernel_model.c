/* test_kernel_model.c: decomposition of traced kernels and their durations on other GPUs. */
#include "helpers.h"
#include "kernel_model.h"

#include <criterion/criterion.h>
#include <dirent.h>
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
    cr_assert_eq(colo_kernel_work(k, src, dst, COLO_FP32_PYTORCH, &w, "t.json", 0, &err), 0, "%s", err.text);
    return w;
}

/* Every kernel of every committed trace (and a fixture), alone on the GPU it was traced on,
 * takes its traced duration. */
Test(kernel_model, every_traced_kernel_alone_on_its_gpu_takes_its_traced_time)
{
    char paths[64][512];
    size_t n = 0;
    DIR *d = opendir(src_path("traces"));
    cr_assert(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < 63) {
        size_t len = strlen(e->d_name);
        if (len > 5 && len < 256 && strcmp(e->d_name + len - 5, ".json") == 0)
            snprintf(paths[n++], sizeof paths[0], "traces/%.255s", e->d_name);
    }
    closedir(d);
    cr_assert_geq(n, 14, "the committed traces");
    snprintf(paths[n++], sizeof paths[0], "tests/fixtures/tiny_h100.json");
    for (size_t t = 0; t < n; t++) {
        colo_error_t err;
        colo_error_clear(&err);
        colo_trace_t *tr;
        cr_assert_eq(colo_trace_load(src_path(paths[t]), &tr, &err), 0, "%s", err.text);
        colo_gpu_t *g = open_gpu(tr->gpu);
        for (size_t i = 0; i < tr->n_ops; i++) {
            if (tr->ops[i].type != COLO_OP_KERNEL) continue;
            colo_kernel_work_t w = work(&tr->ops[i], g, g);
            double dur = (double)colo_kernel_duration(&w, g), T = (double)tr->ops[i].duration;
            cr_assert(fabs(dur - T) <= 0.01 * T, "%s op %zu: %g ns vs traced %g", paths[t], i, dur,
                      T);
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
    double floor_ns = h->launch.floor_us * 1e3;
    cr_assert_float_eq(wn.dram_bytes, (100000 - floor_ns) * 4 * h->memory.per_sm_gbps, 1e-3,
                       "its bytes are what 4 SMs move in its duration beyond the floor");
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
    /* the floor moves from the V100's to the H100's; the rest: compute by the per-SM FP32 rate
     * each sustains (1980x128 vs 1530x64 peak, times the sustained shares) and 132 vs 80 SMs
     * (waves: 10 vs 16), memory by bandwidth */
    double fv = v->launch.floor_us * 1e3, fh = h->launch.floor_us * 1e3;
    double sv = v->sm.sustained[COLO_MATH_FP32], sh = h->sm.sustained[COLO_MATH_FP32];
    double expect_c = fh + (1e6 - fv) * (10.0 / 16.0) * (1530.0 * 64 * sv) / (1980.0 * 128 * sh);
    cr_assert(fabs(tc - expect_c) < 0.01 * expect_c, "compute-bound: %g vs %g", tc, expect_c);
    double expect_m = fh + (1e6 - fv) * colo_gpu_dram_rate(v) / colo_gpu_dram_rate(h);
    cr_assert(fabs(tm - expect_m) < 0.01 * expect_m, "memory-bound: %g vs %g", tm, expect_m);
    colo_gpu_free(v);
    colo_gpu_free(h);
}

/* A named kernel's compute scales by its math class's peak on each GPU; FP32 convolutions and
 * matmuls traced where TF32 did not exist move to TF32 as the tenant's fp32_math says. */
static double compute_ns(const char *name, const char *src, const char *dst, colo_fp32_math_t p,
                         colo_math_t *runs_as)
{
    colo_gpu_t *s = open_gpu(src), *d = open_gpu(dst);
    colo_op_t k = kernel(80 * 8 * 4, 256, 1000000, COLO_KCLASS_COMPUTE);
    k.name = (char *)name;
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(&k, s, d, p, &w, "t.json", 0, &err), 0, "%s", err.text);
    *runs_as = w.math;
    double t = w.wave_ns;
    colo_gpu_free(s);
    colo_gpu_free(d);
    return t;
}

Test(kernel_model, compute_scales_by_the_math_class_and_the_fp32_setting)
{
    colo_math_t m;
    double conv_fp32 = compute_ns("Conv", "v100-sxm2", "a100-40gb", COLO_FP32_IEEE, &m);
    cr_assert_eq(m, COLO_MATH_FP32);
    double conv_tf32 = compute_ns("Conv", "v100-sxm2", "a100-40gb", COLO_FP32_PYTORCH, &m);
    cr_assert_eq(m, COLO_MATH_TF32, "PyTorch's default: cuDNN convolutions on TF32");
    /* A100 TF32 tensor cores do 1024 FLOP per clock per SM, its CUDA cores 128; each sustains
     * its share of that */
    colo_gpu_t *a = open_gpu("a100-40gb");
    cr_assert_float_eq(conv_fp32 / conv_tf32,
                       1024.0 * a->sm.sustained[COLO_MATH_TF32] /
                           (128.0 * a->sm.sustained[COLO_MATH_FP32]),
                       1e-9);
    colo_gpu_free(a);
    compute_ns("volta_sgemm_128x64_tn", "v100-sxm2", "a100-40gb", COLO_FP32_PYTORCH, &m);
    cr_assert_eq(m, COLO_MATH_FP32, "PyTorch's default: cuBLAS matmuls in FP32");
    compute_ns("volta_sgemm_128x64_tn", "v100-sxm2", "a100-40gb", COLO_FP32_TF32, &m);
    cr_assert_eq(m, COLO_MATH_TF32);
    compute_ns("void at::native::vectorized_elementwise_kernel", "v100-sxm2", "a100-40gb",
               COLO_FP32_TF32, &m);
    cr_assert_eq(m, COLO_MATH_MEMORY, "no setting moves an elementwise kernel to tensor cores");
    /* a TF32 kernel traced on an H100 runs in FP32 on a V100, which has no TF32 */
    double to_v = compute_ns("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32", "h100-sxm",
                             "v100-sxm2", COLO_FP32_PYTORCH, &m);
    cr_assert_eq(m, COLO_MATH_FP32);
    double on_h = compute_ns("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32", "h100-sxm",
                             "h100-sxm", COLO_FP32_PYTORCH, &m);
    cr_assert_eq(m, COLO_MATH_TF32);
    /* per SM: H100 TF32 2048/clk at 1830 MHz; V100 FP32 128/clk at 1530 MHz (each at its
     * sustained share) */
    colo_gpu_t *h = open_gpu("h100-sxm"), *v = open_gpu("v100-sxm2");
    cr_assert_float_eq(to_v / on_h,
                       (2048.0 * 1830 * h->sm.sustained[COLO_MATH_TF32]) /
                           (128.0 * 1530 * v->sm.sustained[COLO_MATH_FP32]),
                       1e-9);
    colo_gpu_free(h);
    colo_gpu_free(v);
    /* the same GPU and class: unchanged */
    compute_ns("Conv", "v100-sxm2", "v100-sxm2", COLO_FP32_TF32, &m);
    cr_assert_eq(m, COLO_MATH_FP32, "a V100 has no TF32 whatever the setting");
}

Test(kernel_model, the_floor_does_not_shrink_with_sms_or_bandwidth)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    colo_op_t tiny = kernel(8, 256, 3000, COLO_KCLASS_MEMORY);
    colo_kernel_work_t w = work(&tiny, h, h);
    cr_assert_float_eq(w.fixed_ns - w.dispatch_ns, 3000, 1e-9,
                       "shorter than the floor: all of it is fixed");
    cr_assert_float_eq(colo_kernel_alone_ns(&w, 1, 1.0, w.dram_bytes),
                       colo_kernel_alone_ns(&w, h->sm.count, colo_gpu_dram_rate(h), w.dram_bytes),
                       1e-9, "a kernel of nothing but floor takes as long on one SM");
    colo_gpu_free(h);
}

/* A kernel's grid grows with the batch and its waves are recomputed: below one wave a bigger
 * batch costs nothing more in compute; beyond, it grows in steps of whole waves; memory grows
 * with the bytes. */
Test(kernel_model, batch_scaling_is_monotone_and_sublinear_below_a_wave)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    int n = h->sm.count;
    colo_op_t c = kernel((unsigned)(8 * n / 8), 256, 100000, COLO_KCLASS_COMPUTE); /* 1/8 wave */
    colo_kernel_work_t w = work(&c, h, h);
    double prev = 0, at1 = colo_kernel_alone_at(&w, n, colo_gpu_dram_rate(h), colo_gpu_l2_rate(h));
    for (int b = 1; b <= 64; b++) {
        colo_kernel_work_t wb;
        colo_kernel_at_batch(&w, b, &wb);
        double t = colo_kernel_alone_at(&wb, n, colo_gpu_dram_rate(h), colo_gpu_l2_rate(h));
        cr_assert_geq(t, prev, "batch %d: %g ns after %g", b, t, prev);
        if (b <= 8) cr_assert_float_eq(t, at1, 1e-6, "within one wave: batch %d costs the same", b);
        cr_assert_leq(t, b * at1 * 1.0000001, "never more than linear");
        prev = t;
    }
    colo_kernel_work_t half;
    colo_kernel_at_batch(&w, 0.25, &half);
    cr_assert_eq(half.blocks, (unsigned long long)(2 * n / 8), "a quarter of the batch, a quarter "
                                                             "of the blocks (rounded up)");
    colo_op_t m = kernel((unsigned)(8 * n * 4), 256, 100000, COLO_KCLASS_MEMORY);
    colo_kernel_work_t wm = work(&m, h, h), wm2;
    colo_kernel_at_batch(&wm, 2, &wm2);
    cr_assert_float_eq(wm2.dram_bytes, 2 * wm.dram_bytes, 1e-6, "memory: twice the bytes");
    /* a weight-bound matmul (cuBLAS, memory-bound) streams its weights whatever the batch */
    colo_op_t g = kernel(64, 256, 100000, COLO_KCLASS_MEMORY);
    g.name = "volta_sgemm_128x64_tn";
    colo_kernel_work_t wg = work(&g, h, h), wg8;
    cr_assert(wg.weight_bound);
    colo_kernel_at_batch(&wg, 8, &wg8);
    cr_assert_float_eq(colo_kernel_alone_at(&wg8, n, colo_gpu_dram_rate(h), colo_gpu_l2_rate(h)),
                       colo_kernel_alone_at(&wg, n, colo_gpu_dram_rate(h), colo_gpu_l2_rate(h)),
                       1e-9);
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
    cr_assert_eq(colo_kernel_work(&k, h, v, COLO_FP32_PYTORCH, &w, "t.json", 7, &err), COLO_ERANGE);
    cr_assert_str_eq(err.key, "ops[7]");
    cr_assert(strstr(err.text, "shared memory"), "%s", err.text);
    colo_gpu_free(h);
    colo_gpu_free(v);
}

/* The case: an elementwise kernel reading and writing 268 MB, measured at 0.211 ms on
 * an A100-40GB, reached less than the file's DRAM rate; on the A100-80GB, whose DRAM is faster,
 * it is faster by the two GPUs' rates, not unchanged. */
Test(kernel_model, a_memory_bound_kernel_speeds_up_with_the_targets_bandwidth)
{
    colo_gpu_t *a40 = open_gpu("a100-40gb"), *a80 = open_gpu("a100-80gb");
    colo_op_t k = kernel(262144, 128, 211000, COLO_KCLASS_MEMORY);
    k.name = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>";
    k.dram_bytes = 268e6;
    colo_kernel_work_t same = work(&k, a40, a40), moved = work(&k, a40, a80);
    double t40 = (double)colo_kernel_duration(&same, a40), t80 = (double)colo_kernel_duration(&moved, a80);
    cr_assert_float_eq(t40, 211000, 211, "alone on its own GPU it keeps its time: %g", t40);
    double floor40 = a40->launch.floor_us * 1e3, floor80 = a80->launch.floor_us * 1e3;
    double want = floor80 + (211000 - floor40) * colo_gpu_dram_rate(a40) / colo_gpu_dram_rate(a80);
    cr_assert(colo_gpu_dram_rate(a80) > 1.1 * colo_gpu_dram_rate(a40));
    cr_assert_float_eq(t80, want, 0.01 * want, "%g on the A100-80GB, %g by the DRAM rates", t80, want);
    colo_gpu_free(a40);
    colo_gpu_free(a80);
}

/* A kernel whose FLOPs and bytes are known moves by its roofline on each GPU: on a GPU with
 * more SMs its compute shrinks with the blocks each SM runs, ceil(B / N), at each GPU's
 * sustained rate, and it keeps its own efficiency. */
Test(kernel_model, a_kernel_of_known_work_moves_by_its_roofline)
{
    colo_gpu_t *v = open_gpu("v100-pcie-32gb"), *a = open_gpu("a100-pcie-40gb");
    colo_op_t k = kernel(575, 256, 369000, COLO_KCLASS_COMPUTE);
    k.name = "ampere_sgemm_128x128_nn";
    k.flops = 575 * 2.0 * 128 * 128 * 315; /* tiles of 128 x 128 over a reduction of 315 */
    k.dram_bytes = 1e6;
    colo_kernel_work_t on_a = work(&k, a, a), to_v = work(&k, a, v);
    cr_assert_float_eq((double)colo_kernel_duration(&on_a, a), 369000, 369, "exact at home");
    double Ra = colo_gpu_math_sustained_rate(a, COLO_MATH_FP32);
    double Rv = colo_gpu_math_sustained_rate(v, COLO_MATH_FP32);
    double work_a = 369000 - a->launch.floor_us * 1e3;
    double want = v->launch.floor_us * 1e3 + work_a * (ceil(575.0 / 80) / ceil(575.0 / 108)) * (Ra / Rv);
    double got = (double)colo_kernel_duration(&to_v, v);
    cr_assert_float_eq(got, want, 0.01 * want, "%g on the V100, %g by blocks per SM and rates", got, want);
    /* on half the target's SMs its compute doubles (ceil(575 / 40) = 15 against 8 blocks) */
    double half = colo_kernel_alone_ns(&to_v, 40, colo_gpu_dram_rate(v), to_v.dram_bytes);
    cr_assert_gt(half - to_v.fixed_ns, 1.8 * (got + to_v.dispatch_ns - to_v.fixed_ns));
    colo_gpu_free(v);
    colo_gpu_free(a);
}

/* A cuDNN kernel built for an A100's 164 KB of shared memory moves to a T4 (64 KB): the library
 * runs a kernel of its own that fits there, taken as one block per SM; a kernel of no library
 * is refused (above). */
Test(kernel_model, a_library_kernel_too_big_for_the_target_runs_one_block_per_sm)
{
    colo_gpu_t *a = open_gpu("a100-40gb"), *t = open_gpu("tesla-t4");
    colo_op_t k = kernel(216, 128, 50000, COLO_KCLASS_COMPUTE);
    k.name = "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_"
             "stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn";
    k.shared_bytes = 100 * 1024;
    colo_kernel_work_t w = work(&k, a, t);
    cr_assert_eq(w.occ.blocks_per_sm, 1);
    cr_assert_eq(w.occ.by_shared, 1, "the block fills the shared memory it overflowed");
    cr_assert_eq(colo_kernel_waves(&w, t->sm.count), 6); /* 216 blocks on 40 SMs */
    k.name = "my_kernel";
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(&k, a, t, COLO_FP32_PYTORCH, &w, "t.json", 0, &err), COLO_ERANGE);
    colo_gpu_free(a);
    colo_gpu_free(t);
}
