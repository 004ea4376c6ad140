/* import_neusight.h: NeuSight's single-op latency tables (ASPLOS'25, sitar-lab/NeuSight, MIT):
 * one CSV per op and GPU, PyTorch 2.1, FP32, each op timed alone; read into rows and turned into
 * colosim kernels with the FLOPs and bytes of the op's shape (docs/traces.md, "NeuSight"). */
#ifndef COLO_IMPORT_NEUSIGHT_H
#define COLO_IMPORT_NEUSIGHT_H

#include "errors.h"
#include "trace.h"

#include <stddef.h>

typedef enum colo_ns_op {
    COLO_NS_BMM,
    COLO_NS_LINEAR,
    COLO_NS_CONV,
    COLO_NS_SOFTMAX,
    COLO_NS_LN,
    COLO_NS_ADD,
    COLO_NS_ADDU,
    COLO_NS_MUL,
    COLO_NS_RELU,
    COLO_NS_GELU,
    COLO_NS_TANH,
    COLO_NS_OPS
} colo_ns_op_t;

/* The op classes results are reported by: matrix products (bmm, linear), convolutions,
 * elementwise ops, and row reductions (softmax, layer norm); the last two are memory-bound. */
typedef enum colo_ns_class {
    COLO_NS_GEMM,
    COLO_NS_CONVS,
    COLO_NS_ELEMENTWISE,
    COLO_NS_ROWS,
    COLO_NS_CLASSES
} colo_ns_class_t;

#define COLO_NS_SHAPE 7

typedef struct colo_ns_row {
    int line;     /* in its file */
    char *kernel; /* the op's longest kernel, as NeuSight's "Kernel Name" */
    unsigned grid[3], block[3];
    int n_kernels;     /* kernels the op launched ("Kernels"; 1 when the column is absent) */
    double latency_ns; /* the op's measured time */
    long long shape[COLO_NS_SHAPE]; /* B,M,N,K (bmm, linear); B,Cin,Cout,KS,In,Stride,Pad (conv);
                                     * B,H (the others); unused entries 0 */
} colo_ns_row_t;

typedef struct colo_ns_table {
    char *path;
    char *device; /* as NeuSight's Device column: "Tesla T4" */
    colo_ns_op_t op;
    size_t n;
    colo_ns_row_t *rows;
    double shortest_ns; /* the least latency of its rows (the host's time per op, kernel_check.h) */
} colo_ns_table_t;

/* Reads one NeuSight CSV (gzip or plain): the op from its OPName column, every row's kernel,
 * launch shape, latency (ms, as NeuSight writes it) and op shape. Errors name the file, line and
 * column. *out is new (colo_ns_table_free). O(rows). */
int colo_ns_read(const char *path, colo_ns_table_t **out, colo_error_t *err);
void colo_ns_table_free(colo_ns_table_t *t);

const char *colo_ns_op_name(colo_ns_op_t op);
colo_ns_class_t colo_ns_op_class(colo_ns_op_t op);
const char *colo_ns_class_name(colo_ns_class_t c);

/* The op's work from its shape, FP32 (4-byte elements): FLOPs, and the bytes it must move
 * (every operand read once, the result written once; docs/traces.md gives each formula). */
double colo_ns_flops(colo_ns_op_t op, const long long *shape);
double colo_ns_bytes(colo_ns_op_t op, const long long *shape);

/* The row as one colosim kernel: NeuSight's kernel name, grid and block, its measured latency
 * as its duration, FLOPs and DRAM bytes from its shape, memory-bound for softmax, layer norm
 * and elementwise ops and compute-bound for matrix products and convolutions. name points into
 * the row. */
void colo_ns_row_op(const colo_ns_table_t *t, const colo_ns_row_t *r, colo_op_t *op);

#endif
