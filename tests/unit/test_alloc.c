/* test_alloc.c: every allocation of loading and running a scenario can fail, and each failure
 * ends in a clean error (no crash; ASan builds also check for leaks). */
#include "alloc.h"
#include "helpers.h"

#include <criterion/criterion.h>

TestSuite(alloc, .init = test_init);

static const char *extra; /* one more override, or NULL */

/* Loads, runs and summarises; returns 0 or the first error code. */
static int attempt(const char *path, colo_error_t *err)
{
    const char *sets[] = {"duration_s=0.2", "warmup_s=0.05", "drain_s=0.1", extra};
    size_t n = extra ? 4 : 3;
    colo_scenario_t *sc = NULL;
    colo_sim_t *sim = NULL;
    json_t *res = NULL;
    int rc = colo_scenario_load(path, sets, n, &sc, err);
    if (!rc) rc = colo_sim_new(sc, &sim, err);
    if (!rc) rc = colo_sim_run(sim, err);
    if (!rc && !(res = colo_results_json(sim, sets, n))) rc = COLO_ENOMEM;
    json_decref(res);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return rc;
}

static void walk(const char *path)
{
    colo_error_t err;
    colo_error_clear(&err);
    unsigned long before = colo_alloc_count();
    cr_assert_eq(attempt(path, &err), 0, "%s", err.text);
    unsigned long total = colo_alloc_count() - before;
    cr_assert_gt(total, 10);
    for (unsigned long n = 1; n <= total; n++) {
        colo_error_clear(&err);
        colo_alloc_fail_after((long)n);
        int rc = attempt(path, &err);
        colo_alloc_fail_after(0);
        cr_assert_eq(rc, COLO_ENOMEM, "allocation %lu of %lu failed, got %s (%s)", n, total,
                     colo_err_name(rc), err.text);
    }
}

Test(alloc, every_allocation_of_a_run_can_fail_cleanly)
{
    walk(src_path("tests/fixtures/one_tenant.cfg"));
}

Test(alloc, every_allocation_of_a_two_tenant_run_can_fail_cleanly)
{
    walk(src_path("tests/fixtures/two_tenants.cfg"));
}

/* The fault fixture under each concurrent mechanism: layouts, domains and crashes. The fault at
 * 10 s is moved into the shortened run by editing the scenario's first fault. */
Test(alloc, every_allocation_of_mig_mps_and_green_runs_with_a_fault_can_fail_cleanly)
{
    static const char *const modes[] = {"sharing.mode=mig", "sharing.mode=mps",
                                        "sharing.mode=green"};
    for (size_t m = 0; m < 3; m++) {
        extra = modes[m];
        walk(src_path("tests/fixtures/sharing_fault_short.cfg"));
    }
    extra = NULL;
}

/* Kernel schedulers: their items, and preemption events while the run goes. */
Test(alloc, every_allocation_of_a_scheduled_run_can_fail_cleanly)
{
    walk(src_path("tests/fixtures/sched_waves_stream_priority.cfg"));
    extra = "scheduler.policy=one_at_a_time";
    walk(src_path("tests/fixtures/sched_waves_stream_priority.cfg"));
    extra = NULL;
}
