/* gpu_benches_internal.h: what gpu_benches.c, gpu_benches_read.c, gpu_benches_derive.c share. */
#ifndef COLO_GPU_BENCHES_INTERNAL_H
#define COLO_GPU_BENCHES_INTERNAL_H

#include "calibration.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_benches.h"

#include <jansson.h>
#include <stddef.h>

#define MAX_NUMS 16

struct colo_gb_row {
    int line;
    int n;              /* numbers */
    double v[MAX_NUMS]; /* in the order printed, units stripped */
    char w[2][16];      /* leading words (gpu-strides: type and pattern) */
};

struct colo_gb_table {
    char path[256];  /* as recorded: "gpu-stream/a100_40.txt" */
    char full[4096]; /* as opened, for messages */
    const char *note;
    size_t n;
    struct colo_gb_row *rows;
};

struct colo_gb_ctx {
    const colo_gb_options_t *o;
    const colo_gpu_t *gpu;
    json_t *params, *meas;
    colo_error_t *err;
    int have_l2_file; /* gpu-l2-cache gave l2.bandwidth_gbps */
};

/* ---- reading a result file (gpu_benches_read.c) ---- */

/* Frees t's rows (t itself is the caller's); t is left empty. */
void colo_gb_table_free(struct colo_gb_table *t);
/* Sets err to COLO_EPARSE at t's file, line: the formatted message; returns COLO_EPARSE. */
int colo_gb_row_error(colo_error_t *err, const struct colo_gb_table *t, int line, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
/* Fills t with the file DIR/KIND/STEM SUFFIX.txt of kind k (o->dir of c), read with that kind's
 * reader into t->rows (colo_gb_table_free them); *found 0 and t empty when there is no such
 * file. 0 or a negative code with c->err set. O(lines). */
int colo_gb_open_table(struct colo_gb_ctx *c, colo_gb_kind_t k, const char *stem,
                       const char *suffix, const char *note, struct colo_gb_table *t, int *found);
/* gpu-small-kernels rows of the 1-D form print the traffic as "NNkB" glued; the 2-D form has
 * no such column. The reader strips units, so look at the file's first row again. */
int colo_gb_tag_small(struct colo_gb_ctx *c, struct colo_gb_table *t);

/* ---- values and their sources (gpu_benches.c) ---- */

/* Sets c->err to out of memory; returns COLO_ENOMEM. */
int colo_gb_nomem(const struct colo_gb_ctx *c);
/* A model parameter: value, unit, the datasheet value it replaces, method and source. */
int colo_gb_param(struct colo_gb_ctx *c, colo_cal_param_t p, double value, const char *method,
                  const struct colo_gb_table *t, const int *lines, size_t n);
/* A value the model does not use, kept with its source: measurements.NAME. */
int colo_gb_measurement(struct colo_gb_ctx *c, const char *name, json_t *values, const char *method,
                        const struct colo_gb_table *t, const int *lines, size_t n);

/* ---- the derivations (gpu_benches_derive.c): each adds the values of one file's rows to c ---- */

/* gpu-stream: blockSize, threads (SMs x blockSize), occupancy %, then GB/s of init, read,
 * scale, triad and two stencils. Two blocks per SM; one 8-byte element per thread. */
int colo_gb_from_stream(struct colo_gb_ctx *c, const struct colo_gb_table *t);
/* gpu-l2-cache: per-block kB, footprint kB, time, spread, GB/s (counters after). */
int colo_gb_from_l2(struct colo_gb_ctx *c, const struct colo_gb_table *t);
/* gpu-cache: buffer kB, time, spread, GB/s (counters after); one 256-thread block per SM. */
int colo_gb_from_cache(struct colo_gb_ctx *c, const struct colo_gb_table *t);
/* gpu-latency: loads, clock MHz, buffer kB, time ms, cycles per load. */
int colo_gb_from_latency(struct colo_gb_ctx *c, const struct colo_gb_table *t);
/* gpu-small-kernels (variant "" or a launch variant "_graph", "_gsync", "_pt"): the time per
 * launch. */
int colo_gb_from_small(struct colo_gb_ctx *c, const struct colo_gb_table *t, const char *variant);
/* gpu-roofline: device, blocks, iterations, flop/B, GB/s, GFLOP/s, MHz, W, C. */
int colo_gb_from_roofline(struct colo_gb_ctx *c, const struct colo_gb_table *t);
/* gpu-strides: type, pattern, two sizes, cycles per warp load, bytes per cycle per SM, counts. */
int colo_gb_from_strides(struct colo_gb_ctx *c, const struct colo_gb_table *t);

#endif
