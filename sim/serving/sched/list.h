/* list.h: the built-in schedulers, one line each: COLO_SCHED(name) names the
 * colo_sched_ops_t colo_sched_<name> defined in sim/serving/sched/<name>.c. */
COLO_SCHED(fifo)
COLO_SCHED(priority)
COLO_SCHED(edf)
COLO_SCHED(stream_priority)
COLO_SCHED(one_at_a_time)
COLO_SCHED(throttle)
COLO_SCHED(reserve)
