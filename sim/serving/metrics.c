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

/* Counts x in its bucket, making the bucket's chunk when first used. 0 or COLO_ENOMEM. */
static int hist_add(colo_samples_t *s, colo_time_t x)
{
    size_t b = colo_hist_bucket(x), c = b >> COLO_HIST_SUB_BITS;
    if (!s->chunk[c] && !(s->chunk[c] = colo_calloc(SUB, sizeof *s->chunk[c]))) return COLO_ENOMEM;
    s->chunk[c][b & (SUB - 1)]++;
    return 0;
}

static int to_histogram(colo_samples_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (hist_add(s, s->v[i])) return COLO_ENOMEM;
    colo_free(s->v);
    s->v = NULL;
    s->n = s->cap = 0;
    s->hist = true;
    return 0;
}

int colo_samples_push(colo_samples_t *s, colo_time_t x)
{
    if (x < 0) x = 0;
    if (!s->hist) {
        if (s->n == s->limit) {
            if (to_histogram(s)) return COLO_ENOMEM;
        } else if (colo_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) {
            return COLO_ENOMEM;
        }
    }
    if (s->hist) {
        if (hist_add(s, x)) return COLO_ENOMEM;
    } else {
        s->v[s->n++] = x;
    }
    if (s->count == 0 || x < s->min) s->min = x;
    if (s->count == 0 || x > s->max) s->max = x;
    s->count++;
    s->sum_ns += (double)x;
    return 0;
}

int colo_samples_merge(colo_samples_t *dst, const colo_samples_t *src)
{
    if (!src->count) return 0;
    colo_time_t lo0 = dst->count ? dst->min : src->min, hi0 = dst->count ? dst->max : src->max;
    double sum0 = dst->sum_ns;
    for (size_t i = 0; !src->hist && i < src->n; i++)
        if (colo_samples_push(dst, src->v[i])) return COLO_ENOMEM;
    for (size_t c = 0; src->hist && c < COLO_HIST_CHUNKS; c++)
        for (size_t j = 0; src->chunk[c] && j < SUB; j++) {
            colo_time_t lo, hi;
            colo_hist_bounds(c * SUB + j, &lo, &hi);
            colo_time_t mid = lo + (hi - lo) / 2;
            mid = mid < src->min ? src->min : mid > src->max ? src->max : mid;
            for (uint64_t k = 0; k < src->chunk[c][j]; k++)
                if (colo_samples_push(dst, mid)) return COLO_ENOMEM;
        }
    dst->sum_ns = sum0 + src->sum_ns; /* the mean, minimum and maximum stay exact */
    dst->min = src->min < lo0 ? src->min : lo0;
    dst->max = src->max > hi0 ? src->max : hi0;
    return 0;
}

void colo_samples_fini(colo_samples_t *s)
{
    colo_free(s->v);
    for (size_t c = 0; c < COLO_HIST_CHUNKS; c++)
        colo_free(s->chunk[c]);
    memset(s, 0, sizeof *s);
}

/* The histogram's values of the order statistics of ranks k[0..n) (ascending, each < count):
 * the middle of the bucket holding each, clamped to the smallest and largest sample. One pass
 * over the chunks in use. */
static void hist_ranks(const colo_samples_t *s, const uint64_t *k, size_t n, double *out)
{
    uint64_t seen = 0;
    size_t i = 0;
    for (size_t c = 0; c < COLO_HIST_CHUNKS && i < n; c++) {
        if (!s->chunk[c]) continue;
        for (size_t j = 0; j < SUB && i < n; j++) {
            seen += s->chunk[c][j];
            while (i < n && seen > k[i]) {
                colo_time_t lo, hi;
                colo_hist_bounds(c * SUB + j, &lo, &hi);
                double mid = c == 0 ? (double)lo : 0.5 * ((double)lo + (double)hi);
                out[i++] = fmin(fmax(mid, (double)s->min), (double)s->max);
            }
        }
    }
    for (; i < n; i++)
        out[i] = (double)s->max;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* hist_ranks for ranks in any order. 0 or COLO_ENOMEM. */
static int hist_ranks_any(const colo_samples_t *s, const uint64_t *k, size_t n, double *out)
{
    uint64_t *sorted = colo_malloc(n * sizeof *sorted);
    double *v = colo_malloc(n * sizeof *v);
    if (!sorted || !v) {
        colo_free(sorted);
        colo_free(v);
        return COLO_ENOMEM;
    }
    memcpy(sorted, k, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    hist_ranks(s, sorted, n, v);
    for (size_t i = 0; i < n; i++)
        out[i] = v[(const uint64_t *)bsearch(&k[i], sorted, n, sizeof *sorted, cmp_u64) - sorted];
    colo_free(sorted);
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
    out->exact = !s->hist;
    if (s->hist) { /* gsl_stats_quantile_from_sorted_data's rule on the buckets' values */
        uint64_t k[8];
        double f[4], v[8];
        for (size_t j = 0; j < 4; j++) {
            double r = qs[j] * (double)(s->count - 1);
            k[2 * j] = (uint64_t)floor(r);
            k[2 * j + 1] = k[2 * j] + 1 < s->count ? k[2 * j] + 1 : k[2 * j];
            f[j] = r - floor(r);
        }
        int rc = hist_ranks_any(s, k, 8, v); /* p99's and p99.9's may share a rank */
        if (rc) return rc;
        for (size_t j = 0; j < 4; j++)
            *dst[j] = ((1 - f[j]) * v[2 * j] + f[j] * v[2 * j + 1]) / 1e6;
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

static int cmp_time(const void *a, const void *b)
{
    colo_time_t x = *(const colo_time_t *)a, y = *(const colo_time_t *)b;
    return (x > y) - (x < y);
}

int colo_samples_ranks(const colo_samples_t *s, const uint64_t *k, size_t n, colo_time_t *out)
{
    for (size_t i = 0; i < n; i++)
        if (k[i] >= s->count) return COLO_EINVAL;
    if (n == 0) return 0;
    if (s->hist) {
        double *v = colo_malloc(n * sizeof *v);
        int rc = v ? hist_ranks_any(s, k, n, v) : COLO_ENOMEM;
        for (size_t i = 0; !rc && i < n; i++)
            out[i] = colo_time_from_ns(v[i]);
        colo_free(v);
        return rc;
    }
    colo_time_t *v = colo_malloc(s->n * sizeof *v);
    if (!v) return COLO_ENOMEM;
    memcpy(v, s->v, s->n * sizeof *v);
    qsort(v, s->n, sizeof *v, cmp_time);
    for (size_t i = 0; i < n; i++)
        out[i] = v[k[i]];
    colo_free(v);
    return 0;
}
