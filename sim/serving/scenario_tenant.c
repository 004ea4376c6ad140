/* scenario_tenant.c: a scenario's tenants: traces (each loaded once), batching, execution,
 * channel colours, PCIe weight, and LLM tenants' settings and place (scenario_internal.h). */
#include "scenario.h"
#include "scenario_internal.h"
#include "router.h"
#include "alloc.h"
#include "cfg.h"
#include "datadir.h"
#include "gpu_catalog.h"
#include "hardware.h"
#include "kernel_model.h"
#include "layout.h"
#include "llm_cfg.h"
#include "metrics.h"
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The most copies of one tenant: a GPU's MPS clients (48 from Volta) many times over. */
#define MAX_COPIES 1024

#define REQ COLO_CFG_REQUIRED
#define POS (COLO_CFG_REQUIRED | COLO_CFG_POSITIVE)

/* The GPU a file (a trace, an LLM profile) at path was measured on, named gpu at its line:
 * found from the file's folder, and scaled with the scenario's parameters when it is the
 * scenario's GPU. *out is new. */
static int open_measured_gpu(const colo_scenario_t *sc, const char *gpu, const char *path, int line,
                             colo_gpu_t **out, colo_error_t *err)
{
    const char *slash = strrchr(path, '/');
    char dir[4096] = "";
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    const char *cal = strcmp(gpu, sc->gpu->name) == 0 ? sc->calibration : NULL;
    return colo_gpu_open(gpu, dir, cal, out, path, line, "gpu", err);
}

/* Appends trace t and its GPU g to the scenario's table, which owns both from then on (both
 * are freed when it cannot grow); its index into *idx (may be NULL). */
static int append_trace(colo_scenario_t *sc, colo_trace_t *t, colo_gpu_t *g, size_t *idx,
                        colo_error_t *err)
{
    colo_trace_t **nt = colo_realloc(sc->traces, (sc->n_traces + 1) * sizeof *nt);
    if (nt) sc->traces = nt;
    colo_gpu_t **ng = nt ? colo_realloc(sc->trace_gpus, (sc->n_traces + 1) * sizeof *ng) : NULL;
    if (ng) sc->trace_gpus = ng;
    if (!nt || !ng) {
        int rc = colo_error_set(err, COLO_ENOMEM, t->path, 0, NULL, "out of memory");
        colo_trace_free(t);
        colo_gpu_free(g);
        return rc;
    }
    sc->traces[sc->n_traces] = t;
    sc->trace_gpus[sc->n_traces] = g;
    if (idx) *idx = sc->n_traces;
    sc->n_traces++;
    return 0;
}

/* Loads the trace at path once for the whole scenario; returns its index. */
static int intern_trace(colo_scenario_t *sc, const char *path, size_t *idx, colo_error_t *err)
{
    for (size_t i = 0; i < sc->n_traces; i++)
        if (strcmp(sc->traces[i]->path, path) == 0) {
            *idx = i;
            return 0;
        }
    colo_trace_t *t;
    int rc = colo_trace_load(path, &t, err);
    if (rc) return rc;
    colo_gpu_t *g;
    if ((rc = open_measured_gpu(sc, t->gpu, path, t->gpu_line, &g, err))) {
        colo_trace_free(t);
        return rc;
    }
    return append_trace(sc, t, g, idx, err);
}

static int valid_name(const char *s)
{
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr("_-+", *s)) return 0; /* no '.': --set paths */
    return 1;
}

/* One trace file of a tenant: loaded once per scenario, every kernel placed on its GPU. */
static int read_variant(const colo_cfg_reader_t *r, const config_setting_t *at, colo_scenario_t *sc,
                        const char *file, colo_variant_t *v)
{
    int rc = colo_path_join(sc->dir, file, &v->path);
    if (rc) return rc;
    struct stat st;
    int serr = stat(v->path, &st) != 0 ? errno : 0;
    char found[4200];
    if (serr == ENOENT && file[0] != '/' &&
        colo_datadir_lookup(file, "traces", found, sizeof found) == 0) {
        /* not beside the scenario: a trace colosim ships, by name (docs/embedding.md) */
        char *p = colo_strdup(found);
        if (!p) return COLO_ENOMEM;
        colo_free(v->path);
        v->path = p;
        serr = stat(v->path, &st) != 0 ? errno : 0;
    }
    if (serr || !S_ISREG(st.st_mode))
        return colo_cfg_error(r, at, COLO_ENOENT, "cannot open trace '%s': %s", v->path,
                              serr ? strerror(serr) : "not a regular file");
    size_t idx;
    if ((rc = intern_trace(sc, v->path, &idx, r->err))) return rc;
    v->trace = sc->traces[idx];
    v->gpu = sc->trace_gpus[idx];
    /* every kernel must fit on the scenario's GPU (and on the one it was traced on) */
    for (size_t k = 0; k < v->trace->n_ops; k++) {
        colo_kernel_work_t w;
        if (v->trace->ops[k].type == COLO_OP_KERNEL &&
            (rc = colo_kernel_work(&v->trace->ops[k], v->gpu, sc->gpu, COLO_FP32_PYTORCH, &w,
                                   v->trace->path, k, r->err)))
            return rc;
    }
    return 0;
}

/* Whether two traces have the same ops in the same order (kernels by name): their kernels can
 * be interpolated one by one between the two batch sizes. */
static bool same_ops(const colo_trace_t *a, const colo_trace_t *b)
{
    if (a->n_ops != b->n_ops) return false;
    for (size_t i = 0; i < a->n_ops; i++) {
        const colo_op_t *x = &a->ops[i], *y = &b->ops[i];
        if (x->type != y->type || (x->type == COLO_OP_KERNEL && strcmp(x->name, y->name) != 0) ||
            (x->type == COLO_OP_COPY && x->dir != y->dir))
            return false;
    }
    return true;
}

/* trace = "FILE"; or traces = ( "FILE", ... ) for the same model at several batch sizes. */
static int read_variants(const colo_cfg_reader_t *r, const config_setting_t *t, colo_scenario_t *sc,
                         colo_tenant_cfg_t *tc)
{
    const config_setting_t *one = config_setting_get_member(t, "trace");
    const config_setting_t *many = config_setting_get_member(t, "traces");
    int rc;
    if (one && many) return colo_cfg_error(r, many, COLO_EINVAL, "give trace or traces, not both");
    if (!many) {
        const char *file;
        if ((rc = colo_cfg_string(r, t, "trace", REQ, &file))) return rc;
        if (!(tc->variants = colo_calloc(1, sizeof *tc->variants))) return COLO_ENOMEM;
        tc->n_variants = 1;
        rc = read_variant(r, one, sc, file, &tc->variants[0]);
    } else {
        const config_setting_t *l;
        if ((rc = colo_cfg_aggregate(r, t, "traces", REQ, CONFIG_TYPE_LIST, &l))) return rc;
        int n = config_setting_length(l);
        if (n < 1 || n > 64) return colo_cfg_error(r, l, COLO_EINVAL, "list 1 to 64 traces");
        if (!(tc->variants = colo_calloc((size_t)n, sizeof *tc->variants))) return COLO_ENOMEM;
        for (int k = 0; k < n && !rc; k++) {
            const config_setting_t *e = config_setting_get_elem(l, (unsigned)k);
            if (config_setting_type(e) != CONFIG_TYPE_STRING)
                return colo_cfg_error(r, e, COLO_EINVAL, "each trace is a file name");
            tc->n_variants = (size_t)k + 1;
            rc = read_variant(r, e, sc, config_setting_get_string(e), &tc->variants[k]);
            for (int j = 0; j < k && !rc; j++) {
                const colo_trace_t *a = tc->variants[j].trace, *b = tc->variants[k].trace;
                if (a->batch == b->batch)
                    rc = colo_cfg_error(r, e, COLO_EINVAL, "two traces of batch %d", a->batch);
                else if (strcmp(a->model, b->model))
                    rc = colo_cfg_error(r, e, COLO_EINVAL,
                                        "traces of one tenant are one model ('%s', not '%s')",
                                        a->model, b->model);
            }
        }
        /* ascending batch sizes (insertion sort: a handful) */
        for (size_t k = 1; k < tc->n_variants && !rc; k++)
            for (size_t j = k;
                 j > 0 && tc->variants[j - 1].trace->batch > tc->variants[j].trace->batch; j--) {
                colo_variant_t tmp = tc->variants[j];
                tc->variants[j] = tc->variants[j - 1];
                tc->variants[j - 1] = tmp;
            }
        for (size_t k = 1; k < tc->n_variants && !rc; k++)
            tc->variants[k].aligned = same_ops(tc->variants[k - 1].trace, tc->variants[k].trace);
    }
    if (rc) return rc;
    tc->trace = tc->variants[0].trace;
    tc->trace_gpu = tc->variants[0].gpu;
    return (tc->trace_path = colo_strdup(tc->variants[0].path)) ? 0 : COLO_ENOMEM;
}

/* batching = { max_batch; max_delay_ms; }; queue_limit; deadline_ms */
static int read_batching(const colo_cfg_reader_t *r, const config_setting_t *t,
                         colo_tenant_cfg_t *tc)
{
    static const char *const keys[] = {"max_batch", "max_delay_ms", NULL};
    const config_setting_t *b;
    long long v;
    double ms;
    int rc = colo_cfg_aggregate(r, t, "batching", 0, CONFIG_TYPE_GROUP, &b);
    if (rc < 0) return rc;
    if (b) {
        if ((rc = colo_cfg_check_keys(r, b, keys)) ||
            (rc = colo_cfg_int(r, b, "max_batch", POS, &v)))
            return rc;
        if (v > COLO_MAX_BATCH)
            return colo_cfg_error(r, config_setting_get_member(b, "max_batch"), COLO_ERANGE,
                                  "%lld: at most %d", v, COLO_MAX_BATCH);
        tc->max_batch = (int)v;
        ms = 0;
        if ((rc = colo_cfg_double(r, b, "max_delay_ms", COLO_CFG_NONNEG, &ms)) < 0) return rc;
        if (ms > 1e6)
            return colo_cfg_error(r, config_setting_get_member(b, "max_delay_ms"), COLO_ERANGE,
                                  "too long");
        tc->max_delay = colo_time_from_ns(ms * 1e6);
    }
    if ((rc = colo_cfg_int(r, t, "queue_limit", COLO_CFG_POSITIVE, &tc->queue_limit)) < 0)
        return rc;
    ms = 0;
    if ((rc = colo_cfg_double(r, t, "deadline_ms", COLO_CFG_POSITIVE, &ms)) < 0) return rc;
    if (ms > 1e9)
        return colo_cfg_error(r, config_setting_get_member(t, "deadline_ms"), COLO_ERANGE,
                              "too long");
    tc->deadline = colo_time_from_ns(ms * 1e6);
    return 0;
}

/* precision = "fp16" | "bf16" | "int8" | "fp8": refused where the GPU has no such unit. */
static int read_precision(const colo_cfg_reader_t *r, const config_setting_t *t,
                          const colo_scenario_t *sc, colo_tenant_cfg_t *tc)
{
    const char *p = NULL;
    tc->precision = COLO_MATH_AUTO;
    int rc = colo_cfg_string(r, t, "precision", 0, &p);
    if (rc < 0 || !p) return rc < 0 ? rc : 0;
    const config_setting_t *at = config_setting_get_member(t, "precision");
    colo_math_t m = colo_precision_parse(p);
    if (m == COLO_MATH_CLASSES)
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "'%s': use \"fp16\", \"bf16\", \"int8\" or \"fp8\" (leave it out for "
                              "the trace's own)%s",
                              p, *p == '"' ? "; --set takes the bare word: precision=fp8" : "");
    if (sc->gpu->sm.math_per_clock[m] <= 0)
        return colo_cfg_error(r, at, COLO_EINVAL, "%s (%s) has no %s unit: %s", sc->gpu->name,
                              sc->gpu->arch, p,
                              m == COLO_MATH_FP8    ? "FP8 tensor cores came with Hopper and Ada"
                              : m == COLO_MATH_BF16 ? "BF16 tensor cores came with Ampere"
                                                    : "its GPU file gives the class no rate");
    if (tc->llm && m == COLO_MATH_INT8)
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "an LLM tenant runs in \"fp16\", \"bf16\" or \"fp8\" (weights and KV "
                              "cache): INT8 LLM serving is not modelled");
    tc->precision = m;
    return 0;
}

/* framework = "trace" | "pytorch_eager" | "cuda_graphs" | "tensorrt" (cuda_graphs = true is
 * "cuda_graphs") */
static int read_framework(const colo_cfg_reader_t *r, const config_setting_t *t,
                          const colo_scenario_t *sc, colo_tenant_cfg_t *tc)
{
    const char *f = NULL;
    int rc = colo_cfg_string(r, t, "framework", 0, &f);
    if (rc < 0) return rc;
    const config_setting_t *at = config_setting_get_member(t, "framework");
    tc->framework = tc->cuda_graphs ? COLO_FW_CUDA_GRAPHS : COLO_FW_TRACE;
    if (f) {
        colo_framework_t fw = colo_framework_parse(f);
        if (fw == COLO_FRAMEWORKS && strcmp(f, "torch_compile") == 0)
            return colo_cfg_error(r, at, COLO_EINVAL,
                                  "'torch_compile' fuses kernels, which changes the trace itself: "
                                  "capture the compiled model (colosim-capture) and run its trace "
                                  "with \"trace\" (docs/model.md, \"The host\")");
        if (fw == COLO_FRAMEWORKS)
            return colo_cfg_error(
                r, at, COLO_EINVAL,
                "'%s': use \"trace\" (the trace's own host gaps), "
                "\"pytorch_eager\", \"cuda_graphs\" or \"tensorrt\"%s",
                f, *f == '"' ? "; --set takes the bare word: framework=tensorrt" : "");
        const config_setting_t *cg = config_setting_get_member(t, "cuda_graphs");
        if ((tc->cuda_graphs && fw != COLO_FW_CUDA_GRAPHS) ||
            (cg && !tc->cuda_graphs && fw == COLO_FW_CUDA_GRAPHS))
            return colo_cfg_error(r, at, COLO_EINVAL,
                                  "'%s' with cuda_graphs = %s: a request is one CUDA graph "
                                  "exactly when framework = \"cuda_graphs\"; leave one of them "
                                  "out",
                                  f, tc->cuda_graphs ? "true" : "false");
        tc->framework = fw;
        tc->cuda_graphs = fw == COLO_FW_CUDA_GRAPHS;
    }
    tc->host_launch = colo_framework_launch(tc->framework, sc->gpu, sc->host.speed);
    return 0;
}

/* instances = N; cuda_graphs = true; fp32_math = "pytorch" | "fp32" | "tf32" */
static int read_execution(const colo_cfg_reader_t *r, const config_setting_t *t,
                          const colo_scenario_t *sc, colo_tenant_cfg_t *tc)
{
    long long v = 1;
    int rc = colo_cfg_int(r, t, "instances", COLO_CFG_POSITIVE, &v);
    if (rc < 0) return rc;
    if (v > COLO_MAX_INSTANCES)
        return colo_cfg_error(r, config_setting_get_member(t, "instances"), COLO_ERANGE,
                              "%lld requests in flight: at most %d", v, COLO_MAX_INSTANCES);
    tc->instances = (int)v;
    if ((rc = colo_cfg_bool(r, t, "cuda_graphs", 0, &tc->cuda_graphs)) < 0) return rc;
    const char *m = NULL;
    if ((rc = colo_cfg_string(r, t, "fp32_math", 0, &m)) < 0) return rc;
    tc->fp32_math = COLO_FP32_PYTORCH;
    if (m && (tc->fp32_math = colo_fp32_math_parse(m)) == COLO_FP32_POLICIES)
        return colo_cfg_error(r, config_setting_get_member(t, "fp32_math"), COLO_EINVAL,
                              "'%s': use \"pytorch\" (PyTorch's defaults: convolutions on TF32, "
                              "matmuls in FP32), \"fp32\" or \"tf32\"",
                              m);
    if ((rc = read_framework(r, t, sc, tc))) return rc;
    return read_precision(r, t, sc, tc);
}

/* channels = "0-19,40-59" (DRAM channels its memory is on), or colour = k of sharing.colours;
 * pcie_weight = w (fair PCIe). */
static int read_colour(const colo_cfg_reader_t *r, const config_setting_t *t, colo_scenario_t *sc,
                       colo_tenant_cfg_t *tc)
{
    const colo_gpu_t *g = sc->gpu;
    const config_setting_t *cs = config_setting_get_member(t, "channels"),
                           *ks = config_setting_get_member(t, "colour");
    tc->colour = -1;
    tc->pcie_weight = 1.0;
    int rc = colo_cfg_double(r, t, "pcie_weight", COLO_CFG_POSITIVE, &tc->pcie_weight);
    if (rc < 0) return rc;
    /* 1e-6 to 1e6: two tenants' shares differ by at most 1e12, which the fluid solver resolves;
     * a weight of 1e-15 stopped the run with "invalid argument" and no key */
    if (tc->pcie_weight > 1e6 || tc->pcie_weight < 1e-6)
        return colo_cfg_error(r, config_setting_get_member(t, "pcie_weight"), COLO_ERANGE,
                              "from 1e-6 to 1e6 (got %g)", tc->pcie_weight);
    if (!cs && !ks) return 0;
    if (cs && ks) return colo_cfg_error(r, ks, COLO_EINVAL, "give channels or colour, not both");
    if (sc->sharing.mode == COLO_SHARE_MIG)
        return colo_cfg_error(r, cs ? cs : ks, COLO_EINVAL,
                              "a MIG instance's memory slices fix its DRAM channels");
    int nch = g->memory.channels < COLO_HW_MAX_UNITS ? g->memory.channels : COLO_HW_MAX_UNITS;
    if (!(tc->channels = colo_calloc((size_t)nch, sizeof *tc->channels))) return COLO_ENOMEM;
    if (ks) {
        long long k;
        if ((rc = colo_cfg_int(r, t, "colour", COLO_CFG_NONNEG, &k))) return rc;
        if (sc->sharing.colours < 2)
            return colo_cfg_error(r, ks, COLO_EINVAL,
                                  "colours are shared out by sharing.colours = N (N >= 2)");
        if (k >= sc->sharing.colours)
            return colo_cfg_error(r, ks, COLO_ERANGE, "%lld: colours are 0 to %d", k,
                                  sc->sharing.colours - 1);
        tc->colour = (int)k;
        int lo = (int)(k * nch / sc->sharing.colours),
            hi = (int)((k + 1) * nch / sc->sharing.colours);
        for (int c = lo; c < hi; c++)
            tc->channels[tc->n_channels++] = c;
        return 0;
    }
    const char *spec;
    if ((rc = colo_cfg_string(r, t, "channels", COLO_CFG_REQUIRED, &spec))) return rc;
    bool seen[COLO_HW_MAX_UNITS] = {false};
    const char *p = spec;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0) break;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1) break;
            p = end;
        }
        if (b < a || b >= nch)
            return colo_cfg_error(r, cs, COLO_ERANGE,
                                  "'%s': channels are 0 to %d on %s, ranges low-high", spec,
                                  nch - 1, g->name);
        for (long c = a; c <= b; c++)
            if (!seen[c]) seen[c] = true, tc->channels[tc->n_channels++] = (int)c;
        if (*p == ',')
            p++;
        else if (*p)
            break;
    }
    if (*p || tc->n_channels == 0)
        return colo_cfg_error(r, cs, COLO_EINVAL,
                              "'%s': a list of DRAM channels and ranges, \"0-19,40-59\"", spec);
    return 0;
}

/* router = "POLICY" or { policy = "POLICY"; delay_ms; ... } (with copies = N: the copies share
 * one arrival stream, dealt out by the policy; router.h) and service = "NAME", which the copies'
 * expansion writes into each copy. */
static int read_router(const colo_cfg_reader_t *r, const config_setting_t *t, colo_tenant_cfg_t *tc)
{
    const char *svc = NULL;
    int rc;
    if ((rc = colo_router_read(r, t, &tc->route)) < 0 ||
        (rc = colo_cfg_string(r, t, "service", 0, &svc)) < 0)
        return rc;
    if (!tc->route.ops && !svc) {
        if (config_setting_get_member(t, "autoscale"))
            return colo_cfg_error(r, config_setting_get_member(t, "autoscale"), COLO_EINVAL,
                                  "scales a routed service's copies: give copies = N and "
                                  "router = \"POLICY\" too");
        return 0;
    }
    const config_setting_t *at = config_setting_get_member(t, tc->route.ops ? "router" : "service");
    if (!tc->route.ops || !svc)
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "routes a service's requests among its copies: write router = "
                              "\"POLICY\" beside copies = N (2 or more)");
    if ((rc = colo_router_check(r, at, &tc->route, tc->llm != NULL, &tc->arrival)) ||
        (rc = colo_autoscale_read(r, t, MAX_COPIES, &tc->route.scale)) < 0)
        return rc;
    return (tc->service = colo_strdup(svc)) ? 0 : COLO_ENOMEM;
}

void colo_scenario_group_services(colo_scenario_t *sc)
{
    for (size_t i = 0; i < sc->n_tenants; i++) {
        colo_tenant_cfg_t *tc = &sc->tenants[i];
        tc->leader = i;
        for (size_t j = 0; tc->service && j < i && tc->leader == i; j++)
            if (sc->tenants[j].service && strcmp(sc->tenants[j].service, tc->service) == 0)
                tc->leader = j;
        tc->routed = tc->leader != i;
    }
}

int colo_scenario_read_tenant(const colo_cfg_reader_t *r, const config_setting_t *t,
                              colo_scenario_t *sc, size_t i)
{
    static const char *const keys[] = {"name",
                                       "trace",
                                       "traces",
                                       "arrival",
                                       "slo_ms",
                                       "memory_gib",
                                       "active_thread_percentage",
                                       "priority",
                                       "memory_limit_gib",
                                       "sms",
                                       "instance",
                                       "batching",
                                       "queue_limit",
                                       "deadline_ms",
                                       "class",
                                       "command",
                                       "instances",
                                       "cuda_graphs",
                                       "fp32_math",
                                       "framework",
                                       "precision",
                                       "llm",
                                       "tokens",
                                       "slo_ttft_ms",
                                       "slo_tpot_ms",
                                       "channels",
                                       "colour",
                                       "pcie_weight",
                                       "router",
                                       "service",
                                       "autoscale",
                                       NULL};
    colo_tenant_cfg_t *tc = &sc->tenants[i];
    if (!config_setting_is_group(t))
        return colo_cfg_error(r, t, COLO_EINVAL, "each tenant must be a group { ... }");
    int rc = colo_cfg_check_keys(r, t, keys);
    if (rc) return rc;
    const char *name;
    if ((rc = colo_cfg_string(r, t, "name", REQ, &name))) return rc;
    const config_setting_t *ns = config_setting_get_member(t, "name");
    if (!valid_name(name) || strlen(name) > 64)
        return colo_cfg_error(r, ns, COLO_EINVAL, "'%s': use up to 64 letters, digits and _ - +",
                              name);
    for (size_t j = 0; j < i; j++)
        if (strcmp(sc->tenants[j].name, name) == 0)
            return colo_cfg_error(r, ns, COLO_EINVAL, "tenant name '%s' is used twice", name);
    if (!(tc->name = colo_strdup(name))) return COLO_ENOMEM;

    const config_setting_t *llm = config_setting_get_member(t, "llm");
    if (llm) {
        static const char *const not_llm[] = {"trace",       "traces",    "batching",
                                              "deadline_ms", "instances", "cuda_graphs",
                                              "fp32_math",   "framework", NULL};
        for (int k = 0; not_llm[k]; k++)
            if (config_setting_get_member(t, not_llm[k]))
                return colo_cfg_error(r, config_setting_get_member(t, not_llm[k]), COLO_EINVAL,
                                      "an LLM tenant (llm = {...}) runs its profile with "
                                      "continuous batching: leave %s out",
                                      not_llm[k]);
    } else {
        static const char *const llm_only[] = {"tokens", "slo_ttft_ms", "slo_tpot_ms", NULL};
        for (int k = 0; llm_only[k]; k++)
            if (config_setting_get_member(t, llm_only[k]))
                return colo_cfg_error(r, config_setting_get_member(t, llm_only[k]), COLO_EINVAL,
                                      "for LLM tenants only (llm = { profile = ...; })");
        if ((rc = read_variants(r, t, sc, tc))) return rc;
    }
    if ((rc = read_batching(r, t, tc))) return rc;

    const config_setting_t *a;
    if ((rc = colo_cfg_aggregate(r, t, "arrival", REQ, CONFIG_TYPE_GROUP, &a))) return rc;
    if ((rc = colo_arrival_parse(&tc->arrival, r, a, sc->dir))) return rc;
    if (llm && (rc = colo_llm_cfg_read(r, t, sc->dir, tc->arrival.path != NULL, &tc->llm)))
        return rc;

    if ((rc = colo_cfg_ms(r, t, "slo_ms", COLO_CFG_POSITIVE, MAX_SECONDS * 1e3, &tc->slo_ms,
                          &tc->slo)) < 0)
        return rc;

    long long v;
    if ((rc = colo_cfg_double(r, t, "memory_gib", COLO_CFG_NONNEG, &tc->memory_gib)) < 0 ||
        (rc = colo_cfg_double(r, t, "memory_limit_gib", COLO_CFG_POSITIVE, &tc->memory_limit_gib)) <
            0)
        return rc;
    /* no GPU has a petabyte: larger is a typo, and would print as a 300-digit number */
    if (tc->memory_gib > 1e6 || tc->memory_limit_gib > 1e6)
        return colo_cfg_error(
            r,
            config_setting_get_member(t, tc->memory_gib > 1e6 ? "memory_gib" : "memory_limit_gib"),
            COLO_ERANGE, "at most 1,000,000 GiB");
    tc->active_thread_percentage = 100;
    rc = colo_cfg_int(r, t, "active_thread_percentage", COLO_CFG_POSITIVE, &v);
    if (rc < 0) return rc;
    if (rc == 0) {
        if (v > 100)
            return colo_cfg_error(r, config_setting_get_member(t, "active_thread_percentage"),
                                  COLO_ERANGE, "a percentage: 1 to 100 (got %lld)", v);
        tc->active_thread_percentage = (int)v;
    }
    rc = colo_cfg_int(r, t, "priority", COLO_CFG_NONNEG, &v);
    if (rc < 0) return rc;
    if (rc == 0) {
        if (v > 1)
            return colo_cfg_error(r, config_setting_get_member(t, "priority"), COLO_ERANGE,
                                  "MPS client priority is 0 (normal) or 1 (below normal)");
        tc->priority = (int)v;
    }
    rc = colo_cfg_int(r, t, "sms", COLO_CFG_POSITIVE, &v);
    if (rc < 0) return rc;
    if (rc == 0) {
        if (v > sc->gpu->sm.count)
            return colo_cfg_error(r, config_setting_get_member(t, "sms"), COLO_ERANGE,
                                  "%lld SMs: %s has %d", v, sc->gpu->name, sc->gpu->sm.count);
        tc->sms_asked = (int)v;
    }
    const char *cls = NULL;
    if ((rc = colo_cfg_string(r, t, "class", 0, &cls)) < 0) return rc;
    if (cls && strcmp(cls, "best_effort") == 0)
        tc->cls = COLO_CLASS_BEST_EFFORT;
    else if (cls && strcmp(cls, "latency") != 0)
        return colo_cfg_error(r, config_setting_get_member(t, "class"), COLO_EINVAL,
                              "'%s': use \"latency\" or \"best_effort\"", cls);
    const char *inst = NULL;
    if ((rc = colo_cfg_string(r, t, "instance", 0, &inst)) < 0) return rc;
    if (inst && !(tc->instance_name = colo_strdup(inst))) return COLO_ENOMEM;
    const char *cmd = NULL;
    if ((rc = colo_cfg_string(r, t, "command", 0, &cmd)) < 0) return rc;
    if (cmd && !cmd[strspn(cmd, " \t")])
        return colo_cfg_error(r, config_setting_get_member(t, "command"), COLO_EINVAL,
                              "an empty command: leave the key out for synthetic kernels");
    if (cmd && !(tc->command = colo_strdup(cmd))) return COLO_ENOMEM;
    if ((rc = read_colour(r, t, sc, tc))) return rc;
    if ((rc = read_router(r, t, tc))) return rc;
    return read_execution(r, t, sc, tc);
}

/* An LLM tenant once its place is known: its KV cache from its memory, and its trace (the
 * prefill of a typical request) in the scenario's table. */
int colo_scenario_resolve_llm(const colo_cfg_reader_t *r, const config_setting_t *t,
                              colo_scenario_t *sc, size_t i)
{
    colo_tenant_cfg_t *tc = &sc->tenants[i];
    double mem = sc->gpu->memory.size_gib;
    const char *from = "the GPU's memory";
    if (tc->memory_limit_gib > 0) {
        mem = tc->memory_limit_gib, from = "memory_limit_gib";
    } else if (tc->memory_gib > 0) {
        mem = tc->memory_gib, from = "memory_gib";
    } else if (sc->sharing.mode == COLO_SHARE_MIG) {
        mem = sc->sharing.instances[tc->instance].profile->memory_gib;
        from = "its MIG instance's memory";
    }
    /* an engine takes its share of the memory it is given: beside others, say how much */
    size_t sharing = 0;
    for (size_t j = 0; j < sc->n_tenants; j++)
        sharing += sc->sharing.mode != COLO_SHARE_MIG || sc->tenants[j].instance == tc->instance;
    if (sharing > 1 && tc->memory_limit_gib <= 0 && tc->memory_gib <= 0 &&
        !config_setting_get_member(config_setting_get_member(t, "llm"), "kv_cache_gib"))
        return colo_cfg_error(r, config_setting_get_member(t, "llm"), COLO_EINVAL,
                              "beside other tenants an LLM tenant needs memory_gib (or "
                              "memory_limit_gib, or llm.kv_cache_gib): its engine takes %.0f %% "
                              "of the memory it is given, and %s would leave none to the others",
                              tc->llm->gpu_memory_utilization * 100, from);
    tc->llm->precision = tc->precision;
    int rc = colo_llm_cfg_resolve(r, t, tc->llm, &tc->arrival, mem, from);
    if (rc) return rc;
    /* the profile's GPU, opened once as a trace's is: the engine and its trace share it */
    const colo_llm_profile_t *p = tc->llm->profile;
    colo_gpu_t *g;
    colo_trace_t *tr;
    if ((rc = open_measured_gpu(sc, p->gpu, tc->llm->profile_path, p->gpu_line, &g, r->err)))
        return rc;
    tc->llm->profile_gpu = g;
    if ((rc = colo_llm_cfg_trace(tc->llm, &tr, r->err))) {
        tc->llm->profile_gpu = NULL;
        colo_gpu_free(g);
        return rc;
    }
    if ((rc = append_trace(sc, tr, g, NULL, r->err))) {
        tc->llm->profile_gpu = NULL;
        return rc;
    }
    if (!(tc->variants = colo_calloc(1, sizeof *tc->variants))) return COLO_ENOMEM;
    tc->n_variants = 1;
    tc->variants[0].trace = tc->trace = tr;
    tc->variants[0].gpu = tc->trace_gpu = g;
    if (!(tc->variants[0].path = colo_strdup(tc->llm->profile_path)) ||
        !(tc->trace_path = colo_strdup(tc->llm->profile_path)))
        return COLO_ENOMEM;
    return 0;
}

int colo_scenario_expand_copies(const colo_cfg_reader_t *r, config_setting_t *root)
{
    config_setting_t *tl = config_setting_get_member(root, "tenants");
    if (!tl || !config_setting_is_list(tl)) return 0; /* the reader says what is wrong */
    unsigned n0 = (unsigned)config_setting_length(tl), i;
    for (i = 0; i < n0; i++) {
        config_setting_t *t = config_setting_get_elem(tl, i);
        if (config_setting_is_group(t) && config_setting_get_member(t, "copies")) break;
    }
    if (i == n0) return 0;
    for (i = 0; i < n0; i++) { /* each tenant (or its copies) appended, then the originals go */
        config_setting_t *t = config_setting_get_elem(tl, i);
        bool copied = config_setting_is_group(t) && config_setting_get_member(t, "copies");
        long long n = 1;
        const char *name = NULL;
        int rc;
        if (copied) {
            if ((rc = colo_cfg_int(r, t, "copies", POS, &n)) < 0) return rc;
            if (n > MAX_COPIES)
                return colo_cfg_error(r, config_setting_get_member(t, "copies"), COLO_ERANGE,
                                      "%lld: at most %d", n, MAX_COPIES);
            if ((rc = colo_cfg_string(r, t, "name", REQ, &name)) < 0) return rc;
            colo_autoscale_cfg_t as; /* its bounds checked against the copies, max = them */
            config_setting_t *a = config_setting_get_member(t, "autoscale"), *mx;
            if ((rc = colo_autoscale_read(r, t, (int)n, &as)) < 0) return rc;
            if (a && config_setting_is_group(a) && !config_setting_get_member(a, "max") &&
                (!(mx = config_setting_add(a, "max", CONFIG_TYPE_INT)) ||
                 !config_setting_set_int(mx, (int)n)))
                return COLO_ENOMEM;
        }
        for (long long k = 1; k <= n; k++) {
            if ((rc = colo_cfg_copy_setting(tl, t))) return rc;
            if (!copied) continue;
            config_setting_t *e =
                config_setting_get_elem(tl, (unsigned)config_setting_length(tl) - 1);
            char buf[300];
            snprintf(buf, sizeof buf, "%s-%lld", name, k);
            config_setting_remove(e, "copies");
            if (!config_setting_set_string(config_setting_get_member(e, "name"), buf))
                return COLO_ENOMEM;
            config_setting_t *svc; /* routed copies are one service (read_router) */
            if (config_setting_get_member(e, "router") &&
                !config_setting_get_member(e, "service") &&
                (!(svc = config_setting_add(e, "service", CONFIG_TYPE_STRING)) ||
                 !config_setting_set_string(svc, name)))
                return COLO_ENOMEM;
        }
    }
    for (i = 0; i < n0; i++)
        config_setting_remove_elem(tl, 0);
    return 0;
}
