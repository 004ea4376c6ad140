/* hw_rig.h: a GPU's hardware model on an event queue, and kernels of chosen shapes, for the
 * unit tests of the contention model (test_hardware.c) and of blocks on SMs (test_blocks.c). */
#ifndef COLO_TEST_HW_RIG_H
#define COLO_TEST_HW_RIG_H

#include "alloc.h"
#include "gpu_catalog.h"
#include "hardware.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

struct rig {
    colo_eq_t eq;
    colo_gpu_t *gpu;
    colo_hw_t hw;
    colo_time_t done_at[64];
    int n_done;
};

static inline void done(void *obj, int64_t arg)
{
    struct rig *r = obj;
    r->done_at[arg] = r->eq.now;
    r->n_done++;
}

/* The rig's GPU has no fixed costs (no dispatch gap, no floor): these tests check how
 * kernels share the hardware, with durations that are whole waves and transfers;
 * test_kernel_model.c checks the fixed part. */
static inline void rig_init(struct rig *r, const char *gpu)
{
    memset(r, 0, sizeof *r);
    colo_eq_init(&r->eq, 0);
    r->gpu = open_gpu(gpu);
    r->gpu->launch.dispatch_us = r->gpu->launch.floor_us = 0;
    cr_assert_eq(colo_hw_init(&r->hw, r->gpu, &r->eq), 0);
}

static inline void rig_run(struct rig *r)
{
    colo_event_t ev;
    while (colo_eq_pop(&r->eq, &ev))
        ev.fn(ev.obj, ev.arg);
    cr_assert_eq(r->hw.failed, 0);
}

static inline void rig_fini(struct rig *r)
{
    colo_hw_fini(&r->hw);
    colo_gpu_free(r->gpu);
    colo_eq_fini(&r->eq);
}

/* A kernel with blocks of the given shape (registers per thread and shared memory per block:
 * -1 unknown). */
static inline colo_kernel_work_t kwork_shape(const colo_gpu_t *g, unsigned blocks, unsigned threads,
                                             int regs, int smem, colo_time_t dur, colo_kclass_t c,
                                             double dram_bytes, double l2_bytes)
{
    colo_op_t k;
    memset(&k, 0, sizeof k);
    k.type = COLO_OP_KERNEL;
    k.name = "k";
    k.grid[0] = blocks;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = threads;
    k.block[1] = k.block[2] = 1;
    k.registers = regs;
    k.shared_bytes = smem;
    k.dram_bytes = dram_bytes;
    k.l2_bytes = l2_bytes;
    k.flops = -1;
    k.duration = dur;
    k.kclass = c;
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(&k, g, g, COLO_FP32_PYTORCH, &w, "t", 0, &err), 0);
    return w;
}

/* One of 256-thread blocks, no register or shared memory limit. */
static inline colo_kernel_work_t kwork(const colo_gpu_t *g, unsigned blocks, colo_time_t dur,
                                       colo_kclass_t c, double dram_bytes, double l2_bytes)
{
    return kwork_shape(g, blocks, 256, -1, -1, dur, c, dram_bytes, l2_bytes);
}

static const colo_hw_place_t whole = {0, 0, 0, 0, 0};

/* An SM set of n SMs starting at first. */
static inline uint32_t sms(struct rig *r, int first, int n)
{
    int ids[256];
    for (int i = 0; i < n; i++)
        ids[i] = first + i;
    uint32_t idx;
    cr_assert_eq(colo_hw_add_sm_set(&r->hw, ids, n, &idx), 0);
    return idx;
}

static inline void start(struct rig *r, const colo_kernel_work_t *w, colo_hw_place_t p, int64_t tag)
{
    cr_assert_eq(colo_hw_kernel_start(&r->hw, w, p, 1.0, done, r, tag, NULL), 0);
}

#define NEAR(x, y, rel) (fabs((double)(x) - (double)(y)) <= (rel)*fabs((double)(y)))

#endif
