/* plot.h: figures of studies and runs as SVG and PNG, drawn by gnuplot (docs/studies.md). */
#ifndef COLO_PLOT_H
#define COLO_PLOT_H

#include "errors.h"

#include <jansson.h>

/* A sweep's metric y ("p50", "p90", "p99", "p999", "mean", "throughput", "slo_attainment")
 * against axis x, one line per value of axis by (NULL: one line), one panel per tenant, with
 * each tenant's SLO drawn on latency plots. Writes BASE.svg and BASE.png, each whole or not at
 * all. 0 or a negative code with err set (gnuplot missing, nothing numeric on x, ...). */
int colo_plot_sweep(json_t *sweep, const char *x, const char *by, const char *y, const char *base,
                    colo_error_t *err);

/* A search's capacity per point, as bars labelled with the point's values. */
int colo_plot_search(json_t *search, const char *base, colo_error_t *err);

/* One run's latency distribution per tenant, from the percentiles in its results (p50 ... max),
 * as a CDF with a log-scale tail axis. */
int colo_plot_cdf(json_t *results, const char *base, colo_error_t *err);

#endif
