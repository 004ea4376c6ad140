/* import_kineto.h: converts a PyTorch profiler (Kineto) Chrome trace into a colosim trace. */
#ifndef COLO_IMPORT_KINETO_H
#define COLO_IMPORT_KINETO_H

#include "errors.h"
#include "trace.h"

typedef struct colo_kineto_opts {
    const char *model;      /* trace name; default: the file's stem */
    int batch;              /* default 1 */
    const char *gpu;        /* GPU description name; default: guessed from deviceProperties */
    const char *annotation; /* keep the GPU work launched inside the user annotation whose name
                             * contains this (NULL: all GPU work) */
    int occurrence;         /* which matching annotation, from 1 */
} colo_kineto_opts_t;

/* Reads a Kineto trace (JSON, gzipped or not): kernels with grid, block, registers, shared
 * memory, duration and stream, host-to-device and device-to-host copies, and the host gap
 * between consecutive launches (from the correlated CUDA runtime calls), in GPU start order.
 * *out is new. Errors name the file and the event. O(events log events). */
int colo_import_kineto(const char *path, const colo_kineto_opts_t *opts, colo_trace_t **out,
                       colo_error_t *err);

#endif
