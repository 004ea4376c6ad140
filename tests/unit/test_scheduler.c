/* test_scheduler.c: kernel schedulers: each built-in's defining behaviour, and a plug-in
 * written here, registered at run time and used by a scenario. */
#include "helpers.h"
#include "scheduler.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

TestSuite(scheduler, .init = test_init);

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) cr_assert_fail(__VA_ARGS__);                                                  \
    } while (0)

static double lat(const test_run_t *r, size_t i, const char *q)
{
    return result_num(json_object_get(result_tenant(r, i), "latency_ms"), q);
}

/* The spans of one track of a timeline: [start, end) in us. */
struct span {
    double a, b;
};

static size_t spans(const test_run_t *r, int pid, int tid, const char *cat, struct span **out)
{
    json_t *ev = json_object_get(r->timeline, "traceEvents"), *e;
    size_t i, n = 0;
    *out = calloc(json_array_size(ev) + 1, sizeof **out);
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") != 0 ||
            json_integer_value(json_object_get(e, "pid")) != pid ||
            (tid >= 0 && json_integer_value(json_object_get(e, "tid")) != tid) ||
            strcmp(json_string_value(json_object_get(e, "cat")), cat) != 0)
            continue;
        double ts = json_number_value(json_object_get(e, "ts"));
        (*out)[n++] = (struct span){ts, ts + json_number_value(json_object_get(e, "dur"))};
    }
    return n;
}

/* How many spans of x overlap a span of y by more than 1 ns. */
static size_t overlaps(const struct span *x, size_t nx, const struct span *y, size_t ny)
{
    size_t n = 0;
    for (size_t i = 0; i < nx; i++)
        for (size_t j = 0; j < ny; j++)
            if (x[i].a < y[j].b - 1e-3 && y[j].a < x[i].b - 1e-3) {
                n++;
                break;
            }
    return n;
}

/* Kernel lanes used on the MPS partition (pid COLO_TL_PARTITIONS). */
static int lanes(const test_run_t *r)
{
    int most = 0;
    json_t *ev = json_object_get(r->timeline, "traceEvents"), *e;
    size_t i;
    json_array_foreach(ev, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") == 0 &&
            json_integer_value(json_object_get(e, "pid")) == COLO_TL_PARTITIONS) {
            int l = (int)json_integer_value(json_object_get(e, "tid"));
            if (l > most) most = l;
        }
    }
    return most;
}

Test(scheduler, fifo_with_one_slot_runs_one_kernel_at_a_time)
{
    test_run_t none = run_scenario_tl(src_path("tests/fixtures/sched_none.cfg"), NULL, 0, 2, 2.5);
    test_run_t fifo = run_scenario_tl(src_path("tests/fixtures/sched_fifo.cfg"), NULL, 0, 2, 2.5);
    cr_assert_geq(lanes(&none), 2, "without a scheduler MPS kernels co-reside");
    cr_assert_eq(lanes(&fifo), 1, "one slot: never two kernels at once");
    cr_assert_gt(lat(&fifo, 0, "p99"), 2 * lat(&none, 0, "p99"),
                 "serialising behind BERT's kernels costs ResNet-50 dearly");
    run_free(&none);
    run_free(&fifo);
}

Test(scheduler, strict_priority_serves_latency_sensitive_kernels_first)
{
    test_run_t fifo = run_scenario(src_path("tests/fixtures/sched_fifo.cfg"), NULL, 0);
    test_run_t prio = run_scenario(src_path("tests/fixtures/sched_priority.cfg"), NULL, 0);
    double alone = result_num(result_tenant(&prio, 0), "isolated_ms");
    cr_assert_lt(lat(&prio, 0, "p99"), lat(&fifo, 0, "p99") / 4);
    cr_assert_lt(lat(&prio, 0, "p50"), 1.25 * alone,
                 "p50 %.3f ms: close to alone (%.3f), waiting only for the kernel in progress",
                 lat(&prio, 0, "p50"), alone);
    cr_assert_gt(result_num(result_tenant(&prio, 1), "completed"), 0, "best-effort progresses");
    run_free(&fifo);
    run_free(&prio);
}

/* EDF orders by deadline, not by class: with both tenants latency-sensitive, the one with the
 * earlier deadlines wins, and tightening the other's SLO turns the order around. */
Test(scheduler, edf_serves_the_earliest_deadline)
{
    const char *fifo[] = {"tenants.be.class=latency", "scheduler.policy=priority"};
    const char *edf[] = {"tenants.be.class=latency", "scheduler.policy=edf"};
    const char *edf_tight[] = {"tenants.be.class=latency", "scheduler.policy=edf",
                               "tenants.be.slo_ms=1"};
    test_run_t f = run_scenario(src_path("tests/fixtures/sched_fifo.cfg"), fifo, 2);
    test_run_t e = run_scenario(src_path("tests/fixtures/sched_fifo.cfg"), edf, 2);
    test_run_t t = run_scenario(src_path("tests/fixtures/sched_fifo.cfg"), edf_tight, 3);
    cr_assert_lt(lat(&e, 0, "p99"), lat(&f, 0, "p99") / 4, "15 ms deadlines before 1000 ms ones");
    cr_assert_gt(lat(&t, 0, "p99"), 4 * lat(&e, 0, "p99"), "BERT's 1 ms deadlines come first");
    cr_assert_lt(lat(&t, 1, "p99"), lat(&e, 1, "p99"));
    run_free(&f);
    run_free(&e);
    run_free(&t);
}

/* A best-effort kernel of 16 waves of 100 us: without priorities a latency-sensitive kernel
 * waits for the rest of it (its blocks come after all of the long kernel's); on a high-priority
 * stream only for the blocks in flight, which are not preempted: at most one wave, then its own
 * 0.1 ms (its blocks may start piece by piece as the long kernel's retire, so a little more). */
Test(scheduler, stream_priority_waits_only_for_the_blocks_in_flight)
{
    test_run_t p = run_scenario(src_path("tests/fixtures/sched_waves_priority.cfg"), NULL, 0);
    test_run_t s = run_scenario(src_path("tests/fixtures/sched_waves_stream_priority.cfg"), NULL, 0);
    double p50 = lat(&s, 0, "p50");
    cr_assert(p50 >= 0.1 && p50 <= 0.3, "p50 %.4f ms: at most a wave to drain, then its own 0.1 ms",
              p50);
    cr_assert_gt(lat(&p, 0, "p50"), 0.5, "without priorities it waits ~half the long kernel");
    double be_s = result_num(result_tenant(&s, 1), "completed");
    double be_p = result_num(result_tenant(&p, 1), "completed");
    cr_assert_geq(be_s, 0.95 * be_p, "the long kernel loses no work: nothing of it is evicted");
    run_free(&p);
    run_free(&s);
}

/* The kernels of one tenant's request never run beside another's: the GPU serves one request
 * at a time (a tenant may start a batch while another owns the GPU; its kernels wait). */
Test(scheduler, one_at_a_time_never_overlaps_requests)
{
    test_run_t none = run_scenario_tl(src_path("tests/fixtures/sched_none.cfg"), NULL, 0, 2, 3);
    test_run_t one =
        run_scenario_tl(src_path("tests/fixtures/sched_one_at_a_time.cfg"), NULL, 0, 2, 3);
    struct span *a, *b;
    size_t na = spans(&none, COLO_TL_TENANTS, 1, "kernel", &a);
    size_t nb = spans(&none, COLO_TL_TENANTS, 2, "kernel", &b);
    cr_assert_gt(overlaps(a, na, b, nb), 0, "without a scheduler requests overlap");
    free(a);
    free(b);
    na = spans(&one, COLO_TL_TENANTS, 1, "kernel", &a);
    nb = spans(&one, COLO_TL_TENANTS, 2, "kernel", &b);
    cr_assert_gt(na, 10);
    cr_assert_gt(nb, 10);
    cr_assert_eq(overlaps(a, na, b, nb), 0, "one request at a time");
    free(a);
    free(b);
    run_free(&none);
    run_free(&one);
}

/* be_max_us = 0: a best-effort kernel never starts while a latency-sensitive one runs. */
Test(scheduler, throttle_holds_best_effort_while_latency_work_runs)
{
    test_run_t none = run_scenario_tl(src_path("tests/fixtures/sched_none.cfg"), NULL, 0, 2, 3);
    test_run_t thr = run_scenario_tl(src_path("tests/fixtures/sched_throttle.cfg"), NULL, 0, 2, 3);
    const test_run_t *runs[] = {&none, &thr};
    size_t started_inside[2] = {0};
    for (int k = 0; k < 2; k++) {
        struct span *ls, *be;
        size_t nl = spans(runs[k], COLO_TL_TENANTS, 1, "kernel", &ls);
        size_t nb = spans(runs[k], COLO_TL_TENANTS, 2, "kernel", &be);
        for (size_t j = 0; j < nb; j++)
            for (size_t i = 0; i < nl; i++)
                if (be[j].a > ls[i].a + 1e-3 && be[j].a < ls[i].b - 1e-3) {
                    started_inside[k]++;
                    break;
                }
        free(ls);
        free(be);
    }
    cr_assert_gt(started_inside[0], 0, "without throttling they do");
    cr_assert_eq(started_inside[1], 0);
    cr_assert_lt(lat(&thr, 0, "p99"), lat(&none, 0, "p99"));
    run_free(&none);
    run_free(&thr);
}

/* ---- a plug-in written here ---- */

/* Serves only the scenario's first tenant; takes the fifo fixture's "slots" parameter. */
static int inits;

static int only_first_init(colo_sched_t *s)
{
    inits++;
    s->state = &inits;
    return 0;
}

static long only_first_pick(colo_sched_t *s)
{
    for (size_t m = 0; m < s->n; m++)
        if (s->item[m].tenant == 0 && s->item[m].state == COLO_ITEM_READY) return (long)m;
    return -1;
}

static const colo_sched_ops_t only_first = {
    .name = "only_first",
    .summary = "test: only tenant 0's kernels",
    .params = {"slots", NULL},
    .defaults = {0},
    .init = only_first_init,
    .pick_next = only_first_pick,
};

Test(scheduler, a_plugin_is_picked_up_and_used)
{
    cr_assert_eq(colo_sched_register(&only_first), 0);
    cr_assert_eq(colo_sched_register(&only_first), COLO_EINVAL, "names are unique");
    cr_assert_eq(colo_sched_find("only_first"), &only_first);
    const char *set[] = {"scheduler.policy=only_first"};
    test_run_t r = run_scenario(src_path("tests/fixtures/sched_fifo.cfg"), set, 1);
    cr_assert_eq(inits, 1, "its init ran for the MPS domain");
    cr_assert_gt(result_num(result_tenant(&r, 0), "completed"), 100);
    cr_assert_eq(result_num(result_tenant(&r, 1), "completed"), 0, "tenant 1 is never served");
    run_free(&r);
}
