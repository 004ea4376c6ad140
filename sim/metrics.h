/* metrics.h: latency samples and their exact summary (mean and percentiles). */
#ifndef COLO_METRICS_H
#define COLO_METRICS_H

#include "simtime.h"

#include <stddef.h>

/* A growable list of latencies; caller-owned (colo_samples_fini). */
typedef struct colo_samples {
    colo_time_t *v;
    size_t n, cap;
} colo_samples_t;

/* Appends one sample. 0 or COLO_ENOMEM. Amortised O(1). */
int colo_samples_push(colo_samples_t *s, colo_time_t x);
void colo_samples_fini(colo_samples_t *s);

typedef struct colo_latency_summary {
    size_t n;
    double mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms;
} colo_latency_summary_t;

/* Exact summary of all samples: percentiles by linear interpolation between order statistics
 * (gsl_stats_quantile_from_sorted_data). All zero when there are no samples. Sorts a copy;
 * O(n log n) time, O(n) memory. 0 or COLO_ENOMEM. */
int colo_latency_summarise(const colo_samples_t *s, colo_latency_summary_t *out);

#endif
