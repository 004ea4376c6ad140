/* stream_priority.c: CUDA stream priorities: latency-sensitive tenants' kernels are launched on
 * high-priority streams, best-effort ones on normal streams, all at once. The block scheduler
 * then hands free slots to the pending blocks of high-priority kernels first; best-effort
 * blocks already resident run to completion (priorities "do not preempt already-running
 * work", CUDA Driver API, cuStreamCreateWithPriority), so a latency-sensitive kernel waits at
 * most for the blocks in flight, not for the rest of a long best-effort kernel. */
#include "scheduler.h"

static void stream_arrival(colo_sched_t *s, size_t m)
{
    s->item[m].priority = s->item[m].cls == COLO_CLASS_LATENCY ? 1 : 0;
}

static double by_class(const colo_sched_item_t *it)
{
    return (double)it->cls;
}

static long stream_pick(colo_sched_t *s)
{
    return colo_sched_min_ready(s, by_class);
}

const colo_sched_ops_t colo_sched_stream_priority = {
    .name = "stream_priority",
    .summary = "latency-sensitive kernels on high-priority streams: their pending blocks get "
               "free SMs first; resident blocks are not preempted",
    .on_arrival = stream_arrival,
    .pick_next = stream_pick,
};
