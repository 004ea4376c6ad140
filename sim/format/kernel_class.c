/* kernel_class.c: the table of kernel-name patterns that gives a kernel its math class, and the
 * one that tells which framework setting decides its precision. Sources for the naming rules:
 * CUTLASS's procedural names (python/cutlass_library/library.py and gemm_operation.py: a GEMM's
 * leading letter is its accumulator type, s = FP32, h = FP16, i = INT32, d = FP64; the digits
 * are the MMA instruction shape: 884 FP16 on Volta, 1688 TF32 and 16816 FP16/BF16 on Ampere,
 * 8816/16832 INT8; "simt" vs "tensorop"), NVIDIA's PyProf tensor-core detector (pyprof/prof/
 * tc.py: h884, s884, h1688, s1688, hmma, i8816, 16816, xmma_implicit_gemm, xmma_gemm), cuDNN's
 * math types (CUDNN_FMA_MATH: FFMA kernels only), and the kernels in the committed traces
 * (xmma names carry their operand types, "tf32f32" or "f32f32", and "ffma" or "tensorMxNxK").
 * docs/model.md, "Math classes", lists the table; tests/unit/test_kernel_class.c checks it on
 * every kernel of the committed traces. */
#include "kernel_class.h"

#include <fnmatch.h>
#include <string.h>

static const char *const math_names[COLO_MATH_CLASSES] = {
    "auto", "memory", "fp32", "fp64", "tf32", "fp16", "bf16", "int8", "fp8"};

const char *colo_math_name(colo_math_t m)
{
    return m < COLO_MATH_CLASSES ? math_names[m] : "?";
}

colo_math_t colo_math_parse(const char *name)
{
    for (int m = 0; name && m < COLO_MATH_CLASSES; m++)
        if (strcmp(name, math_names[m]) == 0) return (colo_math_t)m;
    return COLO_MATH_CLASSES;
}

static const char *const fp32_math_names[COLO_FP32_POLICIES] = {"pytorch", "fp32", "tf32"};

const char *colo_fp32_math_name(colo_fp32_math_t p)
{
    return p < COLO_FP32_POLICIES ? fp32_math_names[p] : "?";
}

colo_fp32_math_t colo_fp32_math_parse(const char *name)
{
    for (int p = 0; name && p < COLO_FP32_POLICIES; p++)
        if (strcmp(name, fp32_math_names[p]) == 0) return (colo_fp32_math_t)p;
    return COLO_FP32_POLICIES;
}

#define TC_FP16 "an FP16 MMA instruction shape (884 Volta, 1688 Turing, 16816 Ampere; accumulator h or s)"
#define MEMORY "a PyTorch or cuDNN kernel that moves or normalises data on CUDA cores"

/* First match wins: tensor-core markers, then data-movement kernels, then FP32 GEMMs and
 * convolutions, then FP32 for whatever is left. */
static const colo_kernel_pattern_t patterns[] = {
    {"*e4m3*", COLO_MATH_FP8, "FP8 operands (e4m3)"},
    {"*e5m2*", COLO_MATH_FP8, "FP8 operands (e5m2)"},
    {"*fp8*", COLO_MATH_FP8, "FP8 in the name"},
    {"*imma*", COLO_MATH_INT8, "INT8 tensor-core MMA (IMMA)"},
    {"*i8816*", COLO_MATH_INT8, "the INT8 MMA shape 8816 with an INT32 accumulator"},
    {"*i16832*", COLO_MATH_INT8, "the INT8 MMA shape 16832 with an INT32 accumulator"},
    {"*int8*", COLO_MATH_INT8, "INT8 in the name"},
    {"*tf32*", COLO_MATH_TF32, "TF32 operands (xmma tf32f32, CUTLASS s1688gemm_tf32)"},
    {"*bf16*", COLO_MATH_BF16, "BF16 operands (xmma bf16bf16, CUTLASS bf16_s16816gemm)"},
    {"*h884*", COLO_MATH_FP16, TC_FP16},
    {"*s884*", COLO_MATH_FP16, TC_FP16},
    {"*h1688*", COLO_MATH_FP16, TC_FP16},
    {"*s1688*", COLO_MATH_FP16, TC_FP16},
    {"*h16816*", COLO_MATH_FP16, TC_FP16},
    {"*s16816*", COLO_MATH_FP16, TC_FP16},
    {"*hmma*", COLO_MATH_FP16, "FP16 tensor-core MMA (HMMA)"},
    {"*f16f16*", COLO_MATH_FP16, "FP16 operands (xmma f16f16)"},
    {"*fp16*", COLO_MATH_FP16, "FP16 in the name"},
    {"*dgemm*", COLO_MATH_FP64, "an FP64 GEMM"},
    {"*d884*", COLO_MATH_FP64, "the FP64 MMA shape 884"},
    {"*elementwise*", COLO_MATH_MEMORY, MEMORY},
    {"BatchNorm", COLO_MATH_MEMORY, "Orion's name for cuDNN's batch-norm kernels (bn_fw_*)"},
    {"*bn_fw*", COLO_MATH_MEMORY, "cuDNN batch normalisation"},
    {"*batch_norm*", COLO_MATH_MEMORY, MEMORY},
    {"*layer_norm*", COLO_MATH_MEMORY, MEMORY},
    {"*softmax*", COLO_MATH_MEMORY, MEMORY},
    {"*pool*", COLO_MATH_MEMORY, MEMORY},
    {"*reduce*", COLO_MATH_MEMORY, "a reduction (PyTorch reduce_kernel, cuBLAS splitKreduce)"},
    {"*Cat*Copy*", COLO_MATH_MEMORY, MEMORY},
    {"*index*", COLO_MATH_MEMORY, MEMORY},
    {"*gather*", COLO_MATH_MEMORY, MEMORY},
    {"*scatter*", COLO_MATH_MEMORY, MEMORY},
    {"*dropout*", COLO_MATH_MEMORY, MEMORY},
    {"*triu_tril*", COLO_MATH_MEMORY, MEMORY},
    {"*nll_loss*", COLO_MATH_MEMORY, MEMORY},
    {"*To*Nhwc*", COLO_MATH_MEMORY, "a cuDNN layout change"},
    {"*To*Nchw*", COLO_MATH_MEMORY, "a cuDNN layout change"},
    {"*AddPadding*", COLO_MATH_MEMORY, "a cuDNN layout change"},
    {"*transpose*", COLO_MATH_MEMORY, MEMORY},
    {"*computeOffsets*", COLO_MATH_MEMORY, "cuDNN's index set-up for an implicit GEMM"},
    {"*globalKernel*", COLO_MATH_MEMORY, "a cuBLASLt epilogue"},
    {"*scal_kernel*", COLO_MATH_MEMORY, "a cuBLAS scaling pass"},
    {"*im2col*", COLO_MATH_MEMORY, MEMORY},
    {"*upsample*", COLO_MATH_MEMORY, MEMORY},
    {"*embedding*", COLO_MATH_MEMORY, MEMORY},
    {"*ffma*", COLO_MATH_FP32, "FP32 FMA on CUDA cores (xmma ..._ffma, cuDNN FMA math)"},
    {"*sgemm*", COLO_MATH_FP32, "an FP32 GEMM on CUDA cores (volta_sgemm, ampere_sgemm, CUTLASS simt_sgemm)"},
    {"*scudnn*", COLO_MATH_FP32, "a cuDNN FP32 convolution on CUDA cores"},
    {"*f32f32_f32f32*", COLO_MATH_FP32, "FP32 operands and FP32 math (xmma f32f32_f32f32)"},
    {"*gcgemm*", COLO_MATH_FP32, "the complex FP32 GEMM of an FFT convolution"},
    {"*fft2d*", COLO_MATH_FP32, "the FFT of an FFT convolution"},
    {"*winograd*", COLO_MATH_FP32, "a cuDNN Winograd convolution on CUDA cores"},
    {"*gemmSN*", COLO_MATH_FP32, "cuBLAS's small-N GEMM, FP32 in an FP32 model"},
    {"*gemv*", COLO_MATH_FP32, "a matrix-vector product on CUDA cores"},
    {"*dot_kernel*", COLO_MATH_FP32, "a dot product on CUDA cores"},
    {"*depthwise*", COLO_MATH_FP32, "a depthwise convolution on CUDA cores (never tensor cores)"},
    {"Conv", COLO_MATH_FP32, "Orion's merged cuDNN convolution row of an FP32 model"},
    {"Conv-*", COLO_MATH_FP32, "Orion's merged cuDNN convolution row of an FP32 model"},
    {"cudnn_rnn", COLO_MATH_FP32, "Orion's placeholder for a cuDNN FP32 LSTM"},
    {"*Kernel2*", COLO_MATH_FP32, "a CUTLASS kernel of an FP32 model with no tensorop in its name"},
    {"*simt*", COLO_MATH_FP32, "a CUTLASS SIMT kernel (CUDA cores)"},
    {"*gemm*", COLO_MATH_FP32, "a GEMM with no precision in its name: FP32"},
    {NULL, COLO_MATH_AUTO, NULL},
};

/* Which setting decides a kernel's TF32 use: first match wins. Depthwise convolutions are
 * never tensor-core kernels; cuDNN convolutions and RNNs follow cudnn.allow_tf32; cuBLAS
 * matmuls follow cuda.matmul.allow_tf32. */
static const struct {
    const char *pattern;
    colo_kernel_kind_t kind;
} kinds[] = {
    {"*depthwise*", COLO_KIND_OTHER}, {"Conv", COLO_KIND_CUDNN},     {"Conv-*", COLO_KIND_CUDNN},
    {"*fprop*", COLO_KIND_CUDNN},     {"*dgrad*", COLO_KIND_CUDNN},  {"*wgrad*", COLO_KIND_CUDNN},
    {"*scudnn*", COLO_KIND_CUDNN},    {"*convolve*", COLO_KIND_CUDNN}, {"*winograd*", COLO_KIND_CUDNN},
    {"*fft2d*", COLO_KIND_CUDNN},     {"*gcgemm*", COLO_KIND_CUDNN}, {"*conv*", COLO_KIND_CUDNN},
    {"cudnn_rnn", COLO_KIND_CUDNN},   {"*gemm*", COLO_KIND_CUBLAS},  {"*gemv*", COLO_KIND_CUBLAS},
    {"*dot_kernel*", COLO_KIND_CUBLAS}, {NULL, COLO_KIND_OTHER},
};

const colo_kernel_pattern_t *colo_kernel_pattern(int i)
{
    int n = (int)(sizeof patterns / sizeof *patterns) - 1;
    return i >= 0 && i < n ? &patterns[i] : NULL;
}

colo_kernel_class_t colo_kernel_classify(const char *name, colo_math_t given)
{
    colo_kernel_class_t c = {COLO_MATH_FP32, COLO_KIND_OTHER, "*",
                             "no pattern matched: FP32 on CUDA cores"};
    const char *s = name ? name : "";
    if (given != COLO_MATH_AUTO && given < COLO_MATH_CLASSES) {
        c.math = given;
        c.rule = "trace";
        c.why = "the trace's \"math\" field";
    } else {
        for (const colo_kernel_pattern_t *p = patterns; p->pattern; p++)
            if (fnmatch(p->pattern, s, 0) == 0) {
                c.math = p->math;
                c.rule = p->pattern;
                c.why = p->why;
                break;
            }
    }
    if (c.math == COLO_MATH_MEMORY) return c; /* no setting moves these to tensor cores */
    for (int k = 0; kinds[k].pattern; k++)
        if (fnmatch(kinds[k].pattern, s, 0) == 0) {
            c.kind = kinds[k].kind;
            break;
        }
    return c;
}
