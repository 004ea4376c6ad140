/* test_kernel_class.c: the kernel-name table that gives each kernel its math class, on the real
 * names of every committed trace and on library names of every class. */
#include "helpers.h"
#include "kernel_class.h"
#include "trace.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <string.h>

TestSuite(kernel_class, .init = test_init);

/* Every kernel of every committed trace is classified by a rule of the table, none left to the
 * fall-back (an unknown name, taken as FP32). */
Test(kernel_class, every_committed_kernel_has_a_rule)
{
    DIR *d = opendir(src_path("traces"));
    cr_assert(d);
    struct dirent *e;
    int traces = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0) continue;
        char rel[512];
        snprintf(rel, sizeof rel, "traces/%s", e->d_name);
        colo_error_t err;
        colo_error_clear(&err);
        colo_trace_t *t;
        cr_assert_eq(colo_trace_load(src_path(rel), &t, &err), 0, "%s", err.text);
        for (size_t i = 0; i < t->n_ops; i++) {
            if (t->ops[i].type != COLO_OP_KERNEL) continue;
            cr_assert_str_neq(t->ops[i].cls.rule, "*", "%s op %zu '%s': no rule", rel, i,
                              t->ops[i].name);
            cr_assert_neq(t->ops[i].cls.math, COLO_MATH_AUTO);
        }
        colo_trace_free(t);
        traces++;
    }
    closedir(d);
    cr_assert_geq(traces, 14);
}

static void expect(const char *name, colo_math_t math, colo_kernel_kind_t kind)
{
    colo_kernel_class_t c = colo_kernel_classify(name, COLO_MATH_AUTO);
    cr_expect_eq(c.math, math, "%s: %s, expected %s (rule %s)", name, colo_math_name(c.math),
                 colo_math_name(math), c.rule);
    cr_expect_eq(c.kind, kind, "%s: kind %d, expected %d", name, c.kind, kind);
}

Test(kernel_class, library_names_of_every_class)
{
    /* FP32 on CUDA cores */
    expect("volta_sgemm_128x64_tn", COLO_MATH_FP32, COLO_KIND_CUBLAS);
    expect("ampere_sgemm_32x32_sliced1x4_tn", COLO_MATH_FP32, COLO_KIND_CUBLAS);
    expect("cutlass_simt_sgemm_128x128_8x2_nn_align1", COLO_MATH_FP32, COLO_KIND_CUBLAS);
    expect("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_"
           "aligna4_alignc4_execute_kernel__5x_cublas",
           COLO_MATH_FP32, COLO_KIND_CUBLAS);
    expect("Conv-sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x32x8_"
           "stage3_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
           COLO_MATH_FP32, COLO_KIND_CUDNN);
    expect("cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", COLO_MATH_FP32, COLO_KIND_CUDNN);
    expect("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>",
           COLO_MATH_FP32, COLO_KIND_CUDNN);
    expect("Conv", COLO_MATH_FP32, COLO_KIND_CUDNN);
    expect("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel",
           COLO_MATH_FP32, COLO_KIND_OTHER);
    /* TF32 */
    expect("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x"
           "128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_alignc4_execute_kernel_cudnn",
           COLO_MATH_TF32, COLO_KIND_CUDNN);
    expect("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize32x32x64_stage3_warpsize2x2x1_"
           "tensor16x8x8_aligna4_alignc4_execute_kernel__5x_cublas",
           COLO_MATH_TF32, COLO_KIND_CUBLAS);
    expect("cutlass_tensorop_s1688gemm_tf32_128x128_16x4_nn_align4", COLO_MATH_TF32,
           COLO_KIND_CUBLAS);
    /* FP16 / BF16 */
    expect("volta_h884gemm_256x128_ldg8_nn", COLO_MATH_FP16, COLO_KIND_CUBLAS);
    expect("turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_nn", COLO_MATH_FP16, COLO_KIND_CUBLAS);
    expect("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_nn", COLO_MATH_FP16,
           COLO_KIND_CUBLAS);
    expect("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
           "execute_segment_k_off_kernel__5x_cublas",
           COLO_MATH_FP16, COLO_KIND_CUBLAS);
    expect("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64", COLO_MATH_BF16,
           COLO_KIND_CUBLAS);
    expect("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_32x6_tn>",
           COLO_MATH_BF16, COLO_KIND_CUBLAS);
    /* INT8, FP8 */
    expect("cutlass_tensorop_i8816gemm_s8_256x128_64x3_tn_align16", COLO_MATH_INT8,
           COLO_KIND_CUBLAS);
    expect("sm90_xmma_gemm_e4m3bf16_e4m3f32_f32_tn_n_tilesize128x128x128", COLO_MATH_FP8,
           COLO_KIND_CUBLAS);
    /* memory-bound */
    expect("void at::native::vectorized_elementwise_kernel", COLO_MATH_MEMORY, COLO_KIND_OTHER);
    expect("BatchNorm", COLO_MATH_MEMORY, COLO_KIND_OTHER);
    expect("void cudnn::bn_fw_inf_1C11_kernel_NCHW<float, float, true, 1>", COLO_MATH_MEMORY,
           COLO_KIND_OTHER);
    expect("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel",
           COLO_MATH_MEMORY, COLO_KIND_OTHER);
    expect("void (anonymous namespace)::softmax_warp_forward", COLO_MATH_MEMORY, COLO_KIND_OTHER);
    expect("void splitKreduce_kernel<32, 16, int, float, float, float, float, true, false>",
           COLO_MATH_MEMORY, COLO_KIND_OTHER);
    expect("void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true>",
           COLO_MATH_MEMORY, COLO_KIND_OTHER);
    /* an unknown name: FP32, by the fall-back rule */
    colo_kernel_class_t c = colo_kernel_classify("my_kernel", COLO_MATH_AUTO);
    cr_assert_eq(c.math, COLO_MATH_FP32);
    cr_assert_str_eq(c.rule, "*");
    /* a trace's "math" wins over the name */
    c = colo_kernel_classify("volta_sgemm_128x64_tn", COLO_MATH_FP16);
    cr_assert_eq(c.math, COLO_MATH_FP16);
    cr_assert_str_eq(c.rule, "trace");
    cr_assert_eq(c.kind, COLO_KIND_CUBLAS);
}

Test(kernel_class, names_round_trip)
{
    for (int m = 0; m < COLO_MATH_CLASSES; m++)
        cr_assert_eq(colo_math_parse(colo_math_name((colo_math_t)m)), m);
    cr_assert_eq(colo_math_parse("fp33"), COLO_MATH_CLASSES);
    for (int p = 0; p < COLO_FP32_POLICIES; p++)
        cr_assert_eq(colo_fp32_math_parse(colo_fp32_math_name((colo_fp32_math_t)p)), p);
    for (int i = 0; colo_kernel_pattern(i); i++)
        cr_assert(colo_kernel_pattern(i)->why && *colo_kernel_pattern(i)->why,
                  "pattern %d has a reason", i);
}
