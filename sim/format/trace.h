/* trace.h: kernel traces, one inference as an ordered list of kernels and copies (JSON). */
#ifndef COLO_TRACE_H
#define COLO_TRACE_H

#include "errors.h"
#include "kernel_class.h"
#include "simtime.h"

#include <jansson.h>
#include <stddef.h>

#define COLO_TRACE_FORMAT_VERSION 1

typedef enum { COLO_OP_KERNEL, COLO_OP_COPY } colo_op_type_t;

/* What bounds a kernel, as the trace's source classified it. */
typedef enum { COLO_KCLASS_UNKNOWN, COLO_KCLASS_COMPUTE, COLO_KCLASS_MEMORY } colo_kclass_t;

typedef enum { COLO_COPY_H2D, COLO_COPY_D2H } colo_copy_dir_t;

typedef struct colo_op {
    colo_op_type_t type;
    int line;        /* where it is written in its file; 0 unknown */
    int stream;      /* the CUDA stream it ran on (recorded; colosim replays one stream) */
    colo_time_t gap; /* host time between the previous op's launch and this one's */
    /* kernels */
    char *name;
    unsigned grid[3];     /* blocks */
    unsigned block[3];    /* threads per block; all 0 when the source did not record it */
    int registers;        /* per thread; -1 unknown */
    int shared_bytes;     /* per block, static + dynamic; -1 unknown */
    colo_time_t duration; /* measured alone on the trace's GPU */
    colo_kclass_t kclass;
    colo_math_t math;     /* as the trace gives it; COLO_MATH_AUTO: from the name */
    colo_kernel_class_t cls; /* derived (colo_trace_summarise): math class and kind */
    int blocks_per_sm;    /* resident per SM on the trace's GPU when the source knew it was fewer
                           * than its block size allows (registers, shared memory); 0 unknown */
    double dram_bytes, l2_bytes, flops; /* -1 unknown */
    /* copies */
    colo_copy_dir_t dir;
    long long bytes;
} colo_op_t;

typedef struct colo_trace {
    char *path; /* file it was read from, NULL if built in memory */
    char *model;
    int batch;
    char *gpu;          /* name of the GPU description it was measured on */
    int gpu_line;       /* line of "gpu" in the file, 0 when unknown */
    json_t *provenance; /* object; at least "source" */
    size_t n_ops, cap_ops;
    colo_op_t *ops;
    /* derived when loaded (colo_trace_summarise) */
    size_t n_kernels, n_copies;
    colo_time_t kernel_time; /* sum of kernel durations */
    long long copy_bytes[2]; /* by direction */
} colo_trace_t;

/* Reads and validates a trace file. Errors carry the file, the line of the offending op when
 * known, and the key ("ops[12].duration_ns"). *out is new (colo_trace_free). */
int colo_trace_load(const char *path, colo_trace_t **out, colo_error_t *err);

/* The longest duration or gap (ns) and the largest copy (bytes) of one op that any reader
 * accepts: 11.6 days and 1 PB, far beyond any real kernel, so a trace's sums cannot overflow. */
#define COLO_OP_MAX_NS 1e15
#define COLO_OP_MAX_BYTES 1e15

/* The latest profiler timestamp any reader accepts (ns): 2096 for ns since 1970, and below it
 * every difference of two fits colo_time_t. */
#define COLO_STAMP_MAX_NS 4000000000000000000LL

/* Whether a profiler's record from a to b (ns) is one a reader accepts: 0 <= a <= b <=
 * COLO_STAMP_MAX_NS and at most COLO_OP_MAX_NS long. */
static inline int colo_times_ok(long long a, long long b)
{
    return a >= 0 && b >= a && b <= COLO_STAMP_MAX_NS && (double)(b - a) <= COLO_OP_MAX_NS;
}

/* Whether t can be written as a trace colo_trace_load will read: an importer can meet ops
 * further apart than a trace may hold (a profile of more than one run). 0, or COLO_ERANGE with
 * err naming path and the op. */
int colo_trace_savable(const colo_trace_t *t, const char *path, colo_error_t *err);

/* Writes a trace atomically, one op per line, if it is savable (above). 0 or a negative code
 * with err set. */
int colo_trace_save(const colo_trace_t *t, const char *path, colo_error_t *err);

/* A new empty trace with the given identity (all strings copied). NULL when out of memory. */
colo_trace_t *colo_trace_new(const char *model, int batch, const char *gpu);

/* Appends a copy of op (its name is copied). 0 or COLO_ENOMEM. Amortised O(1). */
int colo_trace_append(colo_trace_t *t, const colo_op_t *op);

/* An op as a profiler saw it: when it started on the GPU and when the host launched it. */
typedef struct colo_timed_op {
    colo_op_t op;            /* op.name is owned by the caller */
    long long start, launch; /* ns; launch -1 when unknown */
} colo_timed_op_t;

/* Sorts ops by GPU start, sets each op's gap to the host time since the previous op's launch
 * (its launch, or its start when the launch is unknown) and appends them to t. 0 or
 * COLO_ENOMEM. O(n log n). */
int colo_trace_append_timed(colo_trace_t *t, colo_timed_op_t *ops, size_t n);

/* Recomputes the derived counts and totals, and each kernel's class (colo_kernel_classify).
 * O(n_ops x patterns). */
void colo_trace_summarise(colo_trace_t *t);

void colo_trace_free(colo_trace_t *t);

/* Ends an importer's build of t: on rc != 0 frees t and returns rc; otherwise summarises it,
 * hands it to *out and returns 0. */
int colo_trace_finish(colo_trace_t *t, int rc, colo_trace_t **out);

const char *colo_kclass_name(colo_kclass_t c);
const char *colo_copy_dir_name(colo_copy_dir_t d);

#endif
