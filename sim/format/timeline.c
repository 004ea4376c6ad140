/* timeline.c: Chrome Trace Event JSON, written as the run goes, through a buffer of our own to
 * the file or to zlib. */
#include "timeline.h"
#include "alloc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* Bytes gathered before they go to the file or to zlib; one event is far shorter, except for
 * names, which are written in pieces. */
#define TL_BUF 65536
#define TL_EVENT_MAX 512 /* room left before an event's fixed part is formatted */
/* gzip level 1: twice as fast as the default 6, and the file ~30 % larger (docs/results.md,
 * "Timeline"); compressing is most of the cost of a long window. */
#define TL_GZ_MODE "wb1"

/* The first write error, with its reason. */
static void fail(colo_timeline_t *tl)
{
    if (!tl->failed) tl->errnum = errno;
    tl->failed = COLO_EIO;
}

/* Hands the buffer to zlib or the file. */
static void flush(colo_timeline_t *tl)
{
    if (!tl->len) return;
    errno = 0;
    if (tl->gz) {
        if (gzwrite((gzFile)tl->gz, tl->buf, (unsigned)tl->len) != (int)tl->len) fail(tl);
    } else if (fwrite(tl->buf, 1, tl->len, tl->af.f) != tl->len) {
        fail(tl);
    }
    tl->len = 0;
}

/* n bytes of s. */
static void put(colo_timeline_t *tl, const char *s, size_t n)
{
    while (n) {
        if (tl->len == TL_BUF) flush(tl);
        size_t k = TL_BUF - tl->len < n ? TL_BUF - tl->len : n;
        memcpy(tl->buf + tl->len, s, k);
        tl->len += k;
        s += k;
        n -= k;
    }
}

/* A formatted piece of an event, at most TL_EVENT_MAX bytes (numbers and fixed keys only). */
__attribute__((format(printf, 2, 3))) static void putf(colo_timeline_t *tl, const char *fmt, ...)
{
    if (TL_BUF - tl->len < TL_EVENT_MAX) flush(tl);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tl->buf + tl->len, TL_BUF - tl->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= TL_BUF - tl->len) { /* cannot happen with our formats */
        errno = EOVERFLOW;
        fail(tl);
        return;
    }
    tl->len += (size_t)n;
}

/* A JSON string: quotes, backslashes and control characters escaped as Jansson does; the text
 * is UTF-8 already (names from scenarios and traces, which their readers checked). */
static void str(colo_timeline_t *tl, const char *s)
{
    put(tl, "\"", 1);
    const char *p = s ? s : "", *run = p;
    for (; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        put(tl, run, (size_t)(p - run));
        run = p + 1;
        char esc[8];
        const char *named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\t' ? "\\t"
                            : c == '\r' ? "\\r"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                                        : NULL;
        if (!named) {
            snprintf(esc, sizeof esc, "\\u%04X", c);
            named = esc;
        }
        put(tl, named, strlen(named));
    }
    put(tl, run, (size_t)(p - run));
    put(tl, "\"", 1);
}

/* Before each event: the comma after the one before. */
static void sep(colo_timeline_t *tl)
{
    if (tl->any) put(tl, ",\n", 2);
    tl->any = true;
    tl->events++;
}

/* Microseconds, the format's unit, to the nanosecond. */
static double us(colo_time_t t)
{
    return (double)t / 1e3;
}

bool colo_timeline_gzipped(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

int colo_timeline_open(colo_timeline_t *tl, const char *path, colo_time_t t0, colo_time_t t1,
                       colo_error_t *err)
{
    *tl = (colo_timeline_t){.t0 = t0, .t1 = t1};
    int rc = colo_atomic_open(&tl->af, path, err);
    if (rc) return rc;
    tl->buf = colo_malloc(TL_BUF);
    if (!tl->buf) {
        colo_atomic_abort(&tl->af);
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    if (colo_timeline_gzipped(path)) { /* zlib writes a descriptor of its own onto the file */
        int fd = dup(fileno(tl->af.f));
        tl->gz = fd < 0 ? NULL : gzdopen(fd, TL_GZ_MODE);
        if (!tl->gz) {
            int e = errno;
            if (fd >= 0) close(fd);
            colo_free(tl->buf);
            tl->buf = NULL;
            colo_atomic_abort(&tl->af);
            return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot compress the timeline: %s",
                                  strerror(e ? e : ENOMEM));
        }
        gzbuffer((gzFile)tl->gz, 256 * 1024);
    }
    putf(tl, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    return 0;
}

void colo_timeline_name(colo_timeline_t *tl, int pid, int tid, const char *name, int sort)
{
    const char *what = tid ? "thread" : "process";
    sep(tl);
    putf(tl, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_name\",\"args\":{\"name\":", pid,
         tid, what);
    str(tl, name);
    putf(tl,
         "}},\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"%s_sort_index\","
         "\"args\":{\"sort_index\":%d}}",
         pid, tid, what, sort);
}

void colo_timeline_span(colo_timeline_t *tl, int pid, int tid, const char *name, const char *cat,
                        colo_time_t start, colo_time_t end, const char *args)
{
    if (!colo_timeline_wants(tl, start, end)) return;
    if (start < tl->t0) start = tl->t0;
    if (end > tl->t1) end = tl->t1;
    sep(tl);
    putf(tl, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":", pid, tid,
         us(start), us(end - start));
    str(tl, cat);
    put(tl, ",\"name\":", 8);
    str(tl, name);
    if (args) {
        put(tl, ",\"args\":", 8);
        put(tl, args, strlen(args));
    }
    put(tl, "}", 1);
}

void colo_timeline_flow(colo_timeline_t *tl, int pid, int tid, int to_pid, int to_tid,
                        colo_time_t t)
{
    if (!colo_timeline_wants(tl, t, t)) return;
    unsigned long long id = ++tl->flows;
    /* "s" binds to the slice enclosing it; "f" to the enclosing one too with "bp":"e" (without
     * it, to the next slice that begins on its track) */
    sep(tl);
    putf(tl,
         "{\"ph\":\"s\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"id\":%llu,\"cat\":\"request\","
         "\"name\":\"request\"}",
         pid, tid, us(t), id);
    sep(tl);
    putf(tl,
         "{\"ph\":\"f\",\"bp\":\"e\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"id\":%llu,"
         "\"cat\":\"request\",\"name\":\"request\"}",
         to_pid, to_tid, us(t), id);
}

void colo_timeline_counter(colo_timeline_t *tl, int pid, const char *name, colo_time_t t,
                           double value)
{
    if (!colo_timeline_wants(tl, t, t)) return;
    sep(tl);
    putf(tl, "{\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"name\":", pid, us(t));
    str(tl, name);
    putf(tl, ",\"args\":{\"value\":%.17g}}", value);
}

/* Closes zlib's stream (its descriptor, not the file) and frees the buffer. */
static void release(colo_timeline_t *tl)
{
    if (tl->gz) {
        errno = 0;
        if (gzclose((gzFile)tl->gz) != Z_OK) fail(tl);
        tl->gz = NULL;
    }
    colo_free(tl->buf);
    tl->buf = NULL;
}

int colo_timeline_close(colo_timeline_t *tl, bool commit, colo_error_t *err)
{
    if (!commit) {
        release(tl);
        colo_atomic_abort(&tl->af);
        return 0;
    }
    putf(tl,
         "\n],\n\"otherData\": {\"window_start_s\": %.9g, \"window_end_s\": %.9g, "
         "\"events\": %llu, \"flows\": %llu, \"spans_not_drawn\": %llu}}\n",
         (double)tl->t0 / 1e9, (double)tl->t1 / 1e9, (unsigned long long)tl->events,
         (unsigned long long)tl->flows, (unsigned long long)tl->undrawn);
    flush(tl);
    release(tl);
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
