/* metrics.c: latency samples, exact percentiles (GSL) and the log-linear histogram. */
#include "metrics.h"
#include "alloc.h"
#include "errors.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUB (1 << COLO_HIST_SUB_BITS)

size_t colo_hist_bucket(colo_time_t x)
{
    uint64_t v = x > 0 ? (uint64_t)x : 0;
    if (v < SUB) return (size_t)v;
    int e = 63 - __builtin_clzll(v); /* >= COLO_HIST_SUB_BITS */
    int shift = e - COLO_HIST_SUB_BITS;
    return (size_t)(shift + 1) * SUB + (size_t)((v >> shift) & (SUB - 1));
}

void colo_hist_bounds(size_t b, colo_time_t *lo, colo_time_t *hi)
{
    if (b < SUB) {
        *lo = (colo_time_t)b;
        *hi = (colo_time_t)b + 1;
        return;
    }
    int shift = (int)(b / SUB) - 1;
    uint64_t sub = b % SUB;
    *lo = (colo_time_t)((SUB + sub) << shift);
    *hi = (colo_time_t)((SUB + sub + 1) << shift);
}

static int to_histogram(colo_samples_t *s)
{
    s->hist = colo_calloc(COLO_HIST_BUCKETS, sizeof *s->hist);
    if (!s->hist) return COLO_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        s->hist[colo_hist_bucket(s->v[i])]++;
    colo_free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
    return 0;
}

int colo_samples_push(colo_samples_t *s, colo_time_t x)
{
    if (x < 0) x = 0;
    if (!s->hist) {
        size_t limit = s->limit ? s->limit : COLO_EXACT_SAMPLES_DEFAULT;
        if (s->n == limit) {
            if (to_histogram(s)) return COLO_ENOMEM;
        } else if (colo_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
            return COLO_ENOMEM;
        }
    }
    if (s->hist)
        s->hist[colo_hist_bucket(x)]++;
    else
        s->v[s->n++] = x;
    if (s->count == 0 || x < s->min) s->min = x;
    if (s->count == 0 || x > s->max) s->max = x;
    s->count++;
    s->sum_ns += (double)x;
    return 0;
}

void colo_samples_fini(colo_samples_t *s)
{
    colo_free(s->v);
    colo_free(s->hist);
    memset(s, 0, sizeof *s);
}

/* The histogram's value of the order statistic of rank rank (0-based): the middle of the
 * bucket holding it, clamped to the smallest and largest sample. */
static double hist_rank(const colo_samples_t *s, uint64_t rank)
{
    uint64_t seen = 0;
    for (size_t b = 0; b < COLO_HIST_BUCKETS; b++) {
        seen += s->hist[b];
        if (seen > rank) {
            colo_time_t lo, hi;
            colo_hist_bounds(b, &lo, &hi);
            double mid = b < SUB ? (double)lo : 0.5 * ((double)lo + (double)hi);
            if (mid < (double)s->min) mid = (double)s->min;
            if (mid > (double)s->max) mid = (double)s->max;
            return mid;
        }
    }
    return (double)s->max;
}

/* The histogram's value at quantile q: the order statistic of rank floor(q (count - 1)). */
static double hist_quantile(const colo_samples_t *s, double q)
{
    return hist_rank(s, (uint64_t)floor(q * (double)(s->count - 1)));
}

static int cmp_time(const void *a, const void *b)
{
    colo_time_t x = *(const colo_time_t *)a, y = *(const colo_time_t *)b;
    return (x > y) - (x < y);
}

int colo_samples_ranks(const colo_samples_t *s, const uint64_t *k, size_t n, colo_time_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (k[i] >= s->count) return COLO_EINVAL;
    if (s->hist) {
        for (size_t i = 0; i < n; i++)
            out[i] = (colo_time_t)llround(hist_rank(s, k[i]));
        return 0;
    }
    if (n == 0) return 0;
    colo_time_t *v = colo_malloc(s->n * sizeof *v);
    if (!v) return COLO_ENOMEM;
    memcpy(v, s->v, s->n * sizeof *v);
    qsort(v, s->n, sizeof *v, cmp_time);
    for (size_t i = 0; i < n; i++)
        out[i] = v[k[i]];
    colo_free(v);
    return 0;
}

int colo_latency_summarise(const colo_samples_t *s, colo_latency_summary_t *out)
{
    static const double qs[] = {0.50, 0.90, 0.99, 0.999};
    double *dst[] = {&out->p50_ms, &out->p90_ms, &out->p99_ms, &out->p999_ms};
    memset(out, 0, sizeof *out);
    if (s->count == 0) return 0;
    out->n = (size_t)s->count;
    out->mean_ms = s->sum_ns / (double)s->count / 1e6;
    out->max_ms = COLO_TO_MS(s->max);
    out->exact = s->hist == NULL;
    if (s->hist) {
        for (size_t k = 0; k < 4; k++)
            *dst[k] = hist_quantile(s, qs[k]) / 1e6;
        return 0;
    }
    double *ms = colo_malloc(s->n * sizeof *ms);
    if (!ms) return COLO_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        ms[i] = COLO_TO_MS(s->v[i]);
    gsl_sort(ms, 1, s->n);
    for (size_t k = 0; k < 4; k++)
        *dst[k] = gsl_stats_quantile_from_sorted_data(ms, 1, s->n, qs[k]);
    colo_free(ms);
    return 0;
}
