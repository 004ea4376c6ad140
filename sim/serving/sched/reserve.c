/* reserve.c: SMs kept free for latency-sensitive kernels by limiting the best-effort blocks in
 * flight, after Orion (Strati et al., EuroSys'24, eth-easl/orion src/scheduler/
 * scheduler_eval.cpp): a best-effort kernel is admitted by the SMs it needs against a
 * threshold, and the latency-sensitive client gets the highest stream priority. Orion sums the
 * needs of the best-effort kernels issued in one polling pass; here the SMs that best-effort
 * kernels may hold are counted over all of them in flight, and each is launched under an SM
 * limit (its blocks on at most that many SMs at once), so best-effort blocks never fill the
 * reserved SMs and a latency-sensitive kernel that fits in them starts at once.
 *
 * reserve_sms: SMs kept free of best-effort blocks; 0: as many as the most any
 * latency-sensitive kernel of the domain has needed so far (its grid / blocks per SM), but at
 * most half the domain's SMs (our choice, not a published figure: a latency-sensitive tenant
 * whose kernels fill the GPU would otherwise leave the best-effort tenant one SM). */
#include "scheduler.h"

#include <stdint.h>

/* The state is the most SMs a latency-sensitive kernel has needed (no allocation). */
static void reserve_arrival(colo_sched_t *s, size_t m)
{
    colo_sched_item_t *it = &s->item[m];
    it->priority = it->cls == COLO_CLASS_LATENCY ? 1 : 0;
    if (it->cls == COLO_CLASS_LATENCY && it->sms_needed > (intptr_t)s->state)
        s->state = (void *)(intptr_t)it->sms_needed;
}

static long reserve_pick(colo_sched_t *s)
{
    int learned = (int)(intptr_t)s->state;
    int reserve = s->param[0] > 0 ? (int)s->param[0] : learned < s->sms / 2 ? learned : s->sms / 2;
    if (reserve > s->sms - 1) reserve = s->sms - 1; /* best-effort work keeps one SM */
    int budget = s->sms - reserve;
    long be = -1;
    for (size_t m = 0; m < s->n; m++) {
        const colo_sched_item_t *it = &s->item[m];
        if (it->cls == COLO_CLASS_LATENCY && it->state == COLO_ITEM_READY) return (long)m;
        if (it->cls != COLO_CLASS_LATENCY && it->state == COLO_ITEM_RUNNING)
            budget -= it->sm_limit;
        if (it->cls != COLO_CLASS_LATENCY && it->state == COLO_ITEM_READY &&
            (be < 0 || it->ready < s->item[be].ready))
            be = (long)m;
    }
    if (be < 0 || budget < 1) return -1;
    colo_sched_item_t *it = &s->item[be];
    it->sm_limit = it->sms_needed < budget ? it->sms_needed : budget;
    if (it->sm_limit < 1) it->sm_limit = 1;
    return be;
}

const colo_sched_ops_t colo_sched_reserve = {
    .name = "reserve",
    .summary = "SMs kept free of best-effort blocks for latency-sensitive kernels: best-effort "
               "kernels run under SM limits that leave reserve_sms free (Orion)",
    .params = {"reserve_sms", NULL},
    .defaults = {0},
    .on_arrival = reserve_arrival,
    .pick_next = reserve_pick,
};
