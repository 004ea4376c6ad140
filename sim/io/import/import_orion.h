/* import_orion.h: converts Orion's per-kernel profile CSV into a colosim trace. */
#ifndef COLO_IMPORT_ORION_H
#define COLO_IMPORT_ORION_H

#include "errors.h"
#include "gpu.h"
#include "trace.h"

/* Which data rows to keep (1 = the first row after the header); 0, 0: all. */
typedef struct colo_orion_rows {
    long first, last;
} colo_orion_rows_t;

/* Reads an Orion (EuroSys'24) profile CSV measured on gpu, in either of Orion's formats:
 * Name, Profile, Memory_footprint, SM_usage, Duration (any order), and the same with Block,
 * Grid (threads per block and blocks; 0 when not recorded). Profile is 1 compute-bound, 0
 * memory-bound, -1 unknown; SM_usage is the number of SMs the kernel needs on gpu, ceil(blocks /
 * blocks per SM) as Orion's get_num_blocks.py computes it (not its blocks); Duration in ns.
 * With Block and Grid the kernel keeps them, with the blocks per SM that make it need SM_usage
 * SMs when registers or shared memory held it below what its block size allows; without them
 * it is rebuilt as 256-thread blocks, as many as fill SM_usage SMs of gpu (docs/traces.md).
 * Merged convolution rows whose name gives no precision get the math class PyTorch's defaults
 * give cuDNN on gpu (TF32 where it has TF32 tensor cores); a kernel whose name needs units gpu
 * does not have is an error (the profile is of another GPU).
 * model, batch and gpu name the trace; rows (NULL: all) selects data rows; *out is new. Errors
 * name the file, line and column. O(rows). */
int colo_import_orion(const char *csv_path, const char *model, int batch, const colo_gpu_t *gpu,
                      const colo_orion_rows_t *rows, colo_trace_t **out, colo_error_t *err);

/* Guesses model and batch from an Orion file name such as "resnet50_4_fwd.csv": writes the
 * model into buf and returns the batch, or returns 0 when the name does not have that form. */
int colo_orion_guess_name(const char *path, char *buf, size_t n);

#endif
