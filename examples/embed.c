/* embed.c: a program that embeds colosim (docs/embedding.md): loads a scenario, runs it, and
 * prints one tenant's p99 latency and SLO attainment.
 *   embed SCENARIO.cfg TENANT [KEY=VALUE ...]   (the overrides are the command line's --set) */
#include <colosim/colosim.h>

#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: embed SCENARIO.cfg TENANT [KEY=VALUE ...]\n");
        return 2;
    }
    colo_scenario_t *sc = NULL;
    colo_sim_t *sim = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_scenario_load(argv[1], (const char *const *)argv + 3, (size_t)(argc - 3), &sc,
                                &err);
    if (!rc) rc = colo_sim_new(sc, &sim, &err);
    if (!rc) rc = colo_sim_run(sim, &err);
    int status = 0;
    if (rc) {
        char msg[1024];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s\n", msg);
        status = 2;
    } else {
        long i = colo_sim_tenant_find(sim, argv[2]);
        colo_run_stats_t st;
        if (i < 0 || colo_sim_tenant_stats(sim, (size_t)i, &st)) {
            fprintf(stderr, "embed: no tenant '%s' in %s\n", argv[2], argv[1]);
            status = 2;
        } else {
            printf("%s: %llu completed, p99 %.3f ms", argv[2], st.completed, st.p99_ms);
            if (st.slo_attainment >= 0) printf(", %.1f %% within its SLO", 100 * st.slo_attainment);
            printf("\n");
        }
    }
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return status;
}
