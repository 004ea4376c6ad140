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

/* Rounds a duration given in (possibly fractional) nanoseconds to the nearest nanosecond.
 * The one place a double becomes time: used when reading seconds from files or scaling. */
colo_time_t colo_time_from_ns(double ns);

#endif
