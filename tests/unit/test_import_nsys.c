/* test_import_nsys.c: the Nsight Systems SQLite importer, on an export built here with the
 * tables and columns `nsys export --type sqlite` writes (no real export is in shared/data). */
#include "helpers.h"
#include "import_nsys.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(import_nsys, .init = test_init);

static const char schema[] =
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, smCount INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER,"
    "  globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,"
    "  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
    "  demangledName INTEGER, shortName INTEGER, mangledName INTEGER, registersPerThread INTEGER,"
    "  gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER,"
    "  blockZ INTEGER, staticSharedMemory INTEGER, dynamicSharedMemory INTEGER);"
    "CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,"
    "  contextId INTEGER, streamId INTEGER, correlationId INTEGER, globalPid INTEGER,"
    "  bytes INTEGER, copyKind INTEGER);"
    "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT,"
    "  textId INTEGER);"
    "INSERT INTO StringIds VALUES (1, 'void gemm_kernel<float>(float*)'), (2, 'gemm'),"
    "  (3, 'relu_kernel'), (4, 'cudaLaunchKernel'), (5, 'cudaMemcpyAsync'), (6, 'forward');"
    "INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100 80GB HBM3', 85031714816, 132);"
    /* iteration 1: copy in, two kernels, copy out; iteration 2: one kernel */
    "INSERT INTO NVTX_EVENTS VALUES (1000, 90000, 59, NULL, 6), (100000, 150000, 59, 'forward', "
    "NULL);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1100, 1500, 0, 1, 10, 5, 0),"
    "  (2000, 2400, 0, 1, 11, 4, 0), (2500, 2900, 0, 1, 12, 4, 0), (3000, 3300, 0, 1, 13, 5, 0),"
    "  (100500, 100900, 0, 1, 14, 4, 0);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5000, 25000, 0, 1, 7, 10, 1, 1048576, 1),"
    "  (80000, 81000, 0, 1, 7, 13, 1, 4096, 2);"
    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
    "  (30000, 60000, 0, 1, 7, 11, 1, 1, 2, NULL, 96, 128, 2, 1, 256, 1, 1, 16384, 8192),"
    "  (61000, 75000, 0, 1, 7, 12, 1, 3, 3, NULL, 16, 4096, 1, 1, 128, 1, 1, 0, 0),"
    "  (120000, 130000, 0, 1, 9, 14, 1, 3, 3, NULL, 16, 64, 1, 1, 128, 1, 1, 0, 0);";

static void make_db(const char *path, const char *sql)
{
    unlink(path);
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s", msg ? msg : "");
    sqlite3_close(db);
}

static int import(const char *path, const char *ann, int occ, colo_trace_t **t, colo_error_t *err)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, ann, occ};
    colo_error_clear(err);
    return colo_import_nsys(path, &o, t, err);
}

Test(import_nsys, kernels_copies_names_and_gaps_come_through)
{
    char path[] = "/tmp/colosim-nsys-XXXXXX";
    close(mkstemp(path));
    make_db(path, schema);
    colo_trace_t *t;
    colo_error_t err;
    cr_assert_eq(import(path, NULL, 0, &t, &err), 0, "%s", err.text);
    cr_assert_str_eq(t->gpu, "h100-sxm");
    cr_assert_eq(t->n_kernels, 3);
    cr_assert_eq(t->n_copies, 2);
    cr_assert_eq(t->kernel_time, 30000 + 14000 + 10000);
    cr_assert_eq(t->ops[0].type, COLO_OP_COPY, "in start order: the input copy first");
    cr_assert_eq(t->ops[0].dir, COLO_COPY_H2D);
    cr_assert_eq(t->ops[0].bytes, 1048576);
    const colo_op_t *k = &t->ops[1];
    cr_assert_str_eq(k->name, "void gemm_kernel<float>(float*)", "the demangled name");
    cr_assert_eq(k->grid[0], 128);
    cr_assert_eq(k->grid[1], 2);
    cr_assert_eq(k->block[0], 256);
    cr_assert_eq(k->registers, 96);
    cr_assert_eq(k->shared_bytes, 16384 + 8192, "static + dynamic");
    cr_assert_eq(k->gap, 2000 - 1100, "between the two launch calls");
    cr_assert_eq(t->ops[3].dir, COLO_COPY_D2H);
    cr_assert_eq(t->ops[4].stream, 9);
    colo_trace_free(t);
    unlink(path);
}

Test(import_nsys, an_nvtx_range_selects_an_iteration)
{
    char path[] = "/tmp/colosim-nsys-XXXXXX";
    close(mkstemp(path));
    make_db(path, schema);
    colo_trace_t *t;
    colo_error_t err;
    cr_assert_eq(import(path, "forward", 2, &t, &err), 0, "%s", err.text);
    cr_assert_eq(t->n_kernels, 1);
    cr_assert_eq(t->n_copies, 0);
    colo_trace_free(t);
    cr_assert_eq(import(path, "forward", 1, &t, &err), 0, "%s", err.text);
    cr_assert_eq(t->n_kernels, 2, "the first range, named through StringIds");
    cr_assert_eq(t->n_copies, 2);
    colo_trace_free(t);
    cr_assert_eq(import(path, "backward", 1, &t, &err), COLO_ENOENT);
    unlink(path);
}

Test(import_nsys, files_that_are_not_exports_get_clear_errors)
{
    char path[] = "/tmp/colosim-nsys-XXXXXX";
    close(mkstemp(path));
    FILE *f = fopen(path, "w");
    fputs("this is not a database\n", f);
    fclose(f);
    colo_trace_t *t = NULL;
    colo_error_t err;
    cr_assert_lt(import(path, NULL, 0, &t, &err), 0);
    cr_assert(strstr(err.text, "not an SQLite file"), "%s", err.text);
    make_db(path, "CREATE TABLE other (x INTEGER);");
    cr_assert_lt(import(path, NULL, 0, &t, &err), 0);
    cr_assert_str_eq(err.key, "CUPTI_ACTIVITY_KIND_KERNEL");
    make_db(path, "CREATE TABLE StringIds (id INTEGER, value TEXT);"
                  "CREATE TABLE TARGET_INFO_GPU (name TEXT, totalMemory INTEGER);"
                  "INSERT INTO TARGET_INFO_GPU VALUES ('NVIDIA H100 80GB HBM3', 85031714816);"
                  "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, correlationId);"
                  "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, streamId, correlationId,"
                  " demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX,"
                  " blockY, blockZ, staticSharedMemory, dynamicSharedMemory);"
                  "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (10, 5, 7, 1, NULL, NULL, 32, 1,"
                  " 1, 1, 32, 1, 1, 0, 0);");
    cr_assert_lt(import(path, NULL, 0, &t, &err), 0);
    cr_assert(strstr(err.text, "ends (5) before it starts (10)"), "%s", err.text);
    cr_assert_null(t);
    unlink(path);
}

/* Times no profiler writes: a negative start with the largest end overflowed the duration
 * (UBSan; found by fuzz_nsys, tests/fuzz/regressions/nsys/kernel_times_overflow.sql). */
Test(import_nsys, times_out_of_range_are_refused)
{
    static const char *const rows[] = {
        "(-20000, 9223372036854775807, 0, 1, 9, 14, 1, 3, 3, NULL, 16, 64, 1, 1, 128, 1, 1, 0, 0)",
        "(0, 2000000000000000, 0, 1, 9, 14, 1, 3, 3, NULL, 16, 64, 1, 1, 128, 1, 1, 0, 0)",
        "(4000000000000000001, 4000000000000000002, 0, 1, 9, 14, 1, 3, 3, NULL, 16, 64, 1, 1, 128,"
        " 1, 1, 0, 0)"};
    char path[] = "/tmp/colosim-nsys-XXXXXX";
    close(mkstemp(path));
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char sql[sizeof schema + 256];
        snprintf(sql, sizeof sql, "%s INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES %s;", schema,
                 rows[i]);
        make_db(path, sql);
        colo_trace_t *t = NULL;
        colo_error_t err;
        cr_assert_eq(import(path, NULL, 0, &t, &err), COLO_ERANGE, "row %zu: %s", i, err.text);
        cr_assert_str_eq(err.key, "CUPTI_ACTIVITY_KIND_KERNEL");
        cr_assert(strstr(err.text, "times are out of range"), "%s", err.text);
        cr_assert_null(t);
    }
    unlink(path);
}
