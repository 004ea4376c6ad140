/* live_run.c: the live-run executor: processes, start barrier, MPS daemon, faults, results. */
#define _GNU_SOURCE /* mkdtemp, dprintf, pipe2 */
#include "live_run.h"
#include "alloc.h"
#include "metrics.h"
#include "results.h"
#include "serving.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { EXIT_RUN = 1, EXIT_INPUT = 2, EXIT_GOAL = 3, EXIT_INTERRUPTED = 130 };

#define MAX_PROCS 256
#define BARRIER_LEAD_NS 200000000LL /* the start is this far after the last child is ready */
#define GRACE_NS 30000000000LL      /* after the run's end, processes get this long to exit */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
    struct timespec ts = {.tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static void sleep_ns(long long d)
{
    if (d > 0) sleep_until(now_ns() + d);
}

/* Waits up to ms for pid to exit, then kills it. True when it exited by itself; *st is its
 * status either way. */
static bool reap_within(pid_t pid, int ms, int *st)
{
    for (int k = 0; k < ms / 10 && waitpid(pid, st, WNOHANG) == 0; k++)
        sleep_ns(10000000);
    if (waitpid(pid, st, WNOHANG) != 0) return true;
    kill(pid, SIGKILL);
    waitpid(pid, st, 0);
    return false;
}

/* ---- fits ---- */

int colo_live_fit_add(colo_live_fit_t *f, size_t tenant, size_t op, long long iters,
                      double target_ns, double fitted_ns)
{
    if (colo_grow((void **)&f->e, &f->cap, f->n + 1, sizeof *f->e)) return COLO_ENOMEM;
    f->e[f->n++] = (colo_live_fit_entry_t){tenant, op, iters, target_ns, fitted_ns};
    return 0;
}

void colo_live_fit_free(colo_live_fit_t *f)
{
    colo_free(f->e);
    memset(f, 0, sizeof *f);
}

static void fit_path(const char *run_dir, int proc, char *buf, size_t len)
{
    snprintf(buf, len, "%s/fit-%d.txt", run_dir, proc);
}

/* "TENANT OP ITERS TARGET_NS FITTED_NS" per line; written whole (atomic rename). */
static int fit_save(const char *run_dir, int proc, const colo_live_fit_t *f)
{
    char path[4400], tmp[4500];
    fit_path(run_dir, proc, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *o = fopen(tmp, "w");
    if (!o) return COLO_EIO;
    for (size_t k = 0; k < f->n; k++)
        fprintf(o, "%zu %zu %lld %.17g %.17g\n", f->e[k].tenant, f->e[k].op, f->e[k].iters,
                f->e[k].target_ns, f->e[k].fitted_ns);
    if (fclose(o) || rename(tmp, path)) return COLO_EIO;
    return 0;
}

/* 0, or COLO_EIO when the process's fit file is missing (its fit failed). */
static int fit_load(const char *run_dir, int proc, colo_live_fit_t *f)
{
    char path[4400];
    fit_path(run_dir, proc, path, sizeof path);
    FILE *in = fopen(path, "r");
    if (!in) return COLO_EIO;
    colo_live_fit_entry_t e;
    int rc = 0;
    while (!rc && fscanf(in, "%zu %zu %lld %lg %lg", &e.tenant, &e.op, &e.iters, &e.target_ns,
                         &e.fitted_ns) == 5)
        rc = colo_live_fit_add(f, e.tenant, e.op, e.iters, e.target_ns, e.fitted_ns);
    fclose(in);
    return rc;
}

/* ---- the CPU stand-in ---- */

static colo_time_t *cpu_isolated;

/* The stand-in's fit: every kernel hits its target (there is nothing to size); it takes a few
 * milliseconds so that fits that overlapped in time would show in the results. */
static int cpu_fit(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                   colo_live_fit_t *fit, char *device, size_t device_len, colo_error_t *err)
{
    snprintf(device, device_len, "CPU stand-in (requests sleep their simulated isolated time)");
    for (size_t i = 0; i < plan->n; i++) {
        const colo_tenant_cfg_t *c = &sc->tenants[i];
        if (plan->t[i].process != proc || c->command) continue;
        colo_place_rates_t at;
        colo_live_fit_place(sc, plan, i, &at, NULL, 0);
        colo_time_t *t = colo_calloc(c->trace->n_ops + 1, sizeof *t), total;
        if (!t) return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
        int rc = colo_variant_times(c, 0, sc->gpu, at, t, &total, err);
        for (size_t k = 0; !rc && k < c->trace->n_ops; k++)
            if (c->trace->ops[k].type == COLO_OP_KERNEL)
                rc = colo_live_fit_add(fit, i, k, 0, (double)t[k], (double)t[k]);
        colo_free(t);
        if (rc) return rc == COLO_ENOMEM ? colo_error_set(err, rc, sc->path, 0, NULL, "out of memory") : rc;
    }
    sleep_ns(20000000);
    return 0;
}

static int cpu_prepare(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                       const colo_live_fit_t *fit, char *device, size_t device_len,
                       colo_error_t *err)
{
    (void)plan;
    (void)proc;
    (void)fit;
    snprintf(device, device_len, "CPU stand-in (requests sleep their simulated isolated time)");
    cpu_isolated = colo_calloc(sc->n_tenants, sizeof *cpu_isolated);
    if (!cpu_isolated) return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    for (size_t i = 0; i < sc->n_tenants; i++) {
        int rc = colo_tenant_isolated(sc, i, &cpu_isolated[i], err);
        if (rc) return rc;
    }
    return 0;
}

static int cpu_request(size_t t, colo_error_t *err)
{
    (void)err;
    sleep_ns(cpu_isolated[t]);
    return 0;
}

static void cpu_finish(void)
{
    colo_free(cpu_isolated);
    cpu_isolated = NULL;
}

const colo_live_backend_t colo_live_cpu_backend = {
    .name = "cpu",
    .summary = "no GPU: each request sleeps its simulated isolated time (checks the harness)",
    .uses_gpu = false,
    .fit = cpu_fit,
    .prepare = cpu_prepare,
    .request = cpu_request,
    .finish = cpu_finish,
    .self_test = NULL,
};

/* ---- results ---- */

static json_t *placement_json(const colo_scenario_t *sc, const colo_live_tenant_t *p)
{
    static const char *const ctx[] = {"own context", "MPS client", "Green Context", "MIG instance"};
    json_t *o = json_pack("{s:i,s:s,s:i}", "process", p->process, "context", ctx[p->ctx], "sms",
                          p->sms ? p->sms : sc->gpu->sm.count);
    if (o && p->ctx == COLO_LIVE_MPS)
        json_object_set_new(o, "active_thread_percentage",
                            json_integer(p->active_thread_percentage));
    if (o && p->instance) json_object_set_new(o, "profile", json_string(p->instance));
    return o;
}

static json_t *tenant_json(const colo_scenario_t *sc, const colo_live_tenant_t *p,
                           const colo_live_outcome_t *o)
{
    const colo_tenant_cfg_t *c = &sc->tenants[p->tenant];
    long long w0 = sc->warmup, w1 = sc->duration;
    colo_samples_t lat;
    memset(&lat, 0, sizeof lat);
    lat.limit = sc->exact_samples;
    unsigned long long arrived = 0, completed = 0, dropped = 0, finished = 0, met = 0;
    double queue = 0, exec = 0;
    if (p->clients == 0) {
        for (size_t k = 0; k < p->n_arrivals; k++)
            if (p->arrivals[k] >= w0 && p->arrivals[k] < w1) arrived += (unsigned)p->counts[k];
    }
    int bad = 0;
    for (size_t k = 0; k < o->n; k++) {
        const colo_live_record_t *r = &o->rec[k];
        bool in = r->arrival >= w0 && r->arrival < w1;
        if (p->clients && in) arrived++;
        if (r->dropped) {
            dropped += in;
            continue;
        }
        if (r->end >= w0 && r->end < w1) finished++;
        if (!in) continue;
        completed++;
        queue += (double)(r->start - r->arrival);
        exec += (double)(r->end - r->start);
        if (c->slo > 0 && r->end - r->arrival <= c->slo) met++;
        bad |= colo_samples_push(&lat, r->end - r->arrival);
    }
    colo_latency_summary_t s;
    bad |= colo_latency_summarise(&lat, &s);
    colo_samples_fini(&lat);
    if (bad) return NULL;
    double window = COLO_TO_S(sc->duration - sc->warmup), done = completed ? (double)completed : 1;
    json_t *t = json_pack(
        "{s:s,s:s,s:i,s:s,s:o,s:{s:s,s:f},s:o,s:o,s:I,s:I,s:I,s:{s:I},s:I,s:o,s:f,s:o,s:o,s:f,"
        "s:f,s:o}",
        "name", c->name, "model", c->trace->model, "batch", c->trace->batch, "trace", c->trace_path,
        "command", c->command ? json_string(c->command) : json_null(), "arrival", "process",
        c->arrival.ops->name, "rate", colo_arrival_rate(&c->arrival), "slo_ms",
        c->slo > 0 ? json_real(c->slo_ms) : json_null(), "placement", placement_json(sc, p),
        "arrived", (json_int_t)arrived, "completed", (json_int_t)completed, "dropped",
        (json_int_t)dropped, "dropped_by_reason", "deadline", (json_int_t)dropped, "in_flight",
        (json_int_t)(arrived > completed + dropped ? arrived - completed - dropped : 0),
        "latency_ms", colo_latency_json(&s), "throughput_rps", (double)finished / window,
        "slo_attainment",
        c->slo > 0 && arrived ? json_real((double)met / (double)arrived) : json_null(),
        "goodput_rps", c->slo > 0 ? json_real((double)met / window) : json_null(), "queue_ms_mean",
        queue / done / 1e6, "execution_ms_mean", exec / done / 1e6, "error",
        o->error[0] ? json_string(o->error) : json_null());
    return t;
}

json_t *colo_live_results(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                          const colo_live_outcome_t *out, const char *const *overrides,
                          size_t n_overrides, json_t *live)
{
    json_t *tenants = json_array();
    for (size_t i = 0; i < plan->n && tenants; i++)
        if (json_array_append_new(tenants, tenant_json(sc, &plan->t[i], &out[i]))) {
            json_decref(tenants);
            tenants = NULL;
        }
    json_t *scenario = tenants ? colo_results_scenario_json(sc, overrides, n_overrides) : NULL;
    if (!scenario) {
        json_decref(tenants);
        json_decref(live);
        return NULL;
    }
    return json_pack("{s:{s:s,s:i},s:o,s:I,s:o,s:o}", "colosim", "version", COLO_VERSION,
                     "results_format", 1, "scenario", scenario, "seed", (json_int_t)sc->seed,
                     "tenants", tenants, "live", live);
}

/* ---- options ---- */

struct live_opts {
    const char *file, *output, *backend;
    const char **sets;
    size_t n_sets;
    char seed_set[64];
    bool dry_run, self_test, quiet;
    double ready_timeout_s;
    /* children: --child PROC,CTL_FD,STATUS_FD,RUN_DIR */
    const char *child;
};

static const char usage_fmt[] =
    "usage: %s SCENARIO [-o OUT.json] [--seed N] [--set KEY=VALUE ...] [--backend NAME]\n"
    "       [--ready-timeout S] [-q]\n"
    "       %s SCENARIO --dry-run | --self-test\n"
    "\n"
    "Runs the scenario on the machine: the same tenants, arrivals (same generators and seed as\n"
    "the simulator) and sharing mechanism, and writes results in the simulator's schema, so\n"
    "that `colosim compare SIM.json LIVE.json` sets prediction and measurement side by side.\n"
    "\n"
    "  -o FILE            results JSON (written whole or not at all); default: a table only\n"
    "  --seed N           the seed for arrivals (as colosim run --seed)\n"
    "  --set KEY=VALUE    override a scenario key (as colosim run --set)\n"
    "  --backend NAME     what runs a request:\n"
    "%s"
    "  --dry-run          print the plan (processes, contexts, arrivals) and exit\n"
    "  --self-test        replay each tenant's trace alone and report how close the replay\n"
    "                     comes to the trace, kernel by kernel and per inference (goal 5 %%)\n"
    "  --ready-timeout S  longest wait for processes to get ready (default 900 s)\n"
    "  -q                 no table\n"
    "\n"
    "Exit status: 0 done; 1 failure while running, or a tenant's process failed (its error is\n"
    "in the results, the others' results are kept); 2 bad input, or MIG instances the scenario\n"
    "needs do not exist (colosim never changes MIG mode); 3 --self-test missed its goal;\n"
    "130 interrupted (no results written).\n";

static void usage(FILE *f, const char *prog, const colo_live_backend_t *const *b, size_t nb)
{
    char list[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < nb && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "                       %-6s %s%s\n",
                         b[i]->name, b[i]->summary, i == 0 ? " (default)" : "");
        if (w > 0) used += (size_t)w;
    }
    fprintf(f, usage_fmt, prog, prog, list);
}

/* 0 to go on, or an exit status. */
static int parse_opts(int argc, char **argv, const char *prog, const colo_live_backend_t *const *b,
                      size_t nb, struct live_opts *o)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"seed", required_argument, NULL, 'S'},
                                          {"set", required_argument, NULL, 's'},
                                          {"backend", required_argument, NULL, 'b'},
                                          {"dry-run", no_argument, NULL, 'n'},
                                          {"self-test", no_argument, NULL, 't'},
                                          {"ready-timeout", required_argument, NULL, 'r'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"child", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->ready_timeout_s = 900;
    o->backend = b[0]->name;
    if (!(o->sets = colo_calloc((size_t)argc + 1, sizeof *o->sets))) return EXIT_RUN;
    optind = 1;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'S': {
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || !optarg[0]) {
                fprintf(stderr, "%s: --seed: '%s' is not a non-negative integer\n", prog, optarg);
                return EXIT_INPUT;
            }
            snprintf(o->seed_set, sizeof o->seed_set, "seed=%llu", v);
            break;
        }
        case 's':
            o->sets[o->n_sets++] = optarg;
            break;
        case 'b':
            o->backend = optarg;
            break;
        case 'n':
            o->dry_run = true;
            break;
        case 't':
            o->self_test = true;
            break;
        case 'r':
            o->ready_timeout_s = strtod(optarg, &end);
            if (*end || !(o->ready_timeout_s > 0) || o->ready_timeout_s > 86400) {
                fprintf(stderr, "%s: --ready-timeout: '%s' is not a number of seconds (0, 86400]\n",
                        prog, optarg);
                return EXIT_INPUT;
            }
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'c':
            o->child = optarg;
            break;
        case 'h':
            usage(stdout, prog, b, nb);
            return -1;
        default:
            usage(stderr, prog, b, nb);
            return EXIT_INPUT;
        }
    }
    if (o->seed_set[0]) o->sets[o->n_sets++] = o->seed_set;
    if (optind != argc - 1) {
        fprintf(stderr, "%s: expected one scenario file\n\n", prog);
        usage(stderr, prog, b, nb);
        return EXIT_INPUT;
    }
    o->file = argv[optind];
    if (o->dry_run && o->self_test) {
        fprintf(stderr, "%s: --dry-run and --self-test exclude each other\n", prog);
        return EXIT_INPUT;
    }
    return 0;
}

static const colo_live_backend_t *find_backend(const char *name,
                                               const colo_live_backend_t *const *b, size_t nb)
{
    for (size_t i = 0; i < nb; i++)
        if (strcmp(b[i]->name, name) == 0) return b[i];
    return NULL;
}

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
    reap_within(ct->pid, 5000, &st);
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
    if (now_ns() < t0 + a) sleep_until(t0 + a);
    long long start = now_ns() - t0;
    int dropped = c->deadline > 0 && start - a > c->deadline;
    int rc = 0;
    if (!dropped)
        rc = c->command ? command_request(&tt->cmd, id, err) : tt->b->request(tt->p->tenant, err);
    long long end = now_ns() - t0;
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
                if (now_ns() - tt->t0 > stop) goto out;
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
            if (next[m] >= sc->duration || now_ns() - tt->t0 > stop) break;
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
    if (!rc && fit_save(dir, proc, &fit))
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

static int child_main(const struct live_opts *o, const colo_scenario_t *sc,
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
    if (!rc && synthetic && (rc = fit_load(dir, proc, &fit)))
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

/* ---- the parent ---- */

struct proc {
    pid_t pid;
    int ctl, st; /* our ends of its pipes */
    bool ready, done;
    int status;
    char error[256];
    char device[256];
    const char *uuid; /* MIG instance */
    char env[1024], fit_env[1024]; /* as given to the run and the fit, the run folder as RUN */
    long long fit_start, fit_end;  /* ns, from the parent's start */
    char fit_error[256];
};

/* What must be undone however the parent ends: children, the MPS daemon, the run folder. */
#define MAX_DAEMONS 8 /* at most 7 MIG instances, or the one of the whole GPU */

static struct {
    struct proc *procs;
    int n;
    char run_dir[4096];
    const colo_live_plan_t *plan;
    bool mps_running[MAX_DAEMONS];
    char partition[MAX_PROCS][128]; /* MPS static partition ID of each process */
    bool keep_run_dir;              /* a daemon could not be stopped: its folders stay */
    const char *mps_control;
} g;

static volatile sig_atomic_t g_signal;

/* The MIG instance (MIG-...) daemon d serves, or NULL (the whole GPU). */
static const char *daemon_uuid(int d)
{
    for (size_t i = 0; g.plan && i < g.plan->n; i++)
        if (g.plan->t[i].daemon == d && g.procs && g.plan->t[i].process < g.n)
            return g.procs[g.plan->t[i].process].uuid;
    return NULL;
}

static void on_signal(int sig)
{
    g_signal = sig;
}

/* Sets ("KEY=VALUE") and removes ("KEY") environment entries in this process. */
static void apply_env(char env[][COLO_LIVE_ENV_LEN], size_t n)
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

/* Runs `CONTROL [arg]` for daemon d (its environment) with text on its standard input; its
 * standard output into out (if not NULL). The exit status, or -1. */
static int run_control(int d, const char *arg, const char *arg2, const char *input, char *out,
                       size_t out_len)
{
    char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n_env = colo_live_daemon_env(g.plan, d, g.run_dir, daemon_uuid(d), env);
    int in[2], o[2];
    if (pipe2(in, O_CLOEXEC)) return -1;
    if (pipe2(o, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        apply_env(env, n_env);
        dup2(in[0], 0);
        if (out) dup2(o[1], 1);
        execlp(g.mps_control, g.mps_control, arg, arg2, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(o[1]);
    if (input && write(in[1], input, strlen(input)) < 0) {
    }
    close(in[1]);
    size_t got = 0;
    if (out) {
        ssize_t r;
        while (got + 1 < out_len && (r = read(o[0], out + got, out_len - 1 - got)) > 0)
            got += (size_t)r;
        out[got] = '\0';
    }
    close(o[0]);
    int st = 0;
    if (!reap_within(pid, 10000, &st)) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The daemon's PID from the file it keeps in its pipe folder (NVIDIA MPS tools reference:
 * nvidia-cuda-mps-control.pid in CUDA_MPS_PIPE_DIRECTORY), or 0. */
static pid_t daemon_pid(int d)
{
    char pipe[4400], path[4500];
    colo_live_pipe_dir(g.run_dir, d, pipe, sizeof pipe);
    snprintf(path, sizeof path, "%s/nvidia-cuda-mps-control.pid", pipe);
    FILE *f = fopen(path, "r");
    long v = 0;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = 0;
        fclose(f);
    }
    return v > 1 ? (pid_t)v : 0;
}

/* True while pid runs (a zombie, which its parent has not reaped yet, does not). */
static bool pid_alive(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) return false;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* "PID (COMM) STATE ..." */
    return !(close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z');
}

/* Stops every daemon this run started. Children are gone first (cleanup's order): a daemon told
 * to quit while its clients live waits for them. When `quit` fails, the daemon's PID (from its
 * pid file) is killed; when that cannot be done either, its folders are kept so that the command
 * printed to stop it still points at them. */
static void mps_stop(void)
{
    for (int d = 0; g.plan && d < g.plan->n_daemons && d < MAX_DAEMONS; d++) {
        if (!g.mps_running[d]) continue;
        g.mps_running[d] = false;
        if (run_control(d, NULL, NULL, "quit\n", NULL, 0) == 0) continue;
        pid_t pid = daemon_pid(d);
        bool gone = false;
        if (pid > 0 && kill(pid, SIGTERM) == 0) {
            for (int k = 0; k < 200 && !gone; k++) {
                gone = !pid_alive(pid);
                if (!gone) sleep_ns(10000000);
            }
            if (!gone && kill(pid, SIGKILL) == 0) {
                sleep_ns(100000000);
                gone = !pid_alive(pid);
            }
        }
        char pipe[4400];
        colo_live_pipe_dir(g.run_dir, d, pipe, sizeof pipe);
        if (gone) {
            fprintf(stderr, "colosim-live: the MPS daemon %d did not quit; killed it (pid %ld)\n",
                    d, (long)pid);
            continue;
        }
        g.keep_run_dir = true;
        fprintf(stderr,
                "colosim-live: could not stop the MPS daemon %d%s; its folders are kept in %s. "
                "Stop it with: echo quit | CUDA_MPS_PIPE_DIRECTORY=%s %s\n",
                d, pid > 0 ? "" : " (no pid file)", g.run_dir, pipe, g.mps_control);
    }
}

/* The SMs of one static-partition chunk, from `lspart` ("GPU-... - FREE USED FREE_SM USED_SM
 * -" for the device's line), or 0 when it cannot be read. */
static int chunk_sms(int d)
{
    char out[4096];
    if (run_control(d, NULL, NULL, "lspart\n", out, sizeof out) != 0) return 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char id[128], dash[8];
        long fc, uc, fs, us;
        if (sscanf(line, "%127s %7s %ld %ld %ld %ld", id, dash, &fc, &uc, &fs, &us) == 6 &&
            strncmp(id, "GPU-", 4) == 0 && strcmp(dash, "-") == 0 && fc + uc > 0 &&
            (fs + us) % (fc + uc) == 0)
            return (int)((fs + us) / (fc + uc));
    }
    return 0;
}

static int mps_start(const colo_scenario_t *sc, const char *gpu_uuid, colo_error_t *err)
{
    const char *ctl = getenv("COLOSIM_MPS_CONTROL");
    g.mps_control = ctl && *ctl ? ctl : "nvidia-cuda-mps-control";
    for (int d = 0; d < g.plan->n_daemons; d++) {
        char dir[4400], sub[4500];
        snprintf(dir, sizeof dir, "%s/mps-%d", g.run_dir, d);
        snprintf(sub, sizeof sub, "%s/pipe", dir);
        if (mkdir(dir, 0700) || mkdir(sub, 0700))
            return colo_error_set(err, COLO_EIO, g.run_dir, 0, NULL, "cannot make the MPS folders");
        snprintf(sub, sizeof sub, "%s/log", dir);
        if (mkdir(sub, 0700))
            return colo_error_set(err, COLO_EIO, g.run_dir, 0, NULL, "cannot make the MPS folders");
        const colo_live_daemon_t *dm = &g.plan->daemons[d];
        /* MPS quick start, "Enabling static SM partitioning": nvidia-cuda-mps-control -d -S */
        int st = run_control(d, "-d", dm->static_partitions ? "-S" : NULL, NULL, NULL, 0);
        if (st != 0)
            return colo_error_set(err, COLO_EIO, g.mps_control, 0, NULL,
                                  "cannot start a private MPS control daemon (exit %d): is the "
                                  "compute mode EXCLUSIVE_PROCESS or DEFAULT, and no other "
                                  "daemon running for this user?%s",
                                  st, dm->static_partitions ? " (static partitions need CUDA 13.1)" : "");
        g.mps_running[d] = true;
        if (!dm->static_partitions) continue;
        /* one partition per client, of the SMs the simulator gave it */
        int chunk = chunk_sms(d);
        if (chunk <= 0)
            return colo_error_set(err, COLO_EIO, g.mps_control, 0, NULL,
                                  "cannot read the SMs of a static-partition chunk from lspart");
        const char *dev = dm->instance >= 0 ? daemon_uuid(d) : gpu_uuid;
        for (size_t i = 0; i < g.plan->n; i++) {
            const colo_live_tenant_t *t = &g.plan->t[i];
            if (t->daemon != d || !t->partition) continue;
            int chunks = (t->partition + chunk - 1) / chunk;
            if (chunks * chunk != t->partition)
                return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, sc->tenants[i].name,
                                      "a static partition of %d SMs: chunks here are of %d SMs, "
                                      "so the partition would have %d (the simulator's "
                                      "mps.sm_granularity in the GPU file differs)",
                                      t->partition, chunk, chunks * chunk);
            char cmd[256], out[1024];
            snprintf(cmd, sizeof cmd, "sm_partition add %s %d\n", dev ? dev : "0", chunks);
            char *id = NULL;
            if (run_control(d, NULL, NULL, cmd, out, sizeof out) == 0)
                for (char *w = strtok(out, " \n"); w && !id; w = strtok(NULL, " \n"))
                    if (strncmp(w, "GPU-", 4) == 0 || strncmp(w, "MIG-", 4) == 0)
                        if (strchr(w, '/')) id = w;
            if (!id)
                return colo_error_set(err, COLO_EIO, g.mps_control, 0, sc->tenants[i].name,
                                      "sm_partition add %s %d gave no partition ID", dev, chunks);
            snprintf(g.partition[t->process], sizeof g.partition[0], "%s", id);
        }
    }
    return 0;
}

static void kill_children(void)
{
    for (int i = 0; i < g.n; i++)
        if (g.procs[i].pid > 0 && !g.procs[i].done) kill(g.procs[i].pid, SIGKILL);
    for (int i = 0; i < g.n; i++)
        if (g.procs[i].pid > 0 && !g.procs[i].done) {
            waitpid(g.procs[i].pid, &g.procs[i].status, 0);
            g.procs[i].done = true;
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
    if (!g.run_dir[0] || g.keep_run_dir) return;
    nftw(g.run_dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    g.run_dir[0] = '\0';
}

static void cleanup(void)
{
    kill_children();
    g.n = 0;
    mps_stop();
    remove_run_dir();
}

/* MIG instances of the machine, as `nvidia-smi -L` lists them: "  MIG 3g.40gb Device 0: (UUID:
 * MIG-...)". Fills profile/uuid pairs; returns how many, or -1 when nvidia-smi cannot run. */
/* `nvidia-smi ARGS` (or $COLOSIM_NVIDIA_SMI), its standard output to read; pclose it. */
static FILE *smi_open(const char *args)
{
    const char *smi = getenv("COLOSIM_NVIDIA_SMI");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", smi && *smi ? smi : "nvidia-smi", args);
    return popen(cmd, "r");
}

static int mig_instances(char prof[][32], char uuid[][96], int max)
{
    FILE *f = smi_open("-L");
    if (!f) return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        const char *m = strstr(line, "MIG ");
        const char *u = strstr(line, "UUID: MIG-");
        if (!m || !u) continue;
        if (sscanf(m + 4, "%31s", prof[n]) != 1) continue;
        if (sscanf(u + 6, "%95[^) \n]", uuid[n]) != 1) continue;
        n++;
    }
    int st = pclose(f);
    return st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127 ? -1 : n;
}

/* Gives each planned MIG process an instance of its profile. 0, or an exit status after saying
 * why. */
static int assign_mig(const colo_scenario_t *sc, const colo_live_plan_t *plan, struct proc *procs,
                      char prof[][32], char uuid[][96], const char *prog)
{
    int n = mig_instances(prof, uuid, MAX_PROCS);
    if (n <= 0) {
        fprintf(stderr,
                "%s: %s: the scenario needs MIG instances and this GPU has none%s. colosim never "
                "changes MIG mode or creates instances: an administrator can (nvidia-smi mig "
                "-cgi ... -C); then run again, or simulate MIG with colosim run\n",
                prog, sc->path, n < 0 ? " (nvidia-smi -L did not run)" : "");
        return EXIT_INPUT;
    }
    /* each instance of the scenario's layout gets a machine instance of its profile; the
     * processes of its tenants all use that one */
    bool used[MAX_PROCS] = {false};
    for (size_t k = 0; k < sc->sharing.n_instances; k++) {
        const colo_mig_instance_t *in = &sc->sharing.instances[k];
        const char *got = NULL;
        for (int m = 0; m < n && !got; m++)
            if (!used[m] && strcmp(prof[m], in->profile->name) == 0) {
                used[m] = true;
                got = uuid[m];
            }
        if (!got) {
            fprintf(stderr,
                    "%s: %s: instance %s needs a free MIG instance of profile %s and the GPU has "
                    "none left (nvidia-smi -L lists them); colosim never creates instances\n",
                    prog, sc->path, in->name, in->profile->name);
            return EXIT_INPUT;
        }
        for (size_t i = 0; i < plan->n; i++)
            if (sc->tenants[i].instance == k) procs[plan->t[i].process].uuid = got;
    }
    return 0;
}

static int spawn(const struct live_opts *o, const colo_live_plan_t *plan, int p,
                 colo_live_phase_t phase, const char *const *self_argv, size_t n_self,
                 colo_error_t *err)
{
    int ctl[2], st[2];
    if (pipe(ctl) || pipe(st))
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "pipe: %s", strerror(errno));
    char child[4200];
    snprintf(child, sizeof child, "%d,%d,%d,%c,%s", p, ctl[0], st[1],
             phase == COLO_LIVE_FIT ? 'f' : 'r', g.run_dir);
    char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n_env = colo_live_env(plan, p, phase, g.run_dir, g.procs[p].uuid,
                                 g.partition[p][0] ? g.partition[p] : NULL, env);
    /* the environment as the results record it: the run folder as RUN */
    char *rec = phase == COLO_LIVE_FIT ? g.procs[p].fit_env : g.procs[p].env;
    size_t used = 0, rd = strlen(g.run_dir);
    rec[0] = '\0';
    for (size_t k = 0; k < n_env && used < sizeof g.procs[0].env; k++) {
        char *v = strstr(env[k], g.run_dir);
        int w = v ? snprintf(rec + used, sizeof g.procs[0].env - used, "%s%.*sRUN%s",
                             k ? " " : "", (int)(v - env[k]), env[k], v + rd)
                  : snprintf(rec + used, sizeof g.procs[0].env - used, "%s%s%s", k ? " " : "",
                             strchr(env[k], '=') ? "" : "-", env[k]);
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
        apply_env(env, n_env);
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
    g.procs[p].pid = pid;
    g.procs[p].ctl = ctl[1];
    g.procs[p].st = st[0];
    return 0;
}

static void describe_exit(struct proc *pr)
{
    if (WIFSIGNALED(pr->status))
        snprintf(pr->error, sizeof pr->error, "process killed by signal %d (%s)",
                 WTERMSIG(pr->status), strsignal(WTERMSIG(pr->status)));
    else if (WIFEXITED(pr->status) && WEXITSTATUS(pr->status))
        snprintf(pr->error, sizeof pr->error, "process exited with status %d",
                 WEXITSTATUS(pr->status));
}

/* Reaps children that ended; true when all have. */
static bool reap(void)
{
    bool all = true;
    for (int i = 0; i < g.n; i++) {
        struct proc *pr = &g.procs[i];
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
    long long until = now_ns() + (long long)(timeout_s * 1e9);
    for (;;) {
        if (g_signal) return EXIT_INTERRUPTED;
        struct pollfd fds[MAX_PROCS];
        int map[MAX_PROCS], n = 0;
        for (int i = 0; i < g.n; i++)
            if (!g.procs[i].ready && !g.procs[i].error[0]) {
                fds[n].fd = g.procs[i].st;
                fds[n].events = POLLIN;
                map[n++] = i;
            }
        if (!n) return 0;
        if (now_ns() > until) {
            for (int k = 0; k < n; k++)
                snprintf(g.procs[map[k]].error, sizeof g.procs[0].error,
                         "not ready after %.0f s (--ready-timeout)", timeout_s);
            return 0;
        }
        if (poll(fds, (nfds_t)n, 100) <= 0) continue;
        for (int k = 0; k < n; k++) {
            if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            struct proc *pr = &g.procs[map[k]];
            char line[512];
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
                snprintf(pr->error, sizeof pr->error, "%.250s",
                         strncmp(line, "error ", 6) == 0 ? line + 6 : line);
            }
        }
    }
}

/* Reads a tenant's records; its error file, if any, into out->error. */
static int read_outcome(size_t tenant, colo_live_outcome_t *out)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/tenant-%zu.err", g.run_dir, tenant);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(out->error, sizeof out->error, f)) out->error[strcspn(out->error, "\n")] = 0;
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/tenant-%zu.rec", g.run_dir, tenant);
    if (!(f = fopen(path, "r"))) return 0;
    size_t cap = 0;
    colo_live_record_t r;
    int rc = 0;
    while (fscanf(f, "%lld %lld %lld %d", &r.arrival, &r.start, &r.end, &r.dropped) == 4) {
        if (colo_grow((void **)&out->rec, &cap, out->n + 1, sizeof r)) {
            rc = COLO_ENOMEM;
            break;
        }
        out->rec[out->n++] = r;
    }
    fclose(f);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
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
static void wait_fit(struct proc *pr, double timeout_s)
{
    long long until = now_ns() + (long long)(timeout_s * 1e9);
    char line[512];
    ssize_t got = 0;
    bool answered = false; /* a line, or end of file: the child is ending by itself */
    while (!g_signal && now_ns() < until) {
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
            snprintf(pr->fit_error, sizeof pr->fit_error, "%.250s", line + 6);
    } else if (!g_signal && now_ns() >= until) {
        snprintf(pr->fit_error, sizeof pr->fit_error,
                 "the fit took more than %.0f s (--ready-timeout)", timeout_s);
    }
    int st;
    if (!reap_within(pr->pid, answered ? 10000 : 0, &st) && !pr->fit_error[0])
        snprintf(pr->fit_error, sizeof pr->fit_error, "the fitting process did not end");
    else if (!pr->fit_error[0] && (!WIFEXITED(st) || WEXITSTATUS(st)))
        snprintf(pr->fit_error, sizeof pr->fit_error, "the fitting process failed (status %d)", st);
    close(pr->ctl);
    close(pr->st);
    pr->pid = 0;
}

/* Runs `nvidia-smi ARGS` (or $COLOSIM_NVIDIA_SMI); its first line of output into out. 0 or -1. */
static int smi_first_line(const char *args, char *out, size_t len)
{
    FILE *f = smi_open(args);
    if (!f) return -1;
    out[0] = '\0';
    if (fgets(out, (int)len, f)) out[strcspn(out, "\r\n")] = '\0';
    while (fgetc(f) != EOF) {
    }
    int st = pclose(f);
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && out[0] ? 0 : -1;
}

static void first_gpu_uuid(char *out, size_t len)
{
    char line[512];
    const char *u;
    out[0] = '\0';
    if (smi_first_line("-L", line, sizeof line) == 0 && (u = strstr(line, "UUID: GPU-")))
        snprintf(out, len, "%.*s", (int)strcspn(u + 6, ") \n"), u + 6);
}

/* EXCLUSIVE_PROCESS lets one process hold the GPU: time-slicing between processes fails (a
 * second context gets CUDA_ERROR_DEVICE_UNAVAILABLE) and only MPS clients share it; PROHIBITED
 * lets none. 0, or an exit status after saying why. */
static int check_compute_mode(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                              const char *prog)
{
    char mode[128];
    if (smi_first_line("--query-gpu=compute_mode --format=csv,noheader", mode, sizeof mode)) {
        fprintf(stderr, "%s: warning: cannot read the GPU's compute mode (nvidia-smi)\n", prog);
        return 0;
    }
    if (strcmp(mode, "Prohibited") == 0) {
        fprintf(stderr, "%s: %s: the GPU's compute mode is Prohibited: no process may use it "
                        "(colosim never changes it)\n", prog, sc->path);
        return EXIT_INPUT;
    }
    if (strcmp(mode, "Exclusive_Process") == 0 && !plan->mps_daemon && plan->n_processes > 1) {
        fprintf(stderr,
                "%s: %s: the GPU's compute mode is Exclusive_Process: only one process may use "
                "it, and this %s run needs %d at once. An administrator can set Default "
                "(nvidia-smi -c DEFAULT); colosim never changes it\n",
                prog, sc->path, colo_share_mode_name(plan->mode), plan->n_processes);
        return EXIT_INPUT;
    }
    return 0;
}

/* Each tenant's fit, from the fit files: where it was fitted and how close each kernel came. */
static int fit_results(const colo_scenario_t *sc, const colo_live_plan_t *plan, json_t *tenants)
{
    for (size_t i = 0; i < plan->n; i++) {
        json_t *t = json_array_get(tenants, i);
        if (!t) return -1;
        if (sc->tenants[i].command) {
            json_object_set_new(t, "fit", json_null());
            continue;
        }
        colo_live_fit_t f;
        memset(&f, 0, sizeof f);
        fit_load(g.run_dir, plan->t[i].process, &f);
        double *e = colo_calloc(f.n + 1, sizeof *e);
        if (!e) {
            colo_live_fit_free(&f);
            return -1;
        }
        size_t n = 0, within = 0;
        for (size_t k = 0; k < f.n; k++) {
            if (f.e[k].tenant != i || !(f.e[k].target_ns > 0)) continue;
            e[n] = 100.0 * fabs(f.e[k].fitted_ns - f.e[k].target_ns) / f.e[k].target_ns;
            within += e[n++] <= 5.0;
        }
        colo_live_fit_free(&f);
        qsort(e, n, sizeof *e, cmp_double);
        char where[96];
        colo_place_rates_t at;
        colo_live_fit_place(sc, plan, i, &at, where, sizeof where);
        json_t *o = n ? json_pack("{s:s,s:I,s:f,s:f,s:f}", "placement", where, "kernels",
                                  (json_int_t)n, "within_5pct", (double)within / (double)n,
                                  "median_error_pct", e[n / 2], "max_error_pct", e[n - 1])
                      : json_null();
        colo_free(e);
        if (!o || json_object_set_new(t, "fit", o)) return -1;
    }
    return 0;
}

static int parent_main(const struct live_opts *o, const colo_scenario_t *sc,
                       const colo_live_plan_t *plan, const colo_live_backend_t *b, const char *prog,
                       const char *const *self_argv, size_t n_self)
{
    if (plan->n_processes > MAX_PROCS) {
        fprintf(stderr, "%s: %s: %d processes; a live run holds at most %d\n", prog, sc->path,
                plan->n_processes, MAX_PROCS);
        return EXIT_INPUT;
    }
    static char prof[MAX_PROCS][32], uuid[MAX_PROCS][96];
    struct proc *procs = colo_calloc((size_t)plan->n_processes, sizeof *procs);
    if (!procs) return EXIT_RUN;
    g.procs = procs;
    g.n = plan->n_processes;
    int status = 0;
    if (plan->needs_mig && (b->uses_gpu || getenv("COLOSIM_NVIDIA_SMI")) &&
        (status = assign_mig(sc, plan, procs, prof, uuid, prog))) {
        colo_free(procs);
        return status;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(g.run_dir, sizeof g.run_dir, "%s/colosim-live-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g.run_dir)) {
        fprintf(stderr, "%s: cannot make a run folder in %s: %s\n", prog,
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        g.run_dir[0] = '\0';
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
    g.plan = plan;
    bool smi = b->uses_gpu || getenv("COLOSIM_NVIDIA_SMI");
    if (smi && (status = check_compute_mode(sc, plan, prog))) {
        cleanup();
        colo_free(procs);
        return status;
    }
    char no_mps[4400];
    colo_live_pipe_dir(g.run_dir, -1, no_mps, sizeof no_mps);
    if (mkdir(no_mps, 0700))
        rc = colo_error_set(&err, COLO_EIO, g.run_dir, 0, NULL, "cannot make %s", no_mps);
    /* the fits: one process at a time, alone on the GPU, before any MPS daemon */
    if (!rc && !o->quiet)
        fprintf(stderr, "%s: fitting the synthetic kernels, one process at a time (%s)...\n",
                prog, b->name);
    long long origin = now_ns();
    for (int p = 0; p < g.n && !rc && !g_signal; p++) {
        g.procs[p].fit_start = now_ns() - origin;
        rc = spawn(o, plan, p, COLO_LIVE_FIT, self_argv, n_self, &err);
        if (!rc) wait_fit(&g.procs[p], o->ready_timeout_s);
        g.procs[p].fit_end = now_ns() - origin;
    }
    bool mps = plan->mps_daemon && (b->uses_gpu || getenv("COLOSIM_MPS_CONTROL"));
    char gpu_uuid[96] = "";
    if (mps && !rc && !g_signal) {
        if (smi) first_gpu_uuid(gpu_uuid, sizeof gpu_uuid);
        rc = mps_start(sc, gpu_uuid[0] ? gpu_uuid : NULL, &err);
    }
    for (int p = 0; p < g.n && !rc && !g_signal; p++)
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
        fprintf(stderr, "%s: %d process%s getting ready (%s)...\n", prog, g.n, g.n == 1 ? "" : "es",
                b->name);
    status = wait_ready(o->ready_timeout_s);
    long long t0 = now_ns() + BARRIER_LEAD_NS;
    for (int i = 0; i < g.n && !status; i++) {
        if (!g.procs[i].ready) continue;
        if (dprintf(g.procs[i].ctl, "%lld\n", t0) < 0)
            snprintf(g.procs[i].error, sizeof g.procs[0].error, "cannot be started");
    }
    for (int i = 0; i < g.n; i++)
        close(g.procs[i].ctl); /* unready children read end-of-file and exit */
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
        long long now = now_ns();
        for (size_t k = 0; fired && k < sc->n_faults; k++) {
            struct proc *pr = &g.procs[plan->t[sc->faults[k].tenant].process];
            if (fired[k] || now < t0 + sc->faults[k].at || pr->done) continue;
            fired[k] = true;
            kill(pr->pid, SIGKILL);
        }
        if (now > limit) {
            for (int i = 0; i < g.n; i++)
                if (!g.procs[i].done) {
                    kill(g.procs[i].pid, SIGKILL);
                    waitpid(g.procs[i].pid, &g.procs[i].status, 0);
                    g.procs[i].done = true;
                    snprintf(g.procs[i].error, sizeof g.procs[0].error,
                             "still running %.0f s after the run's end: killed",
                             (double)GRACE_NS / 1e9);
                }
            break;
        }
        sleep_ns(2000000);
    }
    /* children before daemons: a daemon told to quit waits for its clients */
    kill_children();
    mps_stop();
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
        rc = read_outcome(i, &out[i]);
        const struct proc *pr = &g.procs[plan->t[i].process];
        bool fault = false;
        for (size_t k = 0; fired && k < sc->n_faults; k++)
            fault |= fired[k] && plan->t[sc->faults[k].tenant].process == plan->t[i].process;
        if (pr->error[0] && !out[i].error[0])
            snprintf(out[i].error, sizeof out[i].error, "%.200s%s", pr->error,
                     fault ? " (fault injected by the scenario)" : "");
        if (out[i].error[0] && !fault) failed = true;
    }
    for (int i = 0; i < g.n && !rc; i++) {
        const struct proc *pr = &g.procs[i];
        json_array_append_new(
            procs_json,
            json_pack("{s:i,s:I,s:s,s:s,s:{s:s,s:f,s:f,s:o},s:o}", "process", i, "pid",
                      (json_int_t)pr->pid, "device", pr->device, "environment", pr->env, "fit",
                      "environment", pr->fit_env, "start_s", (double)pr->fit_start / 1e9,
                      "end_s", (double)pr->fit_end / 1e9, "error",
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
    if (res && fit_results(sc, plan, json_object_get(res, "tenants"))) {
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
    json_decref(res);
    for (size_t i = 0; out && i < plan->n; i++)
        colo_free(out[i].rec);
    colo_free(out);
    colo_free(fired);
    cleanup();
    colo_free(procs);
    g.procs = NULL;
    g.n = 0;
    return status;
}

int colo_live_main(int argc, char **argv, const char *prog, const char *const *self_argv,
                   size_t n_self, const colo_live_backend_t *const *backends, size_t n_backends)
{
    struct live_opts o;
    int status = parse_opts(argc, argv, prog, backends, n_backends, &o);
    if (status) {
        colo_free(o.sets);
        return status < 0 ? 0 : status;
    }
    const colo_live_backend_t *b = find_backend(o.backend, backends, n_backends);
    if (!b) {
        fprintf(stderr, "%s: --backend: unknown backend '%s'\n\n", prog, o.backend);
        usage(stderr, prog, backends, n_backends);
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
        status = child_main(&o, sc, &plan, b);
    } else {
        status = parent_main(&o, sc, &plan, b, prog, self_argv, n_self);
    }
    colo_live_plan_free(&plan);
    colo_scenario_free(sc);
    colo_free(o.sets);
    return status;
}
