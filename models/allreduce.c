/* allreduce.c: a ring all-reduce's time (allreduce.h; docs/llm.md, "Tensor parallelism"). */
#include "allreduce.h"

/* NCCL's own cost model of a ring all-reduce in one node with its Simple protocol (the one it
 * picks for messages of hundreds of KB and more): a base latency and a latency per step, of
 * which a ring all-reduce of k ranks has 2 (k - 1); microseconds, NVIDIA/nccl
 * src/graph/tuning.cc, ncclTunerConstantsDefaults (baseLatencies Ring Simple; hwLatencies
 * NVLINK and PCI, Ring Simple), commit 5067397. */
#define NCCL_RING_BASE_US 8.4
#define NCCL_STEP_NVLINK_US 3.4
#define NCCL_STEP_PCIE_US 5.7

colo_link_t colo_allreduce_link(const colo_gpu_t *gpu, int ranks)
{
    return gpu->nvlink.gbps > 0 && (gpu->nvlink.nvswitch || ranks <= 2) ? COLO_LINK_NVLINK
                                                                        : COLO_LINK_PCIE;
}

void colo_allreduce(const colo_gpu_t *gpu, int ranks, double bytes, colo_allreduce_t *out)
{
    int k = ranks < 2 ? 2 : ranks;
    out->link = colo_allreduce_link(gpu, k);
    /* NVLink: the GPU's bandwidth, one direction, at the share a ring sustains (fitted to
     * Vidur's measurements, the GPU file says); PCIe: the measured host-to-device rate, as
     * a GPU's posted writes to its peer go the same way (checked against Vidur's 4-GPU rings
     * that cross PCIe: docs/llm.md) */
    out->bus_gbps = out->link == COLO_LINK_NVLINK ? gpu->nvlink.gbps * gpu->nvlink.sustained
                                                  : gpu->pcie.h2d_gbps;
    double step = out->link == COLO_LINK_NVLINK ? NCCL_STEP_NVLINK_US : NCCL_STEP_PCIE_US;
    out->latency_ns = (NCCL_RING_BASE_US + 2.0 * (k - 1) * step) * 1e3;
    /* each rank sends and receives 2 (k - 1) / k of the buffer (reduce-scatter, all-gather);
     * GB/s = bytes per ns */
    out->ns = out->latency_ns + 2.0 * (k - 1) / k * bytes / out->bus_gbps;
}
