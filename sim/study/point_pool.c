/* point_pool.c: the pieces a points runner is made of: the resume rule (which points are
 * done), a pool of forked processes computing one point each, the progress bar and the
 * messages for failed or stopped points. */
#define _GNU_SOURCE /* kill, clock_gettime */
#include "study.h"
#include "study_internal.h"
#include "alloc.h"
#include "errors.h"
#include "results.h"
#include "stop.h"

#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the worker pool: each point in a child process, its result in a file of its own ---- */

static int make_dir(const char *path, colo_error_t *err)
{
    char *p = colo_strdup(path);
    if (!p) return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    for (char *c = p + 1;; c++) {
        if (*c != '/' && *c) continue;
        char keep = *c;
        *c = '\0';
        if (mkdir(p, 0777) && errno != EEXIST) {
            int e = errno;
            colo_free(p);
            return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot make the folder: %s",
                                  strerror(e));
        }
        *c = keep;
        if (!keep) break;
    }
    colo_free(p);
    return 0;
}

void colo_study_point_file(char *buf, size_t n, const char *dir, size_t i)
{
    snprintf(buf, n, "%s/%06zu.json", dir, i);
}

int colo_study_todo(const colo_study_t *s, const char *dir, size_t **todo, size_t *n_todo,
                    colo_error_t *err)
{
    size_t total = colo_study_n_points(s), n = 0;
    int rc = make_dir(dir, err);
    if (rc) return rc;
    size_t *t = colo_calloc(total ? total : 1, sizeof *t);
    if (!t) return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    char file[4096];
    for (size_t i = 0; i < total; i++) {
        char **sets;
        size_t ns;
        if (colo_study_point(s, i, &sets, &ns)) {
            colo_free(t);
            return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
        }
        colo_study_point_file(file, sizeof file, dir, i);
        /* A point is done if its file is there and was made with the same overrides. */
        json_t *doc = json_load_file(file, 0, NULL);
        json_t *want = colo_study_string_array(sets, ns);
        bool same = doc && want && json_equal(json_object_get(doc, "overrides"), want);
        json_decref(want);
        json_decref(doc);
        colo_study_point_free(sets, ns);
        if (!same) t[n++] = i;
    }
    *todo = t;
    *n_todo = n;
    return 0;
}

struct colo_point_pool {
    int jobs, running;
    pid_t *pid;
    size_t *point;
};

colo_point_pool_t *colo_pool_new(int jobs)
{
    if (jobs < 1) jobs = 1;
    colo_point_pool_t *p = colo_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->jobs = jobs;
    p->pid = colo_calloc((size_t)jobs, sizeof *p->pid);
    p->point = colo_calloc((size_t)jobs, sizeof *p->point);
    if (!p->pid || !p->point) {
        colo_pool_free(p);
        return NULL;
    }
    return p;
}

void colo_pool_free(colo_point_pool_t *p)
{
    if (!p) return;
    colo_free(p->pid);
    colo_free(p->point);
    colo_free(p);
}

bool colo_pool_full(const colo_point_pool_t *p)
{
    return p->running >= p->jobs;
}

int colo_pool_running(const colo_point_pool_t *p)
{
    return p->running;
}

int colo_pool_start(colo_point_pool_t *p, const colo_study_t *s, colo_point_fn fn, size_t i,
                    const char *file, colo_error_t *err)
{
    char **sets;
    size_t n;
    if (colo_study_point(s, i, &sets, &n))
        return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        json_t *doc = fn(s, i, sets, n);
        colo_error_t e;
        colo_error_clear(&e);
        if (colo_stop_requested()) _exit(3); /* an interrupted point is not written: it reruns */
        _exit(!doc || colo_results_write(doc, file, &e) ? 1 : 0);
    }
    colo_study_point_free(sets, n);
    if (pid < 0)
        return colo_error_set(err, COLO_EIO, s->path, 0, NULL, "fork: %s", strerror(errno));
    p->pid[p->running] = pid;
    p->point[p->running] = i;
    p->running++;
    return 0;
}

int colo_pool_fill(colo_point_pool_t *p, const colo_study_t *s, colo_point_fn fn, const char *dir,
                   const size_t *todo, size_t n_todo, size_t *next, colo_error_t *err)
{
    char file[4096];
    int rc = 0;
    while (!rc && *next < n_todo && !colo_pool_full(p)) {
        colo_study_point_file(file, sizeof file, dir, todo[*next]);
        rc = colo_pool_start(p, s, fn, todo[(*next)++], file, err);
    }
    return rc;
}

int colo_pool_reap(colo_point_pool_t *p, bool block, size_t *point, bool *ok)
{
    if (p->running == 0) return 0;
    int st;
    pid_t pid;
    for (;;) {
        pid = waitpid(-1, &st, block ? 0 : WNOHANG);
        if (pid >= 0 || errno != EINTR) break;
        if (colo_stop_requested()) /* the points stop too (a terminal's ^C reaches them anyway) */
            for (int k = 0; k < p->running; k++)
                kill(p->pid[k], colo_stop_requested());
    }
    if (pid <= 0) return 0;
    for (int k = 0; k < p->running; k++)
        if (p->pid[k] == pid) {
            *point = p->point[k];
            *ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
            p->running--;
            p->pid[k] = p->pid[p->running];
            p->point[k] = p->point[p->running];
            return 1;
        }
    return 0; /* not one of ours */
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- simulations counted across processes: a page shared with the children ---- */

static unsigned long long *runs_shared;

int colo_study_runs_open(void)
{
    void *p =
        mmap(NULL, sizeof *runs_shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return -1;
    runs_shared = p;
    return 0;
}

void colo_study_runs_close(void)
{
    if (runs_shared) munmap(runs_shared, sizeof *runs_shared);
    runs_shared = NULL;
}

void colo_study_count_run(void)
{
    if (runs_shared) __atomic_fetch_add(runs_shared, 1, __ATOMIC_RELAXED);
}

unsigned long long colo_study_runs(void)
{
    return runs_shared ? __atomic_load_n(runs_shared, __ATOMIC_RELAXED) : 0;
}

void colo_study_progress(colo_study_progress_t *pr, size_t done, bool final)
{
    if (!pr->on) return;
    double now = mono_s();
    if (pr->t0 == 0) pr->t0 = now;
    if (!final && done < pr->total && now - pr->last < 0.1) return;
    pr->last = now;
    double el = now - pr->t0;
    size_t fresh = done > pr->skipped ? done - pr->skipped : 0;
    double rate = fresh && el > 0 ? (double)fresh / el : 0;
    double eta = rate > 0 ? (double)(pr->total - done) / rate : 0;
    int width = 30,
        fill = pr->total ? (int)((double)width * (double)done / (double)pr->total) : width;
    unsigned long long runs = colo_study_runs(); /* a search's probes: more than its points */
    char more[48] = "";
    if (runs > done) snprintf(more, sizeof more, ", %llu runs", runs);
    fprintf(stderr, "\r[%.*s%*s] %zu/%zu points%s, %.1f/s, ETA %d:%02d%s", fill,
            "##############################", width - fill, "", done, pr->total, more, rate,
            (int)eta / 60, (int)eta % 60, final ? "\n" : "  ");
    fflush(stderr);
}

int colo_study_points_failed(const char *dir, int failed, colo_error_t *err)
{
    if (!failed) return 0;
    return colo_error_set(err, COLO_EIO, dir, 0, NULL,
                          "%d point%s could not be written (out of memory or disk?)", failed,
                          failed == 1 ? "" : "s");
}

int colo_study_stopped(const char *dir, size_t written, size_t total, colo_error_t *err)
{
    return colo_error_set(err, COLO_EINTR, dir, 0, NULL,
                          "stopped by %s: %zu of %zu points are written, the rest are not; run "
                          "the same command again to finish",
                          colo_stop_name(), written, total);
}

void colo_study_say_skipped(const colo_sweep_opts_t *o, size_t skipped, size_t total)
{
    if (!o->quiet && skipped)
        fprintf(stderr, "%zu of %zu points were already done and were not run again\n", skipped,
                total);
}
