/* timeslice.c: round-robin time-slicing of GPU contexts with preemption and switch cost. */
#include "timeslice.h"
#include "alloc.h"
#include "errors.h"

#include <string.h>

void colo_add_clipped(colo_time_t *acc, colo_time_t a, colo_time_t b, colo_time_t w0,
                      colo_time_t w1)
{
    if (a < w0) a = w0;
    if (b > w1) b = w1;
    if (b > a) *acc += b - a;
}

int colo_ts_init(colo_ts_t *ts, colo_eq_t *eq, size_t n, colo_time_t slice, colo_time_t switch_cost,
                 colo_ts_done_fn on_done, void *obj, const colo_ts_exec_t *exec)
{
    memset(ts, 0, sizeof *ts);
    ts->ctx = colo_calloc(n, sizeof *ts->ctx);
    if (!ts->ctx) return COLO_ENOMEM;
    ts->eq = eq;
    ts->n = n;
    ts->owner = ts->resident = -1;
    ts->phase = COLO_TS_IDLE;
    ts->slice = slice;
    ts->switch_cost = switch_cost;
    ts->on_done = on_done;
    ts->obj = obj;
    if (exec) ts->exec = *exec;
    ts->w1 = COLO_TIME_MAX;
    return 0;
}

void colo_ts_fini(colo_ts_t *ts)
{
    colo_free(ts->ctx);
    ts->ctx = NULL;
}

void colo_ts_set_window(colo_ts_t *ts, colo_time_t w0, colo_time_t w1)
{
    ts->w0 = w0;
    ts->w1 = w1;
}

/* A failed schedule means the heap could not grow: the first failure is kept and the run's
 * loop stops on it (colo_ts_t.failed). */
static void note_failure(colo_ts_t *ts, int rc)
{
    if (rc && !ts->failed) ts->failed = rc;
}

static void on_timer_done(void *obj, int64_t arg);
static void on_slice_end(void *obj, int64_t arg);
static void on_switch_done(void *obj, int64_t arg);

static void account_run(colo_ts_t *ts, colo_time_t now)
{
    struct colo_ts_ctx *c = &ts->ctx[ts->owner];
    if (!ts->exec.start) c->remaining -= now - ts->run_start;
    colo_add_clipped(&ts->busy, ts->run_start, now, ts->w0, ts->w1);
    colo_add_clipped(&c->gpu_time, ts->run_start, now, ts->w0, ts->w1);
    ts->running = false;
    if (ts->exec.observe) ts->exec.observe(ts->exec.obj, (size_t)ts->owner, false);
}

/* Runs the owner's kernel: on the executor, or on the built-in timer. */
static void start_kernel(colo_ts_t *ts)
{
    colo_time_t now = ts->eq->now;
    ts->running = true;
    ts->run_start = now;
    if (ts->exec.observe) ts->exec.observe(ts->exec.obj, (size_t)ts->owner, true);
    if (ts->exec.start) {
        ts->exec.start(ts->exec.obj, (size_t)ts->owner);
        return;
    }
    note_failure(ts, colo_eq_schedule(ts->eq, now + ts->ctx[ts->owner].remaining, on_timer_done, ts,
                                      ts->owner, &ts->done_ev));
}

/* Preempts the owner's running kernel, keeping its progress. */
static void stop_kernel(colo_ts_t *ts)
{
    if (ts->exec.stop)
        ts->exec.stop(ts->exec.obj, (size_t)ts->owner);
    else
        colo_eq_cancel(ts->eq, ts->done_ev);
    ts->done_ev = 0;
    account_run(ts, ts->eq->now);
}

static void tell_owner(colo_ts_t *ts, long owner, bool switching)
{
    if (ts->exec.owner) ts->exec.owner(ts->exec.obj, owner, switching);
}

static void begin_slice(colo_ts_t *ts)
{
    ts->phase = COLO_TS_OWNED;
    tell_owner(ts, ts->owner, false);
    ts->resident = ts->owner;
    if (ts->n > 1) /* alone (a MIG instance of one context): nobody ever waits for its slice */
        note_failure(ts, colo_eq_schedule(ts->eq, ts->eq->now + ts->slice, on_slice_end, ts, 0,
                                          &ts->slice_ev));
    start_kernel(ts);
}

static void grant(colo_ts_t *ts, size_t c)
{
    ts->owner = (long)c;
    if (ts->resident == (long)c) {
        begin_slice(ts);
        return;
    }
    ts->switches++;
    if (ts->switch_cost <= 0) {
        begin_slice(ts);
        return;
    }
    ts->phase = COLO_TS_SWITCHING;
    tell_owner(ts, ts->owner, true);
    note_failure(
        ts, colo_eq_schedule(ts->eq, ts->eq->now + ts->switch_cost, on_switch_done, ts, 0, NULL));
}

/* The next context after the owner (or after the resident one) that has work, or -1.
 * O(n) in the number of contexts, which is small (tens). */
static long next_waiting(const colo_ts_t *ts)
{
    long from = ts->owner >= 0 ? ts->owner : ts->resident;
    for (size_t k = 1; k <= ts->n; k++) {
        size_t c = (size_t)((from + (long)k + (long)ts->n) % (long)ts->n);
        if ((long)c != ts->owner && ts->ctx[c].work > 0) return (long)c;
    }
    return -1;
}

static void yield(colo_ts_t *ts)
{
    colo_eq_cancel(ts->eq, ts->slice_ev);
    ts->slice_ev = 0;
    long next = next_waiting(ts);
    ts->owner = -1;
    ts->phase = COLO_TS_IDLE;
    if (next >= 0)
        grant(ts, (size_t)next);
    else
        tell_owner(ts, -1, false);
}

static void on_switch_done(void *obj, int64_t arg)
{
    (void)arg;
    colo_ts_t *ts = obj;
    colo_add_clipped(&ts->switching, ts->eq->now - ts->switch_cost, ts->eq->now, ts->w0, ts->w1);
    ts->resident = ts->owner;
    if (ts->ctx[ts->owner].work > 0)
        begin_slice(ts);
    else /* its kernel was aborted while the switch went on */
        yield(ts);
}

/* One of c's kernels has ended: when it was the last, c stops running; either way the callee
 * may submit c's next kernel, which then starts at once. */
static void finish(colo_ts_t *ts, size_t c)
{
    if (--ts->ctx[c].work == 0) {
        ts->done_ev = 0;
        account_run(ts, ts->eq->now);
        ts->ctx[c].remaining = 0;
    }
    ts->on_done(ts->obj, c);
    if (ts->owner == (long)c && !ts->running) yield(ts);
}

static void on_timer_done(void *obj, int64_t arg)
{
    finish(obj, (size_t)arg);
}

void colo_ts_kernel_done(colo_ts_t *ts, size_t ctx)
{
    if (ts->owner == (long)ctx && ts->running) finish(ts, ctx);
}

void colo_ts_abort(colo_ts_t *ts, size_t c)
{
    if (c >= ts->n || ts->ctx[c].work == 0) return;
    if (ts->owner == (long)c && ts->running) stop_kernel(ts);
    ts->ctx[c].work = 0;
    ts->ctx[c].remaining = 0;
    if (ts->owner == (long)c && ts->phase == COLO_TS_OWNED) yield(ts);
    /* while switching to c, on_switch_done finds no work and yields */
}

static void on_slice_end(void *obj, int64_t arg)
{
    (void)arg;
    colo_ts_t *ts = obj;
    ts->slice_ev = 0;
    long next = next_waiting(ts);
    if (next < 0) { /* nobody waiting: the owner keeps the GPU for another slice */
        note_failure(ts, colo_eq_schedule(ts->eq, ts->eq->now + ts->slice, on_slice_end, ts, 0,
                                          &ts->slice_ev));
        return;
    }
    if (ts->running) {
        stop_kernel(ts);
        ts->preemptions++;
    }
    grant(ts, (size_t)next);
}

void colo_ts_close(colo_ts_t *ts, colo_time_t end)
{
    if (!ts->running) return;
    colo_add_clipped(&ts->busy, ts->run_start, end, ts->w0, ts->w1);
    colo_add_clipped(&ts->ctx[ts->owner].gpu_time, ts->run_start, end, ts->w0, ts->w1);
    ts->run_start = end;
}

int colo_ts_submit(colo_ts_t *ts, size_t c, colo_time_t work)
{
    if (c >= ts->n || (!ts->exec.start && ts->ctx[c].work > 0)) return COLO_ESTATE;
    ts->ctx[c].work++;
    ts->ctx[c].remaining = work;
    if (ts->phase == COLO_TS_IDLE)
        grant(ts, c);
    else if (ts->phase == COLO_TS_OWNED && ts->owner == (long)c && !ts->running)
        start_kernel(ts);
    else if (ts->phase == COLO_TS_OWNED && ts->owner == (long)c && ts->exec.start)
        ts->exec.start(ts->exec.obj, c); /* joins the owner's running kernels */
    return 0;
}
