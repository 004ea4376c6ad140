/* bench_event_queue.c: schedule+pop throughput of the event queue (a benchmark, not a test).
 *
 * The classic "hold" model: a queue kept at N pending events; each step pops the earliest
 * event and schedules one new event a random increment later. One step = one schedule and one
 * pop; the figure printed is steps (events) per second on one core, best of five runs. */
#include "event_queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void noop(void *obj, int64_t arg)
{
    (void)obj;
    (void)arg;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double hold(size_t pending, size_t steps, const colo_time_t *inc, size_t ninc, int cancel)
{
    colo_eq_t q;
    if (colo_eq_init(&q, pending + 1)) exit(1);
    for (size_t i = 0; i < pending; i++)
        colo_eq_schedule(&q, inc[i % ninc], noop, NULL, 0, NULL);
    colo_event_t ev;
    colo_event_id_t id = 0;
    double t0 = now_s();
    for (size_t i = 0; i < steps; i++) {
        colo_eq_pop(&q, &ev);
        ev.fn(ev.obj, ev.arg);
        if (cancel && (i & 7) == 0) { /* every 8th step also schedules and cancels one */
            colo_eq_schedule(&q, q.now + inc[(i + 7) % ninc], noop, NULL, 0, &id);
            colo_eq_cancel(&q, id);
        }
        colo_eq_schedule(&q, q.now + inc[i % ninc], noop, NULL, 0, NULL);
    }
    double dt = now_s() - t0;
    colo_eq_fini(&q);
    return (double)steps / dt;
}

int main(int argc, char **argv)
{
    size_t steps = argc > 1 ? (size_t)atol(argv[1]) : 20000000;
    enum { NINC = 1 << 16 };
    colo_time_t *inc = malloc(NINC * sizeof *inc);
    uint64_t s = 12345;
    for (size_t i = 0; i < NINC; i++) { /* exponential increments, mean 1 us, precomputed */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u = ((double)(s >> 11) + 0.5) / 9007199254740992.0;
        inc[i] = (colo_time_t)(-1000.0 * __builtin_log(u));
    }
    static const size_t sizes[] = {10, 1000, 100000};
    printf("event queue, hold model: %zu schedule+pop steps per run, best of 5\n", steps);
    printf("%10s %18s %22s\n", "pending", "events/s", "events/s (+1/8 cancel)");
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        double best = 0, best_c = 0;
        for (int rep = 0; rep < 5; rep++) {
            double r = hold(sizes[k], steps, inc, NINC, 0);
            double rc = hold(sizes[k], steps, inc, NINC, 1);
            if (r > best) best = r;
            if (rc > best_c) best_c = rc;
        }
        printf("%10zu %18.3e %22.3e\n", sizes[k], best, best_c);
    }
    free(inc);
    return 0;
}
