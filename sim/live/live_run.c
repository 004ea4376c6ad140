/* live_run.c: the live-run executor: the command; the parent's fits, processes, barrier, faults. */
#define _GNU_SOURCE /* mkdtemp, dprintf */
#include "live_run_internal.h"
#include "alloc.h"
#include "results.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define BARRIER_LEAD_NS 200000000LL /* the start is this far after the last child is ready */
#define GRACE_NS 30000000000LL      /* after the run's end, processes get this long to exit */

long long colo_live_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void colo_live_sleep_until(long long t)
{
    struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

void colo_live_sleep_ns(long long d)
{
    if (d > 0) colo_live_sleep_until(colo_live_now_ns() + d);
}

/* Waits up to ms for pid to exit, then kills it. True when it exited by itself; *st is its
 * status either way. */
bool colo_live_reap_within(pid_t pid, int ms, int *st)
{
    for (int k = 0; k < ms / 10 && waitpid(pid, st, WNOHANG) == 0; k++)
        colo_live_sleep_ns(10000000);
    if (waitpid(pid, st, WNOHANG) != 0) return true;
    kill(pid, SIGKILL);
    waitpid(pid, st, 0);
    return false;
}

/* ---- the parent ---- */

struct colo_live_parent_state colo_live_parent;

static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
}

/* Sets ("KEY=VALUE") and removes ("KEY") environment entries in this process. */
void colo_live_apply_env(char env[][COLO_LIVE_ENV_LEN], size_t n)
{
    for (size_t k = 0; k < n; k++) {
        char *eq = strchr(env[k], '=');
        if (!eq) {
            unsetenv(env[k]);
            continue;
        }
        *eq = '\0';
        setenv(env[k], eq + 1, 1);
        *eq = '=';
    }
}

static void kill_children(void)
{
    for (int i = 0; i < colo_live_parent.n; i++)
        if (colo_live_parent.procs[i].pid > 0 && !colo_live_parent.procs[i].done)
            kill(colo_live_parent.procs[i].pid, SIGKILL);
    for (int i = 0; i < colo_live_parent.n; i++)
        if (colo_live_parent.procs[i].pid > 0 && !colo_live_parent.procs[i].done) {
            waitpid(colo_live_parent.procs[i].pid, &colo_live_parent.procs[i].status, 0);
            colo_live_parent.procs[i].done = true;
        }
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* The run folder holds only our own files: tenant records and errors, MPS pipes and logs. */
static void remove_run_dir(void)
{
    if (!colo_live_parent.run_dir[0] || colo_live_parent.keep_run_dir) return;
    nftw(colo_live_parent.run_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    colo_live_parent.run_dir[0] = '\0';
}

static void cleanup(void)
{
    kill_children();
    colo_live_parent.n = 0;
    colo_live_mps_stop();
    remove_run_dir();
}

static int spawn(const struct colo_live_opts *o, const colo_live_plan_t *plan, int p,
                 colo_live_phase_t phase, const char *const *self_argv, size_t n_self,
                 colo_error_t *err)
{
    int ctl[2], st[2];
    if (pipe(ctl) || pipe(st))
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "pipe: %s", strerror(errno));
    char child[4200];
    snprintf(child, sizeof child, "%d,%d,%d,%c,%s", p, ctl[0], st[1],
             phase == COLO_LIVE_FIT ? 'f' : 'r', colo_live_parent.run_dir);
    char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n_env =
        colo_live_env(plan, p, phase, colo_live_parent.run_dir, colo_live_parent.procs[p].uuid,
                      colo_live_parent.partition[p][0] ? colo_live_parent.partition[p] : NULL, env);
    /* the environment as the results record it: the run folder as RUN */
    char *rec =
        phase == COLO_LIVE_FIT ? colo_live_parent.procs[p].fit_env : colo_live_parent.procs[p].env;
    size_t used = 0, rd = strlen(colo_live_parent.run_dir);
    rec[0] = '\0';
    for (size_t k = 0; k < n_env && used < sizeof colo_live_parent.procs[0].env; k++) {
        char *v = strstr(env[k], colo_live_parent.run_dir);
        int w = v ? snprintf(rec + used, sizeof colo_live_parent.procs[0].env - used, "%s%.*sRUN%s",
                             k ? " " : "", (int)(v - env[k]), env[k], v + rd)
                  : snprintf(rec + used, sizeof colo_live_parent.procs[0].env - used, "%s%s%s",
                             k ? " " : "", strchr(env[k], '=') ? "" : "-", env[k]);
        if (w > 0) used += (size_t)w;
    }
    const char **argv = colo_calloc(n_self + 2 * o->n_sets + 8, sizeof *argv);
    if (!argv) return COLO_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n_self; i++)
        argv[k++] = self_argv[i];
    argv[k++] = o->file;
    for (size_t i = 0; i < o->n_sets; i++) {
        argv[k++] = "--set";
        argv[k++] = o->sets[i];
    }
    argv[k++] = "--backend";
    argv[k++] = o->backend;
    argv[k++] = "--child";
    argv[k++] = child;
    argv[k] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        close(ctl[1]);
        close(st[0]);
        colo_live_apply_env(env, n_env);
        execv(self_argv[0], (char *const *)argv);
        _exit(127);
    }
    colo_free(argv);
    close(ctl[0]);
    close(st[1]);
    if (pid < 0) {
        close(ctl[1]);
        close(st[0]);
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "fork: %s", strerror(errno));
    }
    fcntl(ctl[1], F_SETFD, FD_CLOEXEC);
    fcntl(st[0], F_SETFD, FD_CLOEXEC);
    colo_live_parent.procs[p].pid = pid;
    colo_live_parent.procs[p].ctl = ctl[1];
    colo_live_parent.procs[p].st = st[0];
    return 0;
}

/* How a process ended, after the reason it gave (its "error" line) when it gave one. */
static void describe_exit(struct colo_live_proc *pr)
{
    char how[96] = "";
    if (WIFSIGNALED(pr->status))
        snprintf(how, sizeof how, "process killed by signal %d (%s)", WTERMSIG(pr->status),
                 strsignal(WTERMSIG(pr->status)));
    else if (WIFEXITED(pr->status) && WEXITSTATUS(pr->status))
        snprintf(how, sizeof how, "process exited with status %d", WEXITSTATUS(pr->status));
    if (!how[0]) return;
    if (!pr->error[0]) {
        snprintf(pr->error, sizeof pr->error, "%s", how);
        return;
    }
    size_t used = strlen(pr->error);
    if (!strstr(pr->error, how)) snprintf(pr->error + used, sizeof pr->error - used, " (%s)", how);
}

/* Reaps children that ended; true when all have. */
static bool reap(void)
{
    bool all = true;
    for (int i = 0; i < colo_live_parent.n; i++) {
        struct colo_live_proc *pr = &colo_live_parent.procs[i];
        if (pr->done) continue;
        if (waitpid(pr->pid, &pr->status, WNOHANG) == pr->pid) {
            pr->done = true;
            describe_exit(pr);
        } else {
            all = false;
        }
    }
    return all;
}

/* Waits for each child's "ready" line (or its failure). 0, or 130 when interrupted. */
static int wait_ready(double timeout_s)
{
    long long until = colo_live_now_ns() + (long long)(timeout_s * 1e9);
    for (;;) {
        if (g_signal) return EXIT_INTERRUPTED;
        struct pollfd fds[MAX_PROCS];
        int map[MAX_PROCS], n = 0;
        for (int i = 0; i < colo_live_parent.n; i++)
            if (!colo_live_parent.procs[i].ready && !colo_live_parent.procs[i].error[0]) {
                fds[n].fd = colo_live_parent.procs[i].st;
                fds[n].events = POLLIN;
                map[n++] = i;
            }
        if (!n) return 0;
        if (colo_live_now_ns() > until) {
            for (int k = 0; k < n; k++)
                snprintf(colo_live_parent.procs[map[k]].error,
                         sizeof colo_live_parent.procs[0].error,
                         "not ready after %.0f s (--ready-timeout)", timeout_s);
            return 0;
        }
        if (poll(fds, (nfds_t)n, 100) <= 0) continue;
        for (int k = 0; k < n; k++) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            struct colo_live_proc *pr = &colo_live_parent.procs[map[k]];
            char line[1024];
            ssize_t got = read(pr->st, line, sizeof line - 1);
            if (got <= 0) {
                snprintf(pr->error, sizeof pr->error, "ended before it was ready");
                continue;
            }
            line[got] = '\0';
            line[strcspn(line, "\n")] = '\0';
            if (strncmp(line, "ready ", 6) == 0) {
                pr->ready = true;
                snprintf(pr->device, sizeof pr->device, "%.250s", line + 6);
            } else {
                snprintf(pr->error, sizeof pr->error, "%.630s",
                         strncmp(line, "error ", 6) == 0 ? line + 6 : line);
            }
        }
    }
}

static char *iso_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

/* Waits for a fitting child's line ("fitted DEVICE" or "error MESSAGE") and its end. */
static void wait_fit(struct colo_live_proc *pr, double timeout_s)
{
    long long until = colo_live_now_ns() + (long long)(timeout_s * 1e9);
    char line[1024];
    ssize_t got = 0;
    bool answered = false; /* a line, or end of file: the child is ending by itself */
    while (!g_signal && colo_live_now_ns() < until) {
        struct pollfd fd = {.fd = pr->st, .events = POLLIN};
        if (poll(&fd, 1, 100) <= 0) continue;
        got = read(pr->st, line, sizeof line - 1);
        answered = true;
        break;
    }
    if (got > 0) {
        line[got] = '\0';
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "error ", 6) == 0)
            snprintf(pr->fit_error, sizeof pr->fit_error, "%.630s", line + 6);
    } else if (!g_signal && colo_live_now_ns() >= until) {
        snprintf(pr->fit_error, sizeof pr->fit_error,
                 "the fit took more than %.0f s (--ready-timeout)", timeout_s);
    }
    int st;
    if (!colo_live_reap_within(pr->pid, answered ? 10000 : 0, &st) && !pr->fit_error[0])
        snprintf(pr->fit_error, sizeof pr->fit_error, "the fitting process did not end");
    else if (!pr->fit_error[0] && (!WIFEXITED(st) || WEXITSTATUS(st)))
        snprintf(pr->fit_error, sizeof pr->fit_error, "the fitting process failed (status %d)", st);
    close(pr->ctl);
    close(pr->st);
    pr->pid = 0;
}

static int parent_main(const struct colo_live_opts *o, const colo_scenario_t *sc,
                       const colo_live_plan_t *plan, const colo_live_backend_t *b, const char *prog,
                       const char *const *self_argv, size_t n_self)
{
    if (plan->n_processes > MAX_PROCS) {
        fprintf(stderr, "%s: %s: %d processes; a live run holds at most %d\n", prog, sc->path,
                plan->n_processes, MAX_PROCS);
        return EXIT_INPUT;
    }
    static char prof[MAX_PROCS][32], uuid[MAX_PROCS][96];
    struct colo_live_proc *procs = colo_calloc((size_t)plan->n_processes, sizeof *procs);
    if (!procs) return EXIT_RUN;
    colo_live_parent.procs = procs;
    colo_live_parent.n = plan->n_processes;
    int status = 0;
    if (plan->needs_mig && (b->uses_gpu || getenv("COLOSIM_NVIDIA_SMI")) &&
        (status = colo_live_assign_mig(sc, plan, procs, prof, uuid, prog))) {
        colo_free(procs);
        return status;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(colo_live_parent.run_dir, sizeof colo_live_parent.run_dir, "%s/colosim-live-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(colo_live_parent.run_dir)) {
        fprintf(stderr, "%s: cannot make a run folder in %s: %s\n", prog,
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        colo_live_parent.run_dir[0] = '\0';
        colo_free(procs);
        return EXIT_RUN;
    }
    atexit(cleanup);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    colo_error_t err;
    colo_error_clear(&err);
    int rc = 0;
    colo_live_parent.plan = plan;
    bool smi = b->uses_gpu || getenv("COLOSIM_NVIDIA_SMI");
    if (smi && (status = colo_live_check_compute_mode(sc, plan, prog))) {
        cleanup();
        colo_free(procs);
        return status;
    }
    char no_mps[4400];
    colo_live_pipe_dir(colo_live_parent.run_dir, -1, no_mps, sizeof no_mps);
    if (mkdir(no_mps, 0700))
        rc = colo_error_set(&err, COLO_EIO, colo_live_parent.run_dir, 0, NULL, "cannot make %s",
                            no_mps);
    /* the fits: one process at a time, alone on the GPU, before any MPS daemon */
    if (!rc && !o->quiet)
        fprintf(stderr, "%s: fitting the synthetic kernels, one process at a time (%s)...\n", prog,
                b->name);
    long long origin = colo_live_now_ns();
    for (int p = 0; p < colo_live_parent.n && !rc && !g_signal; p++) {
        colo_live_parent.procs[p].fit_start = colo_live_now_ns() - origin;
        rc = spawn(o, plan, p, COLO_LIVE_FIT, self_argv, n_self, &err);
        if (!rc) wait_fit(&colo_live_parent.procs[p], o->ready_timeout_s);
        colo_live_parent.procs[p].fit_end = colo_live_now_ns() - origin;
    }
    /* a process that could not fit its kernels cannot run: say why, per process, and stop */
    bool fit_failed = false;
    for (int p = 0; p < colo_live_parent.n && !rc && !g_signal; p++)
        if (colo_live_parent.procs[p].fit_error[0]) {
            char who[256] = "";
            size_t used = 0;
            for (size_t i = 0; i < plan->n && used + 2 < sizeof who; i++)
                if (plan->t[i].process == p) {
                    int w = snprintf(who + used, sizeof who - used, "%s%s", used ? ", " : "",
                                     sc->tenants[i].name);
                    used += w > 0 ? (size_t)w : 0;
                }
            fprintf(stderr, "%s: process %d (%s) failed to fit its kernels: %s\n", prog, p, who,
                    colo_live_parent.procs[p].fit_error);
            fit_failed = true;
        }
    if (fit_failed) {
        fprintf(stderr, "%s: nothing was run and no results written\n", prog);
        cleanup();
        colo_free(procs);
        return EXIT_RUN;
    }
    bool mps = plan->mps_daemon && (b->uses_gpu || getenv("COLOSIM_MPS_CONTROL"));
    char gpu_uuid[96] = "";
    if (mps && !rc && !g_signal) {
        if (smi) colo_live_first_gpu_uuid(gpu_uuid, sizeof gpu_uuid);
        rc = colo_live_mps_start(sc, gpu_uuid[0] ? gpu_uuid : NULL, &err);
    }
    for (int p = 0; p < colo_live_parent.n && !rc && !g_signal; p++)
        rc = spawn(o, plan, p, COLO_LIVE_RUN, self_argv, n_self, &err);
    if (g_signal && !rc) {
        fprintf(stderr, "%s: interrupted (signal %d): processes stopped%s, no results written\n",
                prog, (int)g_signal, mps ? ", MPS daemons stopped" : "");
        cleanup();
        colo_free(procs);
        return EXIT_INTERRUPTED;
    }
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", prog, msg);
        cleanup();
        colo_free(procs);
        return EXIT_RUN;
    }
    if (!o->quiet)
        fprintf(stderr, "%s: %d process%s getting ready (%s)...\n", prog, colo_live_parent.n,
                colo_live_parent.n == 1 ? "" : "es", b->name);
    status = wait_ready(o->ready_timeout_s);
    long long t0 = colo_live_now_ns() + BARRIER_LEAD_NS;
    for (int i = 0; i < colo_live_parent.n && !status; i++) {
        if (!colo_live_parent.procs[i].ready) continue;
        if (dprintf(colo_live_parent.procs[i].ctl, "%lld\n", t0) < 0)
            snprintf(colo_live_parent.procs[i].error, sizeof colo_live_parent.procs[0].error,
                     "cannot be started");
    }
    for (int i = 0; i < colo_live_parent.n; i++)
        close(colo_live_parent.procs[i].ctl); /* unready children read end-of-file and exit */
    if (!status && !o->quiet)
        fprintf(stderr, "%s: running %.3g s of arrivals plus up to %.3g s of drain\n", prog,
                COLO_TO_S(sc->duration), COLO_TO_S(sc->drain));
    /* faults are real: the tenant's process is killed at the fault's time */
    bool *fired = colo_calloc(sc->n_faults + 1, sizeof *fired);
    long long limit = t0 + sc->duration + sc->drain + GRACE_NS;
    while (!status && !reap()) {
        if (g_signal) {
            status = EXIT_INTERRUPTED;
            break;
        }
        long long now = colo_live_now_ns();
        for (size_t k = 0; fired && k < sc->n_faults; k++) {
            struct colo_live_proc *pr =
                &colo_live_parent.procs[plan->t[sc->faults[k].tenant].process];
            if (fired[k] || now < t0 + sc->faults[k].at || pr->done) continue;
            fired[k] = true;
            kill(pr->pid, SIGKILL);
        }
        if (now > limit) {
            for (int i = 0; i < colo_live_parent.n; i++)
                if (!colo_live_parent.procs[i].done) {
                    kill(colo_live_parent.procs[i].pid, SIGKILL);
                    waitpid(colo_live_parent.procs[i].pid, &colo_live_parent.procs[i].status, 0);
                    colo_live_parent.procs[i].done = true;
                    snprintf(
                        colo_live_parent.procs[i].error, sizeof colo_live_parent.procs[0].error,
                        "still running %.0f s after the run's end: killed", (double)GRACE_NS / 1e9);
                }
            break;
        }
        colo_live_sleep_ns(2000000);
    }
    /* children before daemons: a daemon told to quit waits for its clients */
    kill_children();
    colo_live_mps_stop();
    if (status == EXIT_INTERRUPTED) {
        fprintf(stderr, "%s: interrupted (signal %d): processes stopped%s, no results written\n",
                prog, (int)g_signal, mps ? ", MPS daemons stopped" : "");
        colo_free(fired);
        cleanup();
        colo_free(procs);
        return status;
    }

    /* gather */
    colo_live_outcome_t *out = colo_calloc(plan->n, sizeof *out);
    json_t *procs_json = json_array();
    bool failed = false;
    rc = out && procs_json ? 0 : COLO_ENOMEM;
    for (size_t i = 0; i < plan->n && !rc; i++) {
        rc = colo_live_read_outcome(i, &out[i]);
        const struct colo_live_proc *pr = &colo_live_parent.procs[plan->t[i].process];
        bool fault = false;
        for (size_t k = 0; fired && k < sc->n_faults; k++)
            fault |= fired[k] && plan->t[sc->faults[k].tenant].process == plan->t[i].process;
        if (pr->error[0] && !out[i].error[0])
            snprintf(out[i].error, sizeof out[i].error, "%.590s%s", pr->error,
                     fault ? " (fault injected by the scenario)" : "");
        if (out[i].error[0] && !fault) failed = true;
    }
    for (int i = 0; i < colo_live_parent.n && !rc; i++) {
        const struct colo_live_proc *pr = &colo_live_parent.procs[i];
        json_array_append_new(
            procs_json,
            json_pack("{s:i,s:I,s:s,s:s,s:{s:s,s:f,s:f,s:o},s:o}", "process", i, "pid",
                      (json_int_t)pr->pid, "device", pr->device, "environment", pr->env, "fit",
                      "environment", pr->fit_env, "start_s", (double)pr->fit_start / 1e9, "end_s",
                      (double)pr->fit_end / 1e9, "error",
                      pr->fit_error[0] ? json_string(pr->fit_error) : json_null(), "error",
                      pr->error[0] ? json_string(pr->error) : json_null()));
    }
    char date[32], host[256] = "";
    gethostname(host, sizeof host - 1);
    json_t *live = rc ? NULL
                      : json_pack("{s:s,s:s,s:s,s:b,s:i,s:f,s:o}", "backend", b->name, "started",
                                  iso_now(date, sizeof date), "host", host, "mps_daemon", mps,
                                  "mps_daemons", mps ? plan->n_daemons : 0, "run_start_s",
                                  (double)(t0 - origin) / 1e9, "processes", procs_json);
    if (!live) json_decref(procs_json);
    json_t *res = live ? colo_live_results(sc, plan, out, o->sets, o->n_sets, live) : NULL;
    if (res && colo_live_fit_results(sc, plan, json_object_get(res, "tenants"))) {
        json_decref(res);
        res = NULL;
    }
    if (!res) rc = COLO_ENOMEM;
    if (!rc && o->output) rc = colo_results_write(res, o->output, &err);
    if (rc) {
        if (rc == COLO_ENOMEM) colo_error_set(&err, rc, sc->path, 0, NULL, "out of memory");
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", prog, msg);
        status = EXIT_RUN;
    } else {
        if (!o->quiet) {
            colo_results_print(res, stdout);
            if (o->output) printf("results written to %s\n", o->output);
        }
        for (size_t i = 0; i < plan->n; i++)
            if (out[i].error[0])
                fprintf(stderr, "%s: tenant %s: %s\n", prog, sc->tenants[i].name, out[i].error);
        if (failed) status = EXIT_RUN;
    }
    bool refused = false; /* an MPS client refused or lost: the daemons' logs say why */
    for (int i = 0; i < colo_live_parent.n; i++)
        refused |= strstr(colo_live_parent.procs[i].error, "cudaErrorMps") != NULL;
    if (refused && mps) {
        colo_live_parent.keep_run_dir = true;
        fprintf(stderr, "%s: the run folder is kept for the MPS daemons' logs: %s/mps-N/log\n",
                prog, colo_live_parent.run_dir);
    }
    json_decref(res);
    for (size_t i = 0; out && i < plan->n; i++)
        colo_free(out[i].rec);
    colo_free(out);
    colo_free(fired);
    cleanup();
    colo_free(procs);
    colo_live_parent.procs = NULL;
    colo_live_parent.n = 0;
    return status;
}

static const colo_live_backend_t *find_backend(const char *name,
                                               const colo_live_backend_t *const *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++)
        if (strcmp(b[i]->name, name) == 0) return b[i];
    return NULL;
}

int colo_live_main(int argc, char **argv, const char *prog, const char *const *self_argv,
                   size_t n_self, const colo_live_backend_t *const *backends, size_t n_backends)
{
    struct colo_live_opts o;
    int status = colo_live_parse_opts(argc, argv, prog, backends, n_backends, &o);
    if (status) {
        colo_free(o.sets);
        return status < 0 ? 0 : status;
    }
    const colo_live_backend_t *b = find_backend(o.backend, backends, n_backends);
    if (!b) {
        fprintf(stderr, "%s: --backend: unknown backend '%s'\n\n", prog, o.backend);
        colo_live_usage(stderr, prog, backends, n_backends);
        colo_free(o.sets);
        return EXIT_INPUT;
    }
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc = NULL;
    colo_live_plan_t plan;
    memset(&plan, 0, sizeof plan);
    int rc = colo_scenario_load(o.file, o.sets, o.n_sets, &sc, &err);
    if (!rc) rc = colo_live_plan(sc, &plan, &err);
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s: %s\n", prog, msg);
        status = rc == COLO_ENOMEM || rc == COLO_EIO ? EXIT_RUN : EXIT_INPUT;
    } else if (o.dry_run) {
        colo_live_plan_print(sc, &plan, stdout);
    } else if (o.self_test) {
        if (!b->self_test) {
            fprintf(stderr, "%s: the %s backend has no self-test\n", prog, b->name);
            status = EXIT_INPUT;
        } else {
            rc = b->self_test(sc, stdout, &err);
            if (rc < 0) {
                char msg[2048];
                colo_error_format(&err, msg, sizeof msg);
                fprintf(stderr, "%s: %s\n", prog, msg);
                status = EXIT_RUN;
            } else {
                status = rc ? EXIT_GOAL : 0;
            }
        }
    } else if (o.child) {
        status = colo_live_child_main(&o, sc, &plan, b);
    } else {
        status = parent_main(&o, sc, &plan, b, prog, self_argv, n_self);
    }
    colo_live_plan_free(&plan);
    colo_scenario_free(sc);
    colo_free(o.sets);
    return status;
}
