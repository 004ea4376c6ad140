/* fifo.c: kernels launch in the order they became ready, at most `slots` at a time (0: no
 * limit, which is what an MPS server does by itself). */
#include "scheduler.h"

static long fifo_pick(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, NULL);
}

const colo_sched_ops_t colo_sched_fifo = {
    .name = "fifo",
    .summary = "in order of readiness, at most slots kernels at a time (0: any number)",
    .params = {"slots", NULL},
    .defaults = {0},
    .pick_next = fifo_pick,
};
