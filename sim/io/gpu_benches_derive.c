/* gpu_benches_derive.c: each benchmark kind's rows to model parameters and measurements. */
#include "alloc.h"
#include "calibration.h"
#include "gpu.h"
#include "gpu_benches_internal.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- scratch and medians ----------------------------------------------------------------- */

/* A derivation's scratch: the rows it selects (n_idx) and the lines it cites (n_lines), both
 * zeroed; on failure neither (NULL) and the error set. */
static int scratch(const struct colo_gb_ctx *c, size_t n_idx, size_t n_lines, int **idx,
                   int **lines)
{
    *idx = colo_calloc(n_idx, sizeof **idx);
    *lines = colo_calloc(n_lines, sizeof **lines);
    if (*idx && *lines) return 0;
    colo_free(*idx);
    colo_free(*lines);
    *idx = *lines = NULL;
    return colo_gb_nomem(c);
}

/* Median of v[idx[k]] (k < n); NAN when n is 0. */
static double median_of(const struct colo_gb_table *t, int col, const int *idx, size_t n)
{
    if (n == 0) return NAN;
    double *x = colo_calloc(n, sizeof *x);
    if (!x) return NAN;
    for (size_t k = 0; k < n; k++)
        x[k] = t->rows[idx[k]].v[col];
    gsl_sort(x, 1, n);
    double m = gsl_stats_median_from_sorted_data(x, 1, n);
    colo_free(x);
    return m;
}

/* Row indices -> their file lines, in place-safe scratch. */
static void to_lines(const struct colo_gb_table *t, const int *idx, size_t n, int *lines)
{
    for (size_t k = 0; k < n; k++)
        lines[k] = t->rows[idx[k]].line;
}

/* ---- the derivations ------------------------------------------------------------------- */

/* gpu-stream: blockSize, threads (SMs x blockSize), occupancy %, then GB/s of init, read,
 * scale, triad and two stencils. Two blocks per SM; one 8-byte element per thread. */
int colo_gb_from_stream(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { BS, THREADS, OCC, INIT, READ, SCALE, TRIAD };
    int sms = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct colo_gb_row *r = &t->rows[i];
        if (!(r->v[BS] >= 1 && r->v[BS] <= 1024) || r->v[BS] != floor(r->v[BS]))
            return colo_gb_row_error(c->err, t, r->line, "blockSize %g is not 1 to 1024 threads",
                                     r->v[BS]);
        double q = r->v[THREADS] / r->v[BS];
        if (!(q >= 1 && q <= 100000) || q != floor(q) || (sms && (int)q != sms))
            return colo_gb_row_error(
                c->err, t, r->line,
                "threads %.0f is not the SM count times blockSize %.0f as in the "
                "rows before",
                r->v[THREADS], r->v[BS]);
        sms = (int)q;
        if (r->v[OCC] <= 0 || r->v[OCC] > 100)
            return colo_gb_row_error(c->err, t, r->line, "occupancy %g %% is not in (0, 100]",
                                     r->v[OCC]);
        for (int k = INIT; k < r->n; k++)
            if (r->v[k] <= 0)
                return colo_gb_row_error(c->err, t, r->line, "bandwidth %g GB/s must be positive",
                                         r->v[k]);
    }
    if (sms != c->gpu->sm.count)
        return colo_gb_row_error(c->err, t, t->rows[0].line,
                                 "measured on a GPU with %d SMs (threads / blockSize); %s has %d",
                                 sms, c->gpu->name, c->gpu->sm.count);
    /* Achievable: the best of the kernels that read and write (scale, triad), as STREAM reports. */
    size_t best = 0;
    int best_col = SCALE;
    double peak_scale = 0;
    for (size_t i = 0; i < t->n; i++) {
        for (int k = SCALE; k <= TRIAD; k++)
            if (t->rows[i].v[k] > t->rows[best].v[best_col]) {
                best = i;
                best_col = k;
            }
        if (t->rows[i].v[SCALE] > peak_scale) peak_scale = t->rows[i].v[SCALE];
    }
    int line = t->rows[best].line;
    char method[512];
    snprintf(method, sizeof method,
             "gpu-stream: the highest bandwidth of the kernels that read and write (scale, "
             "triad) at any occupancy, here %s at %.1f %% occupancy",
             best_col == SCALE ? "scale" : "triad", t->rows[best].v[OCC]);
    int rc = colo_gb_param(c, COLO_CAL_DRAM, t->rows[best].v[best_col], method, t, &line, 1);
    /* Per SM: below half the peak DRAM is not the limit and bandwidth grows with the threads in
     * flight; a line through the origin, extended to full occupancy, is what one SM moves. */
    int *idx, *lines;
    int src = scratch(c, t->n, t->n, &idx, &lines);
    size_t m = 0;
    double sxy = 0, sxx = 0;
    if (!rc) rc = src;
    for (size_t i = 0; !rc && i < t->n; i++)
        if (t->rows[i].v[SCALE] < 0.5 * peak_scale) {
            /* threads resident per SM: two blocks (the %occ column is rounded, 3.125 -> "3") */
            double x = 2 * t->rows[i].v[BS];
            sxy += x * t->rows[i].v[SCALE];
            sxx += x * x;
            idx[m++] = (int)i;
        }
    if (!rc && m < 3)
        rc = colo_gb_row_error(
            c->err, t, t->rows[0].line,
            "only %zu rows below half the peak scale bandwidth: the per-SM rate needs "
            "at least 3",
            m);
    if (!rc) {
        to_lines(t, idx, m, lines);
        rc = colo_gb_param(
            c, COLO_CAL_DRAM_PER_SM, sxy / sxx * c->gpu->sm.max_threads / sms,
            "gpu-stream scale (one read, one write per thread): least-squares line "
            "through the origin of bandwidth against the threads resident per SM (two "
            "blocks), over the rows below half its peak, at the SM's full thread count, "
            "divided by the SMs",
            t, lines, m);
    }
    if (!rc) {
        const struct colo_gb_row *last = &t->rows[t->n - 1];
        rc = colo_gb_measurement(
            c, "dram_stream",
            json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "sm_count", sms, "occupancy_percent",
                      last->v[OCC], "init_gbps", last->v[INIT], "read_gbps", last->v[READ],
                      "scale_gbps", last->v[SCALE], "triad_gbps", last->v[TRIAD]),
            "gpu-stream at the highest occupancy (init stores only, read loads only)", t,
            &last->line, 1);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* Rows (indices) whose column col lies in [lo, hi]. */
static size_t rows_in(const struct colo_gb_table *t, int col, double lo, double hi, int *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[col] >= lo && t->rows[i].v[col] <= hi) idx[m++] = (int)i;
    return m;
}

/* gpu-l2-cache: per-block kB, footprint kB, time, spread, GB/s (counters after). */
int colo_gb_from_l2(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { BLOCK_KB, FOOT_KB, MS, SPREAD, BW };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++) {
        if (t->rows[i].v[BW] <= 0 || t->rows[i].v[FOOT_KB] <= 0)
            return colo_gb_row_error(c->err, t, t->rows[i].line,
                                     "footprint and bandwidth must be positive");
        if (i && t->rows[i].v[FOOT_KB] <= t->rows[i - 1].v[FOOT_KB])
            return colo_gb_row_error(c->err, t, t->rows[i].line,
                                     "footprints must grow from row to row (%.0f kB after %.0f kB)",
                                     t->rows[i].v[FOOT_KB], t->rows[i - 1].v[FOOT_KB]);
    }
    int *idx, *lines;
    if (scratch(c, t->n, t->n, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t np = rows_in(t, FOOT_KB, 0, l2 / 2 / 1024, idx);
    double plateau = median_of(t, BW, idx, np);
    char method[512];
    if (np < 3)
        rc = colo_gb_row_error(c->err, t, t->rows[0].line,
                               "%zu rows with a footprint within half the L2 (%.0f kB): need 3", np,
                               l2 / 2 / 1024);
    if (!rc) {
        to_lines(t, idx, np, lines);
        snprintf(method, sizeof method,
                 "gpu-l2-cache: median bandwidth of the footprints within half the datasheet L2 "
                 "(%.1f MiB)",
                 l2 / 2 / 1048576);
        rc = colo_gb_param(c, COLO_CAL_L2, plateau, method, t, lines, np);
        c->have_l2_file = 1;
    }
    size_t last_plateau = np ? (size_t)idx[np - 1] : 0;
    size_t nd = rc ? 0 : rows_in(t, FOOT_KB, 4 * l2 / 1024, INFINITY, idx);
    double dram = median_of(t, BW, idx, nd);
    if (!rc && nd < 3)
        rc = colo_gb_row_error(c->err, t, t->rows[t->n - 1].line,
                               "%zu rows with a footprint of 4 L2s or more (%.0f kB): need 3", nd,
                               4 * l2 / 1024);
    if (!rc) {
        to_lines(t, idx, nd, lines);
        rc =
            colo_gb_measurement(c, "dram_read_many_loads", json_pack("{s:f}", "gbps", dram),
                                "gpu-l2-cache: median bandwidth of the footprints of 4 L2s or more "
                                "(32 loads in flight per thread)",
                                t, lines, nd);
    }
    /* The knee: where bandwidth has fallen half way from the L2 plateau to DRAM's. */
    double mid = (plateau + dram) / 2, knee = NAN;
    size_t at = 0;
    for (size_t i = last_plateau + 1; !rc && i < t->n && isnan(knee); i++)
        if (t->rows[i].v[BW] < mid) {
            const struct colo_gb_row *a = &t->rows[i - 1], *b = &t->rows[i];
            double f = a->v[BW] > b->v[BW] ? (a->v[BW] - mid) / (a->v[BW] - b->v[BW]) : 0;
            if (f < 0) f = 0;
            knee = a->v[FOOT_KB] + f * (b->v[FOOT_KB] - a->v[FOOT_KB]);
            at = i;
        }
    if (!rc && isnan(knee))
        rc = colo_gb_row_error(
            c->err, t, t->rows[t->n - 1].line,
            "bandwidth never falls half way from the L2 plateau (%.0f GB/s) to DRAM's "
            "(%.0f GB/s)",
            plateau, dram);
    if (!rc) {
        int two[2] = {t->rows[at - 1].line, t->rows[at].line};
        snprintf(method, sizeof method,
                 "gpu-l2-cache: the footprint at which bandwidth has fallen half way from the L2 "
                 "plateau (%.0f GB/s) to DRAM's (%.0f GB/s), interpolated between the rows",
                 plateau, dram);
        rc = colo_gb_param(c, COLO_CAL_L2_CAPACITY, knee * 1024 / 1048576, method, t, two, 2);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-cache: buffer kB, time, spread, GB/s (counters after); one 256-thread block per SM. */
int colo_gb_from_cache(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { KB, MS, SPREAD, BW };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[BW] <= 0 || t->rows[i].v[KB] <= 0)
            return colo_gb_row_error(c->err, t, t->rows[i].line,
                                     "size and bandwidth must be positive");
    int *idx, *lines;
    if (scratch(c, t->n, t->n, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t n1 = rows_in(t, KB, 0, 64, idx);
    double l1 = median_of(t, BW, idx, n1);
    if (n1 < 3)
        rc = colo_gb_row_error(c->err, t, t->rows[0].line, "%zu rows of at most 64 kB: need 3", n1);
    double knee = 0;
    for (size_t i = 0; !rc && i < t->n && knee == 0; i++)
        if (t->rows[i].v[KB] > 64 && t->rows[i].v[BW] < l1 / 2) knee = t->rows[i].v[KB];
    if (!rc && knee == 0)
        rc = colo_gb_row_error(c->err, t, t->rows[t->n - 1].line,
                               "bandwidth never falls below half the L1 plateau (%.0f GB/s)", l1);
    if (!rc) {
        to_lines(t, idx, n1, lines);
        rc = colo_gb_measurement(
            c, "l1", json_pack("{s:f, s:f}", "gbps", l1, "falls_by_kb", knee),
            "gpu-cache: median bandwidth of buffers up to 64 kB (all SMs, one "
            "256-thread block each, re-reading one buffer), and the first buffer "
            "at which it has fallen below half",
            t, lines, n1);
    }
    size_t n2 = rc ? 0 : rows_in(t, KB, 2 * knee, l2 / 2 / 1024, idx);
    if (!rc && n2 < 3)
        rc = colo_gb_row_error(c->err, t, t->rows[0].line,
                               "%zu rows between twice the L1 (%.0f kB) and half the L2: need 3",
                               n2, 2 * knee);
    if (!rc) {
        double l2bw = median_of(t, BW, idx, n2);
        to_lines(t, idx, n2, lines);
        const char *how = "gpu-cache: median bandwidth of the buffers between twice the size at "
                          "which L1 gives out and half the datasheet L2 (one 256-thread block "
                          "per SM)";
        if (c->have_l2_file)
            rc = colo_gb_measurement(c, "l2_one_block_per_sm", json_pack("{s:f}", "gbps", l2bw),
                                     how, t, lines, n2);
        else
            rc = colo_gb_param(c, COLO_CAL_L2, l2bw, how, t, lines, n2);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-latency: loads, clock MHz, buffer kB, time ms, cycles per load. */
int colo_gb_from_latency(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { LOADS, MHZ, KB, MS, CYCLES };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[MHZ] <= 0 || t->rows[i].v[CYCLES] <= 0 || t->rows[i].v[KB] <= 0)
            return colo_gb_row_error(c->err, t, t->rows[i].line,
                                     "clock, buffer and cycles must be positive");
    static const struct {
        const char *name;
        double lo_kb, hi_l2; /* buffer in [lo_kb, hi_l2 x L2] (hi_l2 < 0: no upper bound) */
    } levels[] = {{"l1", 0, 0}, {"l2", 1024, 0.25}, {"dram", 0, -1}};
    int *idx, *lines;
    if (scratch(c, t->n, 3 * t->n, &idx, &lines)) return COLO_ENOMEM;
    json_t *v = json_object();
    if (!v) {
        colo_free(idx);
        colo_free(lines);
        return colo_gb_nomem(c);
    }
    int rc = 0;
    size_t nl = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        double lo = k == 0 ? 0 : k == 1 ? 1024 : 1.5 * l2 / 1024;
        double hi = k == 0 ? 16 : k == 1 ? 0.25 * l2 / 1024 : INFINITY;
        size_t m = rows_in(t, KB, lo, hi, idx);
        if (m < 3) {
            rc = colo_gb_row_error(c->err, t, t->rows[t->n - 1].line,
                                   "%zu rows with buffers of %.0f to %.0f kB (%s): need 3", m, lo,
                                   hi, levels[k].name);
            break;
        }
        double cyc = median_of(t, CYCLES, idx, m), mhz = median_of(t, MHZ, idx, m);
        char key[32];
        snprintf(key, sizeof key, "%s_cycles", levels[k].name);
        json_object_set_new(v, key, json_real(cyc));
        snprintf(key, sizeof key, "%s_ns", levels[k].name);
        json_object_set_new(v, key, json_real(cyc / mhz * 1e3));
        to_lines(t, idx, m, lines + nl);
        nl += m;
    }
    if (!rc) {
        gsl_sort_int(lines, 1, nl);
        rc = colo_gb_measurement(
            c, "latency", v,
            "gpu-latency: median cycles per dependent load of buffers up to 16 kB "
            "(L1), from 1 MiB to a quarter of the datasheet L2 (L2), and of 1.5 L2s "
            "or more (DRAM); ns at the clock of those rows",
            t, lines, nl);
    } else {
        json_decref(v);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-small-kernels: n, traffic kB, then GB/s per block size (1-D); or the edge d of a d x d
 * grid, then GB/s per block shape (2-D, traffic 16 (d-2)^2 B). Per launch: bytes / best GB/s. */
static int launch_us(struct colo_gb_ctx *c, const struct colo_gb_table *t, double *us, int *lines,
                     size_t *nl)
{
    double first = 0;
    double *times = colo_calloc(t->n, sizeof *times);
    if (!times) return colo_gb_nomem(c);
    size_t m = 0;
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const struct colo_gb_row *r = &t->rows[i];
        /* colo_gb_tag_small marks the rows of the 1-D form */
        int oned = r->w[0][0] == 'k';
        double traffic = oned ? 16 * r->v[0] : 16 * (r->v[0] - 2) * (r->v[0] - 2);
        double best = 0;
        for (int k = oned ? 2 : 1; k < r->n; k++)
            if (r->v[k] > best) best = r->v[k];
        if (traffic <= 0 || best <= 0 || (!oned && r->v[0] <= 2)) {
            rc = colo_gb_row_error(c->err, t, r->line, "size and bandwidths must be positive");
            break;
        }
        if (first == 0) first = traffic;
        if (traffic <= 2 * first) {
            times[m] = traffic / (best * 1e3);
            lines[m++] = r->line;
        }
    }
    if (!rc && m < 3)
        rc = colo_gb_row_error(c->err, t, t->rows[0].line,
                               "%zu rows with at most twice the first row's traffic: need 3", m);
    if (!rc) {
        gsl_sort(times, 1, m); /* lines stay in file order */
        *us = gsl_stats_median_from_sorted_data(times, 1, m);
        *nl = m;
    }
    colo_free(times);
    return rc;
}

int colo_gb_from_small(struct colo_gb_ctx *c, const struct colo_gb_table *t, const char *variant)
{
    int *lines = colo_calloc(t->n, sizeof *lines);
    if (!lines) return colo_gb_nomem(c);
    double us = 0;
    size_t nl = 0;
    int rc = launch_us(c, t, &us, lines, &nl);
    const char *how = "gpu-small-kernels: per launch, the smallest kernels' bytes over the best "
                      "bandwidth of any block size, median over the rows with at most twice the "
                      "first row's traffic";
    if (!rc && !*variant)
        rc = colo_gb_param(c, COLO_CAL_LAUNCH_HOST, us, how, t, lines, nl);
    else if (!rc && strcmp(variant, "_graph") == 0)
        rc = colo_gb_param(c, COLO_CAL_LAUNCH_GRAPH, us, how, t, lines, nl);
    else if (!rc) {
        char name[32];
        snprintf(name, sizeof name, "launch%s_us", variant);
        rc = colo_gb_measurement(c, name, json_pack("{s:f}", "us", us), how, t, lines, nl);
    }
    colo_free(lines);
    return rc;
}

/* gpu-roofline: device, blocks, iterations, flop/B, GB/s, GFLOP/s, MHz, W, C. */
int colo_gb_from_roofline(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { DEV, BLOCKS, ITS, INTENSITY, GBPS, GFLOPS, MHZ, WATT, TEMP };
    int best_at[64];
    for (int d = 0; d < 64; d++)
        best_at[d] = -1;
    int *idx, *lines;
    if (scratch(c, t->n, t->n + 64, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t n0 = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const struct colo_gb_row *r = &t->rows[i];
        int d = r->v[DEV] >= 0 && r->v[DEV] < 64 ? (int)r->v[DEV] : -1;
        if (d < 0 || d != r->v[DEV] || r->v[GFLOPS] <= 0 || r->v[MHZ] <= 0)
            rc = colo_gb_row_error(
                c->err, t, r->line,
                "device %g and GFLOP/s, MHz must be a device index (0-63) and positive", r->v[DEV]);
        else if (best_at[d] < 0 || r->v[GFLOPS] > t->rows[best_at[d]].v[GFLOPS])
            best_at[d] = (int)i;
        if (!rc && r->v[ITS] == 0) idx[n0++] = (int)i;
    }
    size_t nd = 0;
    double per_dev[64], mhz[64];
    for (int d = 0; d < 64 && !rc; d++)
        if (best_at[d] >= 0) {
            per_dev[nd] = t->rows[best_at[d]].v[GFLOPS];
            mhz[nd] = t->rows[best_at[d]].v[MHZ];
            lines[nd++] = t->rows[best_at[d]].line;
        }
    if (!rc) {
        gsl_sort(per_dev, 1, nd);
        gsl_sort(mhz, 1, nd);
        double gf = gsl_stats_median_from_sorted_data(per_dev, 1, nd) / c->gpu->sm.count;
        double sheet = colo_gpu_sm_fp32_rate(c->gpu);
        json_t *v = json_pack("{s:f, s:f, s:f, s:f, s:i}", "fp32_gflops_per_sm", gf,
                              "datasheet_gflops_per_sm", sheet, "share_of_datasheet", gf / sheet,
                              "clock_mhz", gsl_stats_median_from_sorted_data(mhz, 1, nd), "devices",
                              (int)nd);
        if (v && n0) {
            json_object_set_new(v, "dram_gbps_no_flops", json_real(median_of(t, GBPS, idx, n0)));
            int *more = lines + nd;
            to_lines(t, idx, n0, more);
        }
        size_t all = nd + n0;
        gsl_sort_int(lines, 1, all);
        rc = colo_gb_measurement(
            c, "fp32_fma", v,
            "gpu-roofline: each device's highest GFLOP/s (chains of FMAs per loaded "
            "value), median over devices, per SM; DRAM GB/s at 0 FMAs. Not applied: "
            "the GPU file's sustained shares already say what a kernel reaches",
            t, lines, all);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-strides: type, pattern, two sizes, cycles per warp load, bytes per cycle per SM, counts. */
int colo_gb_from_strides(struct colo_gb_ctx *c, const struct colo_gb_table *t)
{
    enum { A, B, CYCLES, BPC };
    json_t *v = json_object();
    int lines[2];
    size_t nl = 0;
    if (!v) return colo_gb_nomem(c);
    for (size_t i = 0; i < t->n; i++) {
        const struct colo_gb_row *r = &t->rows[i];
        if (r->n != 7) {
            json_decref(v);
            return colo_gb_row_error(c->err, t, r->line, "expected 7 values, found %d", r->n);
        }
        if (strcmp(r->w[0], "float") && strcmp(r->w[0], "double")) {
            json_decref(v);
            return colo_gb_row_error(c->err, t, r->line, "'%s': the type is float or double",
                                     r->w[0]);
        }
        if (strcmp(r->w[1], "stride") == 0 && r->v[A] == 1 && nl < 2) {
            char key[48];
            snprintf(key, sizeof key, "%s_stride1_bytes_per_cycle_per_sm", r->w[0]);
            if (!json_object_get(v, key)) {
                json_object_set_new(v, key, json_real(r->v[BPC]));
                lines[nl++] = r->line;
            }
        }
    }
    if (nl == 0) {
        json_decref(v);
        return colo_gb_row_error(c->err, t, t->rows[0].line, "no 'stride 1' row");
    }
    if (nl == 2 && lines[0] > lines[1]) {
        int x = lines[0];
        lines[0] = lines[1];
        lines[1] = x;
    }
    return colo_gb_measurement(
        c, "l1_loads", v,
        "gpu-strides: bytes per cycle one SM loads at stride 1 (one 1024-thread "
        "block)",
        t, lines, nl);
}
