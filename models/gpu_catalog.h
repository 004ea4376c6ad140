/* gpu_catalog.h: GPU descriptions by name: the search path, the list, opening one with its
 * calibration, and the file for a device as CUDA names it (gpu_catalog.c). */
#ifndef COLO_GPU_CATALOG_H
#define COLO_GPU_CATALOG_H

#include "errors.h"
#include "gpu.h"

#include <stddef.h>

/* Resolves a GPU name to a description file. A name containing '/' or ending in ".cfg" is a
 * path, relative to base_dir when not absolute (base_dir may be NULL). Otherwise NAME.cfg is
 * searched in $COLOSIM_GPU_PATH (colon-separated), $COLOSIM_DATA_DIR/gpus, the program's
 * ../share/colosim/gpus (an installed prefix, wherever it was moved), the source tree's
 * models/gpus, then the configure-time prefix's share/colosim/gpus. Writes the path into buf;
 * 0 or COLO_ENOENT. */
int colo_gpu_resolve(const char *name, const char *base_dir, char *buf, size_t n);

/* The folders searched for GPU descriptions, in order, comma-separated, for messages. */
void colo_gpu_search_path(char *buf, size_t n);

/* Finds and loads a GPU by name (as colo_gpu_resolve). An unknown name gets an error that lists
 * the known ones, reported at (source, line, key). calibration: NULL or "auto" applies the
 * GPU's default calibration file when there is one (colo_calibration_default), "none" none,
 * anything else is the path of a calibration file, used as given. */
int colo_gpu_open(const char *name, const char *base_dir, const char *calibration,
                  colo_gpu_t **out, const char *source, int line, const char *key,
                  colo_error_t *err);

/* Names of all GPU descriptions on the search path, sorted, without duplicates. *names is a
 * new array of new strings: free with colo_gpu_names_free. 0 or COLO_ENOMEM. */
int colo_gpu_names(char ***names, size_t *count);
void colo_gpu_names_free(char **names, size_t count);

/* The GPU description for a device as CUDA names it ("NVIDIA H100 80GB HBM3"), with gib its
 * memory in GiB (tells the A100s apart) and sms its SM count, 0 if unknown (tells the H100 PCIe,
 * 114 SMs, from the SXM, 132); NULL when colosim has none (the H100 NVL, for one). */
const char *colo_gpu_guess(const char *device_name, double gib, int sms);

#endif
