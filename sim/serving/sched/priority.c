/* priority.c: strict priority: a latency-sensitive tenant's ready kernel always launches before
 * a best-effort one; in order of readiness within a class; at most `slots` at a time. */
#include "scheduler.h"

static double by_class(const colo_sched_item_t *it)
{
    return (double)it->cls;
}

static long priority_pick(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, by_class);
}

const colo_sched_ops_t colo_sched_priority = {
    .name = "priority",
    .summary = "latency-sensitive before best-effort, at most slots kernels at a time",
    .params = {"slots", NULL},
    .defaults = {1},
    .pick_next = priority_pick,
};
