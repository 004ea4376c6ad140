/* fluid.h: the fluid contention solver. Activities (kernels, copies) progress at rates decided by
 * max-min fairness over shared resources with capacities, as SimGrid's linear max-min model does
 * for networks; rates are recomputed only for the activities connected to what changed.
 *
 * An activity has work W (ns at speed 1) and uses each of its resources r at coef_r units per ns
 * when running at speed 1. Speeds s are the max-min fair solution of
 *     sum_i coef_ir * s_i <= capacity_r  for every resource r,   0 <= s_i <= bound_i,
 * found by progressive filling: the most constrained resource fixes the speed of every activity
 * on it at the level it allows (equal slowdown), its capacity is spent, and so on. */
#ifndef COLO_FLUID_H
#define COLO_FLUID_H

#include "event_queue.h"
#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLO_FLUID_MAX_ELEMS (2 * 8 + 2) /* SM classes + L2 + channel classes */

typedef struct colo_fluid_elem {
    uint32_t res;
    double coef; /* units of the resource per ns at speed 1 */
} colo_fluid_elem_t;

/* Names an activity; 0 never does. Stale handles are refused, as with event handles. */
typedef uint64_t colo_activity_id_t;

/* Called when an activity has finished (it is already gone). May start or stop activities. */
typedef void (*colo_fluid_done_fn)(void *obj, int64_t arg);

/* Called before each solve, when every change of the instant is in: the owner may update
 * activities, and their changes join that solve (colo_fluid_on_presolve). */
typedef void (*colo_fluid_presolve_fn)(void *obj);

struct colo_fluid_res;
struct colo_fluid_act;

/* An activity's resources and its use of each (units per ns), n of each. */
struct colo_fluid_use {
    int n;
    uint32_t res[COLO_FLUID_MAX_ELEMS];
    double used[COLO_FLUID_MAX_ELEMS];
};

typedef struct colo_fluid {
    colo_eq_t *eq; /* borrowed */
    struct colo_fluid_res *res;
    size_t n_res, cap_res;
    struct colo_fluid_act *act;
    size_t cap_act;
    uint32_t free_act; /* free list of activity slots */
    size_t n_active;
    uint32_t *live; /* the active slots, n_active of them, in no order (act's live_pos) */
    size_t cap_live;
    colo_event_id_t next_ev;
    colo_time_t next_time;
    /* deferred work: resources whose users need new speeds */
    uint32_t *dirty;
    size_t n_dirty, cap_dirty;
    int depth; /* > 0 inside the completion handler: solving waits until it returns */
    /* scratch for the solver */
    uint32_t *comp_act, *comp_res;
    size_t cap_comp_act, cap_comp_res;
    uint32_t epoch;
    int failed; /* first COLO_ENOMEM met inside an event */
    /* inside a completion callback: the use of the activity that ended, when it ran alone
     * (colo_fluid_done_solo), taken before its slot was freed; else NULL */
    const struct colo_fluid_use *done_solo;
    colo_time_t alone_at; /* an activity timed by its owner (colo_fluid_alone): its end, */
    const struct colo_fluid_use *alone; /* ... and its use (NULL: none) */
    colo_fluid_done_fn alone_fn;
    void *alone_obj;
    colo_fluid_presolve_fn presolve;
    void *presolve_obj;
    /* statistics */
    uint64_t solves, completions;
} colo_fluid_t;

/* Prepares an empty solver whose completions are events on eq. 0 or COLO_ENOMEM. */
int colo_fluid_init(colo_fluid_t *fl, colo_eq_t *eq);
void colo_fluid_fini(colo_fluid_t *fl);

/* Has fn(obj) called before every solve (one at a time; NULL for none). */
void colo_fluid_on_presolve(colo_fluid_t *fl, colo_fluid_presolve_fn fn, void *obj);

/* Adds a resource of the given capacity (units per ns); its index is written to *index. */
int colo_fluid_add_resource(colo_fluid_t *fl, double capacity, uint32_t *index);

/* Starts an activity now with remaining fraction remaining (1 for a fresh one) of work ns at
 * speed 1, at most bound (<= 1 usually), using elems. done(obj, arg) is called when it ends.
 * 0 or COLO_ENOMEM / COLO_EINVAL. Cost: a solve of the component it joins. */
int colo_fluid_start(colo_fluid_t *fl, double work, double remaining, double bound,
                     const colo_fluid_elem_t *elems, int n, colo_fluid_done_fn done, void *obj,
                     int64_t arg, colo_activity_id_t *id);

/* Removes a running activity before it ends (preemption); *remaining gets the fraction of its
 * work left. 0 or COLO_ENOENT. */
int colo_fluid_stop(colo_fluid_t *fl, colo_activity_id_t id, double *remaining);

/* Changes an activity's work and resource use from now on, keeping its progress. */
int colo_fluid_update(colo_fluid_t *fl, colo_activity_id_t id, double work,
                      const colo_fluid_elem_t *elems, int n);

/* The same for an activity whose resources stay those it has, in the same order (as started or
 * last updated, a resource named twice counted once): coef[k] is its new use of the k-th, n
 * their number. Changes the coefficients in place. 0, COLO_ENOENT or COLO_EINVAL. */
int colo_fluid_update_coefs(colo_fluid_t *fl, colo_activity_id_t id, double work,
                            const double *coef, int n);

/* Changes resource r's capacity from now on (the activities on it get new speeds). 0,
 * COLO_EINVAL (a capacity below 0, or not a number) or COLO_ENOMEM. */
int colo_fluid_set_capacity(colo_fluid_t *fl, uint32_t r, double capacity);

/* Sets an activity's weight (default 1): where a resource is the bottleneck, activities get
 * speeds in proportion to their weights (a priority). */
int colo_fluid_set_weight(colo_fluid_t *fl, colo_activity_id_t id, double weight);

/* Groups several starts, stops and updates into one solve: between begin and end nothing is
 * re-solved; end solves once for all of them. Nests. */
void colo_fluid_begin(colo_fluid_t *fl);
int colo_fluid_end(colo_fluid_t *fl);

/* Current speed (0..bound) and fraction of work left at the current time; -1 if unknown id. */
double colo_fluid_speed(const colo_fluid_t *fl, colo_activity_id_t id);
double colo_fluid_remaining(const colo_fluid_t *fl, colo_activity_id_t id);

/* Sum over active activities of coef x speed on resource r, and its capacity. */
double colo_fluid_usage(const colo_fluid_t *fl, uint32_t r);
double colo_fluid_capacity(const colo_fluid_t *fl, uint32_t r);

/* Resource r's use integrated over time since the solver began, up to now (units x ns): its
 * mean utilisation over [t0, t1) is the difference of two readings / (capacity x (t1 - t0)). */
double colo_fluid_used_integral(const colo_fluid_t *fl, uint32_t r);

/* An activity timed by its owner instead (sim/serving/merge.c). An activity alone, from its
 * start to its end, is solved once, alone, and its duration and use are then the same whenever
 * it starts with the solver idle. colo_fluid_done_solo, called from the completion callback of
 * an activity that ran so (one solve since it started, of it alone), gives its resources and
 * its use of each (units per ns, as the solve summed it; valid until the callback returns);
 * else NULL.
 * colo_fluid_alone, while no activity is on the solver, has such an activity run from now to
 * `at` without being solved: its use (borrowed until it ends) goes on its resources and comes off
 * them at the same solves as a started activity's would, and done(obj, 0) is called at `at` from
 * the solver's completion event, scheduled where the solver would have scheduled that activity's
 * (now, or when the enclosing completion or begin/end returns), so events at the same nanosecond
 * come in the same order. 0, or COLO_EINVAL when an activity is on the solver or one is timed
 * already. colo_fluid_alone_clear forgets it at once, keeping its use on its resources and the
 * event: the activity started next, at the instant it began and with the same use and finish, takes
 * both over (its place among ties included). */
const struct colo_fluid_use *colo_fluid_done_solo(const colo_fluid_t *fl);
int colo_fluid_alone(colo_fluid_t *fl, colo_time_t at, const struct colo_fluid_use *use,
                     colo_fluid_done_fn done, void *obj);
void colo_fluid_alone_clear(colo_fluid_t *fl);

#endif
