/* kernel_model.h: a kernel's work, decomposed from its traced duration into a fixed part (launch
 * dispatch and the latency floor no SM count or bandwidth shortens), a compute part (waves of
 * blocks on SMs, at the peak rate of the kernel's math class) and a memory part (bytes through L2
 * and DRAM), its duration on any GPU and SM count, and how it changes with the batch size.
 * Equations and parameters: docs/model.md, "Kernels". */
#ifndef COLO_KERNEL_MODEL_H
#define COLO_KERNEL_MODEL_H

#include "errors.h"
#include "gpu.h"
#include "kernel_class.h"
#include "occupancy.h"
#include "trace.h"

#include <stdbool.h>

/* Defaults used when a trace lacks DRAM or L2 byte counts (docs/model.md). */
#define COLO_DRAM_SHARE_COMPUTE 0.1 /* compute-bound: moves 10 % of what bandwidth allows */
#define COLO_DRAM_SHARE_UNKNOWN 0.5
#define COLO_DRAM_SHARE_MEMORY 1.0 /* memory-bound: its duration is its transfer time */
#define COLO_COMPUTE_SHARE_MEMORY                                                                  \
    0.5                         /* compute time of a memory-bound kernel, share of duration        \
                                 */
#define COLO_L2_HIT_DEFAULT 0.5 /* L2 hit rate when l2_bytes is unknown: L2 bytes = 2 x DRAM */

typedef struct colo_kernel_work {
    unsigned long long blocks; /* its grid (at this batch) */
    colo_occupancy_t occ;  /* on the target GPU */
    double wave_ns;        /* one wave of blocks on the target GPU, compute only */
    double fixed_ns;       /* dispatch + floor: what no SM count or bandwidth shortens */
    double dispatch_ns;    /* of which the stream's dispatch gap before the kernel */
    double dram_bytes;     /* DRAM traffic with the L2 to itself */
    double l2_bytes;       /* traffic between SMs and L2 */
    double working_set;    /* bytes its L2 hits need kept in L2 (0: streaming) */
    double per_sm_rate;    /* bytes/ns one SM of the target can move */
    double mem_eff;        /* its DRAM rate over the one its GPU allows it (the kernel's own
                            * efficiency when the trace gives its bytes and FLOPs); 0: 1 */
    double mem_cap;        /* with mem_eff: the most it moves on the whole target, mem_eff x its
                            * DRAM rate (fewer channels cap it further, fewer SMs scale it) */
    bool weight_bound;     /* streams its weights: its grid and bytes do not grow with the batch */
    colo_math_t math;      /* the class it runs as on the target */
    colo_math_t math_src;  /* and as on the GPU it was traced on */
} colo_kernel_work_t;

/* Decomposes kernel (traced on src) and places it on dst, FP32 convolutions and matmuls running
 * as fp32_math says on GPUs with TF32 tensor cores. Errors (COLO_ERANGE, with err naming the
 * trace and op index) when its block cannot be resident on src or dst at all. */
int colo_kernel_work(const colo_op_t *kernel, const colo_gpu_t *src, const colo_gpu_t *dst,
                     colo_fp32_math_t fp32_math, colo_kernel_work_t *out, const char *trace_path,
                     size_t op_index, colo_error_t *err);

/* The precision a deployment runs a trace at (docs/model.md, "Precision"): its GEMMs and
 * convolutions (cuDNN and cuBLAS kernels) at class math, their bytes at its element size; every
 * other kernel keeps its class, its bytes those of FP16 activations. math COLO_MATH_AUTO: the
 * trace's own. act_bytes: the bytes of an activation in the trace (4, or 2 in a trace whose
 * GEMMs ran in half precision or less: colo_precision_of). */
typedef struct colo_precision {
    colo_math_t math;
    int act_bytes;
} colo_precision_t;

/* The class a deployment's precision name means ("fp16", "bf16", "int8", "fp8"); COLO_MATH_CLASSES
 * for any other name. */
colo_math_t colo_precision_parse(const char *name);

/* The precision math for trace t: its act_bytes from its kernels' classes. */
colo_precision_t colo_precision_of(const colo_trace_t *t, colo_math_t math);

/* colo_kernel_work at precision prec (NULL: the trace's own). */
int colo_kernel_work_at(const colo_op_t *kernel, const colo_gpu_t *src, const colo_gpu_t *dst,
                        colo_fp32_math_t fp32_math, const colo_precision_t *prec,
                        colo_kernel_work_t *out, const char *trace_path, size_t op_index,
                        colo_error_t *err);

/* The same kernel at f times its traced batch (f > 0), from its work w at the traced batch: its
 * grid (rounded up) and its DRAM and L2 bytes grow by f, each block does the same work, the fixed
 * part stays; a weight-bound kernel stays as it is (docs/model.md, "Batch size"). out may be w
 * only when f is 1. */
void colo_kernel_at_batch(const colo_kernel_work_t *w, double f, colo_kernel_work_t *out);

/* The same kernel run n times back to back on one stream, as one kernel: its time-like parts
 * (waves' time, fixed part, dispatch gaps) and its bytes n times over, its grid, residency and
 * working set those of one run. out may be w. */
void colo_kernel_repeat(const colo_kernel_work_t *w, int n, colo_kernel_work_t *out);

/* Waves of blocks on sms SMs: ceil(blocks / (blocks per SM x sms)). */
unsigned long long colo_kernel_waves(const colo_kernel_work_t *w, int sms);

/* SMs the kernel keeps busy out of sms: min(blocks, sms). */
int colo_kernel_sms_used(const colo_kernel_work_t *w, int sms);

/* Compute time on sms SMs: waves x wave_ns. */
double colo_kernel_compute_ns(const colo_kernel_work_t *w, int sms);

/* Fastest DRAM rate on sms SMs given dram_rate bytes/ns available: min(dram_rate,
 * SMs used x per-SM rate); with mem_eff set, min(dram_rate, mem_cap, mem_eff x SMs used x
 * per-SM rate). */
double colo_kernel_memory_rate(const colo_kernel_work_t *w, int sms, double dram_rate);

/* Duration alone on sms SMs with dram_rate bytes/ns and dram_bytes of traffic:
 * fixed + max(compute, dram_bytes / memory rate). */
double colo_kernel_alone_ns(const colo_kernel_work_t *w, int sms, double dram_rate,
                            double dram_bytes);

/* Duration alone at a place of sms SMs with dram_rate and l2_rate bytes/ns: as
 * colo_kernel_alone_ns, and at least fixed + L2 bytes / l2_rate. */
double colo_kernel_alone_at(const colo_kernel_work_t *w, int sms, double dram_rate,
                            double l2_rate);

/* The kernel's duration alone on all of dst's SMs, DRAM and L2 bandwidth, without the dispatch
 * gap before it (what a profiler would report), rounded to >= 1 ns. */
colo_time_t colo_kernel_duration(const colo_kernel_work_t *w, const colo_gpu_t *dst);

/* Per-SM DRAM rate of gpu in bytes/ns (memory.per_sm_gbps). */
double colo_gpu_per_sm_rate(const colo_gpu_t *gpu);

#endif
