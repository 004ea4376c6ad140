/* cmd_trace_kernels.h: colosim trace FILE --against REAL --kernels: each of REAL's kernels paired
 * with one of FILE's, and predicted against measured per kernel (docs/traces.md, "Predicted
 * against measured"). */
#ifndef COLO_CMD_TRACE_KERNELS_H
#define COLO_CMD_TRACE_KERNELS_H

#include "errors.h"
#include "gpu.h"
#include "kernel_class.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>

#define COLO_CLI_UNPAIRED ((size_t)-1)

/* Which kernel of FILE each kernel of REAL stands for. Kernels are counted from 0 in trace
 * order, copies left out; real_op and file_op give each one's index in its trace's ops. */
typedef struct colo_cli_pairing {
    size_t n_real, n_file;
    size_t *real_op, *file_op;
    size_t *partner;   /* per kernel of REAL: its kernel of FILE, or COLO_CLI_UNPAIRED */
    bool *file_paired; /* per kernel of FILE */
    size_t paired;     /* kernels of REAL with a partner */
    size_t renamed;    /* of them, paired with a kernel of another (short) name */
    bool in_order;     /* both have as many kernels: the i-th with the i-th */
} colo_cli_pairing_t;

/* Pairs real's kernels with file's: in order when both have as many kernels, else by the
 * alignment of docs/traces.md. Errors (COLO_EINVAL, naming real's file) when the traces are of
 * two models, when no kernel pairs, or when they are too long to align. O(n_real x n_file)
 * time and n_real x n_file / 4 bytes where aligned, O(n) in order. p is freed on error. */
int colo_cli_trace_pair(const colo_trace_t *file, const colo_trace_t *real, colo_cli_pairing_t *p,
                        colo_error_t *err);
void colo_cli_pairing_free(colo_cli_pairing_t *p);

/* Prints the per-kernel table, its summary and the unpaired kernels (csv: only the table, as
 * CSV, and a note of the unpaired on standard error). pred_ns and pred_math: per kernel of
 * file, its predicted duration on dst and the class it runs as there. 0 or COLO_ENOMEM. */
int colo_cli_trace_kernels_print(const colo_trace_t *file, const colo_trace_t *real,
                                 const colo_cli_pairing_t *p, const double *pred_ns,
                                 const colo_math_t *pred_math, const colo_gpu_t *dst, bool csv);

#endif
