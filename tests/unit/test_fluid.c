/* test_fluid.c: the contention solver: rates, completions, preemption, and capacity. */
#include "errors.h"
#include "event_queue.h"
#include "fluid.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct world {
    colo_eq_t eq;
    colo_fluid_t fl;
    colo_time_t done_at[64];
    int n_done;
};

static void done(void *obj, int64_t arg)
{
    struct world *w = obj;
    w->done_at[arg] = w->eq.now;
    w->n_done++;
}

static void setup(struct world *w)
{
    memset(w, 0, sizeof *w);
    colo_eq_init(&w->eq, 0);
    colo_fluid_init(&w->fl, &w->eq);
}

static void teardown(struct world *w)
{
    colo_fluid_fini(&w->fl);
    colo_eq_fini(&w->eq);
}

static void run(struct world *w)
{
    colo_event_t ev;
    while (colo_eq_pop(&w->eq, &ev))
        ev.fn(ev.obj, ev.arg);
}

static colo_activity_id_t start1(struct world *w, double work, uint32_t r, double coef, int64_t tag)
{
    colo_fluid_elem_t e = {r, coef};
    colo_activity_id_t id;
    cr_assert_eq(colo_fluid_start(&w->fl, work, 1.0, 1.0, &e, 1, done, w, tag, &id), 0);
    return id;
}

Test(fluid, alone_below_capacity_runs_at_full_speed)
{
    struct world w;
    setup(&w);
    uint32_t dram;
    colo_fluid_add_resource(&w.fl, 3000, &dram);
    colo_activity_id_t a = start1(&w, 123457, dram, 2999, 0);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, a), 1.0, 1e-12);
    run(&w);
    cr_assert_eq(w.done_at[0], 123457);
    teardown(&w);
}

Test(fluid, two_bandwidth_bound_activities_each_take_twice_as_long)
{
    struct world w;
    setup(&w);
    uint32_t dram;
    colo_fluid_add_resource(&w.fl, 3000, &dram);
    start1(&w, 100000, dram, 3000, 0);
    start1(&w, 100000, dram, 3000, 1);
    run(&w);
    cr_assert_eq(w.done_at[0], 200000);
    cr_assert_eq(w.done_at[1], 200000);
    teardown(&w);
}

Test(fluid, the_survivor_speeds_up_when_the_other_ends)
{
    struct world w;
    setup(&w);
    uint32_t link;
    colo_fluid_add_resource(&w.fl, 50, &link);
    start1(&w, 1000, link, 50, 0); /* 1000 ns alone */
    start1(&w, 3000, link, 50, 1); /* 3000 ns alone */
    run(&w);
    /* both at half speed until the first is done at 2000 (2000 of its 3000 ns of work left
     * for the second: 1000 done), then the second alone: 2000 more */
    cr_assert_eq(w.done_at[0], 2000);
    cr_assert_eq(w.done_at[1], 4000);
    teardown(&w);
}

Test(fluid, disjoint_resources_do_not_interfere)
{
    struct world w;
    setup(&w);
    uint32_t half_a, half_b;
    colo_fluid_add_resource(&w.fl, 66, &half_a);
    colo_fluid_add_resource(&w.fl, 66, &half_b);
    start1(&w, 50000, half_a, 66, 0);
    start1(&w, 50000, half_b, 66, 1);
    run(&w);
    cr_assert_eq(w.done_at[0], 50000);
    cr_assert_eq(w.done_at[1], 50000);
    teardown(&w);
}

Test(fluid, the_most_constrained_resource_decides)
{
    struct world w;
    setup(&w);
    uint32_t sm, dram;
    colo_fluid_add_resource(&w.fl, 100, &sm);
    colo_fluid_add_resource(&w.fl, 1000, &dram);
    /* a: compute-heavy, b: memory-heavy; DRAM is oversubscribed 1.5x, SMs are not */
    colo_fluid_elem_t ea[2] = {{sm, 60}, {dram, 500}}, eb[2] = {{sm, 20}, {dram, 1000}};
    colo_activity_id_t a, b;
    colo_fluid_start(&w.fl, 1000, 1, 1, ea, 2, done, &w, 0, &a);
    colo_fluid_start(&w.fl, 1000, 1, 1, eb, 2, done, &w, 1, &b);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, a), 1000.0 / 1500.0, 1e-12);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, b), 1000.0 / 1500.0, 1e-12);
    cr_assert_float_eq(colo_fluid_usage(&w.fl, dram), 1000.0, 1e-9);
    teardown(&w);
}

Test(fluid, a_bound_below_the_fair_share_leaves_the_rest_to_others)
{
    struct world w;
    setup(&w);
    uint32_t link;
    colo_fluid_add_resource(&w.fl, 100, &link);
    colo_fluid_elem_t e = {link, 100};
    colo_activity_id_t slow, fast;
    colo_fluid_start(&w.fl, 1000, 1, 0.2, &e, 1, done, &w, 0, &slow);
    colo_fluid_start(&w.fl, 1000, 1, 1.0, &e, 1, done, &w, 1, &fast);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, slow), 0.2, 1e-12);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, fast), 0.8, 1e-12);
    teardown(&w);
}

Test(fluid, stop_keeps_progress_and_a_restart_finishes_the_rest)
{
    struct world w;
    setup(&w);
    uint32_t r;
    colo_fluid_add_resource(&w.fl, 10, &r);
    colo_activity_id_t a = start1(&w, 1000, r, 10, 0);
    /* advance the clock to 400 with a dummy event */
    colo_eq_schedule(&w.eq, 400, (colo_event_fn)0, NULL, 0, NULL);
    colo_event_t ev;
    colo_eq_pop(&w.eq, &ev);
    double left;
    cr_assert_eq(colo_fluid_stop(&w.fl, a, &left), 0);
    cr_assert_float_eq(left, 0.6, 1e-12);
    cr_assert_eq(colo_fluid_stop(&w.fl, a, &left), COLO_ENOENT, "a stopped handle is stale");
    colo_fluid_elem_t e = {r, 10};
    colo_fluid_start(&w.fl, 1000, left, 1, &e, 1, done, &w, 0, NULL);
    run(&w);
    cr_assert_eq(w.done_at[0], 1000);
    teardown(&w);
}

Test(fluid, update_changes_the_rest_of_the_work)
{
    struct world w;
    setup(&w);
    uint32_t r;
    colo_fluid_add_resource(&w.fl, 10, &r);
    colo_activity_id_t a = start1(&w, 1000, r, 5, 0);
    colo_eq_schedule(&w.eq, 500, (colo_event_fn)0, NULL, 0, NULL);
    colo_event_t ev;
    colo_eq_pop(&w.eq, &ev);
    colo_fluid_elem_t e = {r, 5};
    cr_assert_eq(colo_fluid_update(&w.fl, a, 3000, &e, 1), 0); /* half done; the rest is slower */
    run(&w);
    cr_assert_eq(w.done_at[0], 500 + 1500);
    teardown(&w);
}

Test(fluid, update_coefs_changes_uses_in_place_and_refuses_what_it_cannot)
{
    struct world w;
    setup(&w);
    uint32_t r1, r2;
    colo_fluid_add_resource(&w.fl, 10, &r1);
    colo_fluid_add_resource(&w.fl, 10, &r2);
    colo_fluid_elem_t e[2] = {{r1, 5}, {r2, 5}};
    colo_activity_id_t a;
    cr_assert_eq(colo_fluid_start(&w.fl, 1000, 1.0, 1.0, e, 2, done, &w, 0, &a), 0);
    colo_eq_schedule(&w.eq, 500, (colo_event_fn)0, NULL, 0, NULL);
    colo_event_t ev;
    colo_eq_pop(&w.eq, &ev);
    double c[2] = {5, 20}; /* r2 now limits it to half speed */
    cr_assert_eq(colo_fluid_update_coefs(&w.fl, a, 1000, c, 1), COLO_EINVAL, "not its count");
    double bad[2] = {5, -1};
    cr_assert_eq(colo_fluid_update_coefs(&w.fl, a, 1000, bad, 2), COLO_EINVAL);
    cr_assert_eq(colo_fluid_update_coefs(&w.fl, a, 1000, c, 2), 0);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, a), 0.5, 1e-12);
    cr_assert_float_eq(colo_fluid_usage(&w.fl, r2), 10, 1e-9);
    run(&w);
    cr_assert_eq(w.done_at[0], 500 + 1000, "the other half at half speed");
    cr_assert_eq(colo_fluid_update_coefs(&w.fl, a, 1000, c, 2), COLO_ENOENT, "finished");
    /* its use over time: 5 of r2 for 500 ns, then 10 for 1000 */
    cr_assert_float_eq(colo_fluid_used_integral(&w.fl, r2), 5 * 500 + 10 * 1000, 1e-6);
    teardown(&w);
}

/* The presolve hook runs once per solve, after every change of the instant, and what it changes
 * joins that solve. */
struct hooked {
    struct world w;
    colo_activity_id_t a;
    int calls;
    double coef; /* what the hook gives a on r */
};

static void hook(void *obj)
{
    struct hooked *h = obj;
    h->calls++;
    if (h->a && colo_fluid_speed(&h->w.fl, h->a) >= 0) {
        double c[1] = {h->coef};
        cr_assert_eq(colo_fluid_update_coefs(&h->w.fl, h->a, 1000, c, 1), 0);
    }
}

Test(fluid, the_presolve_hook_runs_once_per_solve_and_its_changes_join_it)
{
    struct hooked h;
    memset(&h, 0, sizeof h);
    setup(&h.w);
    colo_fluid_on_presolve(&h.w.fl, hook, &h);
    uint32_t r;
    colo_fluid_add_resource(&h.w.fl, 10, &r);
    h.coef = 40; /* a would run at a quarter of its speed */
    colo_fluid_begin(&h.w.fl);
    h.a = start1(&h.w, 1000, r, 5, 0);
    start1(&h.w, 1000, r, 1, 1);
    cr_assert_eq(h.calls, 0, "nothing is solved inside begin/end");
    cr_assert_eq(colo_fluid_end(&h.w.fl), 0);
    cr_assert_eq(h.calls, 1);
    /* a uses 40, b 1 at full speed: r fills at level 10 / 41 for both */
    cr_assert_float_eq(colo_fluid_speed(&h.w.fl, h.a), 10.0 / 41, 1e-12);
    cr_assert_float_eq(colo_fluid_usage(&h.w.fl, r), 10, 1e-9);
    teardown(&h.w);
}

/* Random activities on random subsets of resources: after every event no resource is used
 * beyond its capacity, and every activity slower than its bound has a saturated resource. */
static uint64_t seed = 42;
static double uni(void)
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) / 9007199254740992.0;
}

struct rworld {
    struct world w;
    uint32_t res[8];
    colo_activity_id_t ids[64];
    colo_fluid_elem_t e[64][4];
    int n[64];
    double bound[64];
    int started;
};

static void rdone(void *obj, int64_t arg);

static void rstart(struct rworld *rw, int slot)
{
    colo_fluid_elem_t e[4];
    int n = 1 + (int)(uni() * 4);
    for (int k = 0; k < n; k++) {
        e[k].res = rw->res[(k * 3 + (int)(uni() * 8)) % 8];
        for (int j = 0; j < k; j++)
            if (e[j].res == e[k].res) e[k].res = rw->res[(e[k].res + 1) % 8];
        e[k].coef = uni() * 150;
    }
    double bound = uni() < 0.2 ? 0.1 + 0.9 * uni() : 1.0;
    memcpy(rw->e[slot], e, sizeof e);
    rw->n[slot] = n;
    rw->bound[slot] = bound;
    cr_assert_eq(colo_fluid_start(&rw->w.fl, 1000 + uni() * 100000, 1, bound, e, n, rdone, rw, slot,
                                  &rw->ids[slot]),
                 0);
    rw->started++;
}

static void rdone(void *obj, int64_t arg)
{
    struct rworld *rw = obj;
    rw->w.n_done++;
    if (rw->started < 5000) rstart(rw, (int)arg);
}

Test(fluid, randomized_runs_never_exceed_capacity_and_are_max_min_fair)
{
    struct rworld *rw = calloc(1, sizeof *rw);
    setup(&rw->w);
    for (int r = 0; r < 8; r++)
        colo_fluid_add_resource(&rw->w.fl, 50 + 200 * uni(), &rw->res[r]);
    for (int s = 0; s < 24; s++)
        rstart(rw, s);
    colo_event_t ev;
    long checks = 0;
    while (colo_eq_pop(&rw->w.eq, &ev)) {
        ev.fn(ev.obj, ev.arg);
        for (int r = 0; r < 8; r++) {
            double u = colo_fluid_usage(&rw->w.fl, rw->res[r]);
            double c = colo_fluid_capacity(&rw->w.fl, rw->res[r]);
            cr_assert_leq(u, c * (1 + 1e-9), "resource %d: %g used of %g", r, u, c);
            checks++;
        }
        /* max-min: an activity below its bound is held back by a saturated resource */
        for (int a = 0; a < 24; a++) {
            double sp = colo_fluid_speed(&rw->w.fl, rw->ids[a]);
            if (sp < 0 || sp >= rw->bound[a] - 1e-9) continue;
            int saturated = 0;
            for (int k = 0; k < rw->n[a]; k++) {
                uint32_t r = rw->e[a][k].res;
                if (rw->e[a][k].coef > 0 && colo_fluid_usage(&rw->w.fl, r) >=
                                                colo_fluid_capacity(&rw->w.fl, r) * (1 - 1e-6))
                    saturated = 1;
            }
            cr_assert(saturated, "activity %d at speed %g < bound %g with no saturated resource", a,
                      sp, rw->bound[a]);
        }
    }
    cr_assert_eq(rw->w.n_done, 5000, "every activity finished");
    cr_assert_gt(checks, 10000);
    teardown(&rw->w);
    free(rw);
}

Test(fluid, weights_split_a_bottleneck_in_proportion)
{
    struct world w;
    setup(&w);
    uint32_t r;
    colo_fluid_add_resource(&w.fl, 100, &r);
    colo_activity_id_t hi = start1(&w, 1000, r, 100, 0), lo = start1(&w, 1000, r, 100, 1);
    cr_assert_eq(colo_fluid_set_weight(&w.fl, hi, 3.0), 0);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, hi), 0.75, 1e-12);
    cr_assert_float_eq(colo_fluid_speed(&w.fl, lo), 0.25, 1e-12);
    teardown(&w);
}

/* Activities ending at the same instant are heard in slot order, at most 16 per event and the
 * rest at once after, whether most slots are active (the slots are scanned) or few (the live
 * list is, its order scrambled by the ends before). */
struct order {
    colo_eq_t eq;
    colo_fluid_t fl;
    int64_t heard[128];
    colo_time_t at[128];
    uint64_t released[128]; /* ends released when it was heard: its event's batch's last */
    int n;
};

static void heard(void *obj, int64_t arg)
{
    struct order *o = obj;
    o->at[o->n] = o->eq.now;
    o->released[o->n] = o->fl.completions;
    o->heard[o->n++] = arg;
}

Test(fluid, simultaneous_ends_are_heard_in_slot_order_with_few_or_many_slots_active)
{
    struct order o;
    memset(&o, 0, sizeof o);
    colo_eq_init(&o.eq, 0);
    colo_fluid_init(&o.fl, &o.eq);
    uint32_t r[100];
    for (int i = 0; i < 100; i++)
        cr_assert_eq(colo_fluid_add_resource(&o.fl, 1.0, &r[i]), 0);
    /* 100 fresh activities take slots 0..99 in order; every fifth lasts 1,000 ns, the rest 100 */
    for (int i = 0; i < 100; i++) {
        colo_fluid_elem_t e = {r[i], 1.0};
        cr_assert_eq(colo_fluid_start(&o.fl, i % 5 ? 100 : 1000, 1.0, 1.0, &e, 1, heard, &o, i,
                                      NULL),
                     0);
    }
    colo_event_t ev;
    while (colo_eq_pop(&o.eq, &ev))
        ev.fn(ev.obj, ev.arg);
    cr_assert_eq(o.n, 100);
    int k = 0;
    /* each event releases its batch (16 at most) before any is heard: the k-th end heard was
     * released with those up to the end of its batch of 16 (of 80, then of 20 more) */
    for (int i = 0; i < 100; i++) /* many active: the 80 short ones, by slot */
        if (i % 5) {
            cr_assert_eq(o.heard[k], i, "end %d: heard %lld", k, (long long)o.heard[k]);
            cr_assert_eq(o.released[k], (uint64_t)(16 * (k / 16 + 1)), "end %d", k);
            cr_assert_eq(o.at[k++], 100);
        }
    for (int i = 0; i < 100; i += 5) { /* 20 of 128 slots active: the live list, by slot */
        cr_assert_eq(o.heard[k], i, "end %d: heard %lld", k, (long long)o.heard[k]);
        cr_assert_eq(o.released[k], k < 96 ? 96u : 100u, "end %d", k);
        cr_assert_eq(o.at[k++], 1000);
    }
    colo_fluid_fini(&o.fl);
    colo_eq_fini(&o.eq);
}

/* An activity timed by its owner (colo_fluid_alone), as sim/serving/merge.c times a kernel seen
 * alone: the same use integral at every instant as the activity solved alone, its end heard
 * where the solver's would be among events at the same nanosecond, and, cleared and replaced by
 * the activity started when it began, that activity's end keeps that place. */
struct tie {
    colo_eq_t eq;
    colo_fluid_t fl;
    uint32_t r;
    char order[8]; /* what fired at 1,000 ns, in order: 'k' the activity, 'a' and 'b' others */
    int n;
    double at500; /* the use integral at 500 ns */
    struct colo_fluid_use use; /* what colo_fluid_done_solo gave it */
    int n_solo;
};

static void tie_mark(void *obj, int64_t arg)
{
    struct tie *t = obj;
    t->order[t->n++] = (char)arg;
}

static void tie_done(void *obj, int64_t arg)
{
    (void)arg;
    struct tie *t = obj;
    const struct colo_fluid_use *u = colo_fluid_done_solo(&t->fl);
    t->n_solo = u ? u->n : 0;
    if (u) t->use = *u;
    t->order[t->n++] = 'k';
}

static void tie_read(void *obj, int64_t arg)
{
    (void)arg;
    struct tie *t = obj;
    t->at500 = colo_fluid_used_integral(&t->fl, t->r);
}

static void tie_b(void *obj, int64_t arg) /* at 200 ns: another event for 1,000 ns */
{
    (void)arg;
    struct tie *t = obj;
    cr_assert_eq(colo_eq_schedule(&t->eq, 1000, tie_mark, t, 'b', NULL), 0);
}

static void tie_start(struct tie *t)
{
    colo_fluid_elem_t e = {t->r, 1.5};
    cr_assert_eq(colo_fluid_start(&t->fl, 1000, 1.0, 1.0, &e, 1, tie_done, t, 0, NULL), 0);
}

static void tie_take_over(void *obj, int64_t arg) /* at 400 ns: onto the solver, as begun */
{
    (void)arg;
    struct tie *t = obj;
    colo_fluid_alone_clear(&t->fl);
    colo_time_t now = t->eq.now;
    t->eq.now = 0;
    tie_start(t);
    t->eq.now = now;
}

/* mode 0: solved; 1: timed alone; 2: timed alone, then onto the solver at 400 ns */
static void tie_run(struct tie *t, int mode, const struct colo_fluid_use *use)
{
    memset(t, 0, sizeof *t);
    colo_eq_init(&t->eq, 0);
    colo_fluid_init(&t->fl, &t->eq);
    cr_assert_eq(colo_fluid_add_resource(&t->fl, 2.0, &t->r), 0);
    cr_assert_eq(colo_eq_schedule(&t->eq, 1000, tie_mark, t, 'a', NULL), 0); /* before it */
    if (mode == 0)
        tie_start(t);
    else
        cr_assert_eq(colo_fluid_alone(&t->fl, 1000, use, tie_done, t), 0);
    cr_assert_eq(colo_eq_schedule(&t->eq, 200, tie_b, t, 0, NULL), 0);
    cr_assert_eq(colo_eq_schedule(&t->eq, 500, tie_read, t, 0, NULL), 0);
    if (mode == 2) cr_assert_eq(colo_eq_schedule(&t->eq, 400, tie_take_over, t, 0, NULL), 0);
    colo_event_t ev;
    while (colo_eq_pop(&t->eq, &ev))
        ev.fn(ev.obj, ev.arg);
}

Test(fluid, an_activity_timed_alone_leaves_the_use_and_the_order_of_one_solved)
{
    struct tie solved, timed, taken;
    tie_run(&solved, 0, NULL);
    cr_assert_eq(solved.n_solo, 1, "an activity solved once, alone, says so");
    cr_assert_eq(solved.use.res[0], solved.r);
    cr_assert_eq(solved.use.used[0], 1.5);
    cr_assert_str_eq(solved.order, "akb");
    tie_run(&timed, 1, &solved.use);
    tie_run(&taken, 2, &solved.use);
    const struct tie *t[2] = {&timed, &taken};
    for (int i = 0; i < 2; i++) {
        cr_expect_str_eq(t[i]->order, solved.order, "run %d", i + 1);
        cr_expect_eq(t[i]->at500, solved.at500, "run %d: %.17g at 500 ns, solved %.17g", i + 1,
                     t[i]->at500, solved.at500);
        cr_expect_eq(colo_fluid_used_integral(&t[i]->fl, t[i]->r),
                     colo_fluid_used_integral(&solved.fl, solved.r), "run %d", i + 1);
    }
    cr_expect_eq(solved.at500, 750.0);
    cr_expect_eq(timed.n_solo, 0, "an activity timed alone is not one solved");
    /* one is timed at a time, and none beside a solved one */
    cr_expect_eq(colo_fluid_alone(&solved.fl, 2000, &solved.use, tie_done, &solved), 0);
    cr_expect_eq(colo_fluid_alone(&solved.fl, 2000, &solved.use, tie_done, &solved), COLO_EINVAL);
    struct tie *all[3] = {&solved, &timed, &taken};
    for (int i = 0; i < 3; i++) {
        colo_fluid_fini(&all[i]->fl);
        colo_eq_fini(&all[i]->eq);
    }
}
