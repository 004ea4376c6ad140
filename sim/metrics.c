/* metrics.c: latency samples and their exact percentiles (GSL). */
#include "metrics.h"
#include "alloc.h"
#include "errors.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <string.h>

int colo_samples_push(colo_samples_t *s, colo_time_t x)
{
    if (colo_grow((void **)&s->v, &s->cap, s->n + 1, sizeof *s->v)) return COLO_ENOMEM;
    s->v[s->n++] = x;
    return 0;
}

void colo_samples_fini(colo_samples_t *s)
{
    colo_free(s->v);
    memset(s, 0, sizeof *s);
}

int colo_latency_summarise(const colo_samples_t *s, colo_latency_summary_t *out)
{
    memset(out, 0, sizeof *out);
    if (s->n == 0) return 0;
    double *ms = colo_malloc(s->n * sizeof *ms);
    if (!ms) return COLO_ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        ms[i] = COLO_TO_MS(s->v[i]);
    gsl_sort(ms, 1, s->n);
    out->n = s->n;
    out->mean_ms = gsl_stats_mean(ms, 1, s->n);
    out->p50_ms = gsl_stats_quantile_from_sorted_data(ms, 1, s->n, 0.50);
    out->p90_ms = gsl_stats_quantile_from_sorted_data(ms, 1, s->n, 0.90);
    out->p99_ms = gsl_stats_quantile_from_sorted_data(ms, 1, s->n, 0.99);
    out->p999_ms = gsl_stats_quantile_from_sorted_data(ms, 1, s->n, 0.999);
    out->max_ms = ms[s->n - 1];
    colo_free(ms);
    return 0;
}
