/* fifo.c: kernels launch in the order they became ready, at most `slots` at a time (0: no
 * limit, which is what an MPS server does by itself). */
#include "scheduler.h"

static long fifo_pick(colo_sched_t *s)
{
    if (s->param[0] > 0 && (double)colo_sched_running(s, -1) >= s->param[0]) return -1;
    return colo_sched_min_ready(s, NULL);
}

const colo_sched_ops_t colo_sched_fifo = {
    .name = "fifo",
    .summary = "in order of readiness, at most slots kernels at a time (0: any number)",
    .params = {"slots", NULL},
    .defaults = {0},
    .pick_next = fifo_pick,
};
