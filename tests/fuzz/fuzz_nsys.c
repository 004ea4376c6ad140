/* fuzz_nsys.c: the Nsight Systems SQLite export importer. An input that starts with SQLite's
 * header is the database file itself; any other input is SQL that builds the database first (the
 * seeds are the tables `nsys export` writes), so that the fuzzer explores what the tables hold
 * (NULLs, wrong types, huge values, missing tables and columns) rather than SQLite's B-trees.
 * The SQL may only create, fill and read tables: an authoriser refuses ATTACH, PRAGMA and the
 * rest, and a progress handler stops runaway statements. */
#include "fuzz.h"
#include "import_nsys.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int allow(void *ctx, int action, const char *a, const char *b, const char *c, const char *d)
{
    (void)ctx, (void)a, (void)b, (void)c, (void)d;
    switch (action) {
    case SQLITE_CREATE_TABLE:
    case SQLITE_CREATE_VIEW:
    case SQLITE_CREATE_INDEX:
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
    case SQLITE_READ:
    case SQLITE_SELECT:
    case SQLITE_FUNCTION:
    case SQLITE_TRANSACTION:
        return SQLITE_OK;
    default:
        return SQLITE_DENY;
    }
}

static int stop(void *ctx)
{
    return ++*(int *)ctx > 2000; /* x 1000 virtual-machine steps */
}

/* Builds the database at path from the SQL text; 0 when it could. */
static int build(const char *path, const uint8_t *data, size_t size)
{
    char *sql = malloc(size + 1);
    if (!sql) return -1;
    memcpy(sql, data, size);
    sql[size] = '\0';
    unlink(path);
    sqlite3 *db = NULL;
    int steps = 0, rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK) /* no journal, no sync: a scratch file (1.3x the inputs/s) */
        rc = sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;", NULL, NULL, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_set_authorizer(db, allow, NULL);
        sqlite3_progress_handler(db, 1000, stop, &steps);
        sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    sqlite3_close(db);
    free(sql);
    return rc == SQLITE_OK ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char magic[] = "SQLite format 3";
    const char *path;
    if (size >= sizeof magic && memcmp(data, magic, sizeof magic) == 0) {
        path = fuzz_file(data, size, "export.sqlite");
    } else {
        path = fuzz_file(NULL, 0, "export.sqlite");
        if (build(path, data, size) != 0) return 0;
    }
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    if (size % 2) o = (colo_kineto_opts_t){"m", 1, NULL, "forward", 2};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    if (colo_import_nsys(path, &o, &t, &err) == 0) colo_trace_free(t);
    return 0;
}
