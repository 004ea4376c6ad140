/* kernel_check.h: the kernel model checked on NeuSight's single-op measurements (ASPLOS'25,
 * sitar-lab/NeuSight, MIT): for every ordered pair of the GPUs measured, each op's time on the
 * target predicted from its time on the source, as colosim moves a traced kernel between GPUs
 * (`colosim validate --kernels DIR`, docs/validation.md "Kernels across GPUs"). */
#ifndef COLO_KERNEL_CHECK_H
#define COLO_KERNEL_CHECK_H

#include "errors.h"
#include "import_neusight.h"

#include <stdbool.h>
#include <stdio.h>

#define COLO_KCHECK_MAX_GPUS 8

/* One op compared: its row on the source GPU, its kernel time there and on the target, and
 * the time predicted on the target from the source. */
typedef struct colo_kpick {
    const colo_ns_table_t *table;
    const colo_ns_row_t *row;
    double src_ns, dst_ns, pred_ns;
} colo_kpick_t;

/* One cell of the table: ops of one class moved from GPU src to GPU dst. */
typedef struct colo_kcell {
    size_t n;             /* ops compared */
    double median, p90;   /* of |predicted / measured - 1| */
    double signed_median; /* of predicted / measured - 1 */
    colo_kpick_t *picks;  /* the n ops */
    size_t cap;
} colo_kcell_t;

typedef struct colo_kcheck {
    size_t n_gpus;
    char *device[COLO_KCHECK_MAX_GPUS]; /* NeuSight's name */
    char *gpu[COLO_KCHECK_MAX_GPUS];    /* colosim's GPU file */
    size_t n_tables;
    colo_ns_table_t **tables;
    size_t host_bound; /* rows left out: the host's time, not the kernel's (kernel_check.c) */
    size_t rows;       /* rows read */
    FILE *dump;        /* every comparison as CSV, when set */
    colo_kcell_t cell[COLO_KCHECK_MAX_GPUS][COLO_KCHECK_MAX_GPUS][COLO_NS_CLASSES];
} colo_kcheck_t;

/* The colosim GPU file of a NeuSight device name ("Tesla T4" -> "tesla-t4"); NULL if none. */
const char *colo_kcheck_gpu_of(const char *device);

/* A NeuSight latency as the kernel's time: the latency less half the host's time per op on
 * that machine (the table's shortest latency, host), or -1 when the latency is under three
 * times host (the host's time, not the kernel's). */
double colo_kcheck_kernel_ns(double latency_ns, double host_ns);

/* Reads every NeuSight table (*.csv, *.csv.gz) in dir and predicts each op on every other GPU
 * of its op from each GPU measured. *out is new (colo_kcheck_free). */
int colo_kcheck_run(const char *dir, colo_kcheck_t **out, colo_error_t *err);
void colo_kcheck_free(colo_kcheck_t *k);

/* Writes the validation suite's "kernels" cases: for every cell of at least 20 ops, a trace of
 * up to per_cell of them on the source GPU (evenly spaced by their time there, 5th to 95th
 * percentile) into dir/neusight_SRC_to_DST_CLASS.json, and one case per trace into cfg, whose
 * published figure is the sum of the same ops' kernel times on the target. 0 or an error naming the
 * file. */
int colo_kcheck_derive(const colo_kcheck_t *k, const char *dir, const char *rel, size_t per_cell,
                       FILE *cfg, colo_error_t *err);

/* The table: one row per pair and class with ops, median and p90 |error|, signed median;
 * markdown when md. */
void colo_kcheck_print(const colo_kcheck_t *k, FILE *f, bool md);

#endif
