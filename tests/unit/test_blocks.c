/* test_blocks.c: kernels' blocks on SMs: a kernel waits for the blocks in flight and those
 * queued before it, a higher priority overtakes pending blocks but evicts none, reserved SMs
 * never wait for another tenant, an SM cap limits without reserving (docs/model.md, "Blocks on
 * SMs"). */
#include "hw_rig.h"

TestSuite(blocks, .init = test_init);

/* ---- blocks on SMs: waits, priorities, reserved SMs ---- */

struct later {
    struct rig *r;
    const colo_kernel_work_t *w;
    colo_hw_place_t p;
    colo_hw_kernel_t *k;
    long long resident_before; /* of watch, when this one started */
    colo_hw_kernel_t *watch;
};

static void later_start(void *obj, int64_t tag)
{
    struct later *l = obj;
    if (l->watch) l->resident_before = colo_hw_kernel_resident(l->watch);
    cr_assert_eq(colo_hw_kernel_start(&l->r->hw, l->w, l->p, 1.0, done, l->r, tag, &l->k), 0);
}

/* A compute-bound kernel that fills the H100 four times over: 4 waves of 1,056 blocks (256
 * threads, 8 per SM), 100 us each; with extra blocks, a fifth, partial wave. */
static colo_kernel_work_t filler(struct rig *r, unsigned extra)
{
    return kwork(r->gpu, 4 * 1056 + extra, extra ? 500000 : 400000, COLO_KCLASS_COMPUTE, -1, -1);
}

Test(blocks, a_kernel_waits_for_the_blocks_in_flight_and_those_queued_before_it)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 0),
                       small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    start(&r, &big, whole, 0);
    struct later l = {&r, &small, whole, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, 150000, later_start, &l, 1, NULL);
    rig_run(&r);
    /* same priority: its blocks come after every block of the big kernel, whose four full
     * waves leave no free slot before the last retires at 400 us */
    cr_assert(NEAR(r.done_at[0], 400000, 1e-6), "%lld", (long long)r.done_at[0]);
    cr_assert(NEAR(r.done_at[1], 410000, 1e-6), "%lld", (long long)r.done_at[1]);
    rig_fini(&r);
}

Test(blocks, a_kernel_behind_a_partial_last_wave_starts_when_that_wave_does)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 500),
                       small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    start(&r, &big, whole, 0);
    struct later l = {&r, &small, whole, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, 150000, later_start, &l, 1, NULL);
    rig_run(&r);
    /* the fifth wave (500 blocks from 400 us) leaves slots free: it starts then, not at 500 */
    cr_assert(NEAR(r.done_at[1], 410000, 1e-6), "%lld", (long long)r.done_at[1]);
    cr_assert(NEAR(r.done_at[0], 500000, 1e-6), "%lld", (long long)r.done_at[0]);
    rig_fini(&r);
}

Test(blocks, a_higher_priority_kernel_waits_only_for_the_blocks_in_flight)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 0),
                       small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_kernel_t *b;
    cr_assert_eq(colo_hw_kernel_start(&r.hw, &big, whole, 1.0, done, &r, 0, &b), 0);
    colo_hw_place_t high = whole;
    high.priority = 1;
    struct later l = {&r, &small, high, NULL, 0, b};
    colo_eq_schedule(&r.eq, 150000, later_start, &l, 1, NULL);
    colo_event_t ev;
    while (colo_eq_pop(&r.eq, &ev)) {
        ev.fn(ev.obj, ev.arg);
        if (l.k && r.eq.now == 150000) { /* just arrived: nothing evicted, it waits */
            cr_assert_eq(colo_hw_kernel_resident(b), l.resident_before);
            cr_assert_eq(colo_hw_kernel_resident(b), 1056);
            cr_assert_eq(colo_hw_kernel_resident(l.k), 0);
        }
    }
    /* its wait is the second wave's remaining 50 us (bounded by the resident blocks' remaining
     * times: all end at 200 us); its blocks share their SMs' issue rate with the big kernel's
     * (3 % slower), whose last four blocks slip by its time */
    cr_assert(r.done_at[1] >= 210000 && NEAR(r.done_at[1], 210000, 0.002), "%lld",
              (long long)r.done_at[1]);
    cr_assert(r.done_at[0] >= 410000 && NEAR(r.done_at[0], 410000, 0.02), "%lld",
              (long long)r.done_at[0]);
    rig_fini(&r);
}

Test(blocks, a_higher_priority_kernel_overtakes_an_earlier_lower_priority_one)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 0),
                       wave = kwork(r.gpu, 1056, 50000, COLO_KCLASS_COMPUTE, -1, -1);
    start(&r, &big, whole, 0);
    colo_hw_place_t high = whole;
    high.priority = 1;
    struct later lo = {&r, &wave, whole, NULL, 0, NULL}, hi = {&r, &wave, high, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, 120000, later_start, &lo, 1, NULL);
    colo_eq_schedule(&r.eq, 150000, later_start, &hi, 2, NULL);
    rig_run(&r);
    /* hi takes the slots the second wave frees at 200 us; the big kernel resumes after it and
     * lo, queued first at the same priority as the big kernel, waits for all of its blocks */
    cr_assert(NEAR(r.done_at[2], 250000, 1e-6), "%lld", (long long)r.done_at[2]);
    cr_assert(NEAR(r.done_at[0], 450000, 1e-6), "%lld", (long long)r.done_at[0]);
    cr_assert(NEAR(r.done_at[1], 500000, 1e-6), "%lld", (long long)r.done_at[1]);
    rig_fini(&r);
}

Test(blocks, on_reserved_sms_a_kernel_never_waits_for_another_tenants_blocks)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    uint32_t a = sms(&r, 0, 64), b = sms(&r, 64, 64); /* Green Contexts, MIG-like halves */
    colo_kernel_work_t big = kwork(r.gpu, 8 * 64 * 4, 400000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, -1}; /* even at a lower priority */
    start(&r, &big, pa, 0);
    struct later l[3];
    for (int i = 0; i < 3; i++) {
        l[i] = (struct later){&r, &small, pb, NULL, 0, NULL};
        colo_eq_schedule(&r.eq, 50000 + 100000 * i, later_start, &l[i], 1 + i, NULL);
    }
    rig_run(&r);
    for (int i = 0; i < 3; i++)
        cr_assert(NEAR(r.done_at[1 + i], 60000 + 100000 * i, 1e-6), "%d: %lld", i,
                  (long long)r.done_at[1 + i]);
    /* 2 waves on 132 SMs in 400 us: 4 on its 64, undisturbed */
    cr_assert(NEAR(r.done_at[0], 800000, 1e-6), "%lld", (long long)r.done_at[0]);
    rig_fini(&r);
}

Test(blocks, an_sm_limit_caps_a_kernels_sms_without_reserving_them)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 0),
                       small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t capped = whole;
    capped.sm_limit = 66;
    start(&r, &big, capped, 0);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[0], 800000, 1e-6), "half the SMs: twice the waves: %lld",
              (long long)r.done_at[0]);
    /* capped at 66 SMs, the big kernel leaves 66 idle: a small one starts at once */
    start(&r, &big, capped, 1);
    struct later l = {&r, &small, whole, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, r.eq.now + 150000, later_start, &l, 2, NULL);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[2] - r.done_at[0], 160000, 1e-6), "%lld",
              (long long)(r.done_at[2] - r.done_at[0]));
    /* but a capped small kernel still waits behind an uncapped big one: a cap reserves none */
    start(&r, &big, whole, 3);
    colo_hw_place_t small_capped = whole;
    small_capped.sm_limit = 2;
    struct later m = {&r, &small, small_capped, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, r.eq.now + 150000, later_start, &m, 4, NULL);
    colo_time_t t3 = r.eq.now;
    rig_run(&r);
    cr_assert(NEAR(r.done_at[4] - t3, 410000, 1e-6), "%lld", (long long)(r.done_at[4] - t3));
    rig_fini(&r);
}

/* ---- regressions (found in review) ---- */

/* Blocks dispatched after a kernel's first ones do not start before its dispatch and floor are
 * over: with its slots coming in pieces, a kernel never ends sooner than alone. */
Test(blocks, a_kernel_that_gets_its_slots_in_pieces_is_never_faster_than_alone)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_hw_fini(&r.hw); /* the real GPU, with its dispatch gap and latency floor */
    colo_gpu_free(r.gpu);
    r.gpu = open_gpu("h100-sxm");
    cr_assert_eq(colo_hw_init(&r.hw, r.gpu, &r.eq), 0);
    colo_kernel_work_t x = kwork(r.gpu, 2534, 7500, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t half =
        kwork_shape(r.gpu, 132, 1024, -1, -1, 8000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t left = {sms(&r, 0, 66), 0, 0, 0, 0};
    start(&r, &x, whole, 0);
    rig_run(&r);
    colo_time_t alone = r.done_at[0];
    start(&r, &half, left, 1); /* fills half the SMs */
    rig_run(&r);
    colo_time_t half_alone = r.done_at[1] - r.done_at[0];
    /* x comes 1 us before they free: it gets the other half, then the rest in its fixed part */
    colo_time_t t1 = r.eq.now;
    start(&r, &half, left, 3);
    struct later l = {&r, &x, whole, NULL, 0, NULL};
    colo_time_t t0 = t1 + half_alone - 1000;
    colo_eq_schedule(&r.eq, t0, later_start, &l, 2, NULL);
    rig_run(&r);
    cr_assert_geq(r.done_at[2] - t0, alone, "%lld ns, alone %lld", (long long)(r.done_at[2] - t0),
                  (long long)alone);
    rig_fini(&r);
}

struct stopper {
    struct rig *r;
    colo_hw_kernel_t *victim;
    int rc;
};

static void stop_other(void *obj, int64_t tag)
{
    struct stopper *s = obj;
    s->r->n_done++;
    if (tag == 1 && s->victim) s->rc = colo_hw_kernel_stop(&s->r->hw, s->victim, NULL);
}

/* Two kernels end in the same instant and the first one's completion stops the second (a
 * context switch, a crash): its blocks are gone, its record is not used again. */
Test(blocks, stopping_a_kernel_in_the_instant_its_blocks_end_is_safe)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t a = kwork(r.gpu, 528, 50000, COLO_KCLASS_COMPUTE, -1, -1);
    struct stopper s = {&r, NULL, 0};
    colo_hw_kernel_t *k1;
    cr_assert_eq(colo_hw_kernel_start(&r.hw, &a, whole, 1.0, stop_other, &s, 1, &k1), 0);
    cr_assert_eq(colo_hw_kernel_start(&r.hw, &a, whole, 1.0, stop_other, &s, 2, &s.victim), 0);
    colo_kernel_work_t w3 = kwork(r.gpu, 4, 50000, COLO_KCLASS_COMPUTE, -1, -1);
    struct later l = {&r, &w3, whole, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, 1000, later_start, &l, 3, NULL);
    rig_run(&r);
    cr_assert_eq(s.rc, 0);
    cr_assert_eq(r.n_done, 2, "the first, and the third; the second was stopped");
    cr_assert_eq(colo_hw_check_slots(&r.hw), 0);
    rig_fini(&r);
}

/* A kernel at its MPS SM cap that still has blocks to dispatch takes no other SM, so it holds
 * back nobody's blocks on the SMs it cannot use. */
Test(blocks, a_kernel_at_its_sm_cap_holds_back_no_other_kernel)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    /* half of every SM, for a long time */
    colo_kernel_work_t z =
        kwork_shape(r.gpu, 132, 1024, -1, -1, 2000000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t x = kwork(r.gpu, 16 * 1056, 1600000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t y = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t capped = whole;
    capped.sm_limit = 66;
    start(&r, &z, whole, 0);
    start(&r, &x, capped, 1); /* 4 blocks on each of its 66 SMs: at its cap, blocks pending */
    struct later l = {&r, &y, whole, NULL, 0, NULL};
    colo_eq_schedule(&r.eq, 100000, later_start, &l, 2, NULL);
    rig_run(&r);
    cr_assert_lt(r.done_at[2], 100000 + 20000, "%lld: it starts on the SMs the cap leaves",
                 (long long)r.done_at[2]);
    cr_assert_eq(r.n_done, 3, "and the capped kernel's blocks are still dispatched, to the end");
    cr_assert_gt(r.done_at[1], r.done_at[0], "as the long kernel's blocks leave its SMs");
    rig_fini(&r);
}

/* More kernels get their first blocks at once than the L2 group had room for when they were
 * queued: its list of running kernels grows (the sanitizer build checks the bounds). */
Test(blocks, many_queued_kernels_that_start_at_once_join_their_l2_group)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t big = filler(&r, 0),
                       small = kwork(r.gpu, 4, 10000, COLO_KCLASS_COMPUTE, -1, -1);
    start(&r, &big, whole, 0);
    for (int i = 1; i <= 40; i++)
        start(&r, &small, whole, i);
    rig_run(&r);
    cr_assert_eq(r.n_done, 41);
    cr_assert_eq(r.hw.l2[0].n_running, 0);
    rig_fini(&r);
}
