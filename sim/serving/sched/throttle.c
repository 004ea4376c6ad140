/* throttle.c: best-effort throttling while latency-sensitive work runs, after Orion (EuroSys'24)
 * and REEF (OSDI'22): latency-sensitive kernels always launch at once; a best-effort kernel
 * launches when no latency-sensitive kernel is running, or when it is short (alone at most
 * be_max_us) and its blocks fit in the SMs the running latency-sensitive kernels leave free. */
#include "scheduler.h"

static long throttle_pick(colo_sched_t *s)
{
    int busy = 0; /* SMs the running latency-sensitive kernels hold */
    bool ls_running = false;
    for (size_t m = 0; m < s->n; m++) {
        const colo_sched_item_t *it = &s->item[m];
        if (it->cls == COLO_CLASS_LATENCY && it->state == COLO_ITEM_READY) return (long)m;
        if (it->cls == COLO_CLASS_LATENCY && it->state == COLO_ITEM_RUNNING) {
            ls_running = true;
            busy += it->blocks < s->sms ? it->blocks : s->sms;
        }
    }
    for (size_t m = 0; m < s->n; m++) {
        const colo_sched_item_t *it = &s->item[m];
        if (it->state != COLO_ITEM_READY) continue;
        if (!ls_running) return (long)m;
        if ((double)it->alone <= s->param[0] * 1e3 && it->blocks <= s->sms - busy) return (long)m;
    }
    return -1;
}

const colo_sched_ops_t colo_sched_throttle = {
    .name = "throttle",
    .summary = "best-effort kernels held while latency-sensitive ones run, unless short and "
               "they fit in the free SMs (Orion, REEF)",
    .params = {"be_max_us", NULL},
    .defaults = {100},
    .pick_next = throttle_pick,
};
