/* simtime.h: simulated time, an integer count of nanoseconds (never floating point). */
#ifndef COLO_SIMTIME_H
#define COLO_SIMTIME_H

#include <stdint.h>

/* Simulated time and durations in nanoseconds. int64 covers 292 years. */
typedef int64_t colo_time_t;

#define COLO_TIME_MAX INT64_MAX
#define COLO_NS(x) ((colo_time_t)(x))
#define COLO_US(x) ((colo_time_t)(x)*1000)
#define COLO_MS(x) ((colo_time_t)(x)*1000000)
#define COLO_S(x) ((colo_time_t)(x)*1000000000)

/* Conversions for output only: results are reported in ms or s, never computed in them. */
#define COLO_TO_MS(t) ((double)(t) / 1e6)
#define COLO_TO_S(t) ((double)(t) / 1e9)

/* Rounds a duration given in (possibly fractional) nanoseconds to the nearest nanosecond, halves
 * away from zero (as llround), saturating at +-COLO_TIME_MAX. The one place a double becomes
 * time: used when reading seconds from files or scaling, and for every activity's finish, so it
 * is inline (simtime.c holds its external definition). The fraction ns - trunc(ns) is exact in
 * a double (below 2^53 trunc(ns) is exact; at or above it ns is an integer), so this is llround
 * without its call. */
inline colo_time_t colo_time_from_ns(double ns)
{
    if (!(ns > -9.2e18)) return -COLO_TIME_MAX; /* also NaN: callers validate before this */
    if (ns >= 9.2e18) return COLO_TIME_MAX;
    colo_time_t t = (colo_time_t)ns; /* toward zero */
    double f = ns - (double)t;
    return t + (f >= 0.5) - (f <= -0.5);
}

#endif
