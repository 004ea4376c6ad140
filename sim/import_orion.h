/* import_orion.h: converts Orion's per-kernel profile CSV into a colosim trace. */
#ifndef COLO_IMPORT_ORION_H
#define COLO_IMPORT_ORION_H

#include "errors.h"
#include "trace.h"

/* Reads an Orion (EuroSys'24) profile CSV with columns Name, Profile, Memory_footprint,
 * SM_usage, Duration (any order): Profile 1 compute-bound, 0 memory-bound, -1 unknown;
 * SM_usage the number of thread blocks; Duration in ns. model, batch and gpu name the trace;
 * *out is new. Errors name the file, line and column. O(rows). */
int colo_import_orion(const char *csv_path, const char *model, int batch, const char *gpu,
                      colo_trace_t **out, colo_error_t *err);

/* Guesses model and batch from an Orion file name such as "resnet50_4_fwd.csv": writes the
 * model into buf and returns the batch, or returns 0 when the name does not have that form. */
int colo_orion_guess_name(const char *path, char *buf, size_t n);

#endif
