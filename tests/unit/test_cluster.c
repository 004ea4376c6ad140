/* test_cluster.c: placement on a cluster of GPUs. Demands are set by hand (rate = demand / time
 * alone) so that the packing each policy must find can be worked out on paper; the
 * interference-aware policy must separate two tenants that only a simulation shows cannot
 * share a GPU; MIG and Green Context parts, mixed GPU models, pools that run out, automatic
 * replicas and bad files are checked too. */
#include "cluster.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(cluster, .init = test_init);

/* Time alone of the tiny fixture trace on a whole H100, in seconds. */
static double tiny_alone_s(void)
{
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(src_path("tests/fixtures/search_one.cfg"), NULL, 0, &sc, &err),
                 0, "%s", err.text);
    colo_time_t iso;
    cr_assert_eq(colo_tenant_isolated(sc, 0, &iso, &err), 0);
    colo_scenario_free(sc);
    return COLO_TO_S(iso);
}

static char sets_buf[16][128];

/* Overrides giving tenant i of packing.cfg the demand d[i]; more overrides after them. */
static size_t demands(const double *d, size_t n, const char **sets)
{
    double iso = tiny_alone_s();
    for (size_t i = 0; i < n; i++) {
        snprintf(sets_buf[i], sizeof sets_buf[i], "tenants.[%zu].arrival.rate=%.17g", i,
                 d[i] / iso);
        sets[i] = sets_buf[i];
    }
    return n;
}

static json_t *run(const char *rel, const char **sets, size_t n)
{
    json_t *res;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_cluster_run(src_path(rel), sets, n, &res, &err), 0, "%s", err.text);
    return res;
}

static json_t *cluster_of(json_t *res)
{
    return json_object_get(res, "cluster");
}

static long long gpus_used(json_t *res)
{
    return json_integer_value(json_object_get(cluster_of(res), "gpus_used"));
}

/* The tenant names on GPU g, space-separated. */
static const char *on_gpu(json_t *res, size_t g)
{
    static char buf[256];
    buf[0] = '\0';
    json_t *ts =
        json_object_get(json_array_get(json_object_get(cluster_of(res), "gpus"), g), "tenants");
    size_t i;
    json_t *t;
    json_array_foreach(ts, i, t)
    {
        if (i) strcat(buf, " ");
        strcat(buf, json_string_value(json_object_get(t, "name")));
    }
    return buf;
}

/* Demands 0.5, 0.6, 0.4, 0.5 in this order, capacity 1: first fit puts 0.4 beside 0.5 (the
 * first GPU it fits) and needs a third GPU for the last 0.5; best fit puts 0.4 beside 0.6
 * (leaving nothing) and the last 0.5 beside the first. */
Test(cluster, first_fit_and_best_fit_pack_as_worked_out_by_hand)
{
    const double d[] = {0.5, 0.6, 0.4, 0.5};
    const char *sets[8];
    size_t n = demands(d, 4, sets);
    json_t *ff = run("tests/fixtures/cluster/packing.cfg", sets, n);
    cr_assert_eq(gpus_used(ff), 3);
    cr_assert_str_eq(on_gpu(ff, 0), "a c");
    cr_assert_str_eq(on_gpu(ff, 1), "b");
    cr_assert_str_eq(on_gpu(ff, 2), "d");
    sets[n] = "cluster.policy=best_fit";
    json_t *bf = run("tests/fixtures/cluster/packing.cfg", sets, n + 1);
    cr_assert_eq(gpus_used(bf), 2);
    cr_assert_str_eq(on_gpu(bf, 0), "a d");
    cr_assert_str_eq(on_gpu(bf, 1), "b c");
    /* largest first (the default order): 0.6, 0.5, 0.5, 0.4 -> {0.6, 0.4} {0.5, 0.5} */
    sets[n + 1] = "cluster.order=decreasing";
    json_t *ffd = run("tests/fixtures/cluster/packing.cfg", sets, n + 2);
    cr_assert_eq(gpus_used(ffd), 2);
    cr_assert_str_eq(on_gpu(ffd, 0), "b c");
    cr_assert_str_eq(on_gpu(ffd, 1), "a d");
    /* each GPU's own results are there, and every service's arrivals are accounted for */
    json_t *g0 = json_array_get(json_object_get(cluster_of(bf), "gpus"), 0);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(g0, "results"), "tenants")), 2);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(bf, "tenants"), i, t)
    {
        cr_assert_gt(json_integer_value(json_object_get(t, "arrived")), 0);
        cr_assert_eq(json_integer_value(json_object_get(t, "arrived")),
                     json_integer_value(json_object_get(t, "completed")) +
                         json_integer_value(json_object_get(t, "dropped")) +
                         json_integer_value(json_object_get(t, "in_flight")));
    }
    json_decref(ff);
    json_decref(bf);
    json_decref(ffd);
}

Test(cluster, interference_aware_separates_what_only_a_simulation_shows_cannot_share)
{
    const char *sets[] = {"tenants.m1.arrival.rate=1500", "tenants.m2.arrival.rate=1500",
                          "cluster.policy=interference_aware"};
    json_t *bf = run("tests/fixtures/cluster/interference.cfg", sets, 2);
    cr_assert_eq(gpus_used(bf), 1, "demands 0.3 + 0.3 fit within headroom 0.7");
    cr_assert(json_is_false(json_object_get(cluster_of(bf), "all_slo_met")));
    json_t *ia = run("tests/fixtures/cluster/interference.cfg", sets, 3);
    cr_assert_eq(gpus_used(ia), 2);
    cr_assert(json_is_true(json_object_get(cluster_of(ia), "all_slo_met")));
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(ia, "tenants"), i, t)
        cr_assert_float_eq(json_number_value(json_object_get(t, "slo_attainment")), 1.0, 1e-9);
    json_decref(bf);
    json_decref(ia);
}

/* Seven tenants that fit a 1g instance each fill one H100's seven compute slices; an eighth
 * needs a second GPU. */
Test(cluster, mig_packs_seven_small_instances_per_h100)
{
    const double d[] = {0.01, 0.01, 0.01, 0.01};
    const char *sets[16];
    size_t n = demands(d, 4, sets);
    sets[n++] = "sharing.mode=mig";
    sets[n++] = "cluster.headroom=0.7";
    json_t *four = run("tests/fixtures/cluster/packing.cfg", sets, n);
    cr_assert_eq(gpus_used(four), 1);
    json_t *t0 = json_array_get(
        json_object_get(json_array_get(json_object_get(cluster_of(four), "gpus"), 0), "tenants"),
        0);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(t0, "part"), "mig_profile")),
                     "1g.10gb");
    /* the same tenants as 2 replicas each: 8 instances of 1g */
    for (int k = 0; k < 4; k++) {
        static char r[4][64];
        snprintf(r[k], sizeof r[k], "tenants.[%d].replicas=2", k);
        sets[n++] = r[k];
    }
    json_t *eight = run("tests/fixtures/cluster/packing.cfg", sets, n);
    cr_assert_eq(gpus_used(eight), 2);
    cr_assert_eq(json_array_size(json_object_get(
                     json_array_get(json_object_get(cluster_of(eight), "gpus"), 0), "tenants")),
                 7);
    json_decref(four);
    json_decref(eight);
}

Test(cluster, green_contexts_get_aligned_sm_counts_that_fit)
{
    const double d[] = {0.3, 0.3, 0.3, 0.3};
    const char *sets[16];
    size_t n = demands(d, 4, sets);
    sets[n++] = "sharing.mode=green";
    sets[n++] = "cluster.headroom=0.7";
    json_t *res = run("tests/fixtures/cluster/packing.cfg", sets, n);
    size_t g, k;
    json_t *gpu, *t;
    json_array_foreach(json_object_get(cluster_of(res), "gpus"), g, gpu)
    {
        int sum = 0;
        json_array_foreach(json_object_get(gpu, "tenants"), k, t)
        {
            int sms = (int)json_integer_value(json_object_get(json_object_get(t, "part"), "sms"));
            cr_assert_eq(sms % 8, 0, "Hopper Green Contexts come in multiples of 8 SMs");
            cr_assert_leq(json_number_value(json_object_get(t, "demand")), 0.7 + 1e-9);
            sum += sms;
        }
        cr_assert_leq(sum, 132);
    }
    json_decref(res);
}

Test(cluster, mixed_models_open_in_pool_order_and_a_small_pool_leaves_tenants_out)
{
    const double d[] = {0.6, 0.6, 0.6, 0.6};
    const char *sets[16];
    size_t n = demands(d, 4, sets);
    json_t *res = run("tests/fixtures/cluster/mixed_pool.cfg", sets, n);
    json_t *gpus = json_object_get(cluster_of(res), "gpus");
    cr_assert_eq(gpus_used(res), 3);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(gpus, 0), "model")),
                     "h100-sxm");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(gpus, 2), "model")), "h200");
    json_t *un = json_object_get(cluster_of(res), "unplaced");
    cr_assert_eq(json_array_size(un), 1, "four GPUs' worth of tenants, three GPUs");
    cr_assert_str_eq(json_string_value(json_array_get(un, 0)), "d");
    cr_assert(json_is_false(json_object_get(cluster_of(res), "all_slo_met")));
    json_decref(res);
}

/* A service of demand 2.5 with headroom 0.8 needs ceil(2.5 / 0.8) = 4 replicas of 0.625, no
 * two of which share a GPU; together they take its whole load. */
Test(cluster, auto_replicas_split_a_service_too_big_for_one_gpu)
{
    const double d[] = {2.5, 0.01, 0.01, 0.01};
    const char *sets[16];
    size_t n = demands(d, 4, sets);
    sets[n++] = "tenants.[0].replicas=auto";
    sets[n++] = "cluster.headroom=0.8";
    json_t *res = run("tests/fixtures/cluster/packing.cfg", sets, n);
    json_t *a = json_array_get(json_object_get(res, "tenants"), 0);
    cr_assert_eq(json_integer_value(json_object_get(a, "replicas")), 4);
    cr_assert_eq(json_array_size(json_object_get(a, "gpus")), 4);
    cr_assert_eq(gpus_used(res), 4);
    double offered = json_number_value(json_object_get(a, "offered_rps"));
    cr_assert_float_eq(json_number_value(json_object_get(a, "throughput_rps")), offered,
                       0.02 * offered);
    json_decref(res);
}

/* A tiny headroom wrapped the replica count to -2147483648 and reported "GPUs needed: 0, every
 * SLO met" at 1,500 requests/s: what cannot be placed is refused, with the key. */
Test(cluster, a_headroom_no_cluster_can_meet_is_refused)
{
    const char *sets[] = {"tenants.[0].replicas=auto", "cluster.headroom=1e-10"};
    json_t *res = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(
        colo_cluster_run(src_path("tests/fixtures/cluster/packing.cfg"), sets, 2, &res, &err), 0);
    cr_assert_null(res);
    cr_assert_str_eq(err.key, "cluster.headroom");
    cr_assert(strstr(err.text, "more than the 7168 a cluster can place"), "%s", err.text);
}

Test(cluster, the_same_file_gives_the_same_results)
{
    const char *sets[] = {"tenants.m1.arrival.rate=1500", "tenants.m2.arrival.rate=1500",
                          "cluster.policy=interference_aware"};
    json_t *a = run("tests/fixtures/cluster/interference.cfg", sets, 3);
    json_t *b = run("tests/fixtures/cluster/interference.cfg", sets, 3);
    cr_assert(json_equal(a, b));
    json_decref(a);
    json_decref(b);
}

static void bad(const char *rel, const char *want)
{
    json_t *res = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(colo_cluster_run(src_path(rel), NULL, 0, &res, &err), 0);
    cr_assert_null(res);
    char msg[1024];
    colo_error_format(&err, msg, sizeof msg);
    cr_assert(strstr(msg, want), "%s: got '%s', expected it to contain '%s'", rel, msg, want);
}

/* A tensor-parallel replica takes its ranks' GPUs whole: two CodeLlama-34B replicas at TP 2 use
 * four GPUs, and a vision service beside them gets a GPU of its own. */
Test(cluster, a_tensor_parallel_replica_holds_its_ranks_gpus)
{
    const char *sets[] = {"duration_s=5", "warmup_s=1", "tenants.[0].replicas=2",
                          "tenants.[0].arrival={ process = \"poisson\"; rate = 2.0; }",
                          "cluster.gpus.[0].count=6"};
    json_t *out = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_simulate_file(src_path("scenarios/cluster/llmd_prefix_benchmark.cfg"), sets, 5,
                                &out, &err);
    char m[1024];
    colo_error_format(&err, m, sizeof m);
    cr_assert_eq(rc, 0, "%s", m);
    json_t *cl = json_object_get(out, "cluster");
    cr_assert_eq(json_integer_value(json_object_get(cl, "gpus_used")), 4);
    cr_assert_eq(json_array_size(json_object_get(cl, "gpus")), 2, "two GPUs simulated");
    json_t *g0 = json_array_get(json_object_get(cl, "gpus"), 0);
    cr_assert_eq(json_integer_value(json_object_get(g0, "tensor_parallel_ranks")), 1);
    json_decref(out);
}

Test(cluster, bad_files_name_the_line_and_key)
{
    bad("tests/fixtures/cluster/bad_policy.cfg",
        "bad_policy.cfg:5: cluster.policy: unknown policy 'round_robin'");
    bad("tests/fixtures/cluster/bad_instance.cfg",
        "bad_instance.cfg:7: tenants.[0].instance: in a cluster the placement chooses it");
    /* routing across GPUs (issue 42) */
    bad("tests/fixtures/cluster/router_one_replica.cfg",
        "router_one_replica.cfg:8: tenants.[0].router: routes a service's requests among its "
        "replicas: give replicas = N (2 or more) or \"auto\"");
    bad("tests/fixtures/cluster/fit_unknown.cfg",
        "fit_unknown.cfg:5: cluster.fit: \"demand\" (memory, and the demands within headroom) "
        "or \"memory\" (memory only), not 'cores'");
    /* no tenants, or a misspelt key: it used to crash (found by fuzz_cluster) */
    bad("tests/fixtures/cluster/no_tenants.cfg", "no_tenants.cfg: tenants: missing");
    bad("tests/fuzz/regressions/cluster/tenants_key_misspelt.cfg",
        "tenants_key_misspelt.cfg:4: enants: unknown key");
    /* a one-GPU command on a cluster file says what to do */
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(
        colo_scenario_load(src_path("tests/fixtures/cluster/packing.cfg"), NULL, 0, &sc, &err), 0);
    cr_assert(strstr(err.text, "colosim run"), "%s", err.text);
}

/* What `colosim check` prints for a cluster: read, nothing placed or simulated. */
Test(cluster, check_reads_and_describes_without_simulating)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(
        colo_cluster_check(src_path("tests/fixtures/cluster/mixed_pool.cfg"), NULL, 0, f, &err), 0,
        "%s", err.text);
    fclose(f);
    cr_expect(strstr(text, "gpus      1 x h100-sxm, 2 x h200\n"), "%s", text);
    cr_expect(strstr(text, "placement first_fit, in the given order, headroom 100 %, timeslice"),
              "%s", text);
    cr_expect(strstr(text, "services  4\n"), "%s", text);
    cr_expect(strstr(text, "  d              replicas 1, offers 100 requests/s\n"), "%s", text);
    free(text);
    const char *const sets[] = {"cluster.policy=worst_fit"};
    cr_assert_lt(
        colo_cluster_check(src_path("tests/fixtures/cluster/mixed_pool.cfg"), sets, 1, NULL, &err),
        0);
    cr_expect(strstr(err.text, "unknown policy 'worst_fit'"), "%s", err.text);
    colo_error_clear(&err);
    cr_assert_lt(
        colo_cluster_check(src_path("tests/fixtures/cluster/no_tenants.cfg"), NULL, 0, NULL, &err),
        0);
}

/* An LLM service beside another was refused for lacking the memory_gib it has (issue 40): the
 * times alone are taken with every tenant on one GPU, where memory_gib was dropped. Both now
 * share one GPU, and the LLM's KV cache is sized from its 30 GiB, as on its own. */
Test(cluster, an_llm_service_beside_another_is_placed_with_its_memory)
{
    json_t *res = run("tests/fixtures/cluster/llm_beside_vision.cfg", NULL, 0);
    cr_assert_eq(gpus_used(res), 1);
    json_t *gpu = json_array_get(json_object_get(cluster_of(res), "gpus"), 0);
    json_t *llm = json_array_get(json_object_get(json_object_get(gpu, "results"), "tenants"), 0);
    cr_assert_gt(json_integer_value(json_object_get(llm, "completed")), 0);
    json_t *kv = json_object_get(json_object_get(llm, "llm"), "kv_cache");
    cr_assert_eq(json_real_value(json_object_get(kv, "memory_gib")), 30.0);
    cr_assert_str_eq(json_string_value(json_object_get(kv, "memory_from")), "memory_gib");
    json_decref(res);
}

/* k8s in a cluster file was refused as a sharing.mode conflict the user never wrote (issue 40):
 * the plugin shares one GPU, a cluster places services itself; said at the k8s key. */
Test(cluster, k8s_in_a_cluster_is_refused_at_its_key)
{
    const char *sets[] = {"k8s.sharing=mps", "k8s.replicas=4"};
    json_t *res = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(
        colo_cluster_run(src_path("tests/fixtures/cluster/packing.cfg"), sets, 2, &res, &err), 0);
    cr_assert_str_eq(err.key, "k8s");
    cr_assert(strstr(err.text, "a cluster places its services on GPUs itself"), "%s", err.text);
}

/* A MIG cluster of GPUs without MIG crashed on a null MIG profile (the hostile mix, issue 40):
 * refused at the pool's model, for every policy. */
Test(cluster, a_mechanism_the_pools_gpu_lacks_is_refused_at_its_model)
{
    static const char *const policies[] = {"cluster.policy=first_fit",
                                           "cluster.policy=interference_aware"};
    for (int k = 0; k < 2; k++) {
        const char *sets[] = {"sharing.mode=mig", "cluster.gpus.[0].model=l4",
                              "tenants.[0].replicas=auto", policies[k]};
        json_t *res = NULL;
        colo_error_t err;
        colo_error_clear(&err);
        cr_assert_lt(
            colo_cluster_run(src_path("tests/fixtures/cluster/packing.cfg"), sets, 4, &res, &err),
            0);
        cr_assert_str_eq(err.key, "cluster.gpus.[0].model");
        cr_assert(strstr(err.text, "l4 does not support MIG"), "%s", err.text);
    }
}

/* copies are for one GPU; a cluster runs a service as replicas and says so at the key. */
Test(cluster, copies_in_a_cluster_are_refused_for_replicas)
{
    const char *sets[] = {"tenants.[0].copies=2"};
    json_t *res = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(
        colo_cluster_run(src_path("tests/fixtures/cluster/packing.cfg"), sets, 1, &res, &err), 0);
    cr_assert_str_eq(err.key, "tenants.[0].copies");
    cr_assert(strstr(err.text, "give replicas = N"), "%s", err.text);
}
