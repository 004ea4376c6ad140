/* lifo_scheduler.c: a kernel scheduler plug-in built outside colosim's tree (docs/embedding.md,
 * docs/schedulers.md): the most recently ready kernel launches first, at most `slots` at a time.
 * It registers itself, then runs the scenario given, whose scheduler.policy is "lifo".
 *   lifo_scheduler SCENARIO.cfg [KEY=VALUE ...]   prints each tenant's p99 */
#include <colosim/colosim.h>

#include <stdio.h>

/* The key colo_sched_pick_slots minimises: later readiness first. */
static double newest_first(const colo_sched_item_t *it)
{
    return -(double)it->ready;
}

static long lifo_pick(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, newest_first);
}

static const colo_sched_ops_t lifo = {
    .name = "lifo",
    .summary = "the most recently ready kernel first (an out-of-tree example)",
    .params = {"slots", NULL},
    .defaults = {1},
    .pick_next = lifo_pick,
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: lifo_scheduler SCENARIO.cfg [KEY=VALUE ...]\n");
        return 2;
    }
    if (colo_sched_register(&lifo) != 0) {
        fprintf(stderr, "lifo_scheduler: cannot register 'lifo'\n");
        return 1;
    }
    colo_scenario_t *sc = NULL;
    colo_sim_t *sim = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_scenario_load(argv[1], (const char *const *)argv + 2, (size_t)(argc - 2), &sc,
                                &err);
    if (!rc) rc = colo_sim_new(sc, &sim, &err);
    if (!rc) rc = colo_sim_run(sim, &err);
    if (rc) {
        char msg[1024];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s\n", msg);
    }
    for (size_t i = 0; !rc && i < colo_sim_tenant_count(sim); i++) {
        colo_run_stats_t st;
        if (colo_sim_tenant_stats(sim, i, &st) == 0)
            printf("%s: p99 %.3f ms\n", colo_sim_tenant_name(sim, i), st.p99_ms);
    }
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return rc ? 2 : 0;
}
