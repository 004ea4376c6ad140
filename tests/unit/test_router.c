/* test_router.c: a service's requests routed among its copies on one GPU (issue 42, first part;
 * router.h): one arrival stream dealt out, each policy as it says. */
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(router, .init = test_init);

#define SERVICE "scenarios/resnet50_service_h100.cfg"

/* Six copies of ResNet-50 under MPS sharing 600 requests/s by policy pol. */
static test_run_t routed(const char *pol)
{
    char set[64];
    snprintf(set, sizeof set, "tenants.[0].router=%s", pol);
    const char *sets[] = {"tenants.[0].copies=6", set, "tenants.[0].arrival.rate=600",
                          "duration_s=10"};
    return run_scenario(src_path(SERVICE), sets, 4);
}

/* The fewest and the most requests the router sent one of the six copies. */
static void spread(const test_run_t *r, json_int_t *lo, json_int_t *hi)
{
    *lo = -1, *hi = 0;
    for (size_t i = 0; i < 6; i++) {
        json_int_t a = json_integer_value(json_object_get(result_tenant(r, i), "arrived"));
        *lo = *lo < 0 || a < *lo ? a : *lo;
        *hi = a > *hi ? a : *hi;
    }
}

static double worst_p99(const test_run_t *r)
{
    double w = 0;
    for (size_t i = 0; i < 6; i++)
        w = fmax(w, result_num(json_object_get(result_tenant(r, i), "latency_ms"), "p99"));
    return w;
}

/* Round robin deals the requests in turn: no copy gets more than one more than another, and they
 * are the service's one stream (each copy its name, its service and its router). */
Test(router, round_robin_deals_in_turn)
{
    test_run_t r = routed("round_robin");
    json_int_t lo, hi, sum = 0;
    spread(&r, &lo, &hi);
    for (size_t i = 0; i < 6; i++) {
        json_t *t = result_tenant(&r, i);
        sum += json_integer_value(json_object_get(t, "arrived"));
        cr_assert_str_eq(json_string_value(json_object_get(t, "service")), "resnet50");
        cr_assert_str_eq(json_string_value(json_object_get(t, "router")), "round_robin");
    }
    cr_assert_leq(hi - lo, 1, "arrivals %lld to %lld", (long long)lo, (long long)hi);
    cr_assert(fabs((double)sum / 9.0 - 600.0) < 25.0, "%lld requests in 9 s", (long long)sum);
    run_free(&r);
}

/* Random splits unevenly, and its worst tail is worse than that of the policies that look at
 * the replicas (least_outstanding, power_of_two). */
Test(router, policies_that_look_at_the_replicas_beat_random)
{
    test_run_t rnd = routed("random"), lor = routed("least_outstanding"),
               p2 = routed("power_of_two");
    json_int_t lo, hi;
    spread(&rnd, &lo, &hi);
    cr_assert_gt(hi - lo, 20, "random dealt %lld to %lld", (long long)lo, (long long)hi);
    cr_assert_lt(worst_p99(&lor), worst_p99(&rnd), "least_outstanding %g, random %g",
                 worst_p99(&lor), worst_p99(&rnd));
    cr_assert_lt(worst_p99(&p2), worst_p99(&rnd), "power_of_two %g, random %g", worst_p99(&p2),
                 worst_p99(&rnd));
    run_free(&rnd);
    run_free(&lor);
    run_free(&p2);
}

/* Least outstanding sends each request to the replica with the fewest in the system (ties in
 * turn), so equal replicas' arrivals differ by little. */
Test(router, least_outstanding_keeps_the_replicas_even)
{
    test_run_t r = routed("least_outstanding");
    json_int_t lo, hi;
    spread(&r, &lo, &hi);
    cr_assert_leq(hi - lo, 5, "arrivals %lld to %lld", (long long)lo, (long long)hi);
    run_free(&r);
}
