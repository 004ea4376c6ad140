/* import_nsys.h: converts an Nsight Systems SQLite export into a colosim trace. */
#ifndef COLO_IMPORT_NSYS_H
#define COLO_IMPORT_NSYS_H

#include "errors.h"
#include "import_kineto.h"
#include "trace.h"

/* Reads `nsys export --type sqlite` output: kernels from CUPTI_ACTIVITY_KIND_KERNEL (names
 * through StringIds, launch shape, registers, static + dynamic shared memory, stream), copies
 * from CUPTI_ACTIVITY_KIND_MEMCPY (host to device and back), host gaps from the launching
 * CUPTI_ACTIVITY_KIND_RUNTIME calls, the GPU from TARGET_INFO_GPU. opts->annotation selects the
 * work launched inside the N-th NVTX range whose text contains it. *out is new. */
int colo_import_nsys(const char *path, const colo_kineto_opts_t *opts, colo_trace_t **out,
                     colo_error_t *err);

#endif
