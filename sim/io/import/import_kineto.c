/* import_kineto.c: PyTorch profiler (Kineto) Chrome Trace Event JSON -> colosim trace. */
#include "import_kineto.h"
#include "alloc.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "json_lines.h"
#include "stop.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads a whole file, gunzipping it if it is gzip (zlib reads plain files unchanged). A gzip
 * stream that is corrupt (a bad CRC, a flipped byte) or cut short is an error, in zlib's words,
 * copied before the stream that owns them is closed. */
static int slurp(const char *path, char **buf, size_t *len, colo_error_t *err)
{
    int rc = colo_check_input_file(path, err);
    if (rc) return rc;
    gzFile f = gzopen(path, "rb");
    if (!f)
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open: %s",
                              errno ? strerror(errno) : "out of memory");
    size_t cap = 0, n = 0;
    char *b = NULL;
    for (;;) {
        /* at least 64 KiB more each time (colo_grow doubles): small files stay small */
        if (colo_grow((void **)&b, &cap, n + 1 + (1 << 16), 1)) {
            colo_free(b);
            gzclose(f);
            return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
        }
        if (colo_stop_requested()) {
            colo_free(b);
            gzclose(f);
            return colo_error_set(err, COLO_EINTR, path, 0, NULL, "interrupted");
        }
        unsigned want = cap - n - 1 > (1u << 20) ? 1u << 20 : (unsigned)(cap - n - 1);
        int got = gzread(f, b + n, want);
        int zerr = Z_OK;
        const char *msg = got <= 0 ? gzerror(f, &zerr) : NULL;
        if (got < 0 || (got == 0 && zerr != Z_OK)) {
            size_t pl = strlen(path); /* zlib's message starts with the path: said once */
            if (msg && strncmp(msg, path, pl) == 0 && strncmp(msg + pl, ": ", 2) == 0)
                msg += pl + 2;
            rc = colo_error_set(err, COLO_EPARSE, path, 0, NULL, "cannot decompress: %s",
                                msg && *msg ? msg : "gzip error");
            colo_free(b);
            gzclose(f);
            return rc;
        }
        if (got == 0) break;
        if (memchr(b + n, '\0', (size_t)got)) { /* JSON holds none: and /dev/zero never ends */
            rc = colo_text_nul_error(path, b, n + (size_t)got, err);
            colo_free(b);
            gzclose(f);
            return rc;
        }
        n += (size_t)got;
    }
    gzclose(f);
    *buf = b;
    *len = n;
    return 0;
}

struct gpu_event {
    json_t *e;
    double ts;     /* us */
    double launch; /* us, the CUDA runtime call that launched it; -1 unknown */
    int kind;      /* 0 kernel, 1 copy */
};

static int cmp_event(const void *a, const void *b)
{
    const struct gpu_event *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts ? 1 : 0;
}

static double num(json_t *o, const char *k, double dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : dflt;
}

static int dim3(json_t *v, unsigned d[3])
{
    d[0] = d[1] = d[2] = 1;
    if (!json_is_array(v) || json_array_size(v) < 1 || json_array_size(v) > 3) return -1;
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *x = json_array_get(v, i);
        if (!json_is_integer(x) || json_integer_value(x) < 1 || json_integer_value(x) > 0x7fffffff)
            return -1;
        d[i] = (unsigned)json_integer_value(x);
    }
    return 0;
}

static int convert(const char *path, json_t *root, const colo_kineto_opts_t *o, colo_trace_t *t,
                   colo_error_t *err)
{
    json_t *events = json_object_get(root, "traceEvents");
    if (!json_is_array(events))
        return colo_error_set(err, COLO_EPARSE, path, 0, "traceEvents",
                              "missing: not a Chrome trace from the PyTorch profiler");
    size_t n = json_array_size(events);
    /* the annotation window, and launch times by correlation id */
    double lo = -1e300, hi = 1e300;
    if (o->annotation) {
        int seen = 0, want = o->occurrence > 0 ? o->occurrence : 1;
        for (size_t i = 0; i < n && seen < want; i++) {
            json_t *e = json_array_get(events, i);
            const char *cat = json_string_value(json_object_get(e, "cat"));
            const char *nm = json_string_value(json_object_get(e, "name"));
            if (!cat || strcmp(cat, "user_annotation") || !nm || !strstr(nm, o->annotation))
                continue;
            if (++seen == want) {
                lo = num(e, "ts", 0);
                hi = lo + num(e, "dur", 0);
            }
        }
        if (seen < want)
            return colo_error_set(err, COLO_ENOENT, path, 0, "annotation",
                                  "no user annotation #%d containing '%s'", want, o->annotation);
    }
    json_t *launch = json_object();
    struct gpu_event *gev = colo_calloc(n ? n : 1, sizeof *gev);
    if (!launch || !gev) {
        json_decref(launch);
        colo_free(gev);
        return COLO_ENOMEM;
    }
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *e = json_array_get(events, i);
        const char *cat = json_string_value(json_object_get(e, "cat"));
        json_t *corr = json_object_get(json_object_get(e, "args"), "correlation");
        if (cat && (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) &&
            json_is_integer(corr)) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(corr));
            if (json_object_set_new(launch, key, json_real(num(e, "ts", 0)))) rc = COLO_ENOMEM;
        }
    }
    size_t ng = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *e = json_array_get(events, i);
        const char *cat = json_string_value(json_object_get(e, "cat"));
        if (!cat) continue;
        int kind = !strcmp(cat, "kernel") ? 0 : !strcmp(cat, "gpu_memcpy") ? 1 : -1;
        if (kind < 0) continue;
        json_t *corr = json_object_get(json_object_get(e, "args"), "correlation");
        double l = -1;
        if (json_is_integer(corr)) {
            char key[32];
            snprintf(key, sizeof key, "%lld", (long long)json_integer_value(corr));
            json_t *v = json_object_get(launch, key);
            if (v) l = json_number_value(v);
        }
        double ts = num(e, "ts", -1);
        if (ts < 0)
            rc = colo_error_set(err, COLO_EPARSE, path, 0, "traceEvents",
                                "event %zu (%s) has no ts", i, cat);
        if (o->annotation && (l >= 0 ? l : ts) < lo) continue;
        if (o->annotation && (l >= 0 ? l : ts) > hi) continue;
        gev[ng++] = (struct gpu_event){e, ts, l, kind};
    }
    if (!rc) qsort(gev, ng, sizeof *gev, cmp_event);
    double prev_launch = -1;
    size_t skipped = 0;
    for (size_t i = 0; i < ng && !rc; i++) {
        json_t *e = gev[i].e, *args = json_object_get(e, "args");
        const char *name = json_string_value(json_object_get(e, "name"));
        colo_op_t op;
        memset(&op, 0, sizeof op);
        double dur = num(e, "dur", -1);
        if (!name || dur < 0) {
            rc = colo_error_set(err, COLO_EPARSE, path, 0, "traceEvents",
                                "a GPU event at ts %.0f has no name or no dur", gev[i].ts);
            break;
        }
        if (gev[i].kind == 0) {
            op.type = COLO_OP_KERNEL;
            op.name = (char *)name;
            op.registers = op.shared_bytes = -1;
            op.dram_bytes = op.l2_bytes = op.flops = -1;
            op.stream = (int)num(args, "stream", 0);
            if (dim3(json_object_get(args, "grid"), op.grid) ||
                dim3(json_object_get(args, "block"), op.block)) {
                rc = colo_error_set(err, COLO_EPARSE, path, 0, "traceEvents",
                                    "kernel '%.80s' at ts %.0f: grid or block missing or invalid",
                                    name, gev[i].ts);
                break;
            }
            double regs = num(args, "registers per thread", -1);
            double smem = num(args, "shared memory", -1);
            op.registers = regs >= 0 && regs <= 255 ? (int)regs : -1;
            op.shared_bytes = smem >= 0 && smem < 2147483647.0 ? (int)smem : -1;
            op.duration = colo_time_from_ns(dur * 1e3);
            if (op.duration < 1) op.duration = 1;
        } else {
            double bytes = num(args, "bytes", -1);
            int h2d = strstr(name, "HtoD") != NULL, d2h = strstr(name, "DtoH") != NULL;
            if (!(h2d || d2h) || bytes < 1) { /* device-to-device and peer copies: not modelled */
                skipped++;
                continue;
            }
            op.type = COLO_OP_COPY;
            op.dir = h2d ? COLO_COPY_H2D : COLO_COPY_D2H;
            op.bytes = (long long)bytes;
        }
        double l = gev[i].launch >= 0 ? gev[i].launch : gev[i].ts;
        op.gap =
            prev_launch < 0 || l < prev_launch ? 0 : colo_time_from_ns((l - prev_launch) * 1e3);
        prev_launch = l;
        if (colo_trace_append(t, &op)) rc = COLO_ENOMEM;
    }
    colo_free(gev);
    json_decref(launch);
    if (!rc && t->n_ops == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, 0, NULL, "no kernels%s",
                            o->annotation ? " inside that annotation" : "");
    if (!rc && skipped)
        json_object_set_new(t->provenance, "skipped",
                            json_sprintf("%zu device-to-device or peer copies", skipped));
    return rc;
}

int colo_import_kineto(const char *path, const colo_kineto_opts_t *o, colo_trace_t **out,
                       colo_error_t *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    int rc = slurp(path, &buf, &len, err);
    if (rc) return rc;
    json_t *root;
    rc = colo_json_parse(buf, len, 0, path, &root, err);
    colo_free(buf);
    if (rc) return rc;
    const char *gpu = o->gpu;
    json_t *dev = json_array_get(json_object_get(root, "deviceProperties"), 0);
    const char *dname = json_string_value(json_object_get(dev, "name"));
    if (!gpu) gpu = colo_gpu_guess(dname, num(dev, "totalGlobalMem", 0) / 1073741824.0,
                                       (int)num(dev, "numSms", 0));
    if (!gpu) { /* the message before the document (which holds the name) goes */
        rc = colo_error_set(err, COLO_EINVAL, path, 0, "deviceProperties",
                            "cannot tell which GPU '%s' is: give --gpu", dname ? dname : "?");
        json_decref(root);
        return rc;
    }
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strchr(stem, '.');
    if (dot) *dot = '\0';
    colo_trace_t *t = colo_trace_new(o->model ? o->model : stem, o->batch > 0 ? o->batch : 1, gpu);
    rc = t ? convert(path, root, o, t, err) : COLO_ENOMEM;
    if (!rc) {
        char src[600];
        snprintf(src, sizeof src, "PyTorch profiler (Kineto) trace %s%s%s", base ? base + 1 : path,
                 o->annotation ? ", annotation " : "", o->annotation ? o->annotation : "");
        int bad = json_object_set_new(t->provenance, "source", json_string(src));
        bad |= json_object_set_new(t->provenance, "measured_on", json_string(dname ? dname : gpu));
        bad |= json_object_set_new(t->provenance, "converted_by",
                                   json_string("colosim import kineto"));
        if (bad) rc = COLO_ENOMEM;
    }
    json_decref(root);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    return colo_trace_finish(t, rc, out);
}
