/* edf.c: earliest deadline first: the ready kernel whose request's deadline (arrival + SLO)
 * comes first launches first; at most `slots` at a time. Tenants without an SLO come last. */
#include "scheduler.h"

static double by_deadline(const colo_sched_item_t *it)
{
    return (double)it->deadline;
}

static long edf_pick(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, by_deadline);
}

const colo_sched_ops_t colo_sched_edf = {
    .name = "edf",
    .summary = "earliest request deadline (arrival + SLO) first, at most slots kernels at a time",
    .params = {"slots", NULL},
    .defaults = {1},
    .pick_next = edf_pick,
};
