/* test_fleet.c: several GPUs in one event order (sim/fleet) and the routers across them (issue
 * 42): a fleet of one run is that run, round robin deals evenly across GPUs, least_outstanding
 * picks a replica with the fewest in flight, routing is deterministic for a seed, and a routing
 * delay adds to every routed request's latency. */
#include "cluster.h"
#include "fleet.h"
#include "helpers.h"
#include "router.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(fleet, .init = test_init);

#define THREE "tests/fixtures/fleet/three_gpus.cfg"

static json_t *cluster(const char *const *sets, size_t n)
{
    json_t *out = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_simulate_file(src_path(THREE), sets, n, &out, &err);
    char m[1024];
    colo_error_format(&err, m, sizeof m);
    cr_assert_eq(rc, 0, "%s", m);
    return out;
}

/* requests the router sent replica k (1-based) of the one service */
static json_int_t arrived(json_t *res, int k)
{
    char name[32];
    snprintf(name, sizeof name, "svc-r%d", k);
    size_t g, i;
    json_t *gpu, *t;
    json_array_foreach(json_object_get(json_object_get(res, "cluster"), "gpus"), g, gpu)
    {
        json_array_foreach(json_object_get(json_object_get(gpu, "results"), "tenants"), i, t)
        {
            if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
                return json_integer_value(json_object_get(t, "arrived"));
        }
    }
    cr_assert_fail("no replica %s", name);
    return -1;
}

/* A fleet of one run gives the run's results byte for byte. */
Test(fleet, one_run_is_the_run_alone)
{
    const char *sets[] = {"duration_s=3"};
    colo_scenario_t *sc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(src_path("scenarios/mps_caps_h100.cfg"), sets, 1, &sc, &err),
                 0);
    colo_sim_t *a, *b;
    cr_assert_eq(colo_sim_new(sc, &a, &err), 0);
    cr_assert_eq(colo_sim_new(sc, &b, &err), 0);
    cr_assert_eq(colo_sim_run(a, &err), 0);
    cr_assert_eq(colo_fleet_run(&b, 1, &err), 0);
    json_t *ra = colo_results_json(a, sets, 1), *rb = colo_results_json(b, sets, 1);
    char *sa = json_dumps(ra, JSON_SORT_KEYS), *sb = json_dumps(rb, JSON_SORT_KEYS);
    cr_assert_str_eq(sa, sb);
    free(sa);
    free(sb);
    json_decref(ra);
    json_decref(rb);
    colo_sim_free(a);
    colo_sim_free(b);
    colo_scenario_free(sc);
}

/* Round robin across three GPUs: each replica gets floor(n/3) or ceil(n/3) of the n requests. */
Test(fleet, round_robin_deals_evenly_across_gpus)
{
    json_t *res = cluster(NULL, 0);
    json_int_t a[3], n = 0, lo = -1, hi = 0;
    for (int k = 0; k < 3; k++) {
        a[k] = arrived(res, k + 1);
        n += a[k];
        lo = lo < 0 || a[k] < lo ? a[k] : lo;
        hi = a[k] > hi ? a[k] : hi;
    }
    cr_assert_gt(n, 1000, "%lld requests", (long long)n);
    cr_assert_geq(lo, n / 3 - 1, "%lld of %lld", (long long)lo, (long long)n);
    cr_assert_leq(hi, (n + 2) / 3 + 1, "%lld of %lld", (long long)hi, (long long)n);
    json_decref(res);
}

/* A policy that checks least_outstanding's choice against the view it was given. */
static unsigned long checked, wrong;
static size_t checking_pick(colo_router_t *r, const colo_route_request_t *q,
                            const colo_route_replica_t *reps, size_t n)
{
    (void)q;
    size_t i = colo_router_least_outstanding(r, reps, n);
    for (size_t k = 0; k < n; k++)
        wrong += reps[k].outstanding < reps[i].outstanding;
    checked++;
    return i;
}
static const colo_router_ops_t checking = {.name = "test_least_outstanding",
                                           .summary = "least_outstanding, checked",
                                           .pick = checking_pick};

/* least_outstanding never sends a request to a replica with more in flight than another, and the
 * counts it sees are the replicas' own (some requests find a replica busy). */
Test(fleet, least_outstanding_never_picks_a_busier_replica)
{
    if (!colo_router_find(checking.name)) cr_assert_eq(colo_router_register(&checking), 0);
    const char *sets[] = {"tenants.[0].router=test_least_outstanding",
                          "tenants.[0].arrival.rate=900"};
    json_t *res = cluster(sets, 2);
    cr_assert_gt(checked, 1000);
    cr_assert_eq(wrong, 0, "%lu of %lu requests went to a busier replica", wrong, checked);
    json_decref(res);
}

/* The same seed routes the same way; another seed does not (random router). */
Test(fleet, routing_is_deterministic_for_a_seed)
{
    const char *s1[] = {"tenants.[0].router=random"},
               *s2[] = {"tenants.[0].router=random", "seed=4"};
    json_t *a = cluster(s1, 1), *b = cluster(s1, 1), *c = cluster(s2, 2);
    for (int k = 1; k <= 3; k++)
        cr_assert_eq(arrived(a, k), arrived(b, k));
    cr_assert(arrived(a, 1) != arrived(c, 1) || arrived(a, 2) != arrived(c, 2));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static double p50(json_t *res)
{
    json_t *t = json_array_get(json_object_get(res, "tenants"), 0);
    return result_num(json_object_get(t, "latency_ms"), "p50");
}

/* A routing delay of 1.5 ms reaches every request: the median latency grows by about 1.5 ms
 * (the replicas see the same requests, later; fractions of a millisecond are kept). */
Test(fleet, a_routing_delay_adds_to_latency)
{
    const char *s0[] = {"tenants.[0].router={ policy = \"round_robin\"; }"},
               *s2[] = {"tenants.[0].router={ policy = \"round_robin\"; delay_ms = 1.5; }"};
    json_t *a = cluster(s0, 1), *b = cluster(s2, 1);
    double d = p50(b) - p50(a);
    cr_assert(fabs(d - 1.5) < 0.2, "p50 %g then %g ms", p50(a), p50(b));
    json_decref(a);
    json_decref(b);
}

/* session_affinity: one session, one replica, whatever the load; prefix_aware: the replica
 * holding the prompt's prefix when loads are equal, the least loaded when prefix_weight is 0. */
Test(fleet, session_affinity_and_prefix_aware_choose_as_documented)
{
    const colo_router_ops_t *sa = colo_router_find("session_affinity"),
                            *pa = colo_router_find("prefix_aware");
    cr_assert(sa && pa);
    colo_router_t r = {.ops = sa, .n = 4};
    colo_route_replica_t v[4] = {{0, 0, 0, 0}, {5, 0, 0, 1}, {9, 0, 0, 2}, {1, 0, 0, 3}};
    colo_route_request_t q = {10, 1234, NULL, 0};
    size_t first = sa->pick(&r, &q, v, 4);
    for (int k = 0; k < 10; k++) {
        v[k % 4].outstanding += 7;
        cr_assert_eq(sa->pick(&r, &q, v, 4), first);
    }
    q.session = -1; /* none: the fewest outstanding */
    cr_assert_eq(sa->pick(&r, &q, v, 4), 3);
    colo_router_t p = {.ops = pa, .n = 4, .rng = gsl_rng_alloc(gsl_rng_mt19937)};
    memcpy(p.cfg.param, pa->defaults, sizeof p.cfg.param);
    colo_route_replica_t w[4] = {{2, 0.5, 0, 0}, {2, 0.5, 10, 1}, {2, 0.5, 3, 2}, {2, 0.5, 0, 3}};
    cr_assert_eq(pa->pick(&p, &q, w, 4), 1);
    p.cfg.param[0] = 0;
    w[3].outstanding = 1;
    cr_assert_eq(pa->pick(&p, &q, w, 4), 3);
    if (sa->fini) sa->fini(&r); /* the policies' state, made at their first pick */
    if (pa->fini) pa->fini(&p);
    gsl_rng_free(p.rng);
}

/* The autoscaler keeps between min and max replicas on, scales up under a burst and back down
 * after its window, and the router sends nothing to a replica that is off. Six ResNet-50 copies
 * on one H100 (MPS), MMPP arrivals alternating 50 and 1,500 requests/s. */
Test(fleet, the_autoscaler_stays_within_its_bounds)
{
    const char *sets[] = {
        "tenants.[0].copies=6", "tenants.[0].router=least_outstanding",
        "tenants.[0].arrival={ process = \"mmpp\"; rates = [50.0, 1500.0]; dwell_s = [4.0, 2.0]; }",
        "tenants.[0].autoscale={ min = 2; max = 5; target = 2.0; interval_s = 0.5; window_s = 2.0; "
        "cold_start_s = 1.0; }",
        "duration_s=40"};
    test_run_t r = run_scenario(src_path("scenarios/resnet50_service_h100.cfg"), sets, 5);
    json_t *a = json_object_get(result_tenant(&r, 0), "autoscale");
    cr_assert(json_is_object(a));
    size_t k;
    json_t *p;
    int lo = 99, hi = 0, changes = 0;
    json_array_foreach(json_object_get(a, "replicas_over_time"), k, p)
    {
        int n = (int)json_integer_value(json_array_get(p, 1));
        lo = n < lo ? n : lo;
        hi = n > hi ? n : hi;
        changes++;
    }
    cr_assert_geq(lo, 2, "down to %d", lo);
    cr_assert_leq(hi, 5, "up to %d", hi);
    cr_assert_eq(hi, 5, "bursts of 1,500/s need the most: only %d", hi);
    cr_assert_gt(changes, 4, "%d changes", changes);
    double mean = result_num(a, "mean_replicas");
    cr_assert(mean > 2 && mean < 5, "mean %g", mean);
    /* the sixth copy is beyond max: the router never sends it a request */
    cr_assert_eq(json_integer_value(json_object_get(result_tenant(&r, 5), "arrived")), 0);
    run_free(&r);
}

/* colosim run --timeline on a cluster: a timeline per simulated GPU, requests on their replica's
 * track, and the results the same as without. */
Test(fleet, a_cluster_run_writes_a_timeline_per_gpu)
{
    char dir[] = "/tmp/colosim-fleet-tl-XXXXXX", path[256], name[300];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/tl.json", dir);
    colo_fleet_timeline_t tl = {path, COLO_MS(1000), COLO_MS(1100), true};
    json_t *with = NULL, *without = cluster(NULL, 0);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_cluster_run_timeline(src_path(THREE), NULL, 0, &tl, &with, &err), 0);
    char *a = json_dumps(with, JSON_SORT_KEYS), *b = json_dumps(without, JSON_SORT_KEYS);
    cr_assert_str_eq(a, b);
    for (size_t gi = 0; gi < 3; gi++) {
        colo_fleet_timeline_name(path, gi, name, sizeof name);
        char want[32];
        snprintf(want, sizeof want, "\"svc-r%zu (", gi + 1); /* its track: name (model) */
        FILE *f = fopen(name, "r");
        cr_assert(f, "no %s", name);
        static char text[1 << 20];
        size_t got = fread(text, 1, sizeof text - 1, f);
        text[got] = '\0';
        fclose(f);
        cr_assert(strstr(text, want), "%s has no track %s", name, want);
        remove(name);
    }
    rmdir(dir);
    free(a);
    free(b);
    json_decref(with);
    json_decref(without);
}
