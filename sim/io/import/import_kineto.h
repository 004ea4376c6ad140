/* import_kineto.h: converts a PyTorch profiler (Kineto) Chrome trace into a colosim trace. */
#ifndef COLO_IMPORT_KINETO_H
#define COLO_IMPORT_KINETO_H

#include "errors.h"
#include "simtime.h"
#include "trace.h"

#include <stddef.h>

typedef struct colo_kineto_opts {
    const char *model;      /* trace name; default: the file's stem */
    int batch;              /* default 1 */
    const char *gpu;        /* GPU description name; default: guessed from deviceProperties */
    const char *annotation; /* keep the GPU work launched inside the user annotation whose name
                             * contains this (NULL: all GPU work) */
    int occurrence;         /* which matching annotation, from 1 */
} colo_kineto_opts_t;

/* What becomes of the host gaps between launches (--gaps): kept as measured, dropped (the ops
 * run back to back, in the same order), or each capped at cap. */
typedef enum { COLO_GAPS_KEEP, COLO_GAPS_DROP, COLO_GAPS_CAP } colo_gaps_mode_t;
typedef struct colo_gap_policy {
    colo_gaps_mode_t mode;
    colo_time_t cap; /* COLO_GAPS_CAP: the longest gap kept, ns */
} colo_gap_policy_t;

/* Parses "keep", "drop" or "cap:US" (US: microseconds, a number from 0 to 1e12) into *p.
 * 0 or COLO_EINVAL (*p untouched). */
int colo_gap_policy_parse(const char *text, colo_gap_policy_t *p);

/* One record_function name of a profile (cat "user_annotation" events). */
typedef struct colo_kineto_range {
    char *name;      /* owned by the report */
    size_t count;    /* ranges of this name */
    double total_us; /* their durations, summed */
    size_t kernels;  /* kernels launched inside them, summed over the ranges */
} colo_kineto_range_t;

/* Why an imported trace may not be one inference (colo_kineto_report_t.why), each structural
 * or already colosim trace's test, none a threshold of its own: */
enum {
    COLO_KINETO_WHOLE = 1,  /* no annotation chosen, and the profile has record_function ranges */
    COLO_KINETO_NESTED = 2, /* the chosen range encloses a range of its own name, or two or
                             * more of one name: an outer step around repeated ones */
    COLO_KINETO_GAPS = 4,   /* its host gaps (after the gap policy) exceed its kernels' time */
};

/* What an import found besides the trace, for the warning and --list-annotations. */
typedef struct colo_kineto_report {
    size_t n_ranges;               /* record_function ranges in the profile */
    size_t n_names;                /* distinct names among them */
    colo_kineto_range_t *names;    /* n_names, in the order of their first start */
    size_t n_enclosed;             /* names of the ranges inside the chosen one, and their */
    colo_kineto_range_t *enclosed; /* counts (kernels and total_us: 0) */
    double span_us;                /* the trace's ops: first GPU start to last GPU end */
    colo_time_t kernel_time;       /* the trace's kernels' durations, summed */
    colo_time_t gaps, largest;     /* the trace's host gaps, in all and the largest */
    colo_time_t measured_gaps, measured_largest; /* the same as the profile had them */
    unsigned why; /* COLO_KINETO_* flags; 0: nothing says it is not one inference */
} colo_kineto_report_t;

/* Frees what r holds and zeroes it; r may be all zero. */
void colo_kineto_report_fini(colo_kineto_report_t *r);

/* Reads a Kineto trace (JSON, gzipped or not, streamed: colo_chrome_read) and converts it:
 * kernels with grid, block, registers, shared memory, duration and stream, host-to-device and
 * device-to-host copies, and the host gap between consecutive launches (from the correlated
 * CUDA runtime calls), in GPU start order, the gaps then treated as gaps says (NULL: kept; a
 * policy other than keep is recorded in the provenance as "host_gaps"). *out is new. When
 * report is not NULL it is filled (colo_kineto_report_fini frees it), also on most errors.
 * Errors name the file, the event's line and key; an annotation that matches nothing lists the
 * ones the profile has. Memory: the kernels, copies, launches and ranges kept (about 100
 * bytes each) and one 1 MiB chunk of the file. O(events log events). */
int colo_kineto_convert(const char *path, const colo_kineto_opts_t *opts,
                        const colo_gap_policy_t *gaps, colo_trace_t **out,
                        colo_kineto_report_t *report, colo_error_t *err);

/* colo_kineto_convert keeping the host gaps, without a report. */
int colo_import_kineto(const char *path, const colo_kineto_opts_t *opts, colo_trace_t **out,
                       colo_error_t *err);

/* The record_function ranges of a Kineto trace, by name, into *report (n_ranges, names; the
 * rest zero); no GPU is guessed and no trace built. Errors as colo_kineto_convert. */
int colo_kineto_annotations(const char *path, colo_kineto_report_t *report, colo_error_t *err);

#endif
