/* gpu_benches.h: a calibration file from published results of the gpu-benches micro-benchmarks
 * (GitHub te42kyfo/gpu-benches): `colosim calibrate import gpu-benches DIR --gpu NAME`.
 * docs/calibration.md says which model parameter comes from which file and how. */
#ifndef COLO_GPU_BENCHES_H
#define COLO_GPU_BENCHES_H

#include "errors.h"
#include "gpu.h"

#include <jansson.h>

/* The benchmarks read, in the order files are looked for and listed. */
#define COLO_GB_KINDS(X)                                                                           \
    X(STREAM, "gpu-stream")                                                                        \
    X(L2, "gpu-l2-cache")                                                                          \
    X(CACHE, "gpu-cache")                                                                          \
    X(LATENCY, "gpu-latency")                                                                      \
    X(SMALL, "gpu-small-kernels")                                                                  \
    X(ROOFLINE, "gpu-roofline")                                                                    \
    X(STRIDES, "gpu-strides")

/* clang-format off */
typedef enum colo_gb_kind {
#define COLO__X(id, dir) COLO_GB_##id,
    COLO_GB_KINDS(COLO__X)
#undef COLO__X
    COLO_GB_KIND_N
} colo_gb_kind_t;
/* clang-format on */

typedef struct colo_gb_options {
    const char *dir;        /* a gpu-benches checkout or a copy of its result files */
    const char *stem;       /* NULL: the stems colosim knows for the GPU; else STEM.txt in every
                             * benchmark's folder (STEM_graph.txt ... for launch variants) */
    const char *repository; /* recorded as each value's source; NULL: "te42kyfo/gpu-benches" */
    const char *commit;     /* the commit the files were read at; NULL: not recorded */
    /* per-file commits "gpu-small-kernels/v100.txt=REV", overriding commit for that file */
    const char *const *file_commits;
    size_t n_file_commits;
    const char *command; /* the command line, recorded in the file */
} colo_gb_options_t;

/* Reads the result files for gpu (its datasheet values: load it without calibration) and
 * builds a calibration document (docs/calibration.md) in *out: each parameter with the
 * datasheet value it replaces, how it was derived, and its source (repository, commit, path,
 * lines); values that are no model parameter under "measurements". A file that is absent is
 * skipped; none at all is an error. Errors name FILE:LINE: what. O(rows). */
int colo_gb_import(const colo_gb_options_t *o, const colo_gpu_t *gpu, json_t **out,
                   colo_error_t *err);

/* The folder of a benchmark kind ("gpu-stream"). */
const char *colo_gb_kind_dir(colo_gb_kind_t k);

#endif
