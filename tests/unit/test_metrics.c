/* test_metrics.c: exact latency percentiles. */
#include "metrics.h"

#include <criterion/criterion.h>

Test(metrics, percentiles_interpolate_between_order_statistics)
{
    colo_samples_t s = {0};
    for (int i = 100; i >= 1; i--)
        colo_samples_push(&s, COLO_MS(i)); /* unsorted on purpose */
    colo_latency_summary_t l;
    cr_assert_eq(colo_latency_summarise(&s, &l), 0);
    cr_assert_eq(l.n, 100);
    cr_assert_float_eq(l.mean_ms, 50.5, 1e-9);
    cr_assert_float_eq(l.p50_ms, 50.5, 1e-9);
    cr_assert_float_eq(l.p90_ms, 90.1, 1e-9);
    cr_assert_float_eq(l.p99_ms, 99.01, 1e-9);
    cr_assert_float_eq(l.p999_ms, 99.901, 1e-9);
    cr_assert_float_eq(l.max_ms, 100, 1e-9);
    cr_assert_eq(s.v[0], COLO_MS(100), "the samples themselves are not reordered");
    colo_samples_fini(&s);
}

Test(metrics, empty_and_single)
{
    colo_samples_t s = {0};
    colo_latency_summary_t l;
    cr_assert_eq(colo_latency_summarise(&s, &l), 0);
    cr_assert_eq(l.n, 0);
    cr_assert_float_eq(l.p99_ms, 0, 0);
    colo_samples_push(&s, 1234567);
    colo_latency_summarise(&s, &l);
    cr_assert_float_eq(l.p50_ms, 1.234567, 1e-12);
    cr_assert_float_eq(l.p999_ms, 1.234567, 1e-12);
    colo_samples_fini(&s);
}
