/* simtime.c: the external definition of the inline conversion in simtime.h (C99 inline), for
 * code that takes its address and for the library's users. */
#include "simtime.h"

extern colo_time_t colo_time_from_ns(double ns);
