/* bench_fluid.c: kernel start/finish events per second through the contention solver with K
 * kernels always running on one GPU's shared resources (a benchmark, not a test).
 *
 * K kernels share the SMs, the L2 and the DRAM of an H100-sized GPU, each with random demands;
 * when one finishes a new one starts in its place, so K stay running. Every start and every
 * finish re-solves the rates of all K (they are all connected through DRAM). Figure: events
 * (starts + finishes) per second on one core, best of three. */
#include "bench_fluid_problem.h"
#include "event_queue.h"
#include "fluid.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng = BENCH_FLUID_SEED; /* one stream through all the runs */

struct bench {
    colo_eq_t eq;
    colo_fluid_t fl;
    uint32_t sm, l2, dram;
    long started, finished, limit;
};

static void on_done(void *obj, int64_t arg);

static void start_one(struct bench *b)
{
    struct bench_fluid_kernel k = bench_fluid_draw(&rng);
    colo_fluid_elem_t e[3] = {
        {b->sm, k.coef[BENCH_FLUID_SM]},
        {b->l2, k.coef[BENCH_FLUID_L2]},
        {b->dram, k.coef[BENCH_FLUID_DRAM]},
    };
    if (colo_fluid_start(&b->fl, k.work, 1.0, 1.0, e, 3, on_done, b, 0, NULL)) exit(1);
    b->started++;
}

static void on_done(void *obj, int64_t arg)
{
    (void)arg;
    struct bench *b = obj;
    b->finished++;
    if (b->started < b->limit) start_one(b);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double run(int k, long events)
{
    struct bench b = {0};
    colo_eq_init(&b.eq, 64);
    colo_fluid_init(&b.fl, &b.eq);
    colo_fluid_add_resource(&b.fl, BENCH_FLUID_SM_CAPACITY, &b.sm);
    colo_fluid_add_resource(&b.fl, BENCH_FLUID_L2_CAPACITY, &b.l2);
    colo_fluid_add_resource(&b.fl, BENCH_FLUID_DRAM_CAPACITY, &b.dram);
    b.limit = events / 2;
    double t0 = now_s();
    for (int i = 0; i < k; i++)
        start_one(&b);
    colo_event_t ev;
    while (colo_eq_pop(&b.eq, &ev))
        ev.fn(ev.obj, ev.arg);
    double dt = now_s() - t0;
    long n = b.started + b.finished;
    colo_fluid_fini(&b.fl);
    colo_eq_fini(&b.eq);
    return (double)n / dt;
}

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 4000000;
    printf("fluid solver: kernel start+finish events per second, %ld events per run, best of 3\n",
           events);
    printf("%12s %14s\n", "concurrent", "events/s");
    static const int ks[] = {2, 8, 32};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        double best = 0;
        for (int rep = 0; rep < 3; rep++) {
            double r = run(ks[i], events);
            if (r > best) best = r;
        }
        printf("%12d %14.3e\n", ks[i], best);
    }
    return 0;
}
