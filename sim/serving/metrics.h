/* metrics.h: latency samples and their summary (mean and percentiles): from a log-linear
 * histogram of bounded memory and stated error, or exact up to a number of samples asked for. */
#ifndef COLO_METRICS_H
#define COLO_METRICS_H

#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sub-buckets per power of two of the histogram: 2^COLO_HIST_SUB_BITS. A bucket spans at most
 * 1/512 of its lower edge, so a value read at the bucket's middle is within 1/1024 (0.098 %) of
 * any value in it: every percentile within COLO_HIST_REL_ERROR of the exact one. */
#define COLO_HIST_SUB_BITS 9
#define COLO_HIST_BUCKETS ((64 - COLO_HIST_SUB_BITS) << COLO_HIST_SUB_BITS)
#define COLO_HIST_REL_ERROR (1.0 / (double)(2 << COLO_HIST_SUB_BITS))
/* The histogram's buckets come in chunks of one power of two (4 KiB), made when first used: a
 * tenant whose latencies span four decades holds 14 of them (56 KiB), however long it runs. */
#define COLO_HIST_CHUNKS (64 - COLO_HIST_SUB_BITS)

/* Latencies (non-negative): the first limit kept one by one (limit 0, the default: none), then
 * counted in the histogram. Caller-owned (colo_samples_fini); zero-initialised is ready. */
typedef struct colo_samples {
    colo_time_t *v; /* exact samples, while !hist */
    size_t n, cap;
    size_t limit;                           /* exact samples kept before the histogram */
    bool hist;                              /* counting in the histogram */
    uint64_t *chunk[COLO_HIST_CHUNKS];      /* counts per bucket, a power of two each */
    uint64_t count;                         /* every sample, both phases */
    double sum_ns;
    colo_time_t min, max;
} colo_samples_t;

/* Appends one sample (negative values count as 0). 0 or COLO_ENOMEM. Amortised O(1). */
int colo_samples_push(colo_samples_t *s, colo_time_t x);
void colo_samples_fini(colo_samples_t *s);
/* Adds every sample of src to dst (a histogram's as the middles of their buckets, within
 * COLO_HIST_REL_ERROR): the latencies of a service's replicas as one. Count, sum, minimum and
 * maximum exact. 0 or COLO_ENOMEM. */
int colo_samples_merge(colo_samples_t *dst, const colo_samples_t *src);

/* Histogram bucket of x >= 0, and the bucket's bounds [lo, hi). Values below 2^9 ns have a
 * bucket each. */
size_t colo_hist_bucket(colo_time_t x);
void colo_hist_bounds(size_t b, colo_time_t *lo, colo_time_t *hi);

typedef struct colo_latency_summary {
    size_t n;
    bool exact; /* false: percentiles from the histogram (within COLO_HIST_REL_ERROR) */
    double mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms;
} colo_latency_summary_t;

/* Summary of all samples. Percentiles by linear interpolation between the order statistics of
 * ranks floor(q (n - 1)) and the next (gsl_stats_quantile_from_sorted_data's rule): exact
 * samples sorted (a copy: O(n log n), O(n) memory), or each order statistic read as the middle
 * of its histogram bucket, clamped to the smallest and largest sample (within
 * COLO_HIST_REL_ERROR of the exact percentile; O(buckets used)). Mean and max are exact either
 * way. All zero when there are no samples. 0 or COLO_ENOMEM. */
int colo_latency_summarise(const colo_samples_t *s, colo_latency_summary_t *out);

/* The order statistics of ranks k[0..n) (0-based: k = 0 is the smallest; each < count) into
 * out[]: exact while the samples are, else the middle of the bucket holding the rank, clamped to
 * the smallest and largest sample (within COLO_HIST_REL_ERROR). 0, COLO_EINVAL (a rank not below
 * count) or COLO_ENOMEM. Exact: sorts a copy, O(count log count); histogram: O(n buckets). */
int colo_samples_ranks(const colo_samples_t *s, const uint64_t *k, size_t n, colo_time_t *out);

#endif
