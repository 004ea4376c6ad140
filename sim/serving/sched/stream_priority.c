/* stream_priority.c: stream priorities with preemption at block boundaries, as the GPU does for a
 * high-priority stream: when a latency-sensitive kernel becomes ready, every running
 * best-effort kernel is stopped once the blocks it has in flight finish (one wave of its
 * blocks), keeping its progress; the latency-sensitive kernel launches when they are off the
 * SMs. Best-effort kernels run (or resume) whenever no latency-sensitive kernel is ready or
 * running. */
#include "scheduler.h"

static void preempt_arrival(colo_sched_t *s, size_t m)
{
    if (s->item[m].cls != COLO_CLASS_LATENCY) return;
    for (size_t k = 0; k < s->n; k++)
        if (s->item[k].cls == COLO_CLASS_BEST_EFFORT && s->item[k].state == COLO_ITEM_RUNNING)
            colo_sched_preempt(s, k, s->item[k].wave);
}

static double by_class(const colo_sched_item_t *it)
{
    return (double)it->cls;
}

static long preempt_pick(colo_sched_t *s)
{
    long m = colo_sched_min_ready(s, by_class);
    if (m < 0) return -1;
    if (s->item[m].cls == COLO_CLASS_LATENCY) /* waits for preempted kernels to leave */
        return colo_sched_running(s, COLO_CLASS_BEST_EFFORT) ? -1 : m;
    return colo_sched_running(s, COLO_CLASS_LATENCY) ? -1 : m;
}

const colo_sched_ops_t colo_sched_stream_priority = {
    .name = "stream_priority",
    .summary = "high-priority streams: best-effort kernels are preempted at block boundaries",
    .on_arrival = preempt_arrival,
    .pick_next = preempt_pick,
};
