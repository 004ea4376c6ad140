/* import_orion.c: Orion kernel-profile CSV -> colosim trace. */
#include "import_orion.h"
#include "alloc.h"
#include "csv.h"
#include "json_lines.h"
#include "occupancy.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { COL_NAME, COL_PROFILE, COL_MEMORY, COL_SM_USAGE, COL_DURATION, COL_BLOCK, COL_GRID, N_COLS };
#define N_REQUIRED COL_BLOCK /* Block and Grid: only in Orion's newer format */
static const char *const col_names[N_COLS] = {"Name",     "Profile", "Memory_footprint", "SM_usage",
                                              "Duration", "Block",   "Grid"};

static int parse_num(const char *s, double *v)
{
    char *end;
    errno = 0;
    while (isspace((unsigned char)*s))
        s++;
    double x = strtod(s, &end);
    while (isspace((unsigned char)*end))
        end++;
    if (end == s || *end || errno || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

/* The kernel of one row: its grid and block, and the blocks per SM that make it need sms SMs
 * of gpu (0 when its block size alone gives that). */
static int shape(const colo_gpu_t *gpu, double sms, double block, double grid, colo_op_t *op,
                 const char *path, int lineno, colo_error_t *err)
{
    op->grid[1] = op->grid[2] = 1;
    if (block > 0 && grid > 0) { /* recorded: use them */
        if (block > 1024 || block != floor(block) || grid > 2147483647.0 || grid != floor(grid))
            return colo_error_set(err, COLO_ERANGE, path, lineno, block > 1024 ? "Block" : "Grid",
                                  "must be a whole number of threads (at most 1024) and of blocks");
        if (sms > grid)
            return colo_error_set(err, COLO_ERANGE, path, lineno, "SM_usage",
                                  "%g SMs for %g blocks: a kernel needs no more SMs than blocks",
                                  sms, grid);
        op->grid[0] = (unsigned)grid;
        op->block[0] = (unsigned)block;
        op->block[1] = op->block[2] = 1;
        int occ = colo_occupancy(gpu, (unsigned)block, -1, -1).blocks_per_sm;
        if (occ > 0 && ceil(grid / occ) < sms) /* registers or shared memory held it lower */
            op->blocks_per_sm = (int)ceil(grid / sms);
        return 0;
    }
    /* not recorded: sms SMs' worth of 256-thread blocks (the block colosim assumes) */
    int occ = colo_occupancy(gpu, COLO_DEFAULT_BLOCK_THREADS, -1, -1).blocks_per_sm;
    if (sms * occ > 2147483647.0)
        return colo_error_set(err, COLO_ERANGE, path, lineno, "SM_usage", "%g SMs is too many",
                              sms);
    op->grid[0] = (unsigned)(sms * occ);
    return 0;
}

/* Orion's merged convolution rows whose name carries no precision ("Conv", "Conv-<kernel>"
 * cut before its template arguments) ran as PyTorch's defaults run cuDNN convolutions on the
 * profiled GPU: on TF32 tensor cores where it has them (torch.backends.cudnn.allow_tf32 = True),
 * else FP32. Rows whose kernel name says (xmma tf32f32, ffma) keep what it says. */
static colo_math_t conv_math(const char *name, const colo_gpu_t *gpu)
{
    colo_kernel_class_t c = colo_kernel_classify(name, COLO_MATH_AUTO);
    if (strcmp(c.rule, "Conv") != 0 && strcmp(c.rule, "Conv-*") != 0) return COLO_MATH_AUTO;
    return gpu->sm.math_per_clock[COLO_MATH_TF32] > 0 ? COLO_MATH_TF32 : COLO_MATH_FP32;
}

/* A kernel whose name says it used units the profiled GPU does not have (TF32 on a V100):
 * the profile was measured on another GPU than --gpu says. */
static int check_gpu(const colo_op_t *op, const colo_gpu_t *gpu, const char *path, int lineno,
                     colo_error_t *err)
{
    colo_kernel_class_t c = colo_kernel_classify(op->name, op->math);
    if (colo_gpu_math_runs_as(gpu, c.math) == c.math) return 0;
    return colo_error_set(err, COLO_EINVAL, path, lineno, "Name",
                          "'%s' is a %s kernel, which %s does not have: the profile was measured "
                          "on another GPU (give it with --gpu)",
                          op->name, colo_math_name(c.math), gpu->name);
}

static int read_rows(FILE *f, const char *path, const colo_gpu_t *gpu,
                     const colo_orion_rows_t *rows, colo_trace_t *t, long *n_rows,
                     colo_error_t *err)
{
    char *line = NULL;
    size_t cap = 0;
    int col_of[N_COLS];
    int lineno = 0, rc = 0;
    long row = 0;
    char *fields[16];
    for (int c = 0; c < N_COLS; c++)
        col_of[c] = -1;

    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        colo_csv_chomp(line);
        if (lineno == 1 && strncmp(line, "\xEF\xBB\xBF", 3) == 0) /* UTF-8 byte order mark */
            memmove(line, line + 3, strlen(line + 3) + 1);
        if (line[0] == '\0') continue;
        int n = colo_csv_split(line, fields, 15);
        if (n < 0) {
            rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "unterminated quoted field");
            break;
        }
        if (col_of[0] < 0 && t->n_ops == 0 && lineno == 1) { /* header */
            for (int i = 0; i < n && i < 15; i++)
                for (int c = 0; c < N_COLS; c++)
                    if (strcmp(fields[i], col_names[c]) == 0) col_of[c] = i;
            for (int c = 0; c < N_REQUIRED && !rc; c++)
                if (col_of[c] < 0)
                    rc = colo_error_set(err, COLO_EPARSE, path, lineno, col_names[c],
                                        "column missing from the header (an Orion profile has "
                                        "Name,Profile,Memory_footprint,SM_usage,Duration and "
                                        "may add Block,Grid)");
            if (!rc && (col_of[COL_BLOCK] < 0) != (col_of[COL_GRID] < 0))
                rc = colo_error_set(err, COLO_EPARSE, path, lineno,
                                    col_of[COL_BLOCK] < 0 ? "Block" : "Grid",
                                    "column missing: Block and Grid come together");
            if (rc) break;
            continue;
        }
        if (col_of[0] < 0) {
            rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "no header line");
            break;
        }
        row++;
        if (rows && rows->first > 0 && (row < rows->first || row > rows->last)) continue;
        double v[N_COLS] = {0};
        for (int c = 0; c < N_COLS && !rc; c++) {
            if (col_of[c] < 0) continue; /* Block and Grid in the old format */
            if (col_of[c] >= n) {
                rc = colo_error_set(err, COLO_EPARSE, path, lineno, col_names[c],
                                    "missing: the row has %d fields", n);
            } else if (c != COL_NAME && parse_num(fields[col_of[c]], &v[c]) != 0) {
                rc = colo_error_set(err, COLO_EPARSE, path, lineno, col_names[c],
                                    "not a number: '%s'", fields[col_of[c]]);
            }
        }
        if (rc) break;
        const char *name = fields[col_of[COL_NAME]];
        if (!name[0])
            rc = colo_error_set(err, COLO_EPARSE, path, lineno, "Name", "empty");
        else if (v[COL_SM_USAGE] < 1 || v[COL_SM_USAGE] > 2147483647.0 ||
                 v[COL_SM_USAGE] != floor(v[COL_SM_USAGE]))
            rc = colo_error_set(err, COLO_ERANGE, path, lineno, "SM_usage",
                                "must be a positive whole number of SMs (got %g)",
                                v[COL_SM_USAGE]);
        else if (!(v[COL_DURATION] >= 1) || v[COL_DURATION] > 1e15)
            rc = colo_error_set(err, COLO_ERANGE, path, lineno, "Duration",
                                "must be at least 1 ns (got %g)", v[COL_DURATION]);
        else if (v[COL_PROFILE] != 1 && v[COL_PROFILE] != 0 && v[COL_PROFILE] != -1)
            rc = colo_error_set(err, COLO_ERANGE, path, lineno, "Profile",
                                "must be 1 (compute), 0 (memory) or -1 (unknown), got %g",
                                v[COL_PROFILE]);
        else if (v[COL_BLOCK] < 0 || v[COL_GRID] < 0)
            rc = colo_error_set(err, COLO_ERANGE, path, lineno, v[COL_BLOCK] < 0 ? "Block" : "Grid",
                                "must not be negative (0: not recorded)");
        if (rc) break;
        colo_op_t op;
        memset(&op, 0, sizeof op);
        op.type = COLO_OP_KERNEL;
        op.name = (char *)name;
        if ((rc = shape(gpu, v[COL_SM_USAGE], v[COL_BLOCK], v[COL_GRID], &op, path, lineno, err)))
            break;
        op.registers = op.shared_bytes = -1;
        op.dram_bytes = op.l2_bytes = op.flops = -1;
        op.duration = colo_time_from_ns(v[COL_DURATION]);
        op.kclass = v[COL_PROFILE] == 1   ? COLO_KCLASS_COMPUTE
                    : v[COL_PROFILE] == 0 ? COLO_KCLASS_MEMORY
                                          : COLO_KCLASS_UNKNOWN;
        op.math = conv_math(name, gpu);
        if ((rc = check_gpu(&op, gpu, path, lineno, err))) break;
        if (colo_trace_append(t, &op)) {
            rc = colo_error_set(err, COLO_ENOMEM, path, lineno, NULL, "out of memory");
            break;
        }
    }
    free(line);
    *n_rows = row;
    if (!rc && ferror(f)) rc = colo_error_set(err, COLO_EIO, path, lineno, NULL, "read error");
    if (!rc && t->n_ops == 0 && rows && rows->first > 0)
        rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL,
                            "no kernel rows in rows %ld-%ld (the file has %ld)", rows->first,
                            rows->last, row);
    else if (!rc && t->n_ops == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "no kernel rows");
    return rc;
}

int colo_import_orion(const char *csv_path, const char *model, int batch, const colo_gpu_t *gpu,
                      const colo_orion_rows_t *rows, colo_trace_t **out, colo_error_t *err)
{
    *out = NULL;
    FILE *f;
    char *mem;
    int rc = colo_text_open(csv_path, &f, &mem, err);
    if (rc) return rc;
    colo_trace_t *t = colo_trace_new(model, batch, gpu->name);
    long n_rows = 0;
    rc = t ? read_rows(f, csv_path, gpu, rows, t, &n_rows, err)
           : colo_error_set(err, COLO_ENOMEM, csv_path, 0, NULL, "out of memory");
    fclose(f);
    colo_free(mem);
    if (!rc) {
        const char *base = strrchr(csv_path, '/');
        base = base ? base + 1 : csv_path;
        char src[512], notes[1024];
        snprintf(src, sizeof src,
                 "Orion (Strati et al., EuroSys'24) per-kernel inference profile %s", base);
        if (rows && rows->first > 0) /* the rows kept: the range, clipped to the file */
            snprintf(src + strlen(src), sizeof src - strlen(src), ", data rows %ld-%ld of %ld",
                     rows->first, rows->last < n_rows ? rows->last : n_rows, n_rows);
        int occ = colo_occupancy(gpu, COLO_DEFAULT_BLOCK_THREADS, -1, -1).blocks_per_sm;
        snprintf(notes, sizeof notes,
                 "durations from Nsight Compute (kernels one at a time); SM_usage is the SMs a "
                 "kernel needs (Orion's get_num_blocks.py): grid and block from Block,Grid where "
                 "recorded (blocks_per_sm where registers or shared memory held it lower), "
                 "elsewhere SM_usage x %d blocks of 256 threads (%d fit an SM of %s); class from "
                 "Profile; Orion's Conv rows sum a convolution's cuDNN kernels, and those whose "
                 "name gives no precision are %s (PyTorch's default for cuDNN on %s); registers, "
                 "shared memory, copies and host gaps were not recorded",
                 occ, occ, gpu->name,
                 gpu->sm.math_per_clock[COLO_MATH_TF32] > 0 ? "TF32" : "FP32", gpu->name);
        int bad = json_object_set_new(t->provenance, "source", json_string(src));
        bad |= json_object_set_new(t->provenance, "measured_on", json_string(gpu->name));
        bad |= json_object_set_new(t->provenance, "license",
                                   json_string("MIT, Copyright (c) 2023 - present ETH Zurich"));
        bad |=
            json_object_set_new(t->provenance, "converted_by", json_string("colosim import orion"));
        bad |= json_object_set_new(t->provenance, "notes", json_string(notes));
        if (bad) rc = colo_error_set(err, COLO_ENOMEM, csv_path, 0, NULL, "out of memory");
    }
    return colo_trace_finish(t, rc, out);
}

int colo_orion_guess_name(const char *path, char *buf, size_t n)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    /* MODEL_BATCH_fwd.csv: the batch is the last all-digit part before "_fwd" */
    const char *fwd = strstr(base, "_fwd");
    if (!fwd) return 0;
    const char *u = fwd;
    while (u > base && isdigit((unsigned char)u[-1]))
        u--;
    if (u == fwd || u == base || u[-1] != '_') return 0;
    size_t mlen = (size_t)(u - 1 - base);
    if (mlen + 1 > n) return 0;
    memcpy(buf, base, mlen);
    buf[mlen] = '\0';
    return atoi(u);
}
