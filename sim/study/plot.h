/* plot.h: figures of studies and runs as SVG and PNG, drawn by gnuplot (docs/studies.md). */
#ifndef COLO_PLOT_H
#define COLO_PLOT_H

#include "errors.h"

#include <jansson.h>

/* Every figure is titled in words: the quantity against the keys (load_scale as "load",
 * sharing.mode as "sharing mechanism", ...; an unknown key as itself), the scenario by its
 * description (else its file's name without folder or .cfg) and the GPU by its description's
 * full name (read from the GPU's file; the name as given when none is found). Legends sit
 * outside the data. Each writes BASE.svg and BASE.png, each whole or not at all, by running
 * $COLOSIM_GNUPLOT (default gnuplot) with the script on its standard input. 0 or a negative
 * code with err set (gnuplot missing or failing, nothing to draw, ...). Borrow their JSON. */

/* A sweep's metric y ("p50", "p90", "p99", "p999", "mean", "throughput", "slo_attainment",
 * "gpus" for a cluster's) against axis x, one line per value of axis by (NULL: one line), each
 * with its own colour, dash and point type (drawn widest first, so equal series stay visible),
 * one panel per tenant, all panels on one y range, with each tenant's SLO on latency plots and
 * 99 % on attainment plots. A point whose run left requests unfinished (in_flight > 0) is
 * circled as overloaded, a series of its own. */
int colo_plot_sweep(json_t *sweep, const char *x, const char *by, const char *y, const char *base,
                    colo_error_t *err);

/* A search's capacity per point as bars grouped by GPU (else by the first of several axes),
 * one colour per value of the other axes, each bar with its value written over it and a
 * whisker: the confidence interval of the replications' own capacities (a file without them:
 * the bisection's bracket, capacity to capacity x (1 + tolerance)); "< lo", ">= hi" and
 * "cannot run" where the search says so. The scenario's description is read from its file. */
int colo_plot_search(json_t *search, const char *base, colo_error_t *err);

/* One run's latency distribution per tenant, from latency_ms.cdf in its results (else, for
 * older files, its percentiles p50 ... max) on a tail-stretched axis, with each SLO as a vertical line and the tenant's share within it
 * (slo_attainment) marked on that line; a tenant with requests left at the end is marked as
 * overloaded. */
int colo_plot_cdf(json_t *results, const char *base, colo_error_t *err);

#endif
