/* live_child.c: a child process: fits, or runs, the tenants of one planned process. */
#define _GNU_SOURCE /* dprintf, pipe2 */
#include "live_run_internal.h"
#include "alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- real-program tenants ---- */

struct command_tenant {
    pid_t pid;
    int to, from; /* its standard input and output */
    FILE *in;
};

/* Starts `sh -c COMMAND` with the tenant's identity in its environment; waits for its first line,
 * which must be "ready". */
static int command_start(const colo_scenario_t *sc, size_t i, struct command_tenant *ct,
                         colo_error_t *err)
{
    const colo_tenant_cfg_t *c = &sc->tenants[i];
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
        return colo_error_set(err, COLO_EIO, sc->path, 0, c->name, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        return colo_error_set(err, COLO_EIO, sc->path, 0, c->name, "fork: %s", strerror(errno));
    if (pid == 0) {
        char batch[32];
        snprintf(batch, sizeof batch, "%d", c->trace->batch);
        setenv("COLOSIM_TENANT", c->name, 1);
        setenv("COLOSIM_MODEL", c->trace->model, 1);
        setenv("COLOSIM_BATCH", batch, 1);
        char *abs = realpath(c->trace_path, NULL); /* before the chdir below */
        setenv("COLOSIM_TRACE", abs ? abs : c->trace_path, 1);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) _exit(127);
        if (sc->dir && *sc->dir && chdir(sc->dir)) _exit(127); /* relative paths as for traces */
        execl("/bin/sh", "sh", "-c", c->command, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    ct->pid = pid;
    ct->to = in[1];
    ct->from = out[0];
    ct->in = fdopen(out[0], "r");
    char line[256];
    if (!ct->in || !fgets(line, sizeof line, ct->in) || strncmp(line, "ready", 5) != 0)
        return colo_error_set(err, COLO_EIO, sc->path, 0, c->name,
                              "the command '%s' did not print \"ready\" on its first line",
                              c->command);
    return 0;
}

/* One request: writes its number, waits for the same number back. */
static int command_request(const struct command_tenant *ct, unsigned long long id,
                           colo_error_t *err)
{
    char line[256];
    if (dprintf(ct->to, "%llu\n", id) < 0)
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "the command's input is closed");
    if (!fgets(line, sizeof line, ct->in))
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "the command exited mid-request");
    if (strtoull(line, NULL, 10) != id)
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL,
                              "the command answered '%.40s' to request %llu", line, id);
    return 0;
}

static void command_stop(struct command_tenant *ct)
{
    if (ct->pid <= 0) return;
    close(ct->to);
    if (ct->in)
        fclose(ct->in);
    else
        close(ct->from);
    int st;
    colo_live_reap_within(ct->pid, 5000, &st);
    ct->pid = 0;
}

/* ---- a child process: the tenants of one planned process ---- */

struct tenant_thread {
    const colo_scenario_t *sc;
    const colo_live_tenant_t *p;
    const colo_live_backend_t *b;
    struct command_tenant cmd;
    long long t0;
    const char *run_dir;
    pthread_t th;
};

static void write_error(const char *run_dir, size_t tenant, const colo_error_t *err)
{
    char path[4096], msg[2048];
    snprintf(path, sizeof path, "%s/tenant-%zu.err", run_dir, tenant);
    colo_error_format(err, msg, sizeof msg);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", msg);
        fclose(f);
    }
}

/* Serves one request arriving at a (ns after t0); appends its record. */
static int serve(struct tenant_thread *tt, int fd, long long a, unsigned long long id,
                 long long *end_out, colo_error_t *err)
{
    const colo_tenant_cfg_t *c = &tt->sc->tenants[tt->p->tenant];
    long long t0 = tt->t0;
    if (colo_live_now_ns() < t0 + a) colo_live_sleep_until(t0 + a);
    long long start = colo_live_now_ns() - t0;
    int dropped = c->deadline > 0 && start - a > c->deadline;
    int rc = 0;
    if (!dropped)
        rc = c->command ? command_request(&tt->cmd, id, err) : tt->b->request(tt->p->tenant, err);
    long long end = colo_live_now_ns() - t0;
    *end_out = end;
    if (rc) return rc;
    if (dprintf(fd, "%lld %lld %lld %d\n", a, start, end, dropped) < 0)
        return colo_error_set(err, COLO_EIO, tt->run_dir, 0, NULL, "cannot write a record");
    return 0;
}

static void *tenant_main(void *arg)
{
    struct tenant_thread *tt = arg;
    const colo_scenario_t *sc = tt->sc;
    const colo_live_tenant_t *p = tt->p;
    char path[4096];
    snprintf(path, sizeof path, "%s/tenant-%zu.rec", tt->run_dir, p->tenant);
    colo_error_t err;
    colo_error_clear(&err);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) {
        colo_error_set(&err, COLO_EIO, path, 0, NULL, "%s", strerror(errno));
        write_error(tt->run_dir, p->tenant, &err);
        return NULL;
    }
    long long stop = sc->duration + sc->drain; /* no request starts after this */
    unsigned long long id = 0;
    int rc = 0;
    long long end;
    if (!p->clients) {
        for (size_t k = 0; k < p->n_arrivals && !rc; k++)
            for (int j = 0; j < p->counts[k] && !rc; j++) {
                if (colo_live_now_ns() - tt->t0 > stop) goto out;
                rc = serve(tt, fd, p->arrivals[k], id++, &end, &err);
            }
    } else {
        /* closed loop: each client's next request comes think time after its last one ends */
        long long *next = colo_calloc((size_t)p->clients, sizeof *next);
        if (!next) rc = colo_error_set(&err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
        while (!rc) {
            int m = 0;
            for (int k = 1; k < p->clients; k++)
                if (next[k] < next[m]) m = k;
            if (next[m] >= sc->duration || colo_live_now_ns() - tt->t0 > stop) break;
            rc = serve(tt, fd, next[m], id++, &end, &err);
            next[m] = end + p->think;
        }
        colo_free(next);
    }
out:
    if (rc) write_error(tt->run_dir, p->tenant, &err);
    close(fd);
    return NULL;
}

/* PROC,CTL_FD,STATUS_FD,PHASE,RUN_DIR with PHASE f (fit) or r (run). */
static int parse_child(const char *s, int *proc, int *ctl, int *st, char *phase, const char **dir)
{
    int used = 0;
    if (sscanf(s, "%d,%d,%d,%c,%n", proc, ctl, st, phase, &used) != 4 || !used) return -1;
    *dir = s + used;
    return *proc >= 0 && *proc < MAX_PROCS && (*phase == 'f' || *phase == 'r') ? 0 : -1;
}

/* A fitting child: fits its process's synthetic kernels alone, saves the fit, says so, ends. */
static int fit_child(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                     const colo_live_backend_t *b, int proc, int st, const char *dir)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_live_fit_t fit;
    memset(&fit, 0, sizeof fit);
    char device[256] = "";
    int rc = b->fit(sc, plan, proc, &fit, device, sizeof device, &err);
    if (!rc && colo_live_fit_save(dir, proc, &fit))
        rc = colo_error_set(&err, COLO_EIO, dir, 0, NULL, "cannot write the fit");
    if (b->finish) b->finish();
    colo_live_fit_free(&fit);
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        dprintf(st, "error %s\n", msg);
        return EXIT_RUN;
    }
    dprintf(st, "fitted %s\n", device);
    return 0;
}

int colo_live_child_main(const struct colo_live_opts *o, const colo_scenario_t *sc,
                         const colo_live_plan_t *plan, const colo_live_backend_t *b)
{
    int proc, ctl, st;
    char phase;
    const char *dir;
    if (parse_child(o->child, &proc, &ctl, &st, &phase, &dir)) return EXIT_INPUT;
    bool synthetic = false;
    for (size_t i = 0; i < plan->n; i++)
        synthetic |= plan->t[i].process == proc && !sc->tenants[i].command;
    if (phase == 'f') return synthetic ? fit_child(sc, plan, b, proc, st, dir) : 0;
    colo_error_t err;
    colo_error_clear(&err);
    struct tenant_thread *tt = colo_calloc(plan->n, sizeof *tt);
    if (!tt) return EXIT_RUN;
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; i < plan->n && !rc; i++) {
        if (plan->t[i].process != proc) continue;
        tt[n].sc = sc;
        tt[n].p = &plan->t[i];
        tt[n].b = b;
        tt[n].run_dir = dir;
        if (sc->tenants[i].command) rc = command_start(sc, i, &tt[n].cmd, &err);
        n++;
    }
    char device[256] = "";
    colo_live_fit_t fit;
    memset(&fit, 0, sizeof fit);
    if (!rc && synthetic && (rc = colo_live_fit_load(dir, proc, &fit)))
        colo_error_set(&err, rc, dir, 0, NULL, "no fit for process %d (its fit failed)", proc);
    if (!rc && synthetic) rc = b->prepare(sc, plan, proc, &fit, device, sizeof device, &err);
    colo_live_fit_free(&fit);
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        dprintf(st, "error %s\n", msg);
    } else {
        dprintf(st, "ready %s\n", device[0] ? device : "real programs only");
        char line[64];
        ssize_t got = read(ctl, line, sizeof line - 1);
        if (got <= 0)
            rc = COLO_EIO; /* the parent went away: nothing to run */
        else {
            line[got] = '\0';
            long long t0 = strtoll(line, NULL, 10);
            for (size_t k = 0; k < n; k++) {
                tt[k].t0 = t0;
                if (pthread_create(&tt[k].th, NULL, tenant_main, &tt[k])) {
                    rc = COLO_EIO;
                    n = k;
                }
            }
            for (size_t k = 0; k < n; k++)
                pthread_join(tt[k].th, NULL);
        }
    }
    for (size_t k = 0; k < n; k++)
        command_stop(&tt[k].cmd);
    if (synthetic && b->finish) b->finish();
    colo_free(tt);
    return rc ? EXIT_RUN : 0;
}

/* Error names and meanings: the CUDA Runtime API's cudaError enumeration. */
const char *colo_live_cuda_hint(const char *name, bool mps_client)
{
    static const struct {
        const char *name, *hint, *mps_hint;
    } hints[] = {
        {"cudaErrorInsufficientDriver",
         "no NVIDIA driver is loaded, or it is older than this build's CUDA runtime: nvidia-smi "
         "shows the driver and the CUDA version it supports",
         NULL},
        {"cudaErrorNoDevice",
         "the driver sees no GPU: check nvidia-smi, and that CUDA_VISIBLE_DEVICES does not hide it",
         "the driver sees no GPU for this MPS client: check nvidia-smi, CUDA_VISIBLE_DEVICES, and "
         "the MPS daemon's log in the run folder (mps-N/log)"},
        {"cudaErrorDevicesUnavailable",
         "the GPU is busy or unavailable: its compute mode is Exclusive_Process with another "
         "process on it, or Prohibited (nvidia-smi -q -d COMPUTE)",
         "the GPU is busy or unavailable to this MPS client: another process holds it in "
         "Exclusive_Process mode outside the run's MPS daemon"},
        {"cudaErrorSystemDriverMismatch",
         "the kernel module and the user-space driver (libcuda) are of different versions: reload "
         "the module or reboot",
         NULL},
        {"cudaErrorSystemNotReady",
         "the system is not ready for CUDA: on NVSwitch systems the fabric manager must be running",
         NULL},
        {"cudaErrorCompatNotSupportedOnDevice",
         "this GPU does not support the CUDA forward-compatibility libraries in use", NULL},
        {"cudaErrorNoKernelImageForDevice",
         "this build has no code for this GPU's architecture: rebuild with "
         "-DCMAKE_CUDA_ARCHITECTURES naming it",
         NULL},
        {"cudaErrorMpsConnectionFailed", "the MPS control daemon or server could not be reached",
         "the run's MPS daemon could not be reached: see its log in the run folder (mps-N/log)"},
        {"cudaErrorMpsServerNotReady",
         "the MPS server refuses new clients: it is recovering from a fatal error or still "
         "starting",
         NULL},
        {"cudaErrorMpsMaxClientsReached",
         "the MPS server refused the client: the GPU's MPS client limit is reached", NULL},
        {"cudaErrorMpsMaxConnectionsReached",
         "the MPS server refused the client: its device connections are exhausted "
         "(CUDA_DEVICE_MAX_CONNECTIONS)",
         NULL},
        {"cudaErrorMpsRpcFailure", "the MPS server and client lost their connection", NULL},
        {"cudaErrorMpsClientTerminated",
         "the MPS server terminated this client (another client's fatal error, or a "
         "terminate_client)",
         NULL},
    };
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
        if (strcmp(name, hints[i].name) == 0)
            return mps_client && hints[i].mps_hint ? hints[i].mps_hint : hints[i].hint;
    return NULL;
}
