/* timeslice.h: the time-slicing policy: one context owns the GPU at a time, round robin.
 *
 * As the GPU's runlist scheduler does: the owner keeps the GPU while it has work, for at most
 * one time slice when another context is waiting; when its slice expires the running kernel is
 * preempted (compute preemption, instruction level since Pascal) and resumes later where it
 * stopped; an owner that runs out of work yields at once. Loading a context other than the one
 * last resident costs a switch. Kernels run alone, at their isolated duration. */
#ifndef COLO_TIMESLICE_H
#define COLO_TIMESLICE_H

#include "event_queue.h"
#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called when context ctx's kernel has finished; the callee may submit the next one at once. */
typedef void (*colo_ts_done_fn)(void *obj, size_t ctx);

/* What runs the kernels. start runs ctx's submitted kernels that are not running, each from
 * where it stopped; stop preempts all of ctx's running kernels, keeping their progress; the
 * executor calls colo_ts_kernel_done when one ends. With an executor a context may have several
 * kernels submitted at once (several streams of one process), which run together while it owns
 * the GPU. Without one (NULL), the policy times kernels itself by the work given to
 * colo_ts_submit, one at a time per context. */
typedef struct colo_ts_exec {
    void (*start)(void *obj, size_t ctx);
    void (*stop)(void *obj, size_t ctx);
    void *obj;
    /* Optional, with either kind of execution: told when ctx's kernel starts running (true) and
     * when it stops, is preempted or ends (false). */
    void (*observe)(void *obj, size_t ctx, bool running);
    /* Optional: told when the GPU changes hands: switching to owner (its context's state being
     * loaded), owned by owner, or idle (owner -1). */
    void (*owner)(void *obj, long owner, bool switching);
} colo_ts_exec_t;

struct colo_ts_ctx {
    int work;              /* kernels submitted and not finished */
    colo_time_t remaining; /* built-in timer: GPU time its kernel still needs */
    colo_time_t gpu_time;  /* GPU time it received inside the measurement window */
};

typedef struct colo_ts {
    colo_eq_t *eq; /* borrowed */
    size_t n;
    struct colo_ts_ctx *ctx;
    long owner;    /* context holding the GPU, -1 none */
    long resident; /* context whose state is loaded, -1 none */
    enum { COLO_TS_IDLE, COLO_TS_SWITCHING, COLO_TS_OWNED } phase;
    bool running; /* the owner's kernel is executing */
    colo_time_t run_start;
    colo_event_id_t done_ev, slice_ev;
    colo_time_t slice, switch_cost;
    colo_ts_done_fn on_done;
    void *obj;
    colo_ts_exec_t exec; /* start == NULL: the built-in timer */
    /* statistics, clipped to the window [w0, w1) */
    colo_time_t w0, w1;
    colo_time_t busy, switching;
    uint64_t switches, preemptions;
    int failed; /* first error (COLO_ENOMEM) met inside an event, 0 if none */
} colo_ts_t;

/* Prepares the policy for n contexts, kernels run by exec (borrowed contents copied; NULL for
 * the built-in timer). 0 or COLO_ENOMEM. */
int colo_ts_init(colo_ts_t *ts, colo_eq_t *eq, size_t n, colo_time_t slice, colo_time_t switch_cost,
                 colo_ts_done_fn on_done, void *obj, const colo_ts_exec_t *exec);
void colo_ts_fini(colo_ts_t *ts);

/* Sets the window the time statistics are clipped to. */
void colo_ts_set_window(colo_ts_t *ts, colo_time_t w0, colo_time_t w1);

/* Context ctx has a kernel ready (needing work of GPU time alone, for the built-in timer). With
 * the built-in timer a context submits one kernel at a time (stream order); with an executor,
 * any number. 0, COLO_ESTATE if the timer's ctx already has one, or COLO_ENOMEM. */
int colo_ts_submit(colo_ts_t *ts, size_t ctx, colo_time_t work);

/* The executor reports that one of ctx's running kernels has ended. */
void colo_ts_kernel_done(colo_ts_t *ts, size_t ctx);

/* Drops ctx's kernels without completing them (its process died): stops them if they run, and
 * gives the GPU to the next context. No done callback. */
void colo_ts_abort(colo_ts_t *ts, size_t ctx);

/* Ends the statistics at time end: a kernel still running counts as busy up to end. The
 * policy's state is left as it is. */
void colo_ts_close(colo_ts_t *ts, colo_time_t end);

/* Adds the part of [a, b) that lies in [w0, w1) to *acc. */
void colo_add_clipped(colo_time_t *acc, colo_time_t a, colo_time_t b, colo_time_t w0,
                      colo_time_t w1);

#endif
