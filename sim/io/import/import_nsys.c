/* import_nsys.c: Nsight Systems SQLite export -> colosim trace (libsqlite3). */
#include "import_nsys.h"
#include "alloc.h"
#include "gpu.h"
#include "gpu_catalog.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

static int db_error(sqlite3 *db, const char *path, colo_error_t *err)
{
    return colo_error_set(err, COLO_EPARSE, path, 0, NULL, "SQLite: %s", sqlite3_errmsg(db));
}

/* The window of the N-th NVTX range whose text contains what. */
static int nvtx_window(sqlite3 *db, const char *path, const colo_kineto_opts_t *o, long long *lo,
                       long long *hi, colo_error_t *err)
{
    if (!has_table(db, "NVTX_EVENTS"))
        return colo_error_set(err, COLO_ENOENT, path, 0, "NVTX_EVENTS",
                              "no NVTX ranges in this export to select '%s' from", o->annotation);
    static const char q[] =
        "SELECT n.start, n.end FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
        "WHERE n.end IS NOT NULL AND instr(COALESCE(n.text, s.value, ''), ?) > 0 "
        "ORDER BY n.start";
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return db_error(db, path, err);
    sqlite3_bind_text(st, 1, o->annotation, -1, SQLITE_STATIC);
    int want = o->occurrence > 0 ? o->occurrence : 1, seen = 0;
    while (seen < want && sqlite3_step(st) == SQLITE_ROW)
        if (++seen == want) {
            *lo = sqlite3_column_int64(st, 0);
            *hi = sqlite3_column_int64(st, 1);
        }
    sqlite3_finalize(st);
    if (seen < want)
        return colo_error_set(err, COLO_ENOENT, path, 0, "annotation",
                              "no NVTX range #%d containing '%s'", want, o->annotation);
    return 0;
}

static int collect(sqlite3 *db, const char *path, const char *q, int kernels, long long lo,
                   long long hi, colo_timed_op_t **ops, size_t *n, size_t *cap, colo_error_t *err)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return db_error(db, path, err);
    int rc = 0, step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        long long start = sqlite3_column_int64(st, 0), end = sqlite3_column_int64(st, 1);
        long long launch =
            sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 2);
        long long when = launch >= 0 ? launch : start;
        if (when < lo || when > hi) continue;
        const char *table = kernels ? "CUPTI_ACTIVITY_KIND_KERNEL" : "CUPTI_ACTIVITY_KIND_MEMCPY";
        if (end < start) {
            rc = colo_error_set(err, COLO_EPARSE, path, 0, table,
                                "a record ends (%lld) before it starts (%lld)", end, start);
            break;
        }
        if (!colo_times_ok(start, end) || launch > COLO_STAMP_MAX_NS) {
            rc = colo_error_set(err, COLO_ERANGE, path, 0, table,
                                "a record's times are out of range (start %lld, end %lld, "
                                "launch %lld): ns from 0 to 4e18, at most 1e15 long",
                                start, end, launch);
            break;
        }
        colo_timed_op_t x;
        memset(&x, 0, sizeof x);
        x.start = start;
        x.launch = launch;
        if (kernels) {
            const char *nm = (const char *)sqlite3_column_text(st, 3);
            x.op.type = COLO_OP_KERNEL;
            x.op.stream = sqlite3_column_int(st, 4);
            for (int d = 0; d < 3; d++) {
                long long g = sqlite3_column_int64(st, 5 + d), b = sqlite3_column_int64(st, 8 + d);
                if (g < 1 || b < 1 || g > 0x7fffffff || b > 1024) {
                    rc = colo_error_set(err, COLO_EPARSE, path, 0, "CUPTI_ACTIVITY_KIND_KERNEL",
                                        "kernel '%.80s' at %lld: invalid grid or block",
                                        nm ? nm : "?", start);
                    break;
                }
                x.op.grid[d] = (unsigned)g;
                x.op.block[d] = (unsigned)b;
            }
            if (rc) break;
            int regs = sqlite3_column_int(st, 11);
            long long smem = sqlite3_column_int64(st, 12);
            x.op.registers = regs >= 0 && regs <= 255 ? regs : -1;
            x.op.shared_bytes = smem >= 0 && smem < 0x7fffffff ? (int)smem : -1;
            x.op.dram_bytes = x.op.l2_bytes = x.op.flops = -1;
            x.op.duration = end - start > 0 ? end - start : 1;
            if (!(x.op.name = colo_strdup(nm && *nm ? nm : "kernel"))) {
                rc = COLO_ENOMEM;
                break;
            }
        } else {
            int kind = sqlite3_column_int(st, 3); /* CUPTI_ACTIVITY_MEMCPY_KIND: 1 HtoD, 2 DtoH */
            long long bytes = sqlite3_column_int64(st, 4);
            if ((kind != 1 && kind != 2) || bytes < 1) continue; /* other copies: not modelled */
            x.op.type = COLO_OP_COPY;
            x.op.dir = kind == 1 ? COLO_COPY_H2D : COLO_COPY_D2H;
            x.op.bytes = bytes;
            x.op.stream = sqlite3_column_int(st, 5);
        }
        if (colo_grow((void **)ops, cap, *n + 1, sizeof **ops)) {
            colo_free(x.op.name);
            rc = COLO_ENOMEM;
            break;
        }
        (*ops)[(*n)++] = x;
    }
    if (!rc && step != SQLITE_DONE && step != SQLITE_ROW) rc = db_error(db, path, err);
    sqlite3_finalize(st);
    return rc;
}

static const char kernel_q[] =
    "SELECT k.start, k.end, r.start, COALESCE(d.value, s.value, ''), k.streamId, k.gridX, "
    "k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ, k.registersPerThread, "
    "COALESCE(k.staticSharedMemory, 0) + COALESCE(k.dynamicSharedMemory, 0) "
    "FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "LEFT JOIN StringIds d ON d.id = k.demangledName "
    "LEFT JOIN StringIds s ON s.id = k.shortName "
    "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId";

static const char memcpy_q[] =
    "SELECT m.start, m.end, r.start, m.copyKind, m.bytes, m.streamId "
    "FROM CUPTI_ACTIVITY_KIND_MEMCPY m "
    "LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = m.correlationId";

int colo_import_nsys(const char *path, const colo_kineto_opts_t *o, colo_trace_t **out,
                     colo_error_t *err)
{
    *out = NULL;
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        int rc = colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open: %s",
                                db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return rc;
    }
    int rc = 0;
    /* a file that is not SQLite fails on its first query, with "file is not a database" */
    if (!has_table(db, "CUPTI_ACTIVITY_KIND_KERNEL")) {
        sqlite3_stmt *probe;
        rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &probe, NULL);
        int ok = rc == SQLITE_OK && sqlite3_step(probe) == SQLITE_ROW;
        sqlite3_finalize(probe);
        rc = ok ? colo_error_set(err, COLO_EPARSE, path, 0, "CUPTI_ACTIVITY_KIND_KERNEL",
                                 "missing: not an Nsight Systems export (nsys export --type "
                                 "sqlite), or no CUDA kernels were traced")
                : colo_error_set(err, COLO_EPARSE, path, 0, NULL, "not an SQLite file: %s",
                                 sqlite3_errmsg(db));
        sqlite3_close(db);
        return rc;
    }
    const char *gpu = o->gpu;
    char devname[256] = "";
    if (has_table(db, "TARGET_INFO_GPU")) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(db, "SELECT name, totalMemory FROM TARGET_INFO_GPU LIMIT 1", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const char *nm = (const char *)sqlite3_column_text(st, 0);
            snprintf(devname, sizeof devname, "%s", nm ? nm : "");
            if (!gpu)
                gpu = colo_gpu_guess(devname, (double)sqlite3_column_int64(st, 1) / 1073741824.0,
                                     0);
        }
        sqlite3_finalize(st);
    }
    if (!gpu) {
        sqlite3_close(db);
        return colo_error_set(err, COLO_EINVAL, path, 0, "TARGET_INFO_GPU",
                              "cannot tell which GPU '%s' is: give --gpu", devname);
    }
    long long lo = -(1LL << 62), hi = 1LL << 62;
    if (o->annotation) rc = nvtx_window(db, path, o, &lo, &hi, err);
    colo_timed_op_t *ops = NULL;
    size_t n = 0, cap = 0;
    if (!rc) rc = collect(db, path, kernel_q, 1, lo, hi, &ops, &n, &cap, err);
    if (!rc && has_table(db, "CUPTI_ACTIVITY_KIND_MEMCPY"))
        rc = collect(db, path, memcpy_q, 0, lo, hi, &ops, &n, &cap, err);
    sqlite3_close(db);
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strchr(stem, '.');
    if (dot) *dot = '\0';
    colo_trace_t *t = NULL;
    if (!rc) {
        t = colo_trace_new(o->model ? o->model : stem, o->batch > 0 ? o->batch : 1, gpu);
        if (!t) rc = COLO_ENOMEM;
    }
    if (!rc) rc = colo_trace_append_timed(t, ops, n);
    for (size_t i = 0; i < n; i++)
        colo_free(ops[i].op.name);
    colo_free(ops);
    if (!rc && t->n_ops == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, 0, NULL, "no kernels%s",
                            o->annotation ? " inside that range" : "");
    if (!rc) {
        char src[600];
        snprintf(src, sizeof src, "Nsight Systems export %s%s%s", base ? base + 1 : path,
                 o->annotation ? ", NVTX range " : "", o->annotation ? o->annotation : "");
        int bad = json_object_set_new(t->provenance, "source", json_string(src));
        bad |= json_object_set_new(t->provenance, "measured_on",
                                   json_string(devname[0] ? devname : gpu));
        bad |=
            json_object_set_new(t->provenance, "converted_by", json_string("colosim import nsys"));
        if (bad) rc = COLO_ENOMEM;
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    return colo_trace_finish(t, rc, out);
}
