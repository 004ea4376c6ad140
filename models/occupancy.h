/* occupancy.h: resident blocks per SM, as CUDA's occupancy calculator (cuda_occupancy.h) computes
 * them from the architecture's limits on warps, blocks, registers and shared memory. */
#ifndef COLO_OCCUPANCY_H
#define COLO_OCCUPANCY_H

#include "gpu.h"

/* Threads per block assumed when a trace did not record the block size (Orion's profiles). */
#define COLO_DEFAULT_BLOCK_THREADS 256

typedef enum {
    COLO_LIMIT_WARPS,
    COLO_LIMIT_BLOCKS,
    COLO_LIMIT_REGISTERS,
    COLO_LIMIT_SHARED,
} colo_limiter_t;

typedef struct colo_occupancy {
    int blocks_per_sm; /* 0: the block cannot run on this GPU at all */
    int warps_per_block;
    colo_limiter_t limiter;
    int by_warps, by_blocks, by_registers, by_shared; /* each limit; INT_MAX when none */
} colo_occupancy_t;

/* Occupancy of a block of threads threads using registers registers per thread (-1 unknown: no
 * register limit) and shared_bytes of shared memory (-1 unknown: none beyond the reserved) on
 * gpu. The register rule allocates per warp in units of 256 registers within 4 sub-partitions;
 * shared memory is allocated in units of 256 B (compute capability 7.x) or 128 B (8.x, 9.x) plus
 * the per-block reservation; the SM's whole shared capacity is assumed available. */
colo_occupancy_t colo_occupancy(const colo_gpu_t *gpu, unsigned threads, int registers,
                                int shared_bytes);

/* Compute capability major version from the GPU file ("9.0" -> 9). */
int colo_gpu_cc_major(const colo_gpu_t *gpu);

const char *colo_limiter_name(colo_limiter_t l);

#endif
