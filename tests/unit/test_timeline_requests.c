/* test_timeline_requests.c: the timeline's request spans, their flow arrows to kernels, and
 * gzipped timelines (issue 41, part 7). */
#include "helpers.h"
#include "timeline.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

TestSuite(timeline_requests, .init = test_init);

/* An assertion inside a loop over thousands of events: reported only when it fails. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) cr_assert_fail(__VA_ARGS__);                                                  \
    } while (0)

#define SCENARIO "scenarios/resnet50_bert_timeslice.cfg"

struct span {
    long long pid, tid;
    double ts, end;
    const char *cat, *name;
    json_t *args;
};

static int by_track_then_ts(const void *x, const void *y)
{
    const struct span *p = x, *q = y;
    if (p->pid != q->pid) return p->pid < q->pid ? -1 : 1;
    if (p->tid != q->tid) return p->tid < q->tid ? -1 : 1;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

/* The spans of a timeline, sorted by track and start. */
struct spans {
    struct span *s;
    size_t n;
};

static struct spans spans_of(json_t *doc)
{
    json_t *ev = json_object_get(doc, "traceEvents"), *e;
    struct spans r = {calloc(json_array_size(ev) + 1, sizeof(struct span)), 0};
    size_t i;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0) continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        r.s[r.n++] = (struct span){json_integer_value(json_object_get(e, "pid")),
                                   json_integer_value(json_object_get(e, "tid")),
                                   ts,
                                   ts + json_number_value(json_object_get(e, "dur")),
                                   json_string_value(json_object_get(e, "cat")),
                                   json_string_value(json_object_get(e, "name")),
                                   json_object_get(e, "args")};
    }
    qsort(r.s, r.n, sizeof *r.s, by_track_then_ts);
    return r;
}

/* The span of category cat on track (pid, tid) that holds ts: within a category, spans on a
 * track do not overlap, so it is the last of that category to start by ts. O(log n) to find the
 * track's spans that start by ts, then back over the other categories' spans. */
static const struct span *enclosing(const struct spans *sp, long long pid, long long tid, double ts,
                                    const char *cat)
{
    size_t lo = 0, hi = sp->n; /* first span after (pid, tid, ts) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct span *s = &sp->s[mid];
        bool after = s->pid != pid   ? s->pid > pid
                     : s->tid != tid ? s->tid > tid
                                     : s->ts > ts + 1e-3;
        if (after)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (size_t k = lo; k-- > 0;) {
        const struct span *s = &sp->s[k];
        if (s->pid != pid || s->tid != tid) break;
        if (strcmp(s->cat, cat) == 0) return ts <= s->end + 1e-3 ? s : NULL;
    }
    return NULL;
}

struct flow_counts {
    size_t flows, requests, kernels_tenant_tracks;
    size_t requests_per_kernel_sum; /* over kernel spans: their batch's request count */
};

/* Checks the requests and flows of a timeline: no two request spans overlap on a lane; every
 * flow's "s" has exactly one "f" with its id and category, "s" inside a request span on its
 * lane and "f" (bound to its enclosing slice) inside a kernel span on its track. */
static struct flow_counts check_flows(json_t *doc)
{
    struct spans sp = spans_of(doc);
    struct flow_counts c = {0};
    for (size_t k = 0; k < sp.n; k++) {
        const struct span *s = &sp.s[k];
        if (s->pid == COLO_TL_REQUESTS) {
            c.requests++;
            CHECK(strcmp(s->cat, "request") == 0, "a request span of category %s", s->cat);
            if (k > 0 && sp.s[k - 1].pid == s->pid && sp.s[k - 1].tid == s->tid)
                CHECK(sp.s[k - 1].end <= s->ts + 1e-3, "requests overlap on lane %lld at %f us",
                      s->tid, s->ts);
        }
        if (s->pid == COLO_TL_TENANTS && strcmp(s->cat, "kernel") == 0) {
            c.kernels_tenant_tracks++;
            const struct span *b = enclosing(&sp, s->pid, s->tid, s->ts, "batch");
            CHECK(b, "a kernel at %f us outside any batch", s->ts);
            c.requests_per_kernel_sum +=
                (size_t)json_integer_value(json_object_get(b->args, "requests"));
        }
    }
    json_t *ev = json_object_get(doc, "traceEvents"), *e;
    size_t n = json_array_size(ev), i;
    /* ids are given 1, 2, ...: the "f" of id k at fs[k] */
    json_t **fs = calloc(n + 2, sizeof *fs);
    json_array_foreach(ev, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (strcmp(ph, "f") != 0) continue;
        json_int_t id = json_integer_value(json_object_get(e, "id"));
        CHECK(id >= 1 && (size_t)id <= n, "flow id %lld", (long long)id);
        CHECK(!fs[id], "two \"f\" events for flow %lld", (long long)id);
        CHECK(strcmp(json_string_value(json_object_get(e, "bp")), "e") == 0,
              "an \"f\" not bound to its enclosing slice");
        fs[id] = e;
    }
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "s") != 0) continue;
        c.flows++;
        json_int_t id = json_integer_value(json_object_get(e, "id"));
        json_t *f = fs[id];
        CHECK(f, "flow %lld has no \"f\"", (long long)id);
        CHECK(json_equal(json_object_get(e, "cat"), json_object_get(f, "cat")),
              "flow %lld: categories differ", (long long)id);
        double ts = json_number_value(json_object_get(e, "ts"));
        long long pid = json_integer_value(json_object_get(e, "pid"));
        CHECK(pid == COLO_TL_REQUESTS, "a flow from group %lld", pid);
        CHECK(enclosing(&sp, pid, json_integer_value(json_object_get(e, "tid")), ts, "request"),
              "flow %lld starts outside a request span (%f us)", (long long)id, ts);
        double fts = json_number_value(json_object_get(f, "ts"));
        CHECK(enclosing(&sp, json_integer_value(json_object_get(f, "pid")),
                        json_integer_value(json_object_get(f, "tid")), fts, "kernel"),
              "flow %lld ends outside a kernel span (%f us)", (long long)id, fts);
        fs[id] = NULL;
    }
    for (size_t k = 0; k < n + 2; k++)
        CHECK(!fs[k], "flow %zu has an \"f\" and no \"s\"", k);
    json_t *other = json_object_get(doc, "otherData");
    cr_assert_eq(json_integer_value(json_object_get(other, "flows")), (json_int_t)c.flows);
    free(fs);
    free(sp.s);
    return c;
}

/* Every kernel of a request gets one arrow from it: without batching, one per kernel span. */
Test(timeline_requests, each_kernel_has_an_arrow_from_its_request)
{
    test_run_t r = run_scenario_tl(src_path(SCENARIO), NULL, 0, 2.0, 2.3);
    struct flow_counts c = check_flows(r.timeline);
    cr_assert_gt(c.requests, 20, "%zu request spans", c.requests);
    cr_assert_gt(c.flows, 1000);
    cr_assert_eq(c.flows, c.kernels_tenant_tracks, "%zu flows for %zu kernel spans", c.flows,
                 c.kernels_tenant_tracks);
    json_t *other = json_object_get(r.timeline, "otherData");
    cr_assert_eq(json_integer_value(json_object_get(other, "spans_not_drawn")), 0);
    run_free(&r);
}

/* A batch's kernels serve all its requests: each gets an arrow from every one of them. */
Test(timeline_requests, a_batch_kernel_has_an_arrow_from_each_request)
{
    const char *sets[] = {"tenants.resnet50.arrival.rate=900",
                          "tenants.resnet50.batching={ max_batch = 4; max_delay_ms = 2.0; }"};
    test_run_t r = run_scenario_tl(src_path(SCENARIO), sets, 2, 2.0, 2.2);
    struct flow_counts c = check_flows(r.timeline);
    cr_assert_gt(c.requests_per_kernel_sum, c.kernels_tenant_tracks, "some batches hold several");
    cr_assert_eq(c.flows, c.requests_per_kernel_sum);
    run_free(&r);
}

/* Requests dropped for their deadline, and those still in flight when the run ends, get spans
 * named so, and the arrows to their kernels still land in them. */
Test(timeline_requests, dropped_and_unfinished_requests_have_spans)
{
    const char *sets[] = {"tenants.resnet50.arrival.rate=700", "tenants.resnet50.deadline_ms=4",
                          "duration_s=3", "drain_s=0"};
    test_run_t r = run_scenario_tl(src_path(SCENARIO), sets, 4, 2.5, 3.5);
    check_flows(r.timeline);
    struct spans sp = spans_of(r.timeline);
    int dropped = 0, unfinished = 0, done = 0;
    for (size_t k = 0; k < sp.n; k++) {
        if (sp.s[k].pid != COLO_TL_REQUESTS) continue;
        const char *out = json_string_value(json_object_get(sp.s[k].args, "outcome"));
        dropped += strcmp(sp.s[k].name, "dropped (deadline)") == 0;
        unfinished += strcmp(sp.s[k].name, "in flight at the end") == 0;
        done += strcmp(out, "completed") == 0 && strcmp(sp.s[k].name, "request") == 0;
        CHECK(sp.s[k].end <= 3.0e6 + 1e-3, "a request span past the run's end");
    }
    cr_assert_gt(dropped, 0);
    cr_assert_gt(unfinished, 0);
    cr_assert_gt(done, 0);
    free(sp.s);
    run_free(&r);
}

/* Writes the same few events to path (committed, or not). */
static void write_some(const char *path, bool commit)
{
    colo_timeline_t tl;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_timeline_open(&tl, path, 0, COLO_S(1), &err), 0, "%s", err.text);
    colo_timeline_name(&tl, COLO_TL_REQUESTS, 1, "a \"quoted\" name\twith a tab", 1);
    colo_timeline_span(&tl, COLO_TL_REQUESTS, 1, "request", "request", COLO_MS(1), COLO_MS(5),
                       "{\"k\":1}");
    colo_timeline_span(&tl, COLO_TL_TENANTS, 1, "m x1", "batch", COLO_MS(2), COLO_MS(4),
                       "{\"requests\":1}");
    colo_timeline_span(&tl, COLO_TL_TENANTS, 1, "kernel", "kernel", COLO_MS(2), COLO_MS(3), NULL);
    colo_timeline_flow(&tl, COLO_TL_REQUESTS, 1, COLO_TL_TENANTS, 1, COLO_US(2500));
    colo_timeline_counter(&tl, COLO_TL_COUNTERS, "queue", COLO_MS(2), 3.0);
    cr_assert_eq(colo_timeline_close(&tl, commit, &err), 0, "%s", err.text);
}

/* Reads a whole gzipped or plain file through zlib (gzread reads both). */
static char *read_all(const char *path, size_t *n)
{
    gzFile g = gzopen(path, "rb");
    cr_assert_not_null(g, "cannot open %s", path);
    size_t cap = 1 << 16;
    char *buf = malloc(cap + 1);
    *n = 0;
    int got;
    while ((got = gzread(g, buf + *n, (unsigned)(cap - *n))) > 0) {
        *n += (size_t)got;
        if (*n == cap) buf = realloc(buf, (cap *= 2) + 1);
    }
    gzclose(g);
    buf[*n] = 0;
    return buf;
}

/* A name ending .json.gz gives a gzip stream of the same document; a timeline not committed
 * leaves nothing behind, gzipped or not. */
Test(timeline_requests, gzipped_timeline_holds_the_same_document)
{
    char dir[] = "/tmp/colosim-tlgz-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char plain[64], gz[64];
    snprintf(plain, sizeof plain, "%s/t.json", dir);
    snprintf(gz, sizeof gz, "%s/t.json.gz", dir);
    cr_assert(colo_timeline_gzipped(gz) && !colo_timeline_gzipped(plain));
    write_some(plain, true);
    write_some(gz, true);
    size_t np, ng;
    char *a = read_all(plain, &np), *b = read_all(gz, &ng);
    cr_assert_eq(np, ng);
    cr_assert_eq(memcmp(a, b, np), 0);
    FILE *f = fopen(gz, "rb"); /* the file itself is gzip: its magic bytes */
    unsigned char magic[2] = {0};
    cr_assert_eq(fread(magic, 1, 2, f), 2);
    fclose(f);
    cr_assert(magic[0] == 0x1f && magic[1] == 0x8b);
    json_error_t je;
    json_t *doc = json_loads(b, 0, &je);
    cr_assert_not_null(doc, "not JSON: %s", je.text);
    cr_assert_eq(check_flows(doc).flows, 1);
    cr_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(doc, "traceEvents"), 0), "args"),
            "name")),
        "a \"quoted\" name\twith a tab");
    json_decref(doc);
    free(a);
    free(b);
    unlink(plain);
    unlink(gz);
    write_some(gz, false); /* discarded: nothing there, no temporary file either */
    DIR *d = opendir(dir);
    struct dirent *de;
    int left = 0;
    while ((de = readdir(d)))
        left += de->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(left, 0, "files left in %s", dir);
    rmdir(dir);
}
