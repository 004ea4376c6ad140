/* scaling.h: moving a kernel's measured duration from the GPU it was traced on to another.
 *
 * This is the simplest honest model, used until the contention model (docs/model.md) replaces
 * it: a compute-bound kernel scales with the FP32 throughput of the SMs it can occupy (at most
 * one SM per block), a memory-bound kernel with achievable DRAM bandwidth, and a kernel of
 * unknown class takes the slower of the two. The same GPU gives back the traced duration. */
#ifndef COLO_SCALING_H
#define COLO_SCALING_H

#include "gpu.h"
#include "trace.h"

/* Ratio target/source for one kernel's duration. 1.0 when src and dst are the same GPU. */
double colo_scale_factor(const colo_op_t *kernel, const colo_gpu_t *src, const colo_gpu_t *dst);

/* The kernel's duration on dst, at least 1 ns. */
colo_time_t colo_scale_kernel(const colo_op_t *kernel, const colo_gpu_t *src,
                              const colo_gpu_t *dst);

#endif
