/* one_at_a_time.c: one request on the GPU at a time, as Clockwork does for predictable
 * latency: the tenant whose batch is running owns the domain and launches its kernels alone
 * until the batch's last kernel ends; the next owner is the tenant whose waiting request has
 * the earliest deadline. */
#include "scheduler.h"

#include <stdint.h>

static int one_init(colo_sched_t *s)
{
    s->state = (void *)(intptr_t)-1; /* the owner, -1 none */
    return 0;
}

static void one_complete(colo_sched_t *s, size_t m)
{
    if ((intptr_t)s->state == (intptr_t)m && s->item[m].last_of_request)
        s->state = (void *)(intptr_t)-1;
}

static double by_deadline(const colo_sched_item_t *it)
{
    return (double)it->deadline;
}

static long one_pick(colo_sched_t *s)
{
    intptr_t owner = (intptr_t)s->state;
    if (owner >= 0) return s->item[owner].state == COLO_ITEM_READY ? (long)owner : -1;
    long m = colo_sched_min_ready(s, by_deadline);
    if (m >= 0) s->state = (void *)(intptr_t)m;
    return m;
}

const colo_sched_ops_t colo_sched_one_at_a_time = {
    .name = "one_at_a_time",
    .summary = "one request at a time on the GPU (Clockwork), earliest deadline next",
    .init = one_init,
    .on_complete = one_complete,
    .pick_next = one_pick,
};
