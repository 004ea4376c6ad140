/* timeline.h: a run's timeline in Chrome Trace Event JSON (opens in Perfetto and
 * chrome://tracing): one process per kind of track (tenants, requests, SM partitions, copy
 * engines, counters), one thread per track, complete ("X") events for spans, "C" events for
 * counters, flow ("s"/"f") events for arrows between spans. Only what overlaps the window
 * [t0, t1) is written, so a long run gives a bounded file; a path ending ".json.gz" is written
 * gzipped (Perfetto opens it as it is). */
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
    COLO_TL_REQUESTS = 5,    /* each request from arrival to its end, on lanes per tenant */
    COLO_TL_PARTITIONS = 10, /* + SM set index: one group per SM partition, its kernels on
                              * lanes; lane 1 only unless kernels co-reside there (MPS) */
};

/* What a timeline costs, measured on scenarios/resnet50_bert_timeslice.cfg (docs/results.md,
 * "Timeline"): bytes of JSON per kernel run in the window (its two spans, the kernels-running
 * counter, its flow from its request, and its share of batches, requests and switches), and how
 * much smaller gzip makes it. For colosim run's size estimate. */
#define COLO_TL_BYTES_PER_KERNEL 660.0
#define COLO_TL_GZIP_RATIO 12.0

typedef struct colo_timeline {
    colo_atomic_file_t af;
    void *gz;  /* a gzFile when the path ends ".json.gz", else NULL: af.f is written */
    char *buf; /* output not yet handed to af.f or gz */
    size_t len;
    colo_time_t t0, t1;
    uint64_t events;
    uint64_t flows;   /* flow ids given so far */
    uint64_t undrawn; /* spans not drawn, for want of a free lane (colo_timeline_undrawn) */
    bool any;
    int failed; /* first write error */
    int errnum; /* and its errno (0: none said) */
} colo_timeline_t;

/* True when path names a gzipped timeline (ends ".json.gz" or ".gz"). */
bool colo_timeline_gzipped(const char *path);

/* Opens path (atomically: nothing appears there unless colo_timeline_close commits), gzipped
 * when colo_timeline_gzipped(path). */
int colo_timeline_open(colo_timeline_t *tl, const char *path, colo_time_t t0, colo_time_t t1,
                       colo_error_t *err);

/* Names a process or a track (thread) of it; sort orders them as given. */
void colo_timeline_name(colo_timeline_t *tl, int pid, int tid, const char *name, int sort);

/* A span [start, end) on track (pid, tid), clipped to the window; args is a JSON object's text
 * (or NULL). */
void colo_timeline_span(colo_timeline_t *tl, int pid, int tid, const char *name, const char *cat,
                        colo_time_t start, colo_time_t end, const char *args);

/* An arrow from the span enclosing time t on track (pid, tid) to the span enclosing t on track
 * (to_pid, to_tid): a flow's "s" and "f" events with a fresh id, both bound to their enclosing
 * slices. t must lie inside both spans (strictly, where they begin or end at t) and in the window;
 * the caller writes the spans, before or after. */
void colo_timeline_flow(colo_timeline_t *tl, int pid, int tid, int to_pid, int to_tid,
                        colo_time_t t);

/* Counts a span that overlapped the window but was not drawn (written in otherData). */
static inline void colo_timeline_undrawn(colo_timeline_t *tl)
{
    tl->undrawn++;
}

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
