/* test_invariant.c: the invariant checks (sim/engine/invariant.h) are live: a run's accounts pass them,
 * and a broken account or time going back aborts with a message instead of a wrong number. */
#include "event_queue.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <signal.h>

TestSuite(invariant, .init = test_init);

static void nothing(void *obj, int64_t arg)
{
    (void)obj, (void)arg;
}

Test(invariant, a_finished_run_passes_its_account_checks)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/sharing_fault_short.cfg"), NULL, 0);
    colo_sim_check(r.sim); /* aborts if not */
    const colo_tenant_run_t *t = &r.sim->t[0];
    cr_assert_gt(t->arrived, 0);
    cr_assert_gt(t->kernel_starts, 0);
    cr_assert_geq(t->kernel_starts, t->kernel_ends);
    run_free(&r);
}

Test(invariant, a_request_missing_from_the_accounts_aborts, .signal = SIGABRT)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    r.sim->t[1].arrived++; /* one more arrived than completed, dropped or in flight */
    colo_sim_check(r.sim);
}

Test(invariant, a_drop_without_a_reason_aborts, .signal = SIGABRT)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    r.sim->t[0].dropped++;
    r.sim->t[0].arrived++;
    colo_sim_check(r.sim);
}

Test(invariant, a_kernel_that_never_ends_aborts, .signal = SIGABRT)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    r.sim->t[0].kernel_starts++;
    colo_sim_check(r.sim);
}

Test(invariant, time_going_back_aborts, .signal = SIGABRT)
{
    colo_eq_t q;
    cr_assert_eq(colo_eq_init(&q, 4), 0);
    cr_assert_eq(colo_eq_schedule(&q, 50, nothing, NULL, 0, NULL), 0);
    q.now = 100; /* as if an event at 100 had fired before the one at 50 */
    colo_event_t ev;
    colo_eq_pop(&q, &ev);
}
