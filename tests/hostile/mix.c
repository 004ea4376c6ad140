#define _XOPEN_SOURCE 700 /* realpath, strsignal */
/* mix.c: random scenarios that mix every feature a scenario can name (issue 22; and since issue
 * 40, with mix_more.c, LLM tenants, k8s, colours and channels, fair PCIe, integers past 32 bits,
 * cluster files and studies), each simulated in a child process under a time limit, its results
 * checked for what must always hold.
 *   colosim_mix SRC OUT CASES SEED [TIMEOUT_S]
 * SRC is the source tree (traces and fixtures), OUT a folder for the scenarios written and for
 * the one that failed. A case may be refused as bad input (that is a fine answer: the mix asks
 * for things that do not go together); it fails when the child crashes (a signal: a failed
 * invariant, a sanitizer report), runs past the limit, or writes results in which
 *   - a tenant's requests are not conserved (completed + dropped <= arrived, drops by reason
 *     adding up to the drops),
 *   - latencies are out of order (p50 <= p90 <= p99 <= p99.9 <= max, mean <= max) or negative,
 *   - an attainment, a GPU fraction or a utilisation sample is outside [0, 1],
 *   - a number is not finite, or a count (any integer) is negative,
 *   - an LLM request's time to first token is past its end-to-end latency (at p50, p99, max and
 *     the mean: each request's TTFT is at most its latency), a TPOT's or TTFT's mean past its
 *     max, the KV cache's utilisation mean past its max,
 *   - a utilisation's mean over the window is past the largest of its samples,
 *   - a cluster's GPU count or a service's replicas disagree, or a search's capacity lies
 *     outside the range it probed.
 * Prints a line per failure and a summary; exit 0 when no case failed and at least a third of
 * them ran (else the mix tests nothing), 1 otherwise. The debug build adds colosim's own
 * invariants (COLO_DCHECK) to every run. */
#include "mix.h"
#include "cluster.h"
#include "errors.h"
#include "study.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static uint64_t state;

static uint64_t next(void) /* splitmix64: the same mix from the same seed on any machine */
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
int pick(int n)
{
    return (int)(next() % (uint64_t)n);
}
bool chance(int percent)
{
    return pick(100) < percent;
}
double uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(next() >> 11) / 9007199254740992.0;
}
double log_uniform(double lo, double hi)
{
    return exp(uniform(log(lo), log(hi)));
}

void put(struct text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(t->buf + t->n, sizeof t->buf - t->n, fmt, ap);
    va_end(ap);
    if (w > 0) t->n += (size_t)w;
    if (t->n >= sizeof t->buf) t->n = sizeof t->buf - 1;
}

static const char *const gpus[] = {"h100-sxm",  "a100-40gb", "a100-80gb",
                                   "h100-pcie", "h200",      "v100-sxm2"};
static const char *const traces[] = {
    "tests/fixtures/tiny_h100.json",         "tests/fixtures/kernel_only_h100.json",
    "tests/fixtures/memory_h100.json",       "tests/fixtures/compute_h100.json",
    "tests/fixtures/kernels_b8_h100.json",   "tests/fixtures/long_waves_h100.json",
    "tests/fixtures/one_kernel_h100.json",   "tests/fixtures/kernel_1ns_h100.json",
    "tests/fixtures/tiny_kernels_a100.json", "traces/mobilenetv2_b4_h100.json",
    "traces/resnet50_b4_v100.json",          "traces/bert_b2_v100.json"};
static const char *const logs[] = {"traces/arrivals/azure_llm_2023_conv_first20min.csv"};
static const char *const policies[] = {"fifo",          "priority", "edf", "stream_priority",
                                       "one_at_a_time", "throttle"};

void arrival(struct text *t, const char *src)
{
    switch (pick(8)) {
    case 0:
        put(t, "{ process = \"poisson\"; rate = %.6g; }", log_uniform(1, 5e4));
        break;
    case 1:
        put(t, "{ process = \"constant\"; rate = %.6g; }", log_uniform(1, 5e4));
        break;
    case 2:
        put(t, "{ process = \"gamma\"; rate = %.6g; cv = %.6g; }", log_uniform(1, 5e4),
            log_uniform(1e-6, 100));
        break;
    case 3: {
        double lo = log_uniform(1, 1e4);
        put(t, "{ process = \"mmpp\"; rates = [%#.6g, %#.6g]; dwell_s = [%#.6g, %#.6g]; }", lo,
            lo * log_uniform(1, 100), log_uniform(1e-4, 1), log_uniform(1e-4, 1));
        break;
    }
    case 4:
        put(t, "{ process = \"closed\"; clients = %d; think_ms = %.6g; think = \"%s\"; }",
            1 + pick(40), chance(30) ? 0.0 : log_uniform(1e-3, 50),
            chance(50) ? "exponential" : "constant");
        break;
    case 5: {
        static const char *const sc[] = {"SingleStream", "MultiStream", "Server", "Offline"};
        int k = pick(4);
        put(t, "{ process = \"mlperf\"; scenario = \"%s\";", sc[k]);
        if (k == 1) put(t, " samples_per_query = %d;", 1 + pick(16));
        if (k == 2) put(t, " rate = %.6g;", log_uniform(1, 5e4));
        if (k == 3) put(t, " samples = %d;", 1 + pick(5000));
        put(t, " }");
        break;
    }
    case 6:
        put(t, "{ process = \"replay\"; file = \"%s/%s\"; scale = %.6g; jitter_ms = %.6g; }", src,
            logs[pick(1)], log_uniform(0.1, 1e3), chance(50) ? 0.0 : log_uniform(1e-3, 10));
        break;
    default:
        put(t, "{ process = \"poisson\"; rate = %.6g; }", log_uniform(100, 1e5));
        break;
    }
}

/* One scenario of the mix, from the generator's state. */
static void scenario(struct text *t, const char *src)
{
    const char *gpu = gpus[pick(6)];
    bool mig_ok = strcmp(gpu, "v100-sxm2") != 0;
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    const char *mode = modes[pick(4)];
    if (!mig_ok && strcmp(mode, "mig") == 0) mode = "mps";
    double duration = log_uniform(0.02, 0.5);
    t->n = 0;
    put(t, "gpu = \"%s\";\nseed = %d;\nduration_s = %.6g;\nwarmup_s = %.6g;\ndrain_s = %.6g;\n",
        gpu, pick(1000), duration, chance(30) ? 0.0 : duration * uniform(0, 0.9),
        chance(30) ? 0.0 : log_uniform(1e-3, 0.5));
    if (chance(20)) put(t, "calibration = \"none\";\n");
    if (chance(20)) put(t, "load_scale = %.6g;\n", log_uniform(0.1, 10));
    if (chance(50))
        put(t, "metrics = { interval_ms = %.6g; exact_samples = %d; };\n", log_uniform(0.01, 100),
            1 + pick(2000));
    put(t, "sharing = { mode = \"%s\";", mode);
    if (strcmp(mode, "timeslice") == 0 && chance(50))
        put(t, " timeslice = %d; switch_us = %.6g;", 1 + pick(5000), uniform(0, 100));
    if (chance(20)) put(t, " recovery_s = %.6g;", log_uniform(1e-3, 1));
    if (strcmp(mode, "mps") == 0 && chance(20))
        put(t, " cuda = \"13.1\"; static_partitions = true;");
    if (strcmp(mode, "green") == 0 && chance(20)) put(t, " overlap = true;");
    put(t, " };\n");
    bool sched = (strcmp(mode, "mps") == 0 || strcmp(mode, "green") == 0) && chance(50);
    if (sched) put(t, "scheduler = { policy = \"%s\"; };\n", policies[pick(6)]);
    int n = 1 + pick(4);
    put(t, "tenants = (\n");
    for (int i = 0; i < n; i++) {
        put(t, "  { name = \"t%d\"; trace = \"%s/%s\"; arrival = ", i, src, traces[pick(12)]);
        arrival(t, src);
        put(t, ";");
        if (chance(70)) put(t, " slo_ms = %.6g;", log_uniform(0.01, 500));
        if (chance(25)) put(t, " queue_limit = %d;", 1 + pick(50));
        if (chance(20)) put(t, " deadline_ms = %.6g;", log_uniform(0.01, 100));
        if (chance(30))
            put(t, " batching = { max_batch = %d; max_delay_ms = %.6g; };", 1 + pick(64),
                uniform(0, 5));
        if (chance(25)) put(t, " instances = %d;", 1 + pick(4));
        if (chance(25)) put(t, " cuda_graphs = true;");
        if (chance(20)) put(t, " memory_gib = %.3g;", uniform(0, 4));
        if (sched && chance(50)) put(t, " class = \"best_effort\";");
        if (strcmp(mode, "mps") == 0) {
            if (chance(60)) put(t, " active_thread_percentage = %d;", 1 + pick(100));
            if (chance(20)) put(t, " priority = %d;", pick(2));
            if (chance(20)) put(t, " sms = %d;", 2 * (1 + pick(32)));
        }
        if (strcmp(mode, "green") == 0 && chance(80)) put(t, " sms = %d;", 8 * (1 + pick(4)));
        if (chance(15)) { /* copies, a routed service (refused for closed loops: a refusal), a
                             * routing delay, an autoscaler deciding often */
            static const char *const routers[] = {"round_robin", "random", "least_outstanding",
                                                  "power_of_two", "session_affinity"};
            int copies = 1 + pick(4);
            put(t, " copies = %d;", copies);
            if (chance(60)) {
                if (chance(50))
                    put(t, " router = \"%s\";", routers[pick(5)]);
                else
                    put(t, " router = { policy = \"%s\"; delay_ms = %.6g; };", routers[pick(5)],
                        chance(30) ? 0.0 : log_uniform(1e-3, 5));
                if (chance(40))
                    put(t,
                        " autoscale = { min = 1; max = %d; target = %.6g; interval_s = %.6g; "
                        "window_s = %.6g; cold_start_s = %.6g; };",
                        copies, log_uniform(0.2, 8), log_uniform(1e-3, 0.2), uniform(0, 0.3),
                        uniform(0, 0.1));
            }
        }
        put(t, " }%s\n", i + 1 < n ? "," : "");
    }
    put(t, ");\n");
    if (chance(15))
        put(t, "faults = ( { tenant = \"t%d\"; at_s = %.6g; } );\n", pick(n), uniform(0, duration));
}

/* What must hold in any results; a line on stderr for the first that does not. */
bool fraction(double v)
{
    return isfinite(v) && v >= -1e-9 && v <= 1 + 1e-9;
}

static bool negative_count(json_t *v, char *path, size_t len, size_t cap);

/* Looks into x, the step to it (w characters) written at path + len. */
static bool negative_in(json_t *x, char *path, size_t len, size_t cap, int w)
{
    if (w > 0 && negative_count(x, path, len + (size_t)w < cap ? len + (size_t)w : len, cap))
        return true;
    path[len] = '\0';
    return false;
}

/* The first negative integer anywhere in v (a count, an index, a size), named by its path. */
static bool negative_count(json_t *v, char *path, size_t len, size_t cap)
{
    if (json_is_integer(v) && json_integer_value(v) < 0) return true;
    const char *k;
    json_t *x;
    size_t i;
    json_object_foreach(v, k, x)
    {
        if (negative_in(x, path, len, cap, snprintf(path + len, cap - len, ".%s", k))) return true;
    }
    json_array_foreach(v, i, x)
    {
        if (negative_in(x, path, len, cap, snprintf(path + len, cap - len, "[%zu]", i)))
            return true;
    }
    return false;
}

static double num_at(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* LLM tenants' TTFT against their end-to-end latency, means against maxima; counts. */
static const char *check_llm_and_counts(json_t *res, char *why, size_t n)
{
    char path[512] = "";
    if (negative_count(res, path, 0, sizeof path)) {
        snprintf(why, n, "a negative count at %s", path);
        return why;
    }
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        json_t *llm = json_object_get(t, "llm");
        if (!llm) continue;
        const char *name = json_string_value(json_object_get(t, "name"));
        static const char *const q[] = {"p50", "p99", "max", "mean"};
        for (int k = 0; k < 4; k++) {
            double ttft = num_at(llm, "ttft_ms", q[k]), e2e = num_at(t, "latency_ms", q[k]);
            if (isfinite(ttft) && isfinite(e2e) && ttft > e2e * (1 + 1e-9) + 1e-9) {
                snprintf(why, n, "%s: TTFT %s %.17g ms past the end-to-end %.17g ms", name, q[k],
                         ttft, e2e);
                return why;
            }
        }
        static const char *const g[] = {"ttft_ms", "tpot_ms"};
        for (int k = 0; k < 2; k++)
            if (num_at(llm, g[k], "mean") > num_at(llm, g[k], "max") * (1 + 1e-9) + 1e-9) {
                snprintf(why, n, "%s: %s mean %.17g past its max %.17g", name, g[k],
                         num_at(llm, g[k], "mean"), num_at(llm, g[k], "max"));
                return why;
            }
        json_t *kv = json_object_get(llm, "kv_cache");
        double um = json_number_value(json_object_get(kv, "utilisation_mean"));
        double ux = json_number_value(json_object_get(kv, "utilisation_max"));
        if (!fraction(um) || !fraction(ux) || um > ux + 1e-12) {
            snprintf(why, n, "%s: KV cache utilisation mean %.17g, max %.17g", name, um, ux);
            return why;
        }
    }
    return NULL;
}

const char *check_results(json_t *res, char *why, size_t n)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        const char *name = json_string_value(json_object_get(t, "name"));
        json_int_t arrived = json_integer_value(json_object_get(t, "arrived"));
        json_int_t completed = json_integer_value(json_object_get(t, "completed"));
        json_int_t dropped = json_integer_value(json_object_get(t, "dropped"));
        json_int_t by = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(t, "dropped_by_reason"), k, v) by +=
            json_integer_value(v);
        if (completed < 0 || dropped < 0 || completed + dropped > arrived || by != dropped) {
            snprintf(why, n, "%s: arrived %lld, completed %lld, dropped %lld (by reason %lld)",
                     name, (long long)arrived, (long long)completed, (long long)dropped,
                     (long long)by);
            return why;
        }
        json_t *lat = json_object_get(t, "latency_ms");
        static const char *const order[] = {"p50", "p90", "p99", "p999", "max"};
        double prev = 0;
        for (int q = 0; q < 5; q++) {
            double x = json_number_value(json_object_get(lat, order[q]));
            if (!isfinite(x) || x < prev * (1 - 1e-12) - 1e-12) {
                snprintf(why, n, "%s: latency %s %.17g after %.17g", name, order[q], x, prev);
                return why;
            }
            prev = x;
        }
        double mean = json_number_value(json_object_get(lat, "mean"));
        if (!isfinite(mean) || mean < 0 || mean > prev * (1 + 1e-12) + 1e-12) {
            snprintf(why, n, "%s: mean latency %.17g, max %.17g", name, mean, prev);
            return why;
        }
        json_t *att = json_object_get(t, "slo_attainment");
        if (json_is_number(att) && !fraction(json_number_value(att))) {
            snprintf(why, n, "%s: slo_attainment %.17g", name, json_number_value(att));
            return why;
        }
        if (!fraction(json_number_value(json_object_get(t, "gpu_share")))) {
            snprintf(why, n, "%s: gpu_share %.17g", name,
                     json_number_value(json_object_get(t, "gpu_share")));
            return why;
        }
    }
    json_t *g = json_object_get(res, "gpu");
    static const char *const fr[] = {"busy_fraction", "switching_fraction"};
    for (int k = 0; k < 2; k++)
        if (json_is_number(json_object_get(g, fr[k])) &&
            !fraction(json_number_value(json_object_get(g, fr[k])))) {
            snprintf(why, n, "gpu.%s %.17g", fr[k], json_number_value(json_object_get(g, fr[k])));
            return why;
        }
    const char *kind;
    json_t *series;
    json_object_foreach(json_object_get(json_object_get(res, "utilisation"), "series"), kind,
                        series)
    {
        json_t *x;
        double most = 0;
        json_array_foreach(series, i, x)
        {
            if (!fraction(json_number_value(x))) {
                snprintf(why, n, "utilisation %s[%zu] = %.17g", kind, i, json_number_value(x));
                return why;
            }
            most = fmax(most, json_number_value(x));
        }
        /* the mean is over the window; the series leaves out a last partial interval, busy at
         * most 1: the mean is at most (largest sample x covered + the rest) / window */
        json_t *u = json_object_get(res, "utilisation");
        json_t *mean = json_object_get(json_object_get(u, "mean"), kind);
        json_t *sc = json_object_get(res, "scenario");
        double window = json_number_value(json_object_get(sc, "duration_s")) -
                        json_number_value(json_object_get(sc, "warmup_s"));
        double covered =
            (double)json_array_size(series) * json_number_value(json_object_get(u, "interval_s"));
        double bound = window > 0 ? (most * covered + fmax(0, window - covered)) / window : 1;
        if (json_is_number(mean) && json_number_value(mean) > bound + 1e-9) {
            snprintf(why, n,
                     "utilisation %s: mean %.17g above what its samples allow (largest %.17g over "
                     "%.6g s of a %.6g s window)",
                     kind, json_number_value(mean), most, covered, window);
            return why;
        }
    }
    return check_llm_and_counts(res, why, n);
}

static int child(const char *path, int kind, bool search)
{
    colo_error_t err;
    colo_error_clear(&err);
    json_t *res = NULL;
    char why[512];
    if (kind == 3) { /* a study, into PATH.out */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s.out", path);
        int ans = mix_run_study(path, search, dir, why, sizeof why);
        if (ans == BROKEN) fprintf(stderr, "  %s\n", why);
        if (ans == REFUSED && getenv("COLOSIM_MIX_VERBOSE"))
            fprintf(stderr, "  refused: %s\n", why);
        return ans;
    }
    int rc = colo_simulate_file(path, NULL, 0, &res, &err);
    if (rc) {
        char msg[1024];
        colo_error_format(&err, msg, sizeof msg);
        /* out of memory is not an answer to a scenario this small */
        if (rc == COLO_ENOMEM) {
            fprintf(stderr, "  out of memory: %s\n", msg);
            return BROKEN;
        }
        if (getenv("COLOSIM_MIX_VERBOSE")) fprintf(stderr, "  refused: %s\n", msg);
        return REFUSED;
    }
    const char *bad = kind == 2 || json_object_get(res, "cluster")
                          ? check_cluster(res, why, sizeof why)
                          : check_results(res, why, sizeof why);
    if (bad) fprintf(stderr, "  %s\n", bad);
    json_decref(res);
    return bad ? BROKEN : RAN;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: colosim_mix SRC OUT CASES SEED [TIMEOUT_S]\n");
        return 2;
    }
    char src[4096]; /* traces are named by absolute path: the scenarios are elsewhere */
    if (!realpath(argv[1], src)) {
        fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    const char *out = argv[2];
    int cases = atoi(argv[3]);
    state = strtoull(argv[4], NULL, 10);
    int limit = argc > 5 ? atoi(argv[5]) : 60;
    mkdir(out, 0755);
    int ran = 0, refused = 0, failed = 0, by_kind[4][2] = {{0}};
    static const char *const kinds[] = {"one-GPU scenarios", "newer features", "cluster files",
                                        "studies"};
    struct text t;
    mix_more_init(out);
    for (int c = 0; c < cases; c++) {
        /* half the classic scenarios; the rest the newer features, clusters and studies */
        int r = pick(20), kind = r < 10 ? 0 : r < 15 ? 1 : r < 18 ? 2 : 3;
        bool search = false;
        if (kind == 0) scenario(&t, src);
        if (kind == 1) mix_features(&t, src, out);
        if (kind == 2) mix_cluster(&t, src);
        if (kind == 3) mix_study(&t, src, &search);
        char path[4096];
        snprintf(path, sizeof path, "%s/mix-%04d.cfg", out, c);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "%s: %s\n", path, strerror(errno));
            return 1;
        }
        fputs(t.buf, f);
        fclose(f);
        fflush(NULL);
        pid_t p = fork();
        if (p < 0) return 1;
        if (p == 0) {
            alarm((unsigned)limit); /* a run that never ends is killed and named */
            _exit(child(path, kind, search));
        }
        int status = 0;
        waitpid(p, &status, 0);
        bool done = WIFEXITED(status) && WEXITSTATUS(status) == RAN;
        if (done || (WIFEXITED(status) && WEXITSTATUS(status) == REFUSED)) {
            ran += done;
            refused += !done;
            by_kind[kind][done ? 0 : 1]++;
            unlink(path);
            if (kind == 3) {
                char cmd[4300];
                snprintf(cmd, sizeof cmd, "rm -rf '%s.out'", path);
                if (system(cmd) != 0) fprintf(stderr, "cannot remove %s.out\n", path);
            }
        } else {
            failed++;
            if (WIFSIGNALED(status))
                fprintf(stderr, "FAIL %s: %s%s\n", path, strsignal(WTERMSIG(status)),
                        WTERMSIG(status) == SIGALRM ? " (ran past the time limit)" : "");
            else
                fprintf(stderr, "FAIL %s: results break an invariant (above)\n", path);
        }
    }
    printf("colosim_mix: %d cases (seed %s): %d ran, %d refused as bad input, %d failed\n", cases,
           argv[4], ran, refused, failed);
    for (int k = 0; k < 4; k++)
        printf("  %-18s %4d ran, %4d refused\n", kinds[k], by_kind[k][0], by_kind[k][1]);
    if (failed) return 1;
    if (ran * 3 < cases) {
        fprintf(stderr, "colosim_mix: fewer than a third ran: the mix tests too little\n");
        return 1;
    }
    return 0;
}
