/* test_metrics.c: exact latency percentiles and the bounded histogram. */
#include "metrics.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

Test(metrics, percentiles_interpolate_between_order_statistics)
{
    colo_samples_t s = {.limit = 1000}; /* kept exactly, on request */
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

Test(metrics, histogram_buckets_cover_every_value_with_bounded_width)
{
    size_t prev = 0;
    for (colo_time_t x = 0; x < 5000000; x += 1 + x / 300) {
        size_t b = colo_hist_bucket(x);
        colo_time_t lo, hi;
        colo_hist_bounds(b, &lo, &hi);
        cr_assert(lo <= x && x < hi, "x=%lld not in bucket %zu [%lld, %lld)", (long long)x, b,
                  (long long)lo, (long long)hi);
        cr_assert_geq(b, prev, "buckets follow the values' order");
        if (x >= 128) cr_assert_leq((double)(hi - lo) / (double)lo, 1.0 / 128 + 1e-12);
        prev = b;
    }
    colo_time_t lo, hi;
    colo_hist_bounds(colo_hist_bucket(INT64_MAX), &lo, &hi);
    cr_assert_lt(colo_hist_bucket(INT64_MAX), COLO_HIST_BUCKETS);
    cr_assert_leq(lo, INT64_MAX);
}

static int cmp_time(const void *a, const void *b)
{
    colo_time_t x = *(const colo_time_t *)a, y = *(const colo_time_t *)b;
    return (x > y) - (x < y);
}

/* Past the exact limit, each percentile is within COLO_HIST_REL_ERROR of the exact one (the
 * same interpolation between the order statistics of ranks floor(q (n - 1)) and the next); the
 * mean, max and count stay exact and the samples are released. */
Test(metrics, histogram_percentiles_are_within_the_stated_error)
{
    enum { N = 200000 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    colo_samples_t s = {.limit = 1000};
    colo_time_t *all = malloc(N * sizeof *all);
    double sum = 0;
    for (int i = 0; i < N; i++) {
        all[i] = (colo_time_t)(gsl_ran_lognormal(r, log(5e6), 0.8)); /* ~5 ms, long tail */
        sum += (double)all[i];
        cr_assert_eq(colo_samples_push(&s, all[i]), 0);
    }
    cr_assert_null(s.v, "the exact samples are released after the switch");
    cr_assert(s.hist);
    size_t chunks = 0;
    for (size_t c = 0; c < COLO_HIST_CHUNKS; c++)
        chunks += s.chunk[c] != NULL;
    cr_assert_leq(chunks, 16, "only the powers of two the samples span: %zu", chunks);
    colo_latency_summary_t l;
    cr_assert_eq(colo_latency_summarise(&s, &l), 0);
    cr_assert_not(l.exact);
    cr_assert_eq(l.n, N);
    qsort(all, N, sizeof *all, cmp_time);
    cr_assert_float_eq(l.mean_ms, sum / N / 1e6, 1e-9);
    cr_assert_float_eq(l.max_ms, (double)all[N - 1] / 1e6, 1e-12);
    cr_assert_leq(COLO_HIST_REL_ERROR, 0.001, "0.1 %% at most");
    const double qs[] = {0.5, 0.9, 0.99, 0.999};
    const double got[] = {l.p50_ms, l.p90_ms, l.p99_ms, l.p999_ms};
    for (int k = 0; k < 4; k++) {
        double rk = qs[k] * (N - 1), f = rk - floor(rk);
        size_t i = (size_t)floor(rk);
        double want = ((1 - f) * (double)all[i] + f * (double)all[i + 1]) / 1e6;
        cr_assert_leq(fabs(got[k] - want) / want, COLO_HIST_REL_ERROR, "q=%g: %g vs %g", qs[k],
                      got[k], want);
    }
    free(all);
    gsl_rng_free(r);
    colo_samples_fini(&s);
}

Test(metrics, below_the_limit_percentiles_are_exact)
{
    colo_samples_t s = {.limit = 100};
    for (int i = 1; i <= 100; i++)
        colo_samples_push(&s, COLO_MS(i));
    colo_latency_summary_t l;
    colo_latency_summarise(&s, &l);
    cr_assert(l.exact);
    cr_assert_float_eq(l.p99_ms, 99.01, 1e-9);
    colo_samples_push(&s, COLO_MS(101)); /* the 101st switches to the histogram */
    colo_latency_summarise(&s, &l);
    cr_assert_not(l.exact);
    cr_assert_eq(l.n, 101);
    colo_samples_fini(&s);
}
