/* mix_more.c: the hostile mix's generators of the features added after it was written (issue
 * 40): LLM tenants with every token distribution and replayed logs (Azure CSV, Mooncake JSONL),
 * k8s device-plugin sharing, colours and channels, fair PCIe with extreme weights, integer keys
 * past 32 bits, cluster files and studies (sweeps and searches), and the checks of what those
 * must give. */
#include "mix.h"
#include "errors.h"
#include "study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const llm_profiles[] = {
    "traces/llm/phi-2_h100.json", "traces/llm/llama-3-8b_a100.json", "traces/llm/phi-2_a100.json"};
static const char *const vision[] = {
    "tests/fixtures/tiny_h100.json",       "tests/fixtures/kernel_only_h100.json",
    "tests/fixtures/memory_h100.json",     "traces/resnet50_b4_v100_io.json",
    "traces/mobilenetv2_b32_v100_io.json", "traces/mobilenetv2_b4_h100.json"};
static const char *const gpus[] = {"h100-sxm", "a100-80gb", "h200", "l4", "a100-pcie-40gb"};
static char mooncake[4200];

void mix_more_init(const char *out)
{
    snprintf(mooncake, sizeof mooncake, "%s/mooncake.jsonl", out);
    FILE *f = fopen(mooncake, "w");
    if (!f) return;
    for (int i = 0; i < 40; i++) /* Mooncake's shape: ms from 0, token counts, block hashes */
        fprintf(f,
                "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, "
                "\"hash_ids\": [%d, %d]}\n",
                i * 25, 16 + (i * 97) % 3000, 1 + (i * 31) % 400, 2 * i, 2 * i + 1);
    fclose(f);
}

/* An integer key: mostly a small value, sometimes one past 32 bits (with and without libconfig's
 * L), which a file must read as written or refuse, never wrap. */
static void int_key(struct text *t, const char *key, long long small)
{
    static const char *const big[] = {"4294967297",     "2147483648",           "4294967297L",
                                      "1099511627776L", "9223372036854775807L", "-2147483649"};
    if (chance(12))
        put(t, " %s = %s;", key, big[pick(6)]);
    else
        put(t, " %s = %lld;", key, small);
}

static void tokens_dist(struct text *t)
{
    int most = chance(85) ? 2048 : 8192; /* mostly within the engine's default iteration */
    switch (pick(4)) {
    case 0:
        put(t, "{ dist = \"fixed\"; value = %d; }", pick(most));
        break;
    case 1: {
        int lo = 1 + pick(500);
        put(t, "{ dist = \"uniform\"; min = %d; max = %d; }", lo, lo + pick(most - 500));
        break;
    }
    case 2:
        put(t, "{ dist = \"lognormal\"; median = %.6g; sigma = %.6g; max = %d; }",
            log_uniform(0.05, 3000), uniform(0, 2.5), 1 + pick(most));
        break;
    default:
        put(t, "{ dist = \"zipf\"; s = %.6g; max = %d; }", log_uniform(0.3, 4), 1 + pick(most));
        break;
    }
}

static void llm_tenant(struct text *t, const char *src, int i)
{
    put(t, "  { name = \"llm%d\"; llm = { profile = \"%s/%s\";", i, src, llm_profiles[pick(3)]);
    if (chance(30)) int_key(t, "max_num_seqs", 1 + pick(512));
    if (chance(30)) int_key(t, "max_num_batched_tokens", 64 + pick(8192));
    if (chance(20)) int_key(t, "chunk_tokens", 16 + pick(2048));
    if (chance(15)) put(t, " kv_cache_gib = %.4g;", log_uniform(0.01, 60));
    put(t, " };");
    if (chance(25)) {
        bool mc = chance(50);
        put(t, " arrival = { process = \"replay\"; file = \"%s%s\"; scale = %.6g;%s };",
            mc ? "" : src, mc ? mooncake : "/traces/arrivals/azure_llm_2023_conv_first20min.csv",
            log_uniform(1, 2000), mc ? " jitter_ms = 3.0;" : "");
    } else {
        put(t, " tokens = { prompt = ");
        tokens_dist(t);
        put(t, "; output = ");
        tokens_dist(t);
        put(t, "; }; arrival = { process = \"%s\"; rate = %.6g; };",
            chance(70) ? "poisson" : "constant", log_uniform(0.5, 300));
    }
    if (chance(90)) put(t, " memory_gib = %.4g;", uniform(chance(10) ? 1 : 20, 40));
    if (chance(60)) put(t, " slo_ttft_ms = %.6g;", log_uniform(chance(5) ? 1e-7 : 1e-2, 2000));
    if (chance(60)) put(t, " slo_tpot_ms = %.6g;", log_uniform(chance(5) ? 1e-7 : 1e-2, 200));
    put(t, " }");
}

void mix_features(struct text *t, const char *src, const char *out)
{
    (void)out;
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    const char *gpu = gpus[pick(5)], *mode = modes[pick(4)];
    double duration = log_uniform(0.05, 0.6);
    t->n = 0;
    put(t, "gpu = \"%s\";", gpu);
    int_key(t, "seed", pick(1000));
    put(t, "\nduration_s = %.6g;\nwarmup_s = %.6g;\ndrain_s = %.6g;\n", duration,
        chance(30) ? 0.0 : duration * uniform(0, 0.9), chance(30) ? 0.0 : log_uniform(1e-3, 2));
    bool k8s = chance(15), pcie = chance(40);
    int colours = chance(25) && strcmp(mode, "mig") != 0 ? 1 + pick(8) : 0;
    if (k8s) {
        put(t, "k8s = { sharing = \"%s\";", chance(50) ? "mps" : "time-slicing");
        int_key(t, "replicas", 1 + pick(10));
        put(t, " };\n");
    }
    if (!k8s || chance(20) || colours) {
        put(t, "sharing = {");
        if (!k8s || chance(50)) put(t, " mode = \"%s\";", mode);
        if (colours) put(t, " colours = %d;", colours);
        put(t, " };\n");
    }
    if (pcie) put(t, "pcie = { scheduler = \"%s\"; };\n", chance(70) ? "fair" : "fifo");
    int n = 1 + pick(4);
    put(t, "tenants = (\n");
    for (int i = 0; i < n; i++) {
        if (chance(45)) {
            llm_tenant(t, src, i);
        } else {
            put(t, "  { name = \"v%d\"; trace = \"%s/%s\"; arrival = ", i, src, vision[pick(6)]);
            arrival(t, src);
            put(t, ";");
            if (chance(60)) put(t, " slo_ms = %.6g;", log_uniform(chance(5) ? 1e-7 : 1e-2, 500));
            if (chance(25)) int_key(t, "queue_limit", 1 + pick(50));
            if (chance(25)) int_key(t, "instances", 1 + pick(4));
            if (chance(20)) put(t, " memory_gib = %.3g;", uniform(0, 8));
            if (pcie && chance(70)) put(t, " pcie_weight = %.6g;", log_uniform(1e-7, 1e7));
            if (colours && chance(70)) put(t, " colour = %d;", pick(colours + 1));
            if (!colours && strcmp(mode, "mig") != 0 && chance(15)) {
                int a = pick(40);
                put(t, " channels = \"%d-%d\";", a, a + pick(40));
            }
            put(t, " }");
        }
        put(t, "%s\n", i + 1 < n ? "," : "");
    }
    put(t, ");\n");
}

void mix_cluster(struct text *t, const char *src)
{
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    static const char *const policies[] = {"first_fit", "best_fit", "interference_aware"};
    double duration = log_uniform(0.05, 0.3);
    t->n = 0;
    put(t, "gpu = \"h100-sxm\";\nseed = %d;\nduration_s = %.6g;\nwarmup_s = %.6g;\n", pick(1000),
        duration, duration * uniform(0, 0.5));
    put(t, "sharing = { mode = \"%s\"; };\n", modes[pick(4)]);
    if (chance(4)) put(t, "k8s = { sharing = \"mps\"; replicas = 4; };\n");
    put(t, "cluster = { gpus = ( { model = \"%s\";", chance(70) ? "h100-sxm" : gpus[pick(5)]);
    if (chance(60)) int_key(t, "count", 1 + pick(4));
    put(t, " }");
    if (chance(25)) put(t, ", { model = \"%s\"; count = %d; }", gpus[pick(5)], 1 + pick(3));
    /* a tiny headroom asks for hundreds of replicas: fine for the heuristics, but the
     * interference-aware policy runs a trial per replica and candidate GPU (minutes, as its
     * docs say), so it gets ordinary headrooms */
    int policy = pick(3);
    put(t, " ); policy = \"%s\";%s headroom = %.6g; };\n", policies[policy],
        chance(30) ? " order = \"given\";" : "",
        policy < 2 && chance(10) ? log_uniform(1e-300, 1e-3) : uniform(0.2, 1.0));
    int n = 1 + pick(5);
    put(t, "tenants = (\n");
    for (int i = 0; i < n; i++) {
        if (chance(20)) {
            llm_tenant(t, src, i);
        } else {
            put(t,
                "  { name = \"s%d\"; trace = \"%s/%s\"; arrival = { process = \"%s\"; "
                "rate = %.6g; };",
                i, src, vision[pick(6)], chance(60) ? "poisson" : "constant", log_uniform(5, 5000));
            if (chance(70)) put(t, " slo_ms = %.6g;", log_uniform(0.05, 200));
            if (chance(50)) put(t, " memory_gib = %.3g;", uniform(0, 20));
            if (chance(40))
                put(t, " replicas = \"auto\";");
            else if (chance(50))
                int_key(t, "replicas", 1 + pick(4));
            put(t, " }");
        }
        put(t, "%s\n", i + 1 < n ? "," : "");
    }
    put(t, ");\n");
}

/* A study over a fixture: one GPU (two tenants, or an LLM beside a vision tenant) or a cluster;
 * at most six points, runs of a fraction of a second. */
void mix_study(struct text *t, const char *src, bool *search)
{
    static const char *const bases[] = {"tests/fixtures/two_tenants.cfg",
                                        "tests/fixtures/llm/one_llm.cfg",
                                        "tests/fixtures/cluster/packing.cfg"};
    int b = pick(3);
    t->n = 0;
    put(t, "scenario = \"%s/%s\";\nset = [ \"duration_s=%.3g\", \"warmup_s=0.02\"", src, bases[b],
        log_uniform(0.08, 0.3));
    if (b == 1) put(t, ", \"drain_s=0.5\"");
    if (chance(8)) put(t, ", \"warmup_sx=0.1\"");
    if (chance(8)) put(t, ", \"seed=4294967297\"");
    put(t, " ];\n");
    *search = chance(40);
    int axes = *search ? pick(2) : 1 + pick(2);
    if (axes) {
        put(t, "grid = (");
        static const char *const keys[] = {"sharing.mode",       "load_scale",        "seed", "gpu",
                                           "tenants.[0].slo_ms", "tenants.[0].nosuch"};
        int prev = -1;
        for (int a = 0; a < axes; a++) {
            int k = pick(6);
            if (k == prev && chance(80)) k = (k + 1) % 6; /* sometimes the same key twice */
            prev = k;
            put(t, "%s { key = \"%s\"; ", a ? "," : "", keys[k]);
            switch (k) {
            case 0:
                put(t, "values = [ \"mps\", \"%s\" ]; }", chance(50) ? "mig" : "timeslice");
                break;
            case 1:
                put(t, "from = %.3g; to = %.3g; steps = %d; }", log_uniform(0.01, 1),
                    log_uniform(0.5, 5), 1 + pick(3));
                break;
            case 2:
                put(t, "values = [ 1, %s ]; }", chance(20) ? "2.5" : "2");
                break;
            case 3:
                put(t, "values = [ \"h100-sxm\", \"%s\" ]; }", chance(30) ? "no-such" : "l4");
                break;
            case 4:
                put(t, "values = [ %.3g, 50.0 ]; }", log_uniform(1e-3, 10));
                break;
            default:
                put(t, "values = [ 1.0 ]; }");
                break;
            }
        }
        put(t, " );\n");
    }
    if (*search) {
        double lo = log_uniform(0.01, 1);
        put(t,
            "search = { key = \"%s\"; lo = %.4g; hi = %.4g; tolerance = %.3g; replications = %d; "
            "confidence = %.3g; attainment = %.3g; };\n",
            chance(10) ? "seed" : "load_scale", lo, lo * log_uniform(1.5, 50),
            log_uniform(0.05, 0.5), 1 + pick(3), uniform(0.5, 0.99), uniform(0.5, 1));
    }
}

static json_t *read_json(const char *dir, const char *name)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return json_load_file(p, 0, NULL);
}

int mix_run_study(const char *path, bool search, const char *out_dir, char *why, size_t n)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_study_t *s = NULL;
    if (colo_study_load(path, &s, &err)) {
        snprintf(why, n, "%s", err.text);
        return err.code == COLO_ENOMEM ? BROKEN : REFUSED;
    }
    colo_sweep_opts_t o = {.jobs = 1, .quiet = true, .out_dir = out_dir};
    int rc = search ? colo_search_run(s, &o, &err) : colo_sweep_run(s, &o, &err);
    double lo = s->search.lo, hi = s->search.hi;
    colo_study_free(s);
    if (rc) {
        snprintf(why, n, "%s", err.text);
        return rc == COLO_ENOMEM ? BROKEN : REFUSED;
    }
    json_t *doc = read_json(out_dir, search ? "search.json" : "sweep.json");
    if (!doc) {
        snprintf(why, n, "no %s written", search ? "search.json" : "sweep.json");
        return BROKEN;
    }
    int ans = RAN;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "points"), i, p)
    {
        if (json_object_get(p, "error")) continue;
        if (!search) {
            json_t *res = json_object_get(p, "results");
            const char *bad = json_object_get(res, "cluster") ? check_cluster(res, why, n)
                                                              : check_results(res, why, n);
            if (bad) {
                ans = BROKEN;
                break;
            }
            continue;
        }
        /* a capacity is within the range the search probed, and so is each replication's */
        double cap = json_number_value(json_object_get(p, "capacity"));
        json_t *reps = json_object_get(p, "replications"), *r;
        bool ok = isfinite(cap) && cap >= lo * (1 - 1e-9) && cap <= hi * (1 + 1e-9);
        size_t k;
        json_array_foreach(json_object_get(reps, "capacities"), k, r)
        {
            double c = json_number_value(r);
            ok = ok && isfinite(c) && c >= lo * (1 - 1e-9) && c <= hi * (1 + 1e-9);
        }
        if (!ok) {
            snprintf(why, n, "point %zu: capacity %.17g (or a replication's) outside [%g, %g]", i,
                     cap, lo, hi);
            ans = BROKEN;
            break;
        }
    }
    json_decref(doc);
    return ans;
}

const char *check_cluster(json_t *res, char *why, size_t n)
{
    json_t *cl = json_object_get(res, "cluster"), *g;
    json_int_t used = json_integer_value(json_object_get(cl, "gpus_used"));
    if (used < 0 || (size_t)used != json_array_size(json_object_get(cl, "gpus"))) {
        snprintf(why, n, "cluster: gpus_used %lld for %zu GPUs", (long long)used,
                 json_array_size(json_object_get(cl, "gpus")));
        return why;
    }
    size_t i;
    json_array_foreach(json_object_get(cl, "gpus"), i, g)
    {
        if (check_results(json_object_get(g, "results"), why, n)) return why;
    }
    json_t *t;
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        json_int_t arrived = json_integer_value(json_object_get(t, "arrived"));
        json_int_t completed = json_integer_value(json_object_get(t, "completed"));
        json_int_t reps = json_integer_value(json_object_get(t, "replicas"));
        json_int_t placed = json_integer_value(json_object_get(t, "placed"));
        if (arrived < 0 || completed < 0 || completed > arrived || reps < 0 || placed < 0 ||
            placed > reps) {
            snprintf(why, n, "service %s: arrived %lld, completed %lld, replicas %lld, placed %lld",
                     json_string_value(json_object_get(t, "name")), (long long)arrived,
                     (long long)completed, (long long)reps, (long long)placed);
            return why;
        }
    }
    return NULL;
}
