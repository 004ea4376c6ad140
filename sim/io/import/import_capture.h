/* import_capture.h: colosim-capture's record files (what libcolosim-capture.so writes from CUPTI's
 * activity records) -> colosim traces, one per marked inference. docs/capture.md defines the file.
 */
#ifndef COLO_IMPORT_CAPTURE_H
#define COLO_IMPORT_CAPTURE_H

#include "errors.h"
#include "import_kineto.h"
#include "trace.h"

#define COLO_CAPTURE_FORMAT_VERSION 1

/* Reads a record file and returns one trace per NVTX range whose name contains
 * opts->annotation (all ranges in start order; opts->occurrence > 0 keeps only that one), or,
 * without an annotation, one trace of all the GPU work. Each trace's provenance records the
 * range's host duration as "measured_ns" (the end-to-end latency of that inference when the
 * program synchronises inside the range) and the GPU span of its ops. *traces is a new array
 * of new traces (colo_capture_free). Errors name the file and the line. */
int colo_import_capture(const char *path, const colo_kineto_opts_t *opts, colo_trace_t ***traces,
                        size_t *n, colo_error_t *err);
void colo_capture_free(colo_trace_t **traces, size_t n);

/* Merges per-kernel DRAM and L2 bytes from an Nsight Compute CSV (`ncu --csv --metrics
 * dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum --print-kernel-base mangled`)
 * into t: the CSV's kernels in order are t's kernels in order, and their names must agree.
 * Errors name the CSV's line. */
int colo_trace_merge_ncu(colo_trace_t *t, const char *csv_path, colo_error_t *err);

#endif
