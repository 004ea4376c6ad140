/* test_live_plan.c: the live plan replays the simulator's arrivals exactly and maps each
 * sharing mechanism onto processes and contexts as docs/live.md says. */
#include "helpers.h"
#include "live_plan.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(live_plan, .init = test_init);

static colo_scenario_t *load(const char *rel, const char *const *sets, size_t n)
{
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(src_path(rel), sets, n, &sc, &err), 0, "%s: %s", rel, err.text);
    return sc;
}

static void plan(const colo_scenario_t *sc, colo_live_plan_t *p)
{
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_live_plan(sc, p, &err), 0, "%s", err.text);
}

/* Requests the plan sends in the measured window equal what the simulator counted as arrived. */
Test(live_plan, arrivals_are_the_simulators)
{
    const char *sets[] = {"duration_s=5", "warmup_s=1"};
    test_run_t r = run_scenario(src_path("scenarios/compare_three_tenants_h100.cfg"), sets, 2);
    colo_live_plan_t p;
    plan(r.sc, &p);
    cr_assert_eq(p.n, 3);
    for (size_t i = 0; i < p.n; i++) {
        long long in_window = 0;
        for (size_t k = 0; k < p.t[i].n_arrivals; k++) {
            cr_assert(k == 0 || p.t[i].arrivals[k] >= p.t[i].arrivals[k - 1], "in order");
            cr_assert_lt(p.t[i].arrivals[k], r.sc->duration);
            if (p.t[i].arrivals[k] >= r.sc->warmup) in_window += p.t[i].counts[k];
        }
        double arrived = result_num(result_tenant(&r, i), "arrived");
        cr_expect_eq(in_window, (long long)arrived, "tenant %zu: plan %lld, simulator %.0f", i,
                     in_window, arrived);
        cr_expect_gt(in_window, 0);
    }
    colo_live_plan_free(&p);
    run_free(&r);
}

Test(live_plan, mechanisms_map_to_processes_and_contexts)
{
    colo_live_plan_t p;
    colo_scenario_t *sc = load("scenarios/compare_three_tenants_h100.cfg", NULL, 0);
    plan(sc, &p); /* MPS */
    cr_expect(p.mps_daemon);
    cr_expect_eq(p.n_processes, 3, "one MPS client process per tenant");
    for (size_t i = 0; i < 3; i++) {
        cr_expect_eq(p.t[i].ctx, COLO_LIVE_MPS);
        cr_expect_eq(p.t[i].process, (int)i);
    }
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    const char *ts[] = {"sharing.mode=timeslice"};
    sc = load("scenarios/compare_three_tenants_h100.cfg", ts, 1);
    plan(sc, &p);
    cr_expect_not(p.mps_daemon);
    cr_expect_eq(p.n_processes, 3);
    cr_expect_eq(p.t[2].ctx, COLO_LIVE_PRIMARY);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/green_contexts_h100.cfg", NULL, 0);
    plan(sc, &p);
    cr_expect_eq(p.n_processes, 1, "Green Contexts live in one process");
    int total = 0;
    for (size_t i = 0; i < p.n; i++) {
        cr_expect_eq(p.t[i].ctx, COLO_LIVE_GREEN);
        cr_expect_gt(p.t[i].sms, 0);
        total += p.t[i].sms;
    }
    cr_expect_leq(total, sc->gpu->sm.count);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/mig_layout_h100.cfg", NULL, 0);
    plan(sc, &p);
    cr_expect(p.needs_mig, "MIG is only measured where instances exist");
    cr_expect_not_null(p.t[0].instance);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    sc = load("scenarios/mps_caps_h100.cfg", NULL, 0);
    plan(sc, &p);
    int capped = 0;
    for (size_t i = 0; i < p.n; i++)
        if (p.t[i].active_thread_percentage == 40) {
            capped++;
            cr_expect_lt(p.t[i].sms, sc->gpu->sm.count);
        }
    cr_expect_eq(capped, 1, "the capped BERT tenant");
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

Test(live_plan, the_plan_prints_every_process_and_tenant)
{
    colo_scenario_t *sc = load("scenarios/compare_three_tenants_h100.cfg", NULL, 0);
    colo_live_plan_t p;
    plan(sc, &p);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    colo_live_plan_print(sc, &p, f);
    fclose(f);
    cr_expect(strstr(buf, "private MPS control daemon"));
    cr_expect(strstr(buf, "process 2"));
    cr_expect(strstr(buf, "tenant bert"));
    cr_expect(strstr(buf, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"));
    free(buf);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}
