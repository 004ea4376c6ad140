/* calibrate_kernels.cuh: the device kernels colosim-calibrate times (calibrate_kernels.cu). */
#ifndef COLO_CALIBRATE_KERNELS_H
#define COLO_CALIBRATE_KERNELS_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

enum mem_op { MEM_READ, MEM_WRITE, MEM_COPY };

/* 8 independent FMA chains per thread; the result is stored only if impossible, so the compiler
 * keeps the work. FLOPs = 2 * 8 * iters * threads. sms (or NULL): each block's SM. */
__global__ void fma_kernel(float *out, int iters, float seed, unsigned *sms);
/* Tensor cores through WMMA (mma.sync, HMMA in SASS): fp16 inputs, fp32 accumulation, the
 * fragments kept in registers. FLOPs = 2 * 16^3 * iters * warps. */
__global__ void hmma_kernel(float *out, int iters);
/* Grid-stride streaming over n float4s (op a mem_op), four loads in flight per thread; dynamic
 * shared memory sized by the host to force one block per SM. */
__global__ void stream_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n,
                              int passes, int op, float *sink, unsigned *sms);
/* The L2 sweep's reader: loads that bypass L1 (ld.global.cg, __ldcg), each pass of each block
 * starting at another part of the working set (issue 23). */
__global__ void l2_read_kernel(const float4 *__restrict__ src, size_t n, int passes, float *sink,
                               unsigned *sms);
/* Does nothing: launch costs. */
__global__ void empty_kernel(void);
/* Writes 1 to a host-mapped flag as soon as it starts. */
__global__ void flag_kernel(volatile int *flag);
/* One thread reading the global timer for ns nanoseconds; every jump longer than threshold is a
 * time the context was off the GPU: records (last before, first after) in gaps. */
__global__ void spin_kernel(uint64_t ns, uint64_t threshold, unsigned long long *gaps, int max_gaps,
                            int *n_gaps, unsigned long long *span);

#endif
