/* simtime.c: the one conversion from fractional nanoseconds to simulated time. */
#include "simtime.h"

#include <math.h>

colo_time_t colo_time_from_ns(double ns)
{
    if (!(ns > -9.2e18)) return -COLO_TIME_MAX; /* also NaN: callers validate before this */
    if (ns >= 9.2e18) return COLO_TIME_MAX;
    return (colo_time_t)llround(ns);
}
