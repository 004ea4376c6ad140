/* test_alloc.c: every allocation of loading and running a scenario can fail, and each failure
 * ends in a clean error (no crash; ASan builds also check for leaks). */
#include "alloc.h"
#include "arrival.h"
#include "calibration.h"
#include "cluster.h"
#include "compare.h"
#include "gpu_catalog.h"
#include "helpers.h"
#include "import_capture.h"
#include "import_kineto.h"
#include "import_nsys.h"
#include "import_orion.h"
#include "study.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Runs try(path) once to count its allocations, then again with each one failing in turn:
 * every run must end in COLO_ENOMEM (the ASan build also finds what a failure leaks). */
static void walk_with(int (*try)(const char *path, colo_error_t *err), const char *file,
                      unsigned long at_least)
{
    char path[4096]; /* file may be src_path's buffer, which try() reuses */
    snprintf(path, sizeof path, "%s", file);
    colo_error_t err;
    colo_error_clear(&err);
    unsigned long before = colo_alloc_count();
    cr_assert_eq(try(path, &err), 0, "%s", err.text);
    unsigned long total = colo_alloc_count() - before;
    cr_assert_geq(total, at_least, "%s: %lu allocations", path, total);
    for (unsigned long n = 1; n <= total; n++) {
        colo_error_clear(&err);
        colo_alloc_fail_after((long)n);
        int rc = try(path, &err);
        colo_alloc_fail_after(0);
        cr_assert_eq(rc, COLO_ENOMEM, "%s: allocation %lu of %lu failed, got %s (%s)", path, n,
                     total, colo_err_name(rc), err.text);
        cr_assert(err.code == 0 || err.code == COLO_ENOMEM,
                  "%s: allocation %lu of %lu: the message says %s (%s)", path, n, total,
                  colo_err_name(err.code), err.text);
    }
}

static void walk(const char *path)
{
    walk_with(attempt, path, 10);
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

/* ---- every reader (issue 10): each allocation of reading a small real file can fail ---- */

static const char *shared_file(const char *rel)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", COLO_SHARED_DATA, rel);
    if (access(p, R_OK) != 0) cr_skip_test("shared data not present: %s", p);
    return p;
}

/* The first lines of a file, written to a temporary file (the walk is quadratic in a reader's
 * allocations, so the logs are cut short). Returns its path (static). */
static const char *first_lines(const char *path, int lines)
{
    static char out[64];
    snprintf(out, sizeof out, "/tmp/colosim-alloc-XXXXXX");
    int fd = mkstemp(out);
    cr_assert_geq(fd, 0);
    FILE *in = fopen(path, "r"), *o = fdopen(fd, "w");
    cr_assert(in && o);
    char buf[65536];
    for (int i = 0; i < lines && fgets(buf, sizeof buf, in); i++)
        fputs(buf, o);
    fclose(in);
    fclose(o);
    return out;
}

static int try_trace(const char *path, colo_error_t *err)
{
    colo_trace_t *t = NULL;
    int rc = colo_trace_load(path, &t, err);
    colo_trace_free(t);
    return rc;
}

static int try_kineto(const char *path, colo_error_t *err)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    colo_trace_t *t = NULL;
    int rc = colo_import_kineto(path, &o, &t, err);
    colo_trace_free(t);
    return rc;
}

static int try_orion(const char *path, colo_error_t *err)
{
    colo_trace_t *t = NULL;
    colo_gpu_t *g = NULL;
    int rc = colo_gpu_open("v100-sxm2", NULL, "none", &g, "t", 0, NULL, err);
    if (!rc) rc = colo_import_orion(path, "resnet50", 4, g, NULL, &t, err);
    colo_trace_free(t);
    colo_gpu_free(g);
    return rc;
}

static int try_nsys(const char *path, colo_error_t *err)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, "forward", 1};
    colo_trace_t *t = NULL;
    int rc = colo_import_nsys(path, &o, &t, err);
    colo_trace_free(t);
    return rc;
}

static int try_capture(const char *path, colo_error_t *err)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, "infer", 0};
    colo_trace_t **ts = NULL;
    size_t n = 0;
    int rc = colo_import_capture(path, &o, &ts, &n, err);
    if (!rc) rc = colo_trace_merge_ncu(ts[0], src_path("tests/fixtures/capture/ncu.csv"), err);
    colo_capture_free(ts, n);
    return rc;
}

static colo_log_format_t replay_format;

static int try_replay(const char *path, colo_error_t *err)
{
    colo_arrival_cfg_t c = {.ops = colo_arrival_find("replay"),
                            .format = replay_format,
                            .scale = 1,
                            .window = COLO_TIME_MAX,
                            .path = (char *)path};
    colo_arrival_state_t st;
    int rc = colo_arrival_start(&c, &st, err);
    if (rc) return rc;
    colo_time_t now = 0, at;
    int count;
    while ((rc = colo_arrival_next(&c, &st, NULL, now, &at, &count, err)) == 0)
        now = at;
    colo_arrival_stop(&st);
    return rc < 0 ? rc : 0;
}

static int try_calibration(const char *path, colo_error_t *err)
{
    colo_gpu_t *g = NULL;
    int rc = colo_gpu_open("h100-sxm", NULL, "none", &g, "t", 0, NULL, err);
    if (!rc) rc = colo_calibration_apply(g, path, err);
    colo_gpu_free(g);
    return rc;
}

static int try_gpu(const char *path, colo_error_t *err)
{
    colo_gpu_t *g = NULL;
    int rc = colo_gpu_load(path, &g, err);
    colo_gpu_free(g);
    return rc;
}

/* A cluster: read (colosim check), then placed on a mixed pool and every GPU simulated. */
static int try_cluster(const char *path, colo_error_t *err)
{
    const char *sets[] = {"duration_s=0.2", "warmup_s=0.05", "drain_s=0.1"};
    int rc = colo_cluster_check(path, sets, 3, NULL, err);
    json_t *res = NULL;
    if (!rc) rc = colo_cluster_run(path, sets, 3, &res, err);
    json_decref(res);
    return rc;
}

static int try_study(const char *path, colo_error_t *err)
{
    colo_study_t *s = NULL;
    int rc = colo_study_load(path, &s, err);
    colo_study_free(s);
    return rc;
}

static int try_compare(const char *path, colo_error_t *err)
{
    colo_compare_t c = {0};
    int rc = colo_compare_load(&c, path, err);
    if (!rc) rc = colo_compare_load(&c, path, err);
    json_t *j = rc ? NULL : colo_compare_json(&c);
    if (!rc && !j) rc = COLO_ENOMEM;
    json_decref(j);
    colo_compare_fini(&c);
    return rc;
}

Test(alloc, every_allocation_of_reading_a_trace_can_fail_cleanly)
{
    walk_with(try_trace, src_path("traces/mobilenetv2_b4_v100.json"), 100);
}

Test(alloc, every_allocation_of_importing_a_kineto_trace_can_fail_cleanly)
{
    walk_with(try_kineto, shared_file("hta_kineto_traces/event_sync_a100_kineto.json.gz"), 100);
}

Test(alloc, every_allocation_of_importing_an_orion_profile_can_fail_cleanly)
{
    walk_with(try_orion, shared_file("orion_kernel_profiles_v100/resnet50_4_fwd.csv"), 20);
}

Test(alloc, every_allocation_of_importing_an_nsys_export_can_fail_cleanly)
{
    walk_with(try_nsys, src_path("tests/fuzz/seeds/nsys/export.sqlite"), 10);
}

Test(alloc, every_allocation_of_importing_a_capture_and_ncu_csv_can_fail_cleanly)
{
    walk_with(try_capture, src_path("tests/fixtures/capture/two_inferences.txt"), 10);
}

Test(alloc, every_allocation_of_replaying_request_logs_can_fail_cleanly)
{
    replay_format = COLO_LOG_AZURE;
    const char *azure = first_lines(
        src_path("traces/arrivals/azure_llm_2023_conv_first20min.csv"), 40);
    walk_with(try_replay, azure, 0); /* none: read line by line into the stack */
    unlink(azure);
    replay_format = COLO_LOG_MOONCAKE;
    const char *moon =
        first_lines(shared_file("mooncake_fast25/conversation_trace.jsonl"), 40);
    walk_with(try_replay, moon, 40);
    unlink(moon);
}

Test(alloc, every_allocation_of_applying_a_calibration_can_fail_cleanly)
{
    walk_with(try_calibration, src_path("tests/fixtures/calibrated/h100-sxm.json"), 20);
}

Test(alloc, every_allocation_of_loading_a_gpu_and_a_study_can_fail_cleanly)
{
    walk_with(try_gpu, src_path("models/gpus/h100-sxm.cfg"), 5);
    walk_with(try_study, src_path("tests/fixtures/study_small.cfg"), 5);
}

Test(alloc, every_allocation_of_a_cluster_can_fail_cleanly)
{
    walk_with(try_cluster, src_path("tests/fixtures/cluster/mixed_pool.cfg"), 100);
}

Test(alloc, every_allocation_of_comparing_results_can_fail_cleanly)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    char path[] = "/tmp/colosim-alloc-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(json_dump_file(r.results, path, 0), 0);
    run_free(&r);
    walk_with(try_compare, path, 20);
    unlink(path);
}
