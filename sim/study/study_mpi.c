/* study_mpi.c: a study's points spread over MPI ranks.
 *
 * Rank 0 is the coordinator: it lists the points not yet done (the same resume rule as a local
 * sweep), keeps its own pool of forked processes busy with them, and answers every other
 * rank's request for work with the next point number, one at a time, so that fast ranks take
 * more points than slow ones. A worker rank computes each point in a forked child (a point
 * that crashes costs that point, not the rank), writes it to a private temporary folder and
 * sends the file's bytes to rank 0, which writes them to DIR/points/NNNNNN.json. The files are
 * therefore the same bytes as a local run's, and only rank 0 needs to reach the output folder;
 * every rank reads the study, its scenario and traces from the same path. */
#define _GNU_SOURCE /* mkdtemp */
#include "study_mpi.h"
#include "alloc.h"
#include "atomic_file.h"
#include "json_lines.h"
#include "stop.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef COLOSIM_HAVE_MPI
#include <mpi.h>
#endif

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : 0;
}

bool colo_mpi_launched(void)
{
    return env_long("OMPI_COMM_WORLD_SIZE") > 1 || env_long("PMIX_SIZE") > 1 ||
           env_long("PMI_SIZE") > 1;
}

#ifdef COLOSIM_HAVE_MPI

enum { TAG_READY = 1, TAG_RESULT, TAG_WORK, TAG_DONE };

int colo_mpi_begin(int *argc, char ***argv, int *rank, int *size, colo_error_t *err)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

void colo_mpi_end(void)
{
    MPI_Finalize();
}

bool colo_mpi_all(bool ok)
{
    int mine = ok, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all != 0;
}

static void pause_briefly(void)
{
    struct timespec ts = {0, 1000000}; /* 1 ms: a point takes tens of ms or more */
    nanosleep(&ts, NULL);
}

/* ---- rank 0 ---- */

/* A worker's result: "N\n" and point N's file, or "N\n" alone when it could not make one.
 * 0 when the file was written, 1 when the point failed, negative with err set when rank 0
 * cannot write into dir. */
static int store(const colo_study_t *s, const char *dir, const char *msg, int len,
                 colo_error_t *err)
{
    const char *nl = memchr(msg, '\n', (size_t)len);
    char *end;
    unsigned long long i = strtoull(msg, &end, 10);
    if (!nl || end != nl || i >= colo_study_n_points(s)) return 1;
    const char *body = nl + 1;
    size_t n = (size_t)(msg + len - body);
    if (n == 0) return 1;
    json_error_t je;
    json_t *doc = json_loadb(body, n, 0, &je);
    if (!doc) return 1;
    json_decref(doc);
    char file[4096];
    colo_study_point_file(file, sizeof file, dir, (size_t)i);
    colo_atomic_file_t af;
    int rc = colo_atomic_open(&af, file, err);
    if (rc) return rc;
    if (fwrite(body, 1, n, af.f) != n) {
        colo_atomic_abort(&af);
        return colo_error_set(err, COLO_EIO, file, 0, NULL, "cannot write");
    }
    return colo_atomic_commit(&af, err);
}

static int coordinate(const colo_study_t *s, const colo_sweep_opts_t *o, const char *dir,
                      colo_point_fn fn, int jobs, int size, colo_error_t *err)
{
    /* How many requests each rank keeps open: its jobs, or 0 if it could not start. */
    int *slots = colo_calloc((size_t)size, sizeof *slots);
    if (!slots) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&jobs, 1, MPI_INT, slots, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long open = 0;
    for (int r = 1; r < size; r++)
        open += slots[r];
    colo_free(slots);

    size_t total = colo_study_n_points(s), *todo = NULL, n_todo = 0;
    int rc = colo_study_todo(s, dir, &todo, &n_todo, err);
    colo_point_pool_t *pool = colo_pool_new(jobs);
    if (!rc && !pool) rc = colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    colo_study_progress_t pr = {.on = o->progress, .total = total, .skipped = total - n_todo};
    size_t next = 0, done = total - n_todo, point;
    int failed = 0;
    bool ok;
    colo_study_progress(&pr, done, false);
    /* Until every rank's open request has had its "done", and our own children are back. */
    while (open > 0 || (!rc && next < n_todo) || (pool && colo_pool_running(pool) > 0)) {
        bool busy = false;
        if (!rc) rc = colo_pool_fill(pool, s, fn, dir, todo, n_todo, &next, err);
        int flag;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            busy = true;
            int len;
            MPI_Get_count(&st, MPI_CHAR, &len);
            char *msg = colo_malloc((size_t)len + 1);
            if (!msg) MPI_Abort(MPI_COMM_WORLD, 1);
            MPI_Recv(msg, len, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (st.MPI_TAG == TAG_RESULT) { /* after a stop, finished points are still kept */
                int r = rc && rc != COLO_EINTR ? 1 : store(s, dir, msg, len, err);
                if (r < 0) rc = r;
                failed += r != 0;
                done++;
            }
            colo_free(msg);
            if (!rc && next < n_todo) {
                unsigned long long i = todo[next++];
                MPI_Send(&i, 1, MPI_UNSIGNED_LONG_LONG, st.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            } else {
                MPI_Send(NULL, 0, MPI_UNSIGNED_LONG_LONG, st.MPI_SOURCE, TAG_DONE, MPI_COMM_WORLD);
                open--;
            }
        }
        if (pool && colo_pool_reap(pool, false, &point, &ok)) {
            busy = true;
            done++;
            failed += !ok;
        }
        colo_study_progress(&pr, done, false);
        if (!rc && colo_stop_requested()) rc = COLO_EINTR; /* no more points handed out */
        if (!busy) pause_briefly();
    }
    colo_study_progress(&pr, done, true);
    colo_study_say_skipped(o, total - n_todo, total);
    colo_pool_free(pool);
    colo_free(todo);
    if (rc == COLO_EINTR) return colo_study_stopped(dir, done - (size_t)failed, total, err);
    return rc ? rc : colo_study_points_failed(dir, failed, err);
}

/* ---- the other ranks ---- */

static void send_result(size_t i, const char *file, bool ok)
{
    char head[32];
    int hl = snprintf(head, sizeof head, "%zu\n", i);
    size_t n = 0;
    char *body = NULL;
    colo_error_t e;
    colo_error_clear(&e);
    if (ok && colo_read_own_file(file, &body, &n, &e)) n = 0; /* unreadable: the point failed */
    char *msg = colo_malloc((size_t)hl + n);
    if (!msg) MPI_Abort(MPI_COMM_WORLD, 1);
    memcpy(msg, head, (size_t)hl);
    if (body) memcpy(msg + hl, body, n);
    MPI_Send(msg, (int)((size_t)hl + n), MPI_CHAR, 0, TAG_RESULT, MPI_COMM_WORLD);
    colo_free(msg);
    colo_free(body);
    unlink(file);
}

static int work(const colo_study_t *s, colo_point_fn fn, int jobs, colo_error_t *err)
{
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/colosim-rank-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    colo_point_pool_t *pool = NULL;
    int rc = 0;
    if (!mkdtemp(dir))
        rc = colo_error_set(err, COLO_EIO, dir, 0, NULL, "cannot make a temporary folder: %s",
                            strerror(errno));
    else if (!(pool = colo_pool_new(jobs)))
        rc = colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    int slots = rc ? 0 : jobs; /* a rank that cannot work asks for nothing */
    MPI_Gather(&slots, 1, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
    for (int k = 0; k < slots; k++)
        MPI_Send(NULL, 0, MPI_CHAR, 0, TAG_READY, MPI_COMM_WORLD);
    int open = slots;
    char file[4096];
    size_t point;
    bool ok;
    while (open > 0 || (pool && colo_pool_running(pool) > 0)) {
        bool busy = false;
        int flag;
        MPI_Status st;
        MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (flag) {
            busy = true;
            unsigned long long i = 0;
            MPI_Recv(&i, 1, MPI_UNSIGNED_LONG_LONG, 0, st.MPI_TAG, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            open--;
            if (st.MPI_TAG == TAG_WORK) {
                colo_study_point_file(file, sizeof file, dir, (size_t)i);
                colo_error_t e;
                colo_error_clear(&e);
                if (colo_pool_start(pool, s, fn, (size_t)i, file, &e)) {
                    send_result((size_t)i, file, false); /* fork failed: the point fails */
                    open++;
                }
            }
        }
        if (pool && colo_pool_reap(pool, false, &point, &ok)) {
            busy = true;
            colo_study_point_file(file, sizeof file, dir, point);
            send_result(point, file, ok); /* also asks for the next point */
            open++;
        }
        if (!busy) pause_briefly();
    }
    colo_pool_free(pool);
    if (!rc) rmdir(dir);
    return rc ? rc : 1;
}

int colo_mpi_run_points(const colo_study_t *s, const colo_sweep_opts_t *o, const char *dir,
                        colo_point_fn fn, colo_error_t *err)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int jobs = o->jobs > 0 ? o->jobs : 1;
    return rank == 0 ? coordinate(s, o, dir, fn, jobs, size, err) : work(s, fn, jobs, err);
}

#endif
