/* test_occupancy.c: blocks per SM as cuda_occupancy.h computes them. */
#include "helpers.h"
#include "occupancy.h"

#include <criterion/criterion.h>

TestSuite(occupancy, .init = test_init);

Test(occupancy, hopper_limits)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    colo_occupancy_t o = colo_occupancy(h, 256, 32, 0);
    cr_assert_eq(o.blocks_per_sm, 8, "64 warps / 8 per block");
    cr_assert_eq(o.limiter, COLO_LIMIT_WARPS);
    o = colo_occupancy(h, 256, 64, 0);
    cr_assert_eq(o.blocks_per_sm, 4, "64 regs: 2048 per warp, 8 warps per sub-partition");
    cr_assert_eq(o.limiter, COLO_LIMIT_REGISTERS);
    o = colo_occupancy(h, 256, 32, 48 * 1024);
    cr_assert_eq(o.blocks_per_sm, 4, "(48 KB + 1 KB reserved) into 228 KB");
    cr_assert_eq(o.limiter, COLO_LIMIT_SHARED);
    o = colo_occupancy(h, 32, 16, 0);
    cr_assert_eq(o.blocks_per_sm, 32, "one-warp blocks hit the 32-block limit");
    cr_assert_eq(o.limiter, COLO_LIMIT_BLOCKS);
    cr_assert_eq(colo_occupancy(h, 0, -1, -1).blocks_per_sm, 8, "unknown block: 256 threads");
    colo_gpu_free(h);
}

Test(occupancy, volta_allocates_shared_memory_in_256_byte_units_without_reservation)
{
    colo_gpu_t *v = open_gpu("v100-sxm2");
    cr_assert_eq(colo_occupancy(v, 256, 32, 48 * 1024).blocks_per_sm, 2);
    cr_assert_eq(colo_occupancy(v, 128, 32, 100).blocks_per_sm, 16, "256 B each: not a limit");
    colo_gpu_free(v);
}

Test(occupancy, orin_has_48_warps)
{
    colo_gpu_t *o = open_gpu("orin-agx");
    cr_assert_eq(colo_occupancy(o, 256, 32, 0).blocks_per_sm, 6);
    colo_gpu_free(o);
}

Test(occupancy, impossible_blocks_get_zero)
{
    colo_gpu_t *h = open_gpu("h100-sxm");
    cr_assert_eq(colo_occupancy(h, 2048, 32, 0).blocks_per_sm, 0, "over 1024 threads");
    cr_assert_eq(colo_occupancy(h, 256, 256, 0).blocks_per_sm, 0, "over 255 registers");
    cr_assert_eq(colo_occupancy(h, 1024, 128, 0).blocks_per_sm, 0, "128 regs x 1024 > 64K");
    cr_assert_eq(colo_occupancy(h, 256, 32, 240 * 1024).blocks_per_sm, 0, "over 227 KB");
    colo_gpu_free(h);
}
