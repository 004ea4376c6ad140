/* scheduler.h: kernel schedulers for the domains where kernels run together (an MPS server, the
 * process of Green Contexts, MPS inside a MIG instance): a plug-in decides which tenant's ready
 * kernel is launched next, may hold work back, and may preempt a running kernel.
 *
 * The engine keeps one item per member tenant of the domain: its kernel is IDLE (none ready),
 * READY (waiting for the scheduler) or RUNNING. A launched kernel's blocks then wait for free
 * slots on the SMs like any kernel's (docs/model.md, "Blocks on SMs"): a scheduler decides
 * what is launched, when, at which stream priority and under which SM limit, and never takes
 * a resident block off an SM (the GPU does not). It calls on_arrival when a kernel becomes
 * ready, on_complete when one ends (or is lost in a crash), and after either asks pick_next
 * repeatedly, launching each member it returns, until it returns -1. A new scheduler is one file
 * in sim/serving/sched/ plus one line in sim/serving/sched/list.h (or colo_sched_register at run time);
 * docs/schedulers.md walks through writing one. */
#ifndef COLO_SCHEDULER_H
#define COLO_SCHEDULER_H

#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLO_SCHED_MAX_PARAMS 4

/* A tenant's service class (scenario key class = "latency" | "best_effort"). */
typedef enum { COLO_CLASS_LATENCY, COLO_CLASS_BEST_EFFORT } colo_class_t;

typedef enum { COLO_ITEM_IDLE, COLO_ITEM_READY, COLO_ITEM_RUNNING } colo_item_state_t;

/* One member tenant's current kernel, as the scheduler sees it. */
typedef struct colo_sched_item {
    size_t tenant; /* index in the scenario */
    colo_class_t cls;
    colo_item_state_t state;
    colo_time_t ready;     /* when it last became READY */
    colo_time_t deadline;  /* its request's arrival + SLO (the batch's oldest); INT64_MAX: none */
    colo_time_t alone;     /* the kernel's duration alone at its place */
    colo_time_t wave;      /* one wave of its blocks: how long a block runs (preemption latency) */
    int blocks;            /* its grid */
    int sms_needed;        /* SMs its blocks fill at once: ceil(blocks / blocks per SM), <= sms */
    int priority;  /* set by the scheduler: its blocks are dispatched before those of lower
                      priority (a CUDA stream priority; 0 by default) */
    int sm_limit;  /* set by the scheduler when it picks it: at most this many SMs hold its
                      blocks at once (0: no limit beyond its tenant's) */
    bool first_of_request; /* first kernel of its batch */
    bool last_of_request;  /* last kernel of its batch: on_complete means the batch is done */
    bool preempting;       /* a preemption is pending (colo_sched_preempt) */
} colo_sched_item_t;

typedef struct colo_sched colo_sched_t;

typedef struct colo_sched_ops {
    const char *name;
    const char *summary;                             /* one line, for docs and errors */
    const char *params[COLO_SCHED_MAX_PARAMS + 1];   /* parameter names, NULL-terminated */
    double defaults[COLO_SCHED_MAX_PARAMS];
    int (*init)(colo_sched_t *s);                    /* may set s->state; 0 or COLO_ENOMEM */
    void (*on_arrival)(colo_sched_t *s, size_t m);   /* member m's kernel became READY */
    void (*on_complete)(colo_sched_t *s, size_t m);  /* member m's kernel ended (now IDLE) */
    long (*pick_next)(colo_sched_t *s);              /* a READY member to launch, or -1 */
    void (*fini)(colo_sched_t *s);
} colo_sched_ops_t;

struct colo_sched {
    const colo_sched_ops_t *ops;
    double param[COLO_SCHED_MAX_PARAMS]; /* in the order of ops->params */
    colo_sched_item_t *item;              /* one per member */
    size_t n;
    int sms; /* SMs of the domain's part */
    const colo_time_t *now;
    void *state; /* the scheduler's own */
    /* set by the engine: stop member m's running kernel after delay (keeping its progress); it
     * becomes READY again and on_arrival is called for it */
    void (*preempt)(void *engine, size_t m, colo_time_t delay);
    void *engine;
};

/* Asks the engine to preempt member m's running kernel after delay (e.g. at the end of the
 * blocks it has in flight: item.wave). Ignored if m is not RUNNING or already preempting. */
void colo_sched_preempt(colo_sched_t *s, size_t m, colo_time_t delay);

/* Helpers for pick_next: the READY member with the smallest key (ties: earliest ready, then
 * lowest index), or -1. */
long colo_sched_min_ready(const colo_sched_t *s, double (*key)(const colo_sched_item_t *));
/* min_ready under a limit of param[0] kernels running (0: none), for schedulers whose first
 * parameter is "slots". */
long colo_sched_pick_slots(const colo_sched_t *s, double (*key)(const colo_sched_item_t *));
/* Members RUNNING, in total or of one class. */
size_t colo_sched_running(const colo_sched_t *s, int cls); /* cls -1: any */

/* The registry: built-ins (sim/serving/sched/list.h) and those registered at run time. */
const colo_sched_ops_t *colo_sched_find(const char *name);
/* Adds ops (borrowed; must outlive every run). 0, COLO_EINVAL (name taken) or COLO_ENOMEM. */
int colo_sched_register(const colo_sched_ops_t *ops);
/* The names, comma-separated, for messages. */
void colo_sched_names(char *buf, size_t len);

#endif
