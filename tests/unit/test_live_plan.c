/* test_live_plan.c: the live plan replays the simulator's arrivals exactly and maps each
 * sharing mechanism onto processes and contexts as docs/live.md says. */
#include "helpers.h"
#include "live_plan.h"
#include "live_run.h"

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
    cr_expect(strstr(buf, "MPS daemon 0 (private"));
    cr_expect(strstr(buf, "run environment: CUDA_MPS_PIPE_DIRECTORY=RUN/mps-0/pipe"));
    cr_expect(strstr(buf, "fit environment: CUDA_MPS_PIPE_DIRECTORY=RUN/no-mps"));
    cr_expect(strstr(buf, "process 2"));
    cr_expect(strstr(buf, "tenant bert"));
    cr_expect(strstr(buf, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=100"));
    free(buf);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

/* Live results from hand-made records: the window, the SLO and what is left in flight. */
Test(live_plan, results_from_records)
{
    const char *sets[] = {"duration_s=2", "warmup_s=1"};
    colo_scenario_t *sc = load("tests/fixtures/two_tenants.cfg", sets, 2);
    colo_live_plan_t p;
    plan(sc, &p);
    long long ms = 1000000;
    colo_live_outcome_t out[2];
    memset(out, 0, sizeof out);
    colo_live_record_t ra[] = {
        {500 * ms, 500 * ms, 502 * ms, 0},   /* before the window: not measured */
        {1000 * ms, 1000 * ms, 1004 * ms, 0}, /* 4 ms, meets the 10 ms SLO */
        {1500 * ms, 1501 * ms, 1520 * ms, 0}, /* 20 ms, misses it */
        {1600 * ms, 1600 * ms, 1600 * ms, 1}, /* dropped */
        {1990 * ms, 1995 * ms, 2010 * ms, 0}, /* finishes after the window */
    };
    out[0].rec = ra;
    out[0].n = 5;
    snprintf(out[1].error, sizeof out[1].error, "process killed by signal 9 (Killed)");
    json_t *live = json_pack("{s:s}", "backend", "test");
    json_t *r = colo_live_results(sc, &p, out, sets, 2, live);
    cr_assert_not_null(r);
    json_t *a = json_array_get(json_object_get(r, "tenants"), 0);
    json_t *b = json_array_get(json_object_get(r, "tenants"), 1);
    long long arrived = 0;
    for (size_t k = 0; k < p.t[0].n_arrivals; k++)
        if (p.t[0].arrivals[k] >= sc->warmup) arrived += p.t[0].counts[k];
    cr_assert_eq(json_integer_value(json_object_get(a, "arrived")), arrived);
    cr_assert_eq(json_integer_value(json_object_get(a, "completed")), 3);
    cr_assert_eq(json_integer_value(json_object_get(a, "dropped")), 1);
    cr_assert_eq(json_integer_value(json_object_get(a, "in_flight")), arrived - 4);
    json_t *lat = json_object_get(a, "latency_ms");
    cr_assert_float_eq(json_real_value(json_object_get(lat, "p50")), 20.0, 1e-9);
    cr_assert_float_eq(json_real_value(json_object_get(lat, "max")), 20.0, 1e-9);
    /* finished in the window: the 4 ms and 20 ms requests, over 1 s */
    cr_assert_float_eq(json_real_value(json_object_get(a, "throughput_rps")), 2.0, 1e-9);
    cr_assert_float_eq(json_real_value(json_object_get(a, "slo_attainment")),
                       1.0 / (double)arrived, 1e-12);
    cr_assert_float_eq(json_real_value(json_object_get(a, "queue_ms_mean")), 2.0, 1e-9);
    cr_assert(json_is_null(json_object_get(a, "error")));
    cr_assert_str_eq(json_string_value(json_object_get(b, "error")),
                     "process killed by signal 9 (Killed)");
    cr_assert_eq(json_integer_value(json_object_get(b, "completed")), 0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "live"), "backend")),
                     "test");
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(r, "colosim"),
                                                    "results_format")),
                 1);
    json_decref(r);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

/* A tenant with a real program cannot share a Green Context process. */
Test(live_plan, command_tenants_refuse_green)
{
    const char *sets[] = {"sharing.mode=green", "tenants.[0].command=./serve"};
    colo_scenario_t *sc = load("tests/fixtures/two_tenants.cfg", sets, 2);
    colo_live_plan_t p;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_live_plan(sc, &p, &err), COLO_EUNSUPPORTED);
    cr_assert(strstr(err.text, "Green Contexts share one process"), "%s", err.text);
    cr_assert_str_eq(err.key, "a");
    colo_scenario_free(sc);
}

/* The environment of every process: fit and run, for each mechanism (issue 23). */
static const char *env_of(const colo_live_plan_t *p, int proc, colo_live_phase_t ph,
                          const char *uuid, const char *part, const char *key)
{
    static char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n = colo_live_env(p, proc, ph, "/run", uuid, part, env);
    size_t kl = strlen(key);
    for (size_t k = 0; k < n; k++)
        if (strncmp(env[k], key, kl) == 0 && (env[k][kl] == '=' || env[k][kl] == '\0'))
            return env[k][kl] ? env[k] + kl + 1 : "(removed)";
    return NULL; /* left as inherited */
}

Test(live_plan, each_process_gets_its_environment)
{
    colo_live_plan_t p;
    /* time-slicing: never an MPS client (an empty pipe folder), no cap */
    const char *ts[] = {"sharing.mode=timeslice"};
    colo_scenario_t *sc = load("tests/fixtures/two_tenants.cfg", ts, 1);
    plan(sc, &p);
    for (int ph = 0; ph < 2; ph++) {
        cr_expect_str_eq(env_of(&p, 1, (colo_live_phase_t)ph, NULL, NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                         "/run/no-mps");
        cr_expect_str_eq(env_of(&p, 1, (colo_live_phase_t)ph, NULL, NULL,
                                "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "(removed)");
        cr_expect_null(env_of(&p, 1, (colo_live_phase_t)ph, NULL, NULL, "CUDA_VISIBLE_DEVICES"));
    }
    cr_expect_eq(p.n_daemons, 0);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    /* MPS: one daemon; fitted as no client and uncapped, run as a capped client */
    const char *mps[] = {"sharing.mode=mps", "tenants.[1].active_thread_percentage=30"};
    sc = load("tests/fixtures/two_tenants.cfg", mps, 2);
    plan(sc, &p);
    cr_expect_eq(p.n_daemons, 1);
    cr_expect_eq(p.daemons[0].instance, -1);
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_FIT, NULL, NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                     "/run/no-mps");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_FIT, NULL, NULL, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                     "(removed)");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_RUN, NULL, NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                     "/run/mps-0/pipe");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_RUN, NULL, NULL, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"),
                     "30");
    char denv[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n = colo_live_daemon_env(&p, 0, "/run", NULL, denv);
    cr_expect_eq(n, 2, "the whole GPU's daemon: pipe and log folders only");
    cr_expect_str_eq(denv[0], "CUDA_MPS_PIPE_DIRECTORY=/run/mps-0/pipe");
    cr_expect_str_eq(denv[1], "CUDA_MPS_LOG_DIRECTORY=/run/mps-0/log");
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    /* MIG, one instance time-sliced and one MPS-shared: one daemon, for that instance */
    const char *mig[] = {"sharing.instances.[1].share=mps"};
    sc = load("tests/fixtures/live/mig.cfg", mig, 1);
    plan(sc, &p);
    cr_expect_eq(p.n_daemons, 1);
    cr_expect_eq(p.daemons[0].instance, 1);
    cr_expect_eq(p.t[0].daemon, -1);
    cr_expect_eq(p.t[1].daemon, 0);
    cr_expect_str_eq(env_of(&p, 0, COLO_LIVE_RUN, "MIG-a", NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                     "/run/no-mps");
    cr_expect_str_eq(env_of(&p, 0, COLO_LIVE_RUN, "MIG-a", NULL, "CUDA_VISIBLE_DEVICES"), "MIG-a");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_RUN, "MIG-b", NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                     "/run/mps-0/pipe");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_FIT, "MIG-b", NULL, "CUDA_MPS_PIPE_DIRECTORY"),
                     "/run/no-mps");
    n = colo_live_daemon_env(&p, 0, "/run", "MIG-b", denv);
    cr_expect_eq(n, 3);
    cr_expect_str_eq(denv[2], "CUDA_VISIBLE_DEVICES=MIG-b");
    /* fitted where it runs: no whole GPU exists under MIG */
    colo_place_rates_t at;
    char where[96];
    colo_live_fit_place(sc, &p, 0, &at, where, sizeof where);
    cr_expect_str_eq(where, "MIG 3g.40gb (60 SMs)");
    cr_expect_eq(at.sms, 60);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);

    /* MPS static partitions: the client's partition ID, the partition of the simulator's SMs */
    const char *st[] = {"sharing.mode=mps", "sharing.cuda=13.1", "sharing.static_partitions=true",
                        "tenants.[0].sms=64", "tenants.[1].sms=32"};
    sc = load("tests/fixtures/two_tenants.cfg", st, 5);
    plan(sc, &p);
    cr_expect(p.daemons[0].static_partitions);
    cr_expect_eq(p.t[0].partition, 64);
    cr_expect_eq(p.t[1].partition, 32);
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_RUN, NULL, "GPU-x/P", "CUDA_MPS_SM_PARTITION"),
                     "GPU-x/P");
    cr_expect_str_eq(env_of(&p, 1, COLO_LIVE_FIT, NULL, "GPU-x/P", "CUDA_MPS_SM_PARTITION"),
                     "(removed)");
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

/* A stand-in for cuDevSmResourceSplitByCount as cuda.h documents it: groups of min_count SMs
 * rounded up to the architecture's alignment, disjoint, at most as many as asked and as fit.
 * Group g holds SMs [first[g], first[g] + sms[g]). */
static int stub_split(int device_sms, int align, int min_count, int asked, unsigned *sms,
                      int *first)
{
    int size = (min_count + align - 1) / align * align, n = 0;
    for (int cursor = 0; n < asked && cursor + size <= device_sms; cursor += size, n++) {
        sms[n] = (unsigned)size;
        first[n] = cursor;
    }
    return n;
}

Test(live_plan, green_contexts_come_from_one_split_and_are_disjoint)
{
    const char *sets[] = {"tenants.[0].sms=40", "tenants.[1].sms=56"};
    colo_scenario_t *sc = load("scenarios/green_contexts_h100.cfg", sets, 2);
    colo_live_plan_t p;
    plan(sc, &p);
    cr_assert_eq(p.green_unit, 8, "40 and 56 SMs are made of groups of 8");
    cr_assert_eq(p.green_groups, 12);
    unsigned sms[64];
    int first[64];
    int n = stub_split(132, 8, p.green_unit, p.green_groups, sms, first);
    cr_assert_eq(n, 12);
    int granted[2];
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_live_green_check(sc, &p, sms, n, granted, &err), 0, "%s", err.text);
    cr_expect_eq(granted[0], 40);
    cr_expect_eq(granted[1], 56);
    /* the SMs each context gets: no SM in both */
    bool used[132] = {false};
    for (size_t i = 0; i < p.n; i++)
        for (int g = p.t[i].group_first; g < p.t[i].group_first + p.t[i].group_count; g++)
            for (int s = first[g]; s < first[g] + (int)sms[g]; s++) {
                cr_assert_not(used[s], "SM %d in two Green Contexts", s);
                used[s] = true;
            }
    /* a driver that rounds groups up (an A100-like alignment of 16 here) is caught */
    n = stub_split(132, 16, p.green_unit, p.green_groups, sms, first);
    cr_assert_eq(colo_live_green_check(sc, &p, sms, n, granted, &err), COLO_EUNSUPPORTED);
    cr_expect(strstr(err.text, "simulator assumed"), "%s", err.text);
    colo_live_plan_free(&p);
    colo_scenario_free(sc);
}

Test(live_plan, a_failed_cuda_call_says_why_in_words)
{
    /* no driver (or one too old): the runtime's own words say "insufficient" */
    const char *h = colo_live_cuda_hint("cudaErrorInsufficientDriver", false);
    cr_assert(h && strstr(h, "no NVIDIA driver") && strstr(h, "nvidia-smi"), "%s", h);
    h = colo_live_cuda_hint("cudaErrorNoDevice", false);
    cr_assert(h && strstr(h, "CUDA_VISIBLE_DEVICES"), "%s", h);
    h = colo_live_cuda_hint("cudaErrorDevicesUnavailable", false);
    cr_assert(h && strstr(h, "Exclusive_Process"), "%s", h);
    /* MPS refusing or unreachable: a client of the run's daemon is sent to its log */
    h = colo_live_cuda_hint("cudaErrorMpsConnectionFailed", true);
    cr_assert(h && strstr(h, "mps-N/log"), "%s", h);
    cr_assert(strstr(colo_live_cuda_hint("cudaErrorMpsMaxClientsReached", true), "client limit"));
    cr_assert(strstr(colo_live_cuda_hint("cudaErrorMpsServerNotReady", false), "refuses"));
    /* errors that say enough on their own get no hint */
    cr_assert_null(colo_live_cuda_hint("cudaErrorMemoryAllocation", false));
    cr_assert_null(colo_live_cuda_hint(NULL, true));
}
