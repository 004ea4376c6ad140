/* event_queue.h: the engine's future-event list, a binary min-heap keyed on (time, sequence). */
#ifndef COLO_EVENT_QUEUE_H
#define COLO_EVENT_QUEUE_H

#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What an event does when it fires: fn(obj, arg). obj is borrowed, never freed by the queue. */
typedef void (*colo_event_fn)(void *obj, int64_t arg);

/* Names one scheduled event for colo_eq_cancel. 0 never names an event. A handle stays safe
 * to use after its event fired or was cancelled: cancel then answers COLO_ENOENT. */
typedef uint64_t colo_event_id_t;

/* A fired event, as colo_eq_pop hands it out. */
typedef struct colo_event {
    colo_time_t time;
    colo_event_fn fn;
    void *obj;
    int64_t arg;
} colo_event_t;

struct colo_eq_node; /* heap entry: key and the slot that holds the payload */
struct colo_eq_slot; /* payload, position in the heap, generation */

/* Caller-owned queue: colo_eq_init / colo_eq_fini. Ties in time fire in scheduling order. */
typedef struct colo_eq {
    struct colo_eq_node *heap;
    size_t n, heap_cap;
    struct colo_eq_slot *slots;
    size_t slot_cap;
    uint32_t free_head; /* free slot list, UINT32_MAX when empty */
    uint64_t next_seq;
    uint64_t seq_limit; /* sequence numbers are renumbered on reaching this (tests lower it) */
    bool hole;          /* heap[0] was popped and not yet refilled */
    colo_time_t now;    /* time of the last popped event */
    uint64_t popped;    /* events fired so far */
} colo_eq_t;

/* Prepares an empty queue at time 0 with room for about hint events. 0 or COLO_ENOMEM. */
int colo_eq_init(colo_eq_t *q, size_t hint);
void colo_eq_fini(colo_eq_t *q);

/* Schedules fn(obj, arg) at time t >= q->now; stores its handle in *id if id is not NULL.
 * Returns 0, COLO_EINVAL for a time in the past, or COLO_ENOMEM. O(log n). */
int colo_eq_schedule(colo_eq_t *q, colo_time_t t, colo_event_fn fn, void *obj, int64_t arg,
                     colo_event_id_t *id);

/* Removes a pending event. 0, or COLO_ENOENT if it already fired or was cancelled. O(log n). */
int colo_eq_cancel(colo_eq_t *q, colo_event_id_t id);

/* Takes the earliest event (ties: the one scheduled first) into *ev and advances q->now to its
 * time. Returns false when the queue is empty. O(log n). */
bool colo_eq_pop(colo_eq_t *q, colo_event_t *ev);

/* Time of the earliest pending event, or COLO_TIME_MAX when none. O(1). */
colo_time_t colo_eq_peek_time(const colo_eq_t *q);

/* Brings an idle queue's clock forward to t (no earlier event may be pending): a run of a fleet
 * that another run's event touches at t (sim/fleet). */
static inline void colo_eq_set_now(colo_eq_t *q, colo_time_t t)
{
    if (t > q->now) q->now = t;
}

static inline size_t colo_eq_size(const colo_eq_t *q)
{
    return q->n - (size_t)q->hole;
}

#endif
