/* timeline.h: a run's timeline in Chrome Trace Event JSON (opens in Perfetto and
 * chrome://tracing): one process per kind of track (tenants, SM partitions, copy engines,
 * counters), one thread per track, complete ("X") events for spans, "C" events for counters.
 * Only what overlaps the window [t0, t1) is written, so a long run gives a bounded file. */
#ifndef COLO_TIMELINE_H
#define COLO_TIMELINE_H

#include "atomic_file.h"
#include "errors.h"
#include "simtime.h"

#include <stdbool.h>
#include <stdint.h>

enum colo_tl_pid {
    COLO_TL_TENANTS = 1,     /* a track per tenant: its batches, with its kernels nested */
    COLO_TL_COPIES = 2,      /* a track per copy-engine domain and direction */
    COLO_TL_COUNTERS = 3,    /* queue lengths, kernels running */
    COLO_TL_OWNER = 4,       /* time-slicing: a track per domain, who holds the GPU */
    COLO_TL_PARTITIONS = 10, /* + SM set index: one group per SM partition, its kernels on
                              * lanes; lane 1 only unless kernels co-reside there (MPS) */
};

typedef struct colo_timeline {
    colo_atomic_file_t af;
    colo_time_t t0, t1;
    uint64_t events;
    bool any;
    int failed; /* first write error */
    int errnum; /* and its errno (0: none said) */
} colo_timeline_t;

/* Opens path (atomically: nothing appears there unless colo_timeline_close commits). */
int colo_timeline_open(colo_timeline_t *tl, const char *path, colo_time_t t0, colo_time_t t1,
                       colo_error_t *err);

/* Names a process or a track (thread) of it; sort orders them as given. */
void colo_timeline_name(colo_timeline_t *tl, int pid, int tid, const char *name, int sort);

/* A span [start, end) on track (pid, tid), clipped to the window; args is a JSON object's text
 * (or NULL). */
void colo_timeline_span(colo_timeline_t *tl, int pid, int tid, const char *name, const char *cat,
                        colo_time_t start, colo_time_t end, const char *args);

/* A counter's value from time t on. */
void colo_timeline_counter(colo_timeline_t *tl, int pid, const char *name, colo_time_t t,
                           double value);

/* True when [start, end) overlaps the window: callers skip building arguments otherwise. */
static inline bool colo_timeline_wants(const colo_timeline_t *tl, colo_time_t start,
                                       colo_time_t end)
{
    return tl && start < tl->t1 && (end > tl->t0 || (end == start && start >= tl->t0));
}

/* Writes the end of the document and commits the file (commit false: discards it). */
int colo_timeline_close(colo_timeline_t *tl, bool commit, colo_error_t *err);

#endif
