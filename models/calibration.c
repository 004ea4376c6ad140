/* calibration.c: reading a calibration file and applying it over a GPU description. */
#include "calibration.h"
#include "alloc.h"
#include "json_lines.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const keys[] = {
#define COLO__X(id, key, unit) key,
    COLO_CAL_PARAMS(COLO__X)
#undef COLO__X
};
static const char *const units[] = {
#define COLO__X(id, key, unit) unit,
    COLO_CAL_PARAMS(COLO__X)
#undef COLO__X
};
_Static_assert(COLO_CAL_N <= 16, "colo_gpu_t.calibration.datasheet holds 16");
_Static_assert(COLO_CAL_N <= 8 * sizeof(unsigned), "colo_gpu_t.calibration.applied is a bitmask");

const char *colo_cal_key(colo_cal_param_t p)
{
    return p < COLO_CAL_N ? keys[p] : "?";
}

const char *colo_cal_unit(colo_cal_param_t p)
{
    return p < COLO_CAL_N ? units[p] : "?";
}

double colo_cal_get(const colo_gpu_t *g, colo_cal_param_t p)
{
    switch (p) {
    case COLO_CAL_FP32:
        return colo_gpu_sm_fp32_rate(g);
    case COLO_CAL_TENSOR:
        return colo_gpu_sm_tensor_rate(g);
    case COLO_CAL_DRAM:
        return colo_gpu_dram_rate(g);
    case COLO_CAL_DRAM_PER_SM:
        return g->memory.per_sm_gbps;
    case COLO_CAL_L2:
        return colo_gpu_l2_rate(g);
    case COLO_CAL_L2_CAPACITY:
        return colo_gpu_l2_capacity(g) / 1048576.0;
    case COLO_CAL_H2D:
        return g->pcie.h2d_gbps;
    case COLO_CAL_D2H:
        return g->pcie.d2h_gbps;
    case COLO_CAL_PCIE_LATENCY:
        return g->pcie.latency_us;
    case COLO_CAL_LAUNCH_HOST:
        return g->launch.host_us;
    case COLO_CAL_LAUNCH_GRAPH:
        return g->launch.graph_us;
    case COLO_CAL_LAUNCH_START:
        return g->launch.start_us;
    case COLO_CAL_SLICE:
        return (double)g->timeslice.default_ns / 1e3;
    case COLO_CAL_SWITCH:
        return (double)g->timeslice.switch_ns / 1e3;
    default:
        return NAN;
    }
}

static void set(colo_gpu_t *g, colo_cal_param_t p, double v)
{
    switch (p) {
    case COLO_CAL_FP32:
        g->sm.fp32_gflops = v;
        break;
    case COLO_CAL_TENSOR:
        g->sm.tensor_gflops = v;
        break;
    case COLO_CAL_DRAM:
        g->memory.achievable_fraction = v / g->memory.peak_gbps;
        break;
    case COLO_CAL_DRAM_PER_SM:
        g->memory.per_sm_gbps = v;
        break;
    case COLO_CAL_L2:
        g->l2.bandwidth_gbps = v;
        break;
    case COLO_CAL_L2_CAPACITY:
        g->l2.effective_bytes = v * 1048576.0;
        break;
    case COLO_CAL_H2D:
        g->pcie.h2d_gbps = v;
        break;
    case COLO_CAL_D2H:
        g->pcie.d2h_gbps = v;
        break;
    case COLO_CAL_PCIE_LATENCY:
        g->pcie.latency_us = v;
        break;
    case COLO_CAL_LAUNCH_HOST:
        g->launch.host_us = v;
        break;
    case COLO_CAL_LAUNCH_GRAPH:
        g->launch.graph_us = v;
        break;
    case COLO_CAL_LAUNCH_START:
        g->launch.start_us = v;
        break;
    case COLO_CAL_SLICE:
        g->timeslice.default_ns = (colo_time_t)llround(v * 1e3);
        break;
    case COLO_CAL_SWITCH:
        g->timeslice.switch_ns = (colo_time_t)llround(v * 1e3);
        break;
    default:
        break;
    }
}

/* Latencies may be measured as 0 (below the timer); rates may not. */
static int may_be_zero(colo_cal_param_t p)
{
    return strcmp(units[p], "us") == 0 && p != COLO_CAL_SLICE;
}

struct reader {
    const char *path;
    colo_error_t *err;
    const char *text;
    size_t len;
    const int *lines; /* line of each parameters[] element */
    size_t n_lines;
};

static int top_error(const struct reader *r, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int top_error(const struct reader *r, const char *key, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return colo_error_set(r->err, COLO_EINVAL, r->path, colo_json_key_line(r->text, r->len, key),
                          key, "%s", text);
}

static int param_error(const struct reader *r, size_t i, const char *member, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int param_error(const struct reader *r, size_t i, const char *member, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = colo_json_element_verror(r->err, COLO_EINVAL, r->path, "parameters", i, r->lines,
                                      r->n_lines, member, fmt, ap);
    va_end(ap);
    return rc;
}

/* Reads the file into values[]/have without touching the GPU. */
static int read_calibration(const struct reader *r, json_t *root, const colo_gpu_t *g,
                            double values[COLO_CAL_N], unsigned *have, const char **device,
                            const char **date, json_t *sources[COLO_CAL_N])
{
    static const char *const top[] = {
        "colosim_calibration", "gpu",    "device",       "date", "command", "tool",
        "parameters",          "checks", "measurements", NULL};
    static const char *const pkeys[] = {"key",    "value",  "unit",    "median",  "min",
                                        "max",    "spread", "repeats", "samples", "datasheet",
                                        "method", "note",   "source",  NULL};
    static const char *const skeys[] = {"repository", "commit", "path", "lines", "note", NULL};
    if (!json_is_object(root))
        return colo_error_set(r->err, COLO_EINVAL, r->path, 1, NULL,
                              "not a calibration file: expected a JSON object");
    const char *k = colo_json_unknown_key(root, top);
    if (k) return top_error(r, k, "unknown key");
    json_t *v = json_object_get(root, "colosim_calibration");
    if (!v) return top_error(r, "colosim_calibration", "missing: not a colosim calibration file");
    if (!json_is_integer(v) || json_integer_value(v) != 1)
        return top_error(r, "colosim_calibration", "unsupported version (this colosim reads 1)");
    const char *gname = json_string_value(json_object_get(root, "gpu"));
    if (!gname)
        return top_error(r, "gpu", "missing or not a string: the GPU description it calibrates");
    if (strcmp(gname, g->name) != 0)
        return top_error(r, "gpu", "calibrates '%s', not '%s'", gname, g->name);
    json_t *dev = json_object_get(root, "device");
    if (!json_is_object(dev))
        return top_error(r, "device", "missing or not an object: the device that was measured");
    *device = json_string_value(json_object_get(dev, "name"));
    if (!*device) return top_error(r, "device", "needs \"name\": the device's own name");
    json_t *sms = json_object_get(dev, "sm_count");
    if (sms && (!json_is_integer(sms) || json_integer_value(sms) != g->sm.count))
        return top_error(r, "device",
                         "sm_count %lld: measured on a GPU with another SM count than %s (%d)",
                         (long long)json_integer_value(sms), g->name, g->sm.count);
    *date = json_string_value(json_object_get(root, "date"));
    if (!*date) return top_error(r, "date", "missing or not a string: when it was measured");
    if (!json_is_string(json_object_get(root, "command")))
        return top_error(r, "command", "missing or not a string: the command that measured it");
    json_t *ps = json_object_get(root, "parameters");
    if (!json_is_array(ps)) return top_error(r, "parameters", "missing or not a list");
    size_t i;
    json_t *p;
    json_array_foreach(ps, i, p)
    {
        if (!json_is_object(p)) return param_error(r, i, NULL, "must be an object");
        if ((k = colo_json_unknown_key(p, pkeys))) return param_error(r, i, k, "unknown key");
        const char *key = json_string_value(json_object_get(p, "key"));
        if (!key) return param_error(r, i, "key", "missing or not a string");
        int id = 0;
        while (id < COLO_CAL_N && strcmp(keys[id], key) != 0)
            id++;
        if (id == COLO_CAL_N) {
            char known[512];
            size_t used = 0;
            for (int j = 0; j < COLO_CAL_N && used < sizeof known; j++)
                used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", j ? ", " : "",
                                         keys[j]);
            return param_error(r, i, "key", "unknown parameter '%s' (known: %s)", key, known);
        }
        if (*have & (1u << id)) return param_error(r, i, "key", "'%s' is given twice", key);
        const colo_cal_param_t param = (colo_cal_param_t)id;
        const char *unit = json_string_value(json_object_get(p, "unit"));
        if (json_object_get(p, "unit") && (!unit || strcmp(unit, units[id]) != 0))
            return param_error(r, i, "unit", "must be \"%s\" for %s", units[id], key);
        json_t *jv = json_object_get(p, "value");
        if (!jv) return param_error(r, i, "value", "missing (required)");
        double x = json_number_value(jv);
        if (!json_is_number(jv) || !isfinite(x) || x < 0 || (x == 0 && !may_be_zero(param)))
            return param_error(r, i, "value", "must be a %s finite number",
                               may_be_zero(param) ? "non-negative" : "positive");
        double was = colo_cal_get(g, param);
        if (was > 0 && (x > 10 * was || x < was / 10) && !may_be_zero(param))
            return param_error(r, i, "value",
                               "%g %s is more than 10 times off the datasheet value (%g): "
                               "measured on another GPU, or a broken measurement",
                               x, units[id], was);
        /* an "L2" rate far above the GPU file's is L1 hits (loads cached in L1, each SM
         * re-reading its slice; issue 23), and one below DRAM's is not from L2 */
        if (id == COLO_CAL_L2 && was > 0 && x > 2 * was)
            return param_error(r, i, "value",
                               "%g GB/s is more than twice the GPU file's L2 bandwidth (%g GB/s): "
                               "L1 hits, not L2 (loads must bypass L1, e.g. __ldcg)",
                               x, was);
        if (id == COLO_CAL_L2 && x < colo_gpu_dram_rate(g))
            return param_error(r, i, "value",
                               "%g GB/s is below the DRAM bandwidth (%g GB/s): not an L2 "
                               "measurement", x, colo_gpu_dram_rate(g));
        if (id == COLO_CAL_DRAM && x > g->memory.peak_gbps)
            return param_error(r, i, "value", "%g GB/s exceeds the datasheet peak (%g GB/s)", x,
                               g->memory.peak_gbps);
        json_t *src = json_object_get(p, "source");
        if (src) {
            if (!json_is_object(src) || !json_is_string(json_object_get(src, "path")))
                return param_error(r, i, "source",
                                   "must be an object with at least \"path\" (the file it was "
                                   "read from)");
            if ((k = colo_json_unknown_key(src, skeys)))
                return param_error(r, i, "source", "unknown key '%s'", k);
            sources[id] = src;
        }
        values[id] = x;
        *have |= 1u << id;
    }
    return 0;
}

/* "gpu-stream/a100_40.txt:2-6 (te42kyfo/gpu-benches@1c36d50)" */
static int source_text(json_t *src, char **out)
{
    const char *path = json_string_value(json_object_get(src, "path"));
    const char *lines = json_string_value(json_object_get(src, "lines"));
    const char *repo = json_string_value(json_object_get(src, "repository"));
    const char *commit = json_string_value(json_object_get(src, "commit"));
    char buf[1024];
    int w = snprintf(buf, sizeof buf, "%s%s%s", path, lines ? ":" : "", lines ? lines : "");
    if (repo && w >= 0 && (size_t)w < sizeof buf)
        snprintf(buf + w, sizeof buf - (size_t)w, " (%s%s%.7s)", repo, commit ? "@" : "",
                 commit ? commit : "");
    *out = colo_strdup(buf);
    return *out ? 0 : COLO_ENOMEM;
}

int colo_calibration_apply(colo_gpu_t *gpu, const char *path, colo_error_t *err)
{
    json_t *root;
    char *text;
    size_t len;
    int rc = colo_json_read_file(path, &root, &text, &len, err);
    if (rc) return rc;
    int *lines = NULL;
    size_t n_lines = 0;
    rc = colo_json_element_lines(text, len, "parameters", &lines, &n_lines);
    if (rc == COLO_ENOENT) rc = 0;
    double values[COLO_CAL_N] = {0};
    unsigned have = 0;
    const char *device = NULL, *date = NULL;
    json_t *sources[COLO_CAL_N] = {0};
    char *src[COLO_CAL_N] = {0};
    if (!rc) {
        struct reader r = {path, err, text, len, lines, n_lines};
        rc = read_calibration(&r, root, gpu, values, &have, &device, &date, sources);
    }
    for (int i = 0; i < COLO_CAL_N && !rc; i++)
        if (sources[i]) rc = source_text(sources[i], &src[i]);
    char *p = NULL, *d = NULL, *t = NULL;
    if (!rc && (!(p = colo_strdup(path)) || !(d = colo_strdup(device)) || !(t = colo_strdup(date))))
        rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    if (!rc) {
        /* Read the datasheet values first: DRAM's is a fraction of the peak. */
        for (int i = 0; i < COLO_CAL_N; i++)
            if (have & (1u << i))
                gpu->calibration.datasheet[i] = colo_cal_get(gpu, (colo_cal_param_t)i);
        for (int i = 0; i < COLO_CAL_N; i++)
            if (have & (1u << i)) set(gpu, (colo_cal_param_t)i, values[i]);
        colo_free(gpu->calibration.path);
        colo_free(gpu->calibration.device);
        colo_free(gpu->calibration.date);
        gpu->calibration.path = p;
        gpu->calibration.device = d;
        gpu->calibration.date = t;
        gpu->calibration.applied = have;
        for (int i = 0; i < COLO_CAL_N; i++) {
            colo_free(gpu->calibration.source[i]);
            gpu->calibration.source[i] = src[i];
            src[i] = NULL;
        }
        p = d = t = NULL;
    }
    for (int i = 0; i < COLO_CAL_N; i++)
        colo_free(src[i]);
    colo_free(p);
    colo_free(d);
    colo_free(t);
    colo_free(lines);
    colo_free(text);
    json_decref(root);
    return rc;
}

int colo_calibration_default(const colo_gpu_t *gpu, char *buf, size_t n)
{
    if (!gpu->path) return 0;
    /* The folder above the description's: strip its file name, then one folder. */
    const char *end = strrchr(gpu->path, '/');
    int dlen = end ? (int)(end - gpu->path) : 0;
    const char *up = NULL;
    for (int i = dlen - 1; i >= 0 && !up; i--)
        if (gpu->path[i] == '/') up = gpu->path + i;
    const char *last = up ? up + 1 : gpu->path;
    int llen = dlen - (int)(last - gpu->path);
    int w;
    if (dlen == 0)
        w = snprintf(buf, n, "../calibrated/%s.json", gpu->name);
    else if ((llen == 1 && last[0] == '.') || (llen == 2 && last[0] == '.' && last[1] == '.'))
        w = snprintf(buf, n, "%.*s/../calibrated/%s.json", dlen, gpu->path, gpu->name);
    else if (up)
        w = snprintf(buf, n, "%.*s/calibrated/%s.json", (int)(up - gpu->path), gpu->path,
                     gpu->name);
    else
        w = snprintf(buf, n, "calibrated/%s.json", gpu->name);
    if (w < 0 || (size_t)w >= n) return 0;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISREG(st.st_mode);
}
