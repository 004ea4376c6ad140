/* test_hardware.c: kernels and copies contending for a GPU's SMs, L2, DRAM channels and PCIe.
 * Each property here could fail: they are the behaviours the contention model must have. */
#include "hw_rig.h"

TestSuite(hardware, .init = test_init);

Test(hardware, a_kernel_alone_takes_its_traced_time)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t c = kwork(r.gpu, 5000, 250000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t m = kwork(r.gpu, 5000, 180000, COLO_KCLASS_MEMORY, -1, -1);
    colo_kernel_work_t u = kwork(r.gpu, 40, 77777, COLO_KCLASS_UNKNOWN, -1, -1);
    start(&r, &c, whole, 0);
    rig_run(&r);
    start(&r, &m, whole, 1);
    rig_run(&r);
    start(&r, &u, whole, 2);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[0], 250000, 0.01), "%lld", (long long)r.done_at[0]);
    cr_assert(NEAR(r.done_at[1] - r.done_at[0], 180000, 0.01));
    cr_assert(NEAR(r.done_at[2] - r.done_at[1], 77777, 0.01));
    rig_fini(&r);
}

/* Two kernels that each fill the GPU: the second's blocks get slots only as the first's last
 * wave leaves them, so they run one after the other (not side by side at half speed). */
Test(hardware, two_kernels_that_fill_the_gpu_run_one_after_the_other)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t m = kwork(r.gpu, 5000, 100000, COLO_KCLASS_MEMORY, -1, -1);
    start(&r, &m, whole, 0);
    start(&r, &m, whole, 1);
    rig_run(&r);
    /* the first's last wave (776 of 1,056 slots) shares DRAM with the second's first */
    cr_assert(NEAR(r.done_at[0], 100000, 0.05), "%lld", (long long)r.done_at[0]);
    cr_assert(NEAR(r.done_at[1], 200000, 0.05), "%lld", (long long)r.done_at[1]);
    rig_fini(&r);
}

/* Two DRAM-bound kernels on disjoint SMs both run at once and share the bandwidth. */
Test(hardware, two_dram_bound_kernels_on_disjoint_sms_share_the_bandwidth)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    uint32_t a = sms(&r, 0, 66), b = sms(&r, 66, 66);
    colo_kernel_work_t m = kwork(r.gpu, 5000, 100000, COLO_KCLASS_MEMORY, -1, -1);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, 0};
    start(&r, &m, pa, 0);
    rig_run(&r);
    colo_time_t alone = r.done_at[0];
    start(&r, &m, pa, 1);
    start(&r, &m, pb, 2);
    rig_run(&r);
    /* 66 SMs can pull the whole DRAM rate (a third of the SMs saturate it): twice as long */
    cr_assert(NEAR(alone, 100000, 0.02), "%lld", (long long)alone);
    cr_assert(NEAR(r.done_at[1] - alone, 200000, 0.05), "%lld", (long long)(r.done_at[1] - alone));
    cr_assert(NEAR(r.done_at[2] - alone, 200000, 0.05));
    rig_fini(&r);
}

Test(hardware, two_compute_bound_kernels_on_disjoint_sm_halves_take_their_alone_time)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    uint32_t a = sms(&r, 0, 66), b = sms(&r, 66, 66);
    colo_kernel_work_t c = kwork(r.gpu, 8 * 132 * 4, 100000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, 0};
    start(&r, &c, pa, 0); /* alone on its half first */
    rig_run(&r);
    colo_time_t alone = r.done_at[0];
    cr_assert(NEAR(alone, 200000, 0.01), "4 waves on 132 SMs = 8 on 66: %lld", (long long)alone);
    start(&r, &c, pa, 1);
    start(&r, &c, pb, 2);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[1] - alone, alone, 0.01));
    cr_assert(NEAR(r.done_at[2] - alone, alone, 0.01));
    /* and on the same SMs the second waits for the first's blocks: one after the other */
    start(&r, &c, pa, 3);
    start(&r, &c, pa, 4);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[3] - r.done_at[2], alone, 0.01));
    cr_assert(NEAR(r.done_at[4] - r.done_at[2], 2 * alone, 0.01));
    rig_fini(&r);
}

Test(hardware, a_compute_bound_kernel_barely_notices_a_dram_bound_one_below_saturation)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    uint32_t a = sms(&r, 0, 66), b = sms(&r, 66, 66);
    colo_kernel_work_t c = kwork(r.gpu, 8 * 66, 100000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_kernel_work_t m = kwork(r.gpu, 8 * 66, 100000, COLO_KCLASS_MEMORY, -1, -1);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, 0};
    start(&r, &c, pa, 0);
    start(&r, &m, pb, 1);
    rig_run(&r);
    /* 66 SMs x 67 GB/s cannot saturate 2950 GB/s alone; with 10 % of the compute kernel's
     * share the DRAM is oversubscribed and both slow down a little */
    cr_assert_gt(r.done_at[0], 100000);
    cr_assert_lt(r.done_at[0], 120000);
    rig_fini(&r);
}

Test(hardware, disjoint_channel_sets_isolate_bandwidth)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    int lo[40], hi[40];
    for (int i = 0; i < 40; i++)
        lo[i] = i, hi[i] = 40 + i;
    uint32_t sl, sh;
    colo_hw_add_channel_set(&r.hw, lo, 40, &sl);
    colo_hw_add_channel_set(&r.hw, hi, 40, &sh);
    colo_kernel_work_t m = kwork(r.gpu, 5000, 100000, COLO_KCLASS_MEMORY, -1, -1);
    uint32_t a = sms(&r, 0, 66), b = sms(&r, 66, 66); /* SMs apart: both run at once */
    colo_hw_place_t pl = {a, 0, sl, 0, 0}, ph = {b, 0, sh, 0, 0};
    start(&r, &m, pl, 0); /* half the channels: half the bandwidth, twice the time */
    rig_run(&r);
    cr_assert(NEAR(r.done_at[0], 200000, 0.01), "%lld", (long long)r.done_at[0]);
    start(&r, &m, pl, 1);
    start(&r, &m, ph, 2);
    rig_run(&r);
    cr_assert(NEAR(r.done_at[1] - r.done_at[0], 200000, 0.01), "no interference");
    cr_assert(NEAR(r.done_at[2] - r.done_at[0], 200000, 0.01));
    rig_fini(&r);
}

Test(hardware, co_running_working_sets_beyond_the_l2_raise_dram_traffic_unless_split)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    double l2 = (double)r.gpu->l2.bytes;
    /* compute-bound kernels with 4x more L2 than DRAM traffic: a working set of 0.75 L2 */
    colo_kernel_work_t c = kwork(r.gpu, 8 * 132, 1000000, COLO_KCLASS_COMPUTE, 0.75 * l2, 3 * l2);
    colo_hw_kernel_t *a, *b;
    uint32_t ha = sms(&r, 0, 66), hb = sms(&r, 66, 66); /* resident together */
    colo_hw_place_t pa = {ha, 0, 0, 0, 0}, pb = {hb, 0, 0, 0, 0};
    colo_hw_kernel_start(&r.hw, &c, pa, 1, done, &r, 0, &a);
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(a), 0.75 * l2, 1, "alone: as traced");
    colo_hw_kernel_start(&r.hw, &c, pb, 1, done, &r, 1, &b);
    /* each keeps half the L2 of the 0.75 it wants: 2/3 of its 2.25 L2 of hits stay hits */
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(a), 0.75 * l2 + 2.25 * l2 / 3, 1e3);
    rig_run(&r);
    uint32_t g1, g2;
    colo_hw_add_l2_group(&r.hw, l2 / 2, 4000, &g1);
    colo_hw_add_l2_group(&r.hw, l2 / 2, 4000, &g2);
    colo_kernel_work_t s = kwork(r.gpu, 8 * 132, 1000000, COLO_KCLASS_COMPUTE, 0.4 * l2, 1.6 * l2);
    colo_hw_place_t p1 = {ha, g1, 0, 0, 0}, p2 = {hb, g2, 0, 0, 0};
    colo_hw_kernel_start(&r.hw, &s, p1, 1, done, &r, 2, &a);
    colo_hw_kernel_start(&r.hw, &s, p2, 1, done, &r, 3, &b);
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(a), 0.4 * l2, 1, "separate L2s are not shared");
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(b), 0.4 * l2, 1);
    rig_run(&r);
    rig_fini(&r);
}

/* A kernel ending and another starting in the same instant (a stream's next kernel): the L2
 * shares are those of the kernels running after both, worked out once, and a kernel left alone
 * gets its traced traffic back. */
Test(hardware, l2_shares_follow_the_kernels_left_after_an_instants_starts_and_ends)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    double l2 = (double)r.gpu->l2.bytes;
    colo_kernel_work_t c = kwork(r.gpu, 8 * 132, 1000000, COLO_KCLASS_COMPUTE, 0.75 * l2, 3 * l2);
    colo_hw_kernel_t *a, *b, *d;
    uint32_t ha = sms(&r, 0, 66), hb = sms(&r, 66, 66);
    colo_hw_place_t pa = {ha, 0, 0, 0, 0}, pb = {hb, 0, 0, 0, 0};
    colo_hw_kernel_start(&r.hw, &c, pa, 1, done, &r, 0, &a);
    colo_hw_kernel_start(&r.hw, &c, pb, 1, done, &r, 1, &b);
    double two = 0.75 * l2 + 2.25 * l2 / 3;
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(a), two, 1e3);
    double speed = colo_hw_kernel_speed(&r.hw, a);
    colo_fluid_begin(&r.hw.fl);
    cr_assert_eq(colo_hw_kernel_stop(&r.hw, b, NULL), 0);
    cr_assert_eq(colo_hw_kernel_start(&r.hw, &c, pb, 1, done, &r, 2, &d), 0);
    cr_assert_eq(colo_fluid_end(&r.hw.fl), 0);
    cr_assert_eq(colo_hw_kernel_dram_bytes(a), colo_hw_kernel_dram_bytes(d));
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(d), two, 1e3, "the newcomer shares as b did");
    cr_assert_float_eq(colo_hw_kernel_speed(&r.hw, a), speed, 1e-12);
    cr_assert_eq(colo_hw_kernel_stop(&r.hw, d, NULL), 0);
    cr_assert_float_eq(colo_hw_kernel_dram_bytes(a), 0.75 * l2, 1, "alone again: as traced");
    rig_run(&r);
    cr_assert_eq(r.n_done, 1);
    rig_fini(&r);
}

Test(hardware, h2d_and_d2h_do_not_slow_each_other_but_same_direction_shares)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    long long mb = 64 << 20;
    colo_time_t h2d = colo_hw_copy_alone(r.gpu, COLO_COPY_H2D, mb);
    colo_time_t d2h = colo_hw_copy_alone(r.gpu, COLO_COPY_D2H, mb);
    colo_hw_copy_start(&r.hw, COLO_COPY_H2D, mb, 0, done, &r, 0);
    colo_hw_copy_start(&r.hw, COLO_COPY_D2H, mb, 0, done, &r, 1);
    rig_run(&r);
    cr_assert_eq(r.done_at[0], h2d);
    cr_assert_eq(r.done_at[1], d2h);
    colo_time_t t0 = r.eq.now;
    colo_hw_copy_start(&r.hw, COLO_COPY_H2D, mb, 0, done, &r, 2);
    colo_hw_copy_start(&r.hw, COLO_COPY_H2D, mb, 0, done, &r, 3);
    rig_run(&r);
    colo_time_t lat = (colo_time_t)(r.gpu->pcie.latency_us * 1e3);
    cr_assert(NEAR(r.done_at[3] - t0 - lat, 2 * (h2d - lat), 1e-6), "two share the direction");
    rig_fini(&r);
}

/* A DRAM-bound kernel of the given bytes on n SMs from first and channels [c0, c0 + nc). */
static colo_hw_place_t coloured(struct rig *r, int first, int n, int c0, int nc)
{
    int sms[COLO_HW_MAX_UNITS], ch[COLO_HW_MAX_UNITS];
    for (int i = 0; i < n; i++)
        sms[i] = first + i;
    for (int i = 0; i < nc; i++)
        ch[i] = c0 + i;
    colo_hw_place_t p = {0, 0, 0, 0, 0};
    cr_assert_eq(colo_hw_add_sm_set(&r->hw, sms, n, &p.sm_set), 0);
    cr_assert_eq(colo_hw_add_channel_set(&r->hw, ch, nc, &p.channel_set), 0);
    return p;
}

Test(hardware, disjoint_channel_colours_isolate_dram_bandwidth_exactly)
{
    /* two DRAM-bound kernels on disjoint SMs and disjoint halves of the channels: each takes
     * the same time with the other running as alone, and that time is its bytes at half the
     * DRAM's bandwidth; on the same channels they slow each other */
    double times[3];
    for (int mode = 0; mode < 3; mode++) {
        struct rig r;
        rig_init(&r, "a100-80gb");
        int half = r.gpu->memory.channels / 2;
        colo_hw_place_t a = coloured(&r, 0, 54, 0, half);
        colo_hw_place_t b = coloured(&r, 54, 54, mode == 2 ? 0 : half, half);
        double bytes = 4e9;
        colo_kernel_work_t w = kwork(r.gpu, 54 * 8, COLO_MS(4), COLO_KCLASS_MEMORY, bytes, bytes);
        colo_hw_kernel_t *ka, *kb;
        colo_hw_kernel_start(&r.hw, &w, a, 1, done, &r, 0, &ka);
        if (mode > 0) colo_hw_kernel_start(&r.hw, &w, b, 1, done, &r, 1, &kb);
        rig_run(&r);
        times[mode] = (double)r.done_at[0];
        rig_fini(&r);
    }
    cr_expect_float_eq(times[1], times[0], 1e-9 * times[0],
                       "alone %.0f ns, beside another "
                       "colour %.0f ns",
                       times[0], times[1]);
    cr_expect(times[2] > 1.5 * times[0], "same channels: %.0f ns against %.0f alone", times[2],
              times[0]);
}

Test(hardware, a_heavy_h2d_neighbour_slows_a_dram_bound_kernel)
{
    /* copies write their bytes into the device's DRAM: on 2 channels, a copy stream's 25 GB/s
     * is a large part of their bandwidth, and a DRAM-bound kernel there slows */
    double t[2];
    for (int with = 0; with < 2; with++) {
        struct rig r;
        rig_init(&r, "a100-80gb");
        colo_hw_place_t p = coloured(&r, 0, 108, 0, 2);
        colo_kernel_work_t w = kwork(r.gpu, 108 * 8, COLO_MS(4), COLO_KCLASS_MEMORY, 4e8, 4e8);
        colo_hw_kernel_t *k;
        colo_hw_kernel_start(&r.hw, &w, p, 1, done, &r, 0, &k);
        if (with) {
            colo_hw_copy_opts_t o = {p.channel_set, -1, 1.0};
            for (int i = 0; i < 3; i++)
                colo_hw_copy_start_at(&r.hw, COLO_COPY_H2D, 1LL << 30, 0, &o, done, &r, 1 + i);
        }
        rig_run(&r);
        t[with] = (double)r.done_at[0];
        rig_fini(&r);
    }
    cr_expect(t[1] > 1.05 * t[0], "kernel alone %.0f ns, beside H2D copies %.0f ns", t[0], t[1]);
}

Test(hardware, fair_pcie_shares_the_link_by_tenant_weights)
{
    /* two tenants' saturating H2D streams, weights 3 and 1: while both move bytes, the first
     * moves three times as fast, however many copies each has in flight */
    for (int copies_b = 1; copies_b <= 2; copies_b++) {
        struct rig r;
        rig_init(&r, "h100-sxm");
        r.hw.pcie_fair = true;
        long long mb = 256LL << 20;
        colo_hw_copy_opts_t a = {0, 0, 3.0}, b = {0, 1, 1.0};
        colo_hw_copy_start_at(&r.hw, COLO_COPY_H2D, mb, 0, &a, done, &r, 0);
        for (int i = 0; i < copies_b; i++)
            colo_hw_copy_start_at(&r.hw, COLO_COPY_H2D, 4 * mb, 0, &b, done, &r, 1 + i);
        rig_run(&r);
        /* A alone would take lat + mb / rate; at 3/4 of the link it takes 4/3 of that */
        colo_time_t lat = (colo_time_t)(r.gpu->pcie.latency_us * 1e3);
        double alone = (double)(colo_hw_copy_alone(r.gpu, COLO_COPY_H2D, mb) - lat);
        double got = (double)(r.done_at[0] - lat);
        cr_expect(NEAR(got, alone * 4.0 / 3.0, 1e-6),
                  "%d copies of B: A took %.0f ns, "
                  "expected %.0f",
                  copies_b, got, alone * 4.0 / 3.0);
        rig_fini(&r);
    }
}

Test(hardware, a_copy_waits_for_a_free_copy_engine)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    uint32_t one;
    colo_hw_add_ce_domain(&r.hw, 1, &one);
    long long mb = 8 << 20;
    colo_time_t t = colo_hw_copy_alone(r.gpu, COLO_COPY_H2D, mb);
    colo_hw_copy_start(&r.hw, COLO_COPY_H2D, mb, one, done, &r, 0);
    colo_hw_copy_start(&r.hw, COLO_COPY_D2H, mb, one, done, &r, 1);
    rig_run(&r);
    cr_assert_eq(r.done_at[0], t);
    cr_assert_eq(r.done_at[1], t + colo_hw_copy_alone(r.gpu, COLO_COPY_D2H, mb),
                 "one engine: the second copy starts when the first ends");
    rig_fini(&r);
}

/* Three chains of kernels and three of copies: each one that ends starts the next of its kind,
 * a thousand of each kind in all. */
struct chain {
    struct rig r;
    colo_kernel_work_t w;
    int left[2];
};

static void chain_next(void *obj, int64_t arg)
{
    struct chain *c = obj;
    if (c->left[arg]-- <= 0) return;
    if (arg)
        cr_assert_eq(colo_hw_copy_start(&c->r.hw, COLO_COPY_H2D, 1 << 20, 0, chain_next, c, 1), 0);
    else
        cr_assert_eq(colo_hw_kernel_start(&c->r.hw, &c->w, whole, 1.0, chain_next, c, 0, NULL), 0);
}

Test(hardware, kernel_and_copy_records_are_reused_not_allocated_per_kernel_or_copy)
{
    struct chain c;
    rig_init(&c.r, "h100-sxm");
    c.w = kwork(c.r.gpu, 528, 20000, COLO_KCLASS_MEMORY, 32e6, 0);
    c.left[0] = c.left[1] = 1000;
    unsigned long before = colo_alloc_count();
    for (int i = 0; i < 3; i++) {
        chain_next(&c, 0);
        chain_next(&c, 1);
    }
    rig_run(&c.r);
    unsigned long n = colo_alloc_count() - before;
    cr_assert_eq(c.left[0], -3);
    cr_assert_eq(c.left[1], -3);
    cr_assert_lt(n, 100, "%lu allocations for 1,000 kernels and 1,000 copies", n);
    /* as many at once again: every record comes from the pools, nothing is allocated */
    c.left[0] = c.left[1] = 1000;
    before = colo_alloc_count();
    for (int i = 0; i < 3; i++) {
        chain_next(&c, 0);
        chain_next(&c, 1);
    }
    rig_run(&c.r);
    n = colo_alloc_count() - before;
    cr_assert_eq(n, 0, "%lu allocations for another 1,000 kernels and 1,000 copies", n);
    rig_fini(&c.r);
}

/* Thousands of kernels with random shapes, places and classes, and copies: no resource is ever
 * granted more than its capacity. */
struct storm {
    struct rig r;
    colo_kernel_work_t kinds[8];
    colo_hw_place_t places[4];
    int started;
    uint64_t s;
};

static double su(struct storm *st)
{
    st->s = st->s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(st->s >> 11) / 9007199254740992.0;
}

static void storm_next(void *obj, int64_t arg);

static void storm_start(struct storm *st, int64_t slot)
{
    st->started++;
    if (su(st) < 0.15) {
        colo_copy_dir_t d = su(st) < 0.5 ? COLO_COPY_H2D : COLO_COPY_D2H;
        cr_assert_eq(colo_hw_copy_start(&st->r.hw, d, 1 + (long long)(su(st) * 4e6), 0, storm_next,
                                        st, slot),
                     0);
        return;
    }
    const colo_kernel_work_t *w = &st->kinds[(int)(su(st) * 8)];
    colo_hw_place_t p = st->places[(int)(su(st) * 4)];
    cr_assert_eq(colo_hw_kernel_start(&st->r.hw, w, p, 1.0, storm_next, st, slot, NULL), 0);
}

static void storm_next(void *obj, int64_t arg)
{
    struct storm *st = obj;
    st->r.n_done++;
    if (st->started < 4000) storm_start(st, arg);
}

Test(hardware, overlapping_sm_sets_share_their_common_sms)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    /* A = SMs 0..63, B = SMs 32..95: they share 32 SMs */
    uint32_t a = sms(&r, 0, 64), b = sms(&r, 32, 64);
    colo_kernel_work_t c = kwork(r.gpu, 8 * 64 * 4, 100000, COLO_KCLASS_COMPUTE, -1, -1);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, 0};
    start(&r, &c, pa, 0);
    rig_run(&r);
    colo_time_t alone = r.done_at[0];
    start(&r, &c, pa, 1);
    start(&r, &c, pb, 2);
    rig_run(&r);
    /* the first holds all 64 of its SMs for its four waves; the second runs on the 32 of its
     * own meanwhile (four waves of 256 blocks), then on all 64 (two waves): 1.5 x */
    cr_assert(NEAR(r.done_at[1] - alone, alone, 0.01), "%lld vs %lld (%lld)",
              (long long)(r.done_at[1] - alone), (long long)alone,
              (long long)(r.done_at[2] - alone));
    cr_assert(NEAR(r.done_at[2] - alone, (double)alone * 1.5, 0.02), "%lld vs %lld",
              (long long)(r.done_at[2] - alone), (long long)alone);
    rig_fini(&r);
}

Test(hardware, a_heavier_weight_gets_more_of_a_bottleneck)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    colo_kernel_work_t m = kwork(r.gpu, 5000, 100000, COLO_KCLASS_MEMORY, -1, -1);
    colo_hw_kernel_t *hi, *lo;
    uint32_t a = sms(&r, 0, 66), b = sms(&r, 66, 66);
    colo_hw_place_t pa = {a, 0, 0, 0, 0}, pb = {b, 0, 0, 0, 0};
    colo_hw_kernel_start(&r.hw, &m, pa, 1, done, &r, 0, &hi);
    colo_hw_kernel_start(&r.hw, &m, pb, 1, done, &r, 1, &lo);
    cr_assert_eq(colo_hw_kernel_weight(&r.hw, hi, 4.0), 0);
    cr_assert_float_eq(colo_hw_kernel_speed(&r.hw, hi), 0.8, 1e-9);
    cr_assert_float_eq(colo_hw_kernel_speed(&r.hw, lo), 0.2, 1e-9);
    rig_run(&r);
    rig_fini(&r);
}

Test(hardware, randomized_storm_never_exceeds_any_capacity)
{
    struct storm *st = calloc(1, sizeof *st);
    st->s = 7;
    rig_init(&st->r, "h100-sxm");
    colo_hw_t *hw = &st->r.hw;
    uint32_t pa = sms(&st->r, 0, 64), pb = sms(&st->r, 48, 32), g1, c1, c2; /* overlapping */
    colo_hw_add_l2_group(hw, 20e6, 3000, &g1);
    int lo[50], mid[40];
    for (int i = 0; i < 50; i++)
        lo[i] = i;
    for (int i = 0; i < 40; i++)
        mid[i] = 30 + i; /* overlaps lo: three channel classes */
    colo_hw_add_channel_set(hw, lo, 50, &c1);
    colo_hw_add_channel_set(hw, mid, 40, &c2);
    st->places[0] = (colo_hw_place_t){0, 0, 0, 0, 0};
    st->places[1] = (colo_hw_place_t){pa, 0, c1, 0, 0};
    st->places[2] = (colo_hw_place_t){pb, g1, c2, 0, 0};
    st->places[3] = (colo_hw_place_t){pa, g1, c2, 0, 0};
    for (int i = 0; i < 8; i++) {
        colo_kclass_t c = (colo_kclass_t)(i % 3);
        unsigned blocks = 1 + (unsigned)(su(st) * 8000);
        double l2 = su(st) < 0.5 ? -1 : su(st) * 60e6;
        /* blocks of many shapes, limited by warps, slots, registers or shared memory */
        unsigned threads = 32u << (int)(su(st) * 6);
        int regs = su(st) < 0.5 ? -1 : 16 + (int)(su(st) * 200);
        int smem = su(st) < 0.5 ? -1 : (int)(su(st) * 100000);
        st->kinds[i] = kwork_shape(st->r.gpu, blocks, threads, regs, smem,
                                   1000 + (colo_time_t)(su(st) * 200000), c, -1, l2);
    }
    for (int64_t s = 0; s < 20; s++)
        storm_start(st, s);
    colo_event_t ev;
    long checks = 0;
    while (colo_eq_pop(&st->r.eq, &ev)) {
        ev.fn(ev.obj, ev.arg);
        for (uint32_t res = 0; res < hw->fl.n_res; res++) {
            double u = colo_fluid_usage(&hw->fl, res), cap = colo_fluid_capacity(&hw->fl, res);
            cr_assert_leq(u, cap * (1 + 1e-9), "resource %u: %g of %g", res, u, cap);
            checks++;
        }
        /* no SM holds more warps, block slots, registers or shared memory than it has */
        cr_assert_eq(colo_hw_check_slots(hw), 0, "at %lld ns", (long long)st->r.eq.now);
    }
    cr_assert_eq(hw->failed, 0);
    cr_assert_eq(st->r.n_done, 4000);
    cr_assert_gt(checks, 50000);
    rig_fini(&st->r);
    free(st);
}

/* Every kernel of a real trace, scaled from the V100 to the H100, run alone through the solver,
 * takes the kernel model's time alone there (the time-slicing policy times kernels by the
 * model, so the two must agree); with_fixed: on the real H100, with its dispatch gap and floor. */
static void solver_agrees_with_the_model(bool with_fixed)
{
    struct rig r;
    rig_init(&r, "h100-sxm");
    if (with_fixed) {
        colo_hw_fini(&r.hw);
        colo_gpu_free(r.gpu);
        r.gpu = open_gpu("h100-sxm");
        cr_assert_eq(colo_hw_init(&r.hw, r.gpu, &r.eq), 0);
    }
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *tr;
    colo_gpu_t *v;
    cr_assert_eq(colo_trace_load(src_path("traces/bert_b2_v100.json"), &tr, &err), 0);
    cr_assert_eq(colo_gpu_open("v100-sxm2", NULL, "none", &v, "t", 0, NULL, &err), 0);
    for (size_t i = 0; i < tr->n_ops; i++) {
        colo_kernel_work_t w;
        cr_assert_eq(colo_kernel_work(&tr->ops[i], v, r.gpu, COLO_FP32_PYTORCH, &w, "t", i, &err),
                     0);
        w.l2_bytes *= (i % 3 == 0) ? 4 : 1; /* some L2-bound ones too */
        colo_time_t t0 = r.eq.now;
        start(&r, &w, whole, 0);
        rig_run(&r);
        double got = (double)(r.done_at[0] - t0);
        double want = colo_kernel_alone_at(&w, r.gpu->sm.count, colo_gpu_dram_rate(r.gpu),
                                           colo_gpu_l2_rate(r.gpu));
        cr_assert(fabs(got - want) <= 1.0 + 1e-6 * want, "op %zu: %g vs %g", i, got, want);
        if (!with_fixed)
            cr_assert_float_eq(want, (double)colo_kernel_duration(&w, r.gpu), 1.0,
                               "no dispatch gap: what a profiler would report");
    }
    colo_gpu_free(v);
    colo_trace_free(tr);
    rig_fini(&r);
}

Test(hardware, alone_on_the_solver_equals_the_kernel_models_duration)
{
    solver_agrees_with_the_model(false);
}

Test(hardware, alone_on_the_solver_with_fixed_costs_equals_the_kernel_model)
{
    solver_agrees_with_the_model(true);
}
