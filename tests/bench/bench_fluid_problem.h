/* bench_fluid_problem.h: the random problems of the fluid-solver benchmarks (bench_fluid.c and
 * bench_fluid_simgrid.cpp), so that every solver is given the same ones.
 *
 * An H100-sized GPU's three shared resources (SMs, L2, DRAM) and kernels with random demands on
 * each of them, drawn from one xorshift stream in the order the kernels start: the i-th kernel
 * started is the same whatever finished before it. Header only; C11 and C++. */
#ifndef COLO_BENCH_FLUID_PROBLEM_H
#define COLO_BENCH_FLUID_PROBLEM_H

#include <stdint.h>

#define BENCH_FLUID_SEED 88172645463325252ull

/* the resources, in this order, and their capacities in units per ns */
enum { BENCH_FLUID_SM, BENCH_FLUID_L2, BENCH_FLUID_DRAM, BENCH_FLUID_N_RES };
#define BENCH_FLUID_SM_CAPACITY 132.0    /* SMs */
#define BENCH_FLUID_L2_CAPACITY 8000.0   /* L2 bytes per ns */
#define BENCH_FLUID_DRAM_CAPACITY 2950.0 /* DRAM bytes per ns */

struct bench_fluid_kernel {
    double coef[BENCH_FLUID_N_RES]; /* units of each resource per ns at full speed */
    double work;                    /* ns alone */
};

/* Uniform on [0, 1) from the xorshift64 state *s. */
static inline double bench_fluid_uniform(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* The next kernel of the stream *s: up to all the SMs, busy computing at full speed a random
 * part of the time, up to the whole L2 and DRAM bandwidth, 5 to 105 us alone. */
static inline struct bench_fluid_kernel bench_fluid_draw(uint64_t *s)
{
    struct bench_fluid_kernel k;
    double sms = 1 + bench_fluid_uniform(s) * 131;
    k.coef[BENCH_FLUID_SM] = sms * bench_fluid_uniform(s);
    k.coef[BENCH_FLUID_L2] = BENCH_FLUID_L2_CAPACITY * bench_fluid_uniform(s);
    k.coef[BENCH_FLUID_DRAM] = BENCH_FLUID_DRAM_CAPACITY * bench_fluid_uniform(s);
    k.work = 5000 + 100000 * bench_fluid_uniform(s);
    return k;
}

#endif
