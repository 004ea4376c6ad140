/* test_timeline.c: the Chrome Trace Event timeline of a run (--timeline). */
#include "helpers.h"
#include "timeline.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(timeline, .init = test_init);

/* An assertion inside a loop over thousands of events: reported only when it fails (each
 * Criterion assertion is a message to the runner). */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) cr_assert_fail(__VA_ARGS__);                                                  \
    } while (0)

/* Runs a scenario with a timeline of [a, b) seconds; returns the timeline (caller's). */
static json_t *run_with_timeline(const char *scenario, double a, double b)
{
    test_run_t r = run_scenario_tl(src_path(scenario), NULL, 0, a, b);
    json_t *doc = json_incref(r.timeline);
    run_free(&r);
    return doc;
}

struct span {
    int pid, lane;
    double ts, dur;
};

static int by_track_then_ts(const void *x, const void *y)
{
    const struct span *p = x, *q = y;
    if (p->pid != q->pid) return p->pid - q->pid;
    if (p->lane != q->lane) return p->lane - q->lane;
    return (p->ts > q->ts) - (p->ts < q->ts);
}

/* Checks the timeline: every span inside the window; on each SM partition's lanes no two
 * kernels overlap, nor two copies on a copy lane; lanes beyond the first only where the
 * partition's kernels co-reside. Returns the number of partition and copy lanes used. */
static int check(json_t *doc, double a, double b)
{
    json_t *ev = json_object_get(doc, "traceEvents"), *e;
    cr_assert(json_is_array(ev));
    size_t i, n = json_array_size(ev);
    struct span *sp = calloc(n, sizeof *sp);
    char coreside[64] = {0}; /* partition pid - COLO_TL_PARTITIONS: kernels may co-reside */
    int lanes_used = 0;
    size_t m = 0;
    json_array_foreach(ev, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        int pid = (int)json_integer_value(json_object_get(e, "pid"));
        if (strcmp(ph, "M") == 0 && pid >= COLO_TL_PARTITIONS &&
            json_integer_value(json_object_get(e, "tid")) == 0 &&
            strcmp(json_string_value(json_object_get(e, "name")), "process_name") == 0) {
            const char *name =
                json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            coreside[pid - COLO_TL_PARTITIONS] = strstr(name, "co-reside") != NULL;
        }
        if (strcmp(ph, "X") != 0) continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        double dur = json_number_value(json_object_get(e, "dur"));
        CHECK(dur >= 0, "negative duration at %f us", ts);
        CHECK(ts >= a * 1e6 - 1e-3 && ts + dur <= b * 1e6 + 1e-3,
              "span [%f, %f] us outside the window", ts, ts + dur);
        if (pid >= COLO_TL_PARTITIONS || pid == COLO_TL_COPIES)
            sp[m++] = (struct span){pid, (int)json_integer_value(json_object_get(e, "tid")), ts,
                                    dur};
    }
    /* per partition and lane, in time order: each kernel ends before the next starts */
    qsort(sp, m, sizeof *sp, by_track_then_ts);
    for (size_t k = 0; k < m; k++) {
        const struct span *c = &sp[k];
        bool new_track = k == 0 || c->pid != sp[k - 1].pid || c->lane != sp[k - 1].lane;
        if (new_track) {
            lanes_used++;
            CHECK(c->pid == COLO_TL_COPIES || c->lane == 1 ||
                      coreside[c->pid - COLO_TL_PARTITIONS],
                  "partition %d uses lane %d but its kernels cannot co-reside", c->pid, c->lane);
        } else {
            CHECK(sp[k - 1].ts + sp[k - 1].dur <= c->ts + 2e-3,
                  "group %d lane %d: spans overlap at %f us", c->pid, c->lane, c->ts);
        }
    }
    int kernels = (int)m;
    cr_assert_gt(kernels, 0, "the window holds kernels");
    free(sp);
    return lanes_used;
}

Test(timeline, time_slicing_never_overlaps_kernels)
{
    json_t *d = run_with_timeline("scenarios/resnet50_bert_timeslice.cfg", 2.0, 2.5);
    cr_assert_eq(check(d, 2.0, 2.5), 1, "one partition, one lane");
    json_decref(d);
}

/* Under time-slicing one track says who holds the GPU: spans that never overlap, each switch
 * (43 us on the H100) followed by the context it switched to, and the switches counter rising by
 * one per switch. */
Test(timeline, time_slicing_shows_who_holds_the_gpu_and_each_switch)
{
    json_t *d = run_with_timeline("scenarios/resnet50_bert_timeslice.cfg", 2.0, 3.0);
    json_t *ev = json_object_get(d, "traceEvents"), *e;
    size_t i, spans = 0, switches = 0, counters = 0;
    double end = 0, first_count = -1, last_count = -1;
    char after_switch[64] = "";
    json_array_foreach(ev, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(e, "name"));
        if (strcmp(ph, "C") == 0 && strstr(name, "context switches")) {
            double v = json_number_value(json_object_get(json_object_get(e, "args"), "value"));
            if (first_count < 0) first_count = v;
            last_count = v;
            counters++;
        }
        if (strcmp(ph, "X") || json_integer_value(json_object_get(e, "pid")) != COLO_TL_OWNER)
            continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        double dur = json_number_value(json_object_get(e, "dur"));
        CHECK(ts >= end - 1e-6, "owner span at %.3f us overlaps the last, ending %.3f", ts, end);
        end = ts + dur;
        spans++;
        if (after_switch[0]) {
            CHECK(strcmp(name, after_switch) == 0, "'%s' after a switch to %s", name, after_switch);
            after_switch[0] = '\0';
        }
        double sw = json_number_value(json_object_get(json_object_get(e, "args"), "switches"));
        CHECK(last_count < 0 || sw == last_count, "a span at %.3f us says %g switches, the counter %g",
              ts, sw, last_count);
        if (strncmp(name, "switch to ", 10) == 0) {
            CHECK(fabs(dur - 43.0) < 1e-6, "a switch of %.3f us", dur);
            snprintf(after_switch, sizeof after_switch, "%s", name + 10);
            switches++;
        }
    }
    cr_assert_gt(switches, 10, "BERT and ResNet-50 alternate: %zu switches", switches);
    cr_assert_gt(spans, 2 * switches);
    cr_assert_eq(counters, switches);
    cr_assert_float_eq(last_count - first_count, (double)(switches - 1), 1e-9);
    json_decref(d);
}

Test(timeline, mig_instances_and_green_contexts_are_separate_tracks)
{
    json_t *d = run_with_timeline("scenarios/mig_layout_h100.cfg", 3.0, 3.3);
    cr_assert_geq(check(d, 3.0, 3.3), 3, "a partition per instance");
    json_decref(d);
    d = run_with_timeline("scenarios/green_contexts_h100.cfg", 3.0, 3.3);
    cr_assert_geq(check(d, 3.0, 3.3), 2);
    json_decref(d);
}

Test(timeline, mps_kernels_co_reside_on_lanes)
{
    json_t *d = run_with_timeline("scenarios/mps_caps_h100.cfg", 4.0, 4.2);
    cr_assert_geq(check(d, 4.0, 4.2), 2, "co-resident kernels need a second lane");
    json_decref(d);
}

/* Nothing outside the window is written: a window after the run's end holds no spans. */
Test(timeline, the_window_bounds_the_file)
{
    json_t *d = run_with_timeline("scenarios/resnet50_bert_timeslice.cfg", 100.0, 101.0);
    json_t *ev = json_object_get(d, "traceEvents"), *e;
    size_t i;
    json_array_foreach(ev, i, e)
        CHECK(strcmp(json_string_value(json_object_get(e, "ph")), "M") == 0,
              "event %zu is not metadata", i);
    json_decref(d);
}

/* Copies in flight together (waiting for an engine or on several) take separate lanes. */
Test(timeline, overlapping_copies_take_separate_lanes)
{
    json_t *d = run_with_timeline("tests/fixtures/copies_two_tenants.cfg", 1.0, 1.5);
    int used = check(d, 1.0, 1.5);
    json_t *ev = json_object_get(d, "traceEvents"), *e;
    size_t i;
    int most = 0;
    json_array_foreach(ev, i, e)
    {
        if (json_integer_value(json_object_get(e, "pid")) == COLO_TL_COPIES &&
            strcmp(json_string_value(json_object_get(e, "ph")), "X") == 0) {
            int lane = (int)(json_integer_value(json_object_get(e, "tid")) - 1) % 64 + 1;
            if (lane > most) most = lane;
        }
    }
    cr_assert_geq(most, 2, "two tenants' copies overlap");
    cr_assert_geq(used, 3);
    json_decref(d);
}
