/* scaling.c: first-order scaling of traced kernel durations between GPUs. */
#include "scaling.h"

#include <string.h>

static double blocks_of(const colo_op_t *k)
{
    return (double)k->grid[0] * (double)k->grid[1] * (double)k->grid[2];
}

/* FP32 throughput of the SMs a kernel can keep busy: a block runs on one SM, so a kernel with
 * fewer blocks than SMs cannot use the rest. */
static double compute_rate(const colo_op_t *k, const colo_gpu_t *g)
{
    double sms = blocks_of(k);
    if (sms > g->sm.count) sms = g->sm.count;
    return sms * colo_gpu_sm_fp32_rate(g);
}

double colo_scale_factor(const colo_op_t *kernel, const colo_gpu_t *src, const colo_gpu_t *dst)
{
    if (src == dst || strcmp(src->name, dst->name) == 0) return 1.0;
    double compute = compute_rate(kernel, src) / compute_rate(kernel, dst);
    double memory = colo_gpu_dram_rate(src) / colo_gpu_dram_rate(dst);
    switch (kernel->kclass) {
    case COLO_KCLASS_COMPUTE:
        return compute;
    case COLO_KCLASS_MEMORY:
        return memory;
    default:
        return compute > memory ? compute : memory;
    }
}

colo_time_t colo_scale_kernel(const colo_op_t *kernel, const colo_gpu_t *src, const colo_gpu_t *dst)
{
    colo_time_t t =
        colo_time_from_ns((double)kernel->duration * colo_scale_factor(kernel, src, dst));
    return t < 1 ? 1 : t;
}
