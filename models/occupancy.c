/* occupancy.c: the CUDA occupancy calculator's rules for compute capability 7.0 to 9.x. */
#include "occupancy.h"

#include <limits.h>
#include <stdlib.h>

#define WARP 32
#define SUBPARTITIONS 4     /* cuda_occupancy.h: cudaOccSubPartitionsPerMultiprocessor, CC >= 7 */
#define REG_GRANULARITY 256 /* cuda_occupancy.h: cudaOccRegAllocationGranularity */

static int round_up(long long x, int unit)
{
    return (int)((x + unit - 1) / unit * unit);
}

int colo_gpu_cc_major(const colo_gpu_t *gpu)
{
    return atoi(gpu->compute_capability);
}

const char *colo_limiter_name(colo_limiter_t l)
{
    switch (l) {
    case COLO_LIMIT_WARPS:
        return "warps";
    case COLO_LIMIT_BLOCKS:
        return "blocks";
    case COLO_LIMIT_REGISTERS:
        return "registers";
    case COLO_LIMIT_SHARED:
        return "shared memory";
    }
    return "?";
}

colo_occupancy_t colo_occupancy(const colo_gpu_t *gpu, unsigned threads, int registers,
                                int shared_bytes)
{
    colo_occupancy_t o = {0, 0, COLO_LIMIT_WARPS, 0, 0, INT_MAX, INT_MAX};
    if (threads == 0) threads = COLO_DEFAULT_BLOCK_THREADS;
    o.warps_per_block = (int)((threads + WARP - 1) / WARP);
    o.by_warps = threads > 1024 ? 0 : gpu->sm.max_warps / o.warps_per_block;
    o.by_blocks = gpu->sm.max_blocks;

    if (registers > 0) {
        int per_warp = round_up((long long)registers * WARP, REG_GRANULARITY);
        int per_block = per_warp * o.warps_per_block;
        int assumed = per_warp * round_up(o.warps_per_block, SUBPARTITIONS);
        if (registers > gpu->sm.max_registers_per_thread || per_block > gpu->sm.registers ||
            assumed > gpu->sm.registers) {
            o.by_registers = 0;
        } else {
            int warps_per_sub = (gpu->sm.registers / SUBPARTITIONS) / per_warp;
            o.by_registers = warps_per_sub * SUBPARTITIONS / o.warps_per_block;
        }
    }

    int granularity =
        colo_gpu_cc_major(gpu) >= 8 ? 128 : 256; /* cudaOccSMemAllocationGranularity */
    long long smem = (shared_bytes > 0 ? shared_bytes : 0) + gpu->sm.reserved_shared_per_block;
    if (smem > 0) {
        int per_block = round_up(smem, granularity);
        o.by_shared =
            (shared_bytes > gpu->sm.max_shared_per_block) ? 0 : gpu->sm.shared_bytes / per_block;
    }

    o.blocks_per_sm = o.by_warps;
    o.limiter = COLO_LIMIT_WARPS;
    if (o.by_blocks < o.blocks_per_sm) o.blocks_per_sm = o.by_blocks, o.limiter = COLO_LIMIT_BLOCKS;
    if (o.by_registers < o.blocks_per_sm)
        o.blocks_per_sm = o.by_registers, o.limiter = COLO_LIMIT_REGISTERS;
    if (o.by_shared < o.blocks_per_sm) o.blocks_per_sm = o.by_shared, o.limiter = COLO_LIMIT_SHARED;
    return o;
}
