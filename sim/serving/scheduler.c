/* scheduler.c: the scheduler registry and helpers for plug-ins. */
#include "scheduler.h"
#include "alloc.h"
#include "errors.h"

#include <stdio.h>
#include <string.h>

#define COLO_SCHED(n) extern const colo_sched_ops_t colo_sched_##n;
#include "sched/list.h"
#undef COLO_SCHED

static const colo_sched_ops_t *const builtin[] = {
#define COLO_SCHED(n) &colo_sched_##n,
#include "sched/list.h"
#undef COLO_SCHED
};

static const colo_sched_ops_t **extra;
static size_t n_extra, cap_extra;

const colo_sched_ops_t *colo_sched_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
        if (strcmp(builtin[i]->name, name) == 0) return builtin[i];
    for (size_t i = 0; i < n_extra; i++)
        if (strcmp(extra[i]->name, name) == 0) return extra[i];
    return NULL;
}

int colo_sched_register(const colo_sched_ops_t *ops)
{
    if (!ops || !ops->name || !ops->pick_next || colo_sched_find(ops->name)) return COLO_EINVAL;
    if (colo_grow((void **)&extra, &cap_extra, n_extra + 1, sizeof *extra)) return COLO_ENOMEM;
    extra[n_extra++] = ops;
    return 0;
}

void colo_sched_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof builtin / sizeof *builtin + n_extra; i++) {
        const char *n = i < sizeof builtin / sizeof *builtin
                            ? builtin[i]->name
                            : extra[i - sizeof builtin / sizeof *builtin]->name;
        int w = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
    }
}

void colo_sched_preempt(colo_sched_t *s, size_t m, colo_time_t delay)
{
    if (m >= s->n || s->item[m].state != COLO_ITEM_RUNNING || s->item[m].preempting) return;
    s->item[m].preempting = true;
    s->preempt(s->engine, m, delay);
}

long colo_sched_min_ready(const colo_sched_t *s, double (*key)(const colo_sched_item_t *))
{
    long best = -1;
    double bk = 0;
    for (size_t m = 0; m < s->n; m++) {
        const colo_sched_item_t *it = &s->item[m];
        if (it->state != COLO_ITEM_READY) continue;
        double k = key ? key(it) : 0;
        if (best < 0 || k < bk || (k == bk && it->ready < s->item[best].ready)) {
            best = (long)m;
            bk = k;
        }
    }
    return best;
}

long colo_sched_pick_slots(const colo_sched_t *s, double (*key)(const colo_sched_item_t *))
{
    if (s->param[0] > 0 && (double)colo_sched_running(s, -1) >= s->param[0]) return -1;
    return colo_sched_min_ready(s, key);
}

size_t colo_sched_running(const colo_sched_t *s, int cls)
{
    size_t n = 0;
    for (size_t m = 0; m < s->n; m++)
        n += s->item[m].state == COLO_ITEM_RUNNING && (cls < 0 || (int)s->item[m].cls == cls);
    return n;
}
