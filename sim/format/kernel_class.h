/* kernel_class.h: what a kernel computes with (its math class: FP32 on CUDA cores, TF32 or FP16
 * tensor cores, ...) and which library setting decides its precision, from a trace's field or
 * else from the kernel's name through one table of patterns (kernel_class.c; docs/model.md,
 * "Math classes"). */
#ifndef COLO_KERNEL_CLASS_H
#define COLO_KERNEL_CLASS_H

/* The units whose peak rate a kernel's compute part scales with when it moves to another GPU.
 * COLO_MATH_AUTO: not given; the class comes from the kernel's name. */
typedef enum {
    COLO_MATH_AUTO,
    COLO_MATH_MEMORY, /* elementwise, normalisation, pooling, reductions, layout changes: CUDA
                       * cores, bounded by memory; compute scales as FP32 */
    COLO_MATH_FP32,   /* FP32 on CUDA cores (FFMA) */
    COLO_MATH_FP64,   /* FP64 on CUDA cores */
    COLO_MATH_TF32,   /* TF32 tensor cores (Ampere and later) */
    COLO_MATH_FP16,   /* FP16 tensor cores */
    COLO_MATH_BF16,   /* BF16 tensor cores (Ampere and later) */
    COLO_MATH_INT8,   /* INT8 tensor cores (dp4a on CUDA cores on Volta) */
    COLO_MATH_FP8,    /* FP8 tensor cores (Hopper and later) */
    COLO_MATH_CLASSES
} colo_math_t;

/* Which framework setting decides whether an FP32 kernel may use TF32 tensor cores: PyTorch has
 * one for cuDNN (convolutions, RNNs) and one for cuBLAS (matmuls), with different defaults. */
typedef enum { COLO_KIND_OTHER, COLO_KIND_CUDNN, COLO_KIND_CUBLAS } colo_kernel_kind_t;

typedef struct colo_kernel_class {
    colo_math_t math;
    colo_kernel_kind_t kind;
    const char *rule; /* the pattern that decided the math class ("trace" when the trace gave
                       * it); static */
    const char *why;  /* why that pattern means that class; static */
} colo_kernel_class_t;

/* The class of a kernel named name: given when the trace gives one (not COLO_MATH_AUTO), else
 * the first pattern of the table that the name matches (fnmatch globs); a name no pattern
 * matches is FP32 (rule "*", the class colosim gave every kernel before classes existed).
 * O(patterns x name length). */
colo_kernel_class_t colo_kernel_classify(const char *name, colo_math_t given);

/* One row of the table, for documentation and tests: index i from 0; NULL past the end. */
typedef struct colo_kernel_pattern {
    const char *pattern;
    colo_math_t math;
    const char *why;
} colo_kernel_pattern_t;
const colo_kernel_pattern_t *colo_kernel_pattern(int i);

/* How FP32 convolutions and matmuls run on GPUs with TF32 tensor cores (a tenant's fp32_math).
 * It decides for kernels traced where TF32 did not exist (a V100); a trace taken on a TF32 GPU
 * shows what its framework chose, which stands unless the setting is COLO_FP32_IEEE. */
typedef enum {
    COLO_FP32_PYTORCH, /* PyTorch's defaults: cuDNN TF32 (torch.backends.cudnn.allow_tf32 = True),
                        * cuBLAS FP32 (torch.backends.cuda.matmul.allow_tf32 = False, 1.12 on) */
    COLO_FP32_IEEE,    /* all FP32 on CUDA cores (both flags off; fp32_precision = "ieee") */
    COLO_FP32_TF32,    /* both on TF32 (TensorFlow 2.4 on, JAX, or PyTorch with matmul TF32) */
    COLO_FP32_POLICIES
} colo_fp32_math_t;

/* "pytorch", "fp32", "tf32" as scenarios write them. */
const char *colo_fp32_math_name(colo_fp32_math_t p);
/* COLO_FP32_POLICIES when name is none of them. */
colo_fp32_math_t colo_fp32_math_parse(const char *name);

/* "auto", "memory", "fp32", ... as the trace format writes the math class. */
const char *colo_math_name(colo_math_t m);
/* The class a name means (as colo_math_name writes it); COLO_MATH_CLASSES when none. */
colo_math_t colo_math_parse(const char *name);

#endif
