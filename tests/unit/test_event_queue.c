/* test_event_queue.c: ordering (ties included), cancel, growth and determinism of the heap. */
#include "errors.h"
#include "event_queue.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

static void noop(void *obj, int64_t arg)
{
    (void)obj;
    (void)arg;
}

Test(event_queue, pops_in_time_order_and_ties_in_schedule_order)
{
    colo_eq_t q;
    cr_assert_eq(colo_eq_init(&q, 4), 0);
    uint64_t s = 1;
    enum { N = 5000 };
    for (int64_t i = 0; i < N; i++) /* few distinct times: many ties */
        cr_assert_eq(colo_eq_schedule(&q, (colo_time_t)(lcg(&s) % 50), noop, NULL, i, NULL), 0);
    cr_assert_eq(colo_eq_size(&q), N);
    colo_event_t ev, prev = {-1, NULL, NULL, -1};
    size_t n = 0;
    while (colo_eq_pop(&q, &ev)) {
        cr_assert(ev.time >= prev.time, "time went backwards");
        if (ev.time == prev.time)
            cr_assert(ev.arg > prev.arg, "tie at %lld broken out of order", (long long)ev.time);
        cr_assert_eq(q.now, ev.time);
        prev = ev;
        n++;
    }
    cr_assert_eq(n, N);
    cr_assert_eq(colo_eq_peek_time(&q), COLO_TIME_MAX);
    colo_eq_fini(&q);
}

Test(event_queue, equal_times_fire_first_in_first_out)
{
    colo_eq_t q;
    colo_eq_init(&q, 0);
    for (int64_t i = 0; i < 100; i++)
        colo_eq_schedule(&q, 42, noop, NULL, i, NULL);
    colo_event_t ev;
    for (int64_t i = 0; i < 100; i++) {
        cr_assert(colo_eq_pop(&q, &ev));
        cr_assert_eq(ev.arg, i);
    }
    colo_eq_fini(&q);
}

Test(event_queue, cancel_removes_only_that_event)
{
    colo_eq_t q;
    colo_eq_init(&q, 0);
    colo_event_id_t a, b, c;
    colo_eq_schedule(&q, 10, noop, NULL, 1, &a);
    colo_eq_schedule(&q, 20, noop, NULL, 2, &b);
    colo_eq_schedule(&q, 30, noop, NULL, 3, &c);
    cr_assert_eq(colo_eq_cancel(&q, b), 0);
    cr_assert_eq(colo_eq_cancel(&q, b), COLO_ENOENT, "double cancel must fail");
    colo_event_t ev;
    cr_assert(colo_eq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 1);
    cr_assert_eq(colo_eq_cancel(&q, a), COLO_ENOENT, "a fired event cannot be cancelled");
    cr_assert(colo_eq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 3);
    cr_assert_not(colo_eq_pop(&q, &ev));
    cr_assert_eq(colo_eq_cancel(&q, 0), COLO_ENOENT);
    colo_eq_fini(&q);
}

Test(event_queue, stale_handle_cannot_cancel_a_reused_slot)
{
    colo_eq_t q;
    colo_eq_init(&q, 0);
    colo_event_id_t old, fresh;
    colo_eq_schedule(&q, 5, noop, NULL, 1, &old);
    cr_assert_eq(colo_eq_cancel(&q, old), 0);
    colo_eq_schedule(&q, 6, noop, NULL, 2, &fresh); /* reuses the freed slot */
    cr_assert_neq(old, fresh);
    cr_assert_eq(colo_eq_cancel(&q, old), COLO_ENOENT);
    colo_event_t ev;
    cr_assert(colo_eq_pop(&q, &ev));
    cr_assert_eq(ev.arg, 2);
    colo_eq_fini(&q);
}

Test(event_queue, rejects_scheduling_in_the_past)
{
    colo_eq_t q;
    colo_eq_init(&q, 0);
    colo_eq_schedule(&q, 100, noop, NULL, 0, NULL);
    colo_event_t ev;
    colo_eq_pop(&q, &ev);
    cr_assert_eq(colo_eq_schedule(&q, 99, noop, NULL, 0, NULL), COLO_EINVAL);
    cr_assert_eq(colo_eq_schedule(&q, 100, noop, NULL, 0, NULL), 0, "now itself is allowed");
    colo_eq_fini(&q);
}

/* Random schedules, cancels and pops against a simple reference list. */
Test(event_queue, random_operations_match_a_reference_model)
{
    enum { OPS = 20000, CAP = OPS };
    struct ref {
        colo_time_t t;
        uint64_t seq;
        int64_t arg;
        colo_event_id_t id;
        int live;
    } *ref = calloc(CAP, sizeof *ref);
    size_t nref = 0;
    uint64_t seq = 0, s = 99;
    colo_eq_t q;
    colo_eq_init(&q, 0);
    for (int op = 0; op < OPS; op++) {
        uint64_t r = lcg(&s) % 10;
        if (r < 5) {
            colo_time_t t = q.now + (colo_time_t)(lcg(&s) % 1000);
            ref[nref] = (struct ref){t, seq++, op, 0, 1};
            cr_assert_eq(colo_eq_schedule(&q, t, noop, NULL, op, &ref[nref].id), 0);
            nref++;
        } else if (r < 7 && nref) {
            size_t k = (size_t)(lcg(&s) % nref);
            int rc = colo_eq_cancel(&q, ref[k].id);
            cr_assert_eq(rc, ref[k].live ? 0 : COLO_ENOENT);
            ref[k].live = 0;
        } else {
            long best = -1;
            for (size_t k = 0; k < nref; k++)
                if (ref[k].live && (best < 0 || ref[k].t < ref[best].t ||
                                    (ref[k].t == ref[best].t && ref[k].seq < ref[best].seq)))
                    best = (long)k;
            colo_event_t ev;
            int got = colo_eq_pop(&q, &ev);
            cr_assert_eq(got, best >= 0);
            if (best >= 0) {
                cr_assert_eq(ev.arg, ref[best].arg);
                cr_assert_eq(ev.time, ref[best].t);
                ref[best].live = 0;
            }
        }
        /* after every operation: the earliest time and the count agree with the reference */
        colo_time_t min = COLO_TIME_MAX;
        size_t live = 0;
        for (size_t k = 0; k < nref; k++)
            if (ref[k].live) {
                live++;
                if (ref[k].t < min) min = ref[k].t;
            }
        cr_assert_eq(colo_eq_peek_time(&q), min, "op %d", op);
        cr_assert_eq(colo_eq_size(&q), live, "op %d", op);
    }
    colo_eq_fini(&q);
    free(ref);
}

Test(event_queue, renumbering_keeps_the_order_when_sequence_numbers_run_out)
{
    colo_eq_t q;
    colo_eq_init(&q, 0);
    q.seq_limit = 64; /* renumber every few dozen schedules instead of every 10^12 */
    colo_event_id_t ids[1000];
    int64_t next_pop = 0;
    for (int64_t i = 0; i < 1000; i++) {
        /* all at a handful of times, so the order rests on sequence numbers */
        cr_assert_eq(colo_eq_schedule(&q, 1000 + (colo_time_t)(i / 100), noop, NULL, i, &ids[i]),
                     0);
        if (i % 10 == 9) cr_assert_eq(colo_eq_cancel(&q, ids[i]), 0);
    }
    colo_event_t ev;
    while (colo_eq_pop(&q, &ev)) {
        while (next_pop % 10 == 9)
            next_pop++;
        cr_assert_eq(ev.arg, next_pop, "got %lld, expected %lld", (long long)ev.arg,
                     (long long)next_pop);
        next_pop++;
    }
    cr_assert_eq(next_pop, 999);
    colo_eq_fini(&q);
}

Test(event_queue, same_operations_give_the_same_sequence)
{
    int64_t out[2][3000];
    for (int run = 0; run < 2; run++) {
        colo_eq_t q;
        colo_eq_init(&q, 0);
        uint64_t s = 5;
        for (int64_t i = 0; i < 3000; i++)
            colo_eq_schedule(&q, (colo_time_t)(lcg(&s) % 300), noop, NULL, i, NULL);
        colo_event_t ev;
        for (int i = 0; colo_eq_pop(&q, &ev); i++)
            out[run][i] = ev.arg;
        colo_eq_fini(&q);
    }
    cr_assert_arr_eq(out[0], out[1], sizeof out[0]);
}

/* colo_time_from_ns is llround without the call: the same value for halves, values a hair
 * below a half, the edges of exact integers in a double, negatives and random values. */
Test(simtime, from_ns_rounds_as_llround)
{
    static const double edge[] = {0.0,
                                  -0.0,
                                  0.5,
                                  -0.5,
                                  1.5,
                                  2.5,
                                  -2.5,
                                  0.49999999999999994,
                                  -0.49999999999999994,
                                  4503599627370495.5,
                                  4503599627370496.0,
                                  9007199254740993.0,
                                  -4503599627370495.5,
                                  1e15 + 0.5,
                                  123456.49999999999,
                                  9.1e18,
                                  -9.1e18};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        cr_assert_eq(colo_time_from_ns(edge[i]), (colo_time_t)llround(edge[i]), "at %.17g",
                     edge[i]);
    uint64_t s = 7;
    for (int i = 0; i < 1000000; i++) {
        double x = ((double)lcg(&s) / 2147483648.0 - 0.5) * ldexp(1.0, (int)(lcg(&s) % 60));
        cr_assert_eq(colo_time_from_ns(x), (colo_time_t)llround(x), "at %.17g", x);
    }
    cr_assert_eq(colo_time_from_ns(9.3e18), COLO_TIME_MAX);
    cr_assert_eq(colo_time_from_ns(-9.3e18), -COLO_TIME_MAX);
    cr_assert_eq(colo_time_from_ns(NAN), -COLO_TIME_MAX);
}
