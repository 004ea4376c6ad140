/* timeline.c: Chrome Trace Event JSON, written as the run goes. */
#include "timeline.h"
#include <string.h>
#include <errno.h>

#include <jansson.h>
#include <stdio.h>

/* The first write error, with its reason. */
static void fail(colo_timeline_t *tl)
{
    if (!tl->failed) tl->errnum = errno;
    tl->failed = COLO_EIO;
}

int colo_timeline_open(colo_timeline_t *tl, const char *path, colo_time_t t0, colo_time_t t1,
                       colo_error_t *err)
{
    *tl = (colo_timeline_t){.t0 = t0, .t1 = t1};
    int rc = colo_atomic_open(&tl->af, path, err);
    if (rc) return rc;
    if (fprintf(tl->af.f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n") < 0)
        fail(tl);
    return 0;
}

static void sep(colo_timeline_t *tl)
{
    if (tl->any && fputs(",\n", tl->af.f) == EOF) fail(tl);
    tl->any = true;
    tl->events++;
}

/* A JSON string (escaped by Jansson). */
static void str(colo_timeline_t *tl, const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (!j || json_dumpf(j, tl->af.f, JSON_ENCODE_ANY)) fail(tl);
    json_decref(j);
}

/* Microseconds, the format's unit, to the nanosecond. */
static double us(colo_time_t t)
{
    return (double)t / 1e3;
}

void colo_timeline_name(colo_timeline_t *tl, int pid, int tid, const char *name, int sort)
{
    FILE *f = tl->af.f;
    const char *what = tid ? "thread" : "process";
    sep(tl);
    fprintf(f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_name\",\"args\":{\"name\":", pid,
            tid, what);
    str(tl, name);
    fprintf(f, "}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_sort_index\","
               "\"args\":{\"sort_index\":%d}}",
            pid, tid, what, sort);
}

void colo_timeline_span(colo_timeline_t *tl, int pid, int tid, const char *name, const char *cat,
                        colo_time_t start, colo_time_t end, const char *args)
{
    if (!colo_timeline_wants(tl, start, end)) return;
    if (start < tl->t0) start = tl->t0;
    if (end > tl->t1) end = tl->t1;
    FILE *f = tl->af.f;
    sep(tl);
    fprintf(f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"name\":",
            pid, tid, us(start), us(end - start), cat);
    str(tl, name);
    if (args) fprintf(f, ",\"args\":%s", args);
    fputc('}', f);
}

void colo_timeline_counter(colo_timeline_t *tl, int pid, const char *name, colo_time_t t,
                           double value)
{
    if (!colo_timeline_wants(tl, t, t)) return;
    sep(tl);
    fprintf(tl->af.f, "{\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"name\":", pid, us(t));
    str(tl, name);
    fprintf(tl->af.f, ",\"args\":{\"value\":%.17g}}", value);
}

int colo_timeline_close(colo_timeline_t *tl, bool commit, colo_error_t *err)
{
    if (!commit) {
        colo_atomic_abort(&tl->af);
        return 0;
    }
    if (fprintf(tl->af.f, "\n],\n\"otherData\": {\"window_start_s\": %.9g, \"window_end_s\": %.9g, "
                          "\"events\": %llu}}\n",
                (double)tl->t0 / 1e9, (double)tl->t1 / 1e9, (unsigned long long)tl->events) < 0)
        fail(tl);
    errno = 0;
    if (!tl->failed && (fflush(tl->af.f) != 0 || ferror(tl->af.f))) fail(tl);
    if (tl->failed) {
        colo_error_set(err, COLO_EIO, tl->af.path, 0, NULL, "cannot write the timeline: %s",
                       strerror(tl->errnum ? tl->errnum : EIO));
        colo_atomic_abort(&tl->af);
        return COLO_EIO;
    }
    return colo_atomic_commit(&tl->af, err);
}
