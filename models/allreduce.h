/* allreduce.h: what an all-reduce among the GPUs of one tensor-parallel group costs on one of
 * them: NCCL's ring over NVLink or PCIe, priced from the GPU file (docs/llm.md, "Tensor
 * parallelism"). */
#ifndef COLO_ALLREDUCE_H
#define COLO_ALLREDUCE_H

#include "gpu.h"

/* CTAs (one per channel) and threads per CTA of an NCCL all-reduce kernel: NCCL's default
 * largest CTA count per kernel (ncclConfig_t maxCTAs, "If unset, NCCL uses 32", NCCL docs,
 * nccl4py configuration page) and its Simple protocol's threads per CTA
 * (NCCL_SIMPLE_MAX_NTHREADS = 512, NVIDIA/nccl src/include/device.h). */
#define COLO_ALLREDUCE_CTAS 32
#define COLO_ALLREDUCE_THREADS 512

typedef enum { COLO_LINK_NVLINK, COLO_LINK_PCIE } colo_link_t;

typedef struct colo_allreduce {
    colo_link_t link;  /* the links the ring runs over */
    double bus_gbps;   /* the ring's sustained bus bandwidth, GB/s */
    double latency_ns; /* NCCL's base latency + 2 (k - 1) steps' latency */
    double ns;         /* the whole: latency + 2 (k - 1) / k x bytes / bus bandwidth */
} colo_allreduce_t;

/* The links a ring of ranks GPUs of gpu's node runs over: NVLink when gpu has it and its node
 * has NVSwitches or the ring is a pair; otherwise PCIe. */
colo_link_t colo_allreduce_link(const colo_gpu_t *gpu, int ranks);

/* An all-reduce of bytes among ranks (>= 2) GPUs of gpu's kind in one node into *out. */
void colo_allreduce(const colo_gpu_t *gpu, int ranks, double bytes, colo_allreduce_t *out);

#endif
