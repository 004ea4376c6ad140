/* import_capture.c: colosim-capture record files -> traces; Nsight Compute bytes -> traces. */
#include "import_capture.h"
#include "alloc.h"
#include "csv.h"
#include "json_lines.h"
#include "gpu.h"
#include "gpu_catalog.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api {
    long long corr, start;
};

struct range {
    long long start, end;
    char *name;
};

struct capture {
    const char *path;
    colo_error_t *err;
    char device[256];
    double device_gib;
    colo_timed_op_t *ops;
    long long *corr; /* each op's correlation id */
    size_t n_ops, cap_ops;
    struct api *apis;
    size_t n_apis, cap_apis;
    struct range *ranges;
    size_t n_ranges, cap_ranges;
    size_t skipped; /* device-to-device and other copies */
};

static int line_error(const struct capture *c, int line, const char *what)
{
    return colo_error_set(c->err, COLO_EPARSE, c->path, line, NULL, "%s", what);
}

/* The rest of the line after n whitespace-separated fields: a name with spaces. */
static const char *after_fields(const char *s, int n)
{
    for (int i = 0; i < n; i++) {
        while (*s == ' ')
            s++;
        while (*s && *s != ' ')
            s++;
    }
    while (*s == ' ')
        s++;
    return s;
}

static int add_op(struct capture *c, const colo_timed_op_t *op, long long corr)
{
    if (colo_grow((void **)&c->ops, &c->cap_ops, c->n_ops + 1, sizeof *c->ops)) return COLO_ENOMEM;
    long long *nc = colo_realloc(c->corr, c->cap_ops * sizeof *nc);
    if (!nc) return COLO_ENOMEM;
    c->corr = nc;
    c->ops[c->n_ops] = *op;
    c->corr[c->n_ops++] = corr;
    return 0;
}

static int read_line(struct capture *c, char *s, int line)
{
    char kind[16];
    if (sscanf(s, "%15s", kind) != 1 || kind[0] == '#') return 0;
    long long a, b, dev, stream, corr;
    if (strcmp(kind, "device") == 0) {
        long long id, sms, mem;
        if (sscanf(s, "device %lld %lld %lld", &id, &sms, &mem) != 3)
            return line_error(c, line, "device: expected ID SMS MEMORY_BYTES NAME");
        if (!c->device[0]) {
            snprintf(c->device, sizeof c->device, "%s", after_fields(s, 4));
            c->device_gib = (double)mem / 1073741824.0;
        }
        return 0;
    }
    if (strcmp(kind, "kernel") == 0) {
        long long g[3], bl[3], regs, smem;
        if (sscanf(s, "kernel %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld", &a,
                   &b, &dev, &stream, &corr, &g[0], &g[1], &g[2], &bl[0], &bl[1], &bl[2], &regs,
                   &smem) != 13)
            return line_error(c, line,
                              "kernel: expected START END DEVICE STREAM CORRELATION GX GY "
                              "GZ BX BY BZ REGISTERS SHARED_BYTES NAME");
        const char *name = after_fields(s, 14);
        if (!colo_times_ok(a, b) || !*name)
            return line_error(c, line,
                              "kernel: ends before it starts, times out of range, or no name");
        colo_timed_op_t x;
        memset(&x, 0, sizeof x);
        x.start = a;
        x.launch = -1;
        x.op.type = COLO_OP_KERNEL;
        x.op.stream = (int)stream;
        for (int d = 0; d < 3; d++) {
            if (g[d] < 1 || g[d] > 0x7fffffff || bl[d] < 1 || bl[d] > 1024)
                return line_error(c, line, "kernel: grid or block out of range");
            x.op.grid[d] = (unsigned)g[d];
            x.op.block[d] = (unsigned)bl[d];
        }
        x.op.registers = regs >= 0 && regs <= 255 ? (int)regs : -1;
        x.op.shared_bytes = smem >= 0 && smem < 0x7fffffff ? (int)smem : -1;
        x.op.dram_bytes = x.op.l2_bytes = x.op.flops = -1;
        x.op.duration = b - a > 0 ? b - a : 1;
        if (!(x.op.name = colo_strdup(name))) return COLO_ENOMEM;
        int rc = add_op(c, &x, corr);
        if (rc) colo_free(x.op.name);
        return rc;
    }
    if (strcmp(kind, "copy") == 0) {
        long long ck, bytes;
        if (sscanf(s, "copy %lld %lld %lld %lld %lld %lld %lld", &a, &b, &dev, &stream, &corr, &ck,
                   &bytes) != 7)
            return line_error(c, line,
                              "copy: expected START END DEVICE STREAM CORRELATION KIND BYTES");
        if (!colo_times_ok(a, b) || bytes < 0 || (double)bytes > COLO_OP_MAX_BYTES)
            return line_error(c, line, "copy: ends before it starts, times out of range, or "
                                       "bytes outside 0 to 1 PB");
        /* CUPTI_ACTIVITY_MEMCPY_KIND: 1 HtoD, 2 DtoH; others are not modelled */
        if ((ck != 1 && ck != 2) || bytes == 0) {
            c->skipped++;
            return 0;
        }
        colo_timed_op_t x;
        memset(&x, 0, sizeof x);
        x.start = a;
        x.launch = -1;
        x.op.type = COLO_OP_COPY;
        x.op.dir = ck == 1 ? COLO_COPY_H2D : COLO_COPY_D2H;
        x.op.bytes = bytes;
        x.op.stream = (int)stream;
        x.op.duration = b - a; /* kept for the GPU span; traces do not write it for copies */
        return add_op(c, &x, corr);
    }
    if (strcmp(kind, "api") == 0) {
        if (sscanf(s, "api %lld %lld %lld", &a, &b, &corr) != 3)
            return line_error(c, line, "api: expected START END CORRELATION CBID");
        if (!colo_times_ok(a, b))
            return line_error(c, line, "api: ends before it starts, or out of range");
        if (colo_grow((void **)&c->apis, &c->cap_apis, c->n_apis + 1, sizeof *c->apis))
            return COLO_ENOMEM;
        c->apis[c->n_apis++] = (struct api){corr, a};
        return 0;
    }
    if (strcmp(kind, "range") == 0) {
        if (sscanf(s, "range %lld %lld", &a, &b) != 2 || b < a || a < 0 || b > COLO_STAMP_MAX_NS)
            return line_error(c, line, "range: expected START END NAME, 0 <= START <= END");
        if (colo_grow((void **)&c->ranges, &c->cap_ranges, c->n_ranges + 1, sizeof *c->ranges))
            return COLO_ENOMEM;
        char *nm = colo_strdup(after_fields(s, 3));
        if (!nm) return COLO_ENOMEM;
        c->ranges[c->n_ranges++] = (struct range){a, b, nm};
        return 0;
    }
    char msg[96];
    snprintf(msg, sizeof msg, "unknown record '%.20s'", kind);
    return line_error(c, line, msg);
}

static int cmp_api(const void *a, const void *b)
{
    const struct api *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int read_file(struct capture *c)
{
    FILE *f;
    char *mem;
    int orc = colo_text_open(c->path, &f, &mem, c->err);
    if (orc) return orc;
    char *buf = NULL;
    size_t cap = 0;
    ssize_t got;
    int line = 0, rc = 0;
    while (!rc && (got = getline(&buf, &cap, f)) >= 0) {
        line++;
        colo_csv_chomp(buf);
        if (line == 1) {
            int v = 0;
            if (sscanf(buf, "colosim-capture %d", &v) != 1)
                rc = line_error(
                    c, 1, "not a colosim-capture record file (no \"colosim-capture 1\" line)");
            else if (v != COLO_CAPTURE_FORMAT_VERSION)
                rc = line_error(c, 1, "unsupported record format version (this colosim reads 1)");
            continue;
        }
        rc = read_line(c, buf, line);
    }
    free(buf);
    fclose(f);
    colo_free(mem);
    if (rc == COLO_ENOMEM) colo_error_set(c->err, rc, c->path, line, NULL, "out of memory");
    if (!rc && line == 0) rc = line_error(c, 0, "empty file");
    if (rc) return rc;
    /* Launch times from the runtime calls with the same correlation id. */
    if (c->n_apis) qsort(c->apis, c->n_apis, sizeof *c->apis, cmp_api);
    for (size_t i = 0; i < c->n_ops; i++) {
        struct api key = {c->corr[i], 0};
        const struct api *hit =
            c->n_apis ? bsearch(&key, c->apis, c->n_apis, sizeof *c->apis, cmp_api) : NULL;
        if (hit) c->ops[i].launch = hit->start;
    }
    if (c->n_ranges) qsort(c->ranges, c->n_ranges, sizeof *c->ranges, cmp_range);
    return 0;
}

static void capture_fini(struct capture *c)
{
    for (size_t i = 0; i < c->n_ops; i++)
        colo_free(c->ops[i].op.name);
    colo_free(c->ops);
    colo_free(c->corr);
    colo_free(c->apis);
    for (size_t i = 0; i < c->n_ranges; i++)
        colo_free(c->ranges[i].name);
    colo_free(c->ranges);
}

/* One trace of the ops launched in [lo, hi]; range may be NULL (everything). */
static int build(struct capture *c, const colo_kineto_opts_t *o, const char *model, const char *gpu,
                 const struct range *range, int occurrence, colo_trace_t **out)
{
    *out = NULL;
    long long lo = range ? range->start : -(1LL << 62), hi = range ? range->end : 1LL << 62;
    colo_timed_op_t *sel = colo_calloc(c->n_ops ? c->n_ops : 1, sizeof *sel);
    if (!sel) return COLO_ENOMEM;
    size_t n = 0;
    long long first = -1, last = -1, first_launch = -1;
    for (size_t i = 0; i < c->n_ops; i++) {
        long long when = c->ops[i].launch >= 0 ? c->ops[i].launch : c->ops[i].start;
        if (when < lo || when > hi) continue;
        sel[n++] = c->ops[i]; /* names stay owned by c */
        long long end = c->ops[i].start + c->ops[i].op.duration;
        if (first < 0 || c->ops[i].start < first) first = c->ops[i].start;
        if (first_launch < 0 || when < first_launch) first_launch = when;
        if (end > last) last = end;
    }
    colo_trace_t *t = colo_trace_new(model, o->batch > 0 ? o->batch : 1, gpu);
    int rc = t ? colo_trace_append_timed(t, sel, n) : COLO_ENOMEM;
    colo_free(sel);
    if (rc) return colo_trace_finish(t, rc, out);
    size_t kernels = 0;
    for (size_t i = 0; i < t->n_ops; i++)
        kernels += t->ops[i].type == COLO_OP_KERNEL;
    if (kernels == 0) {
        rc = colo_error_set(c->err, COLO_EPARSE, c->path, 0, NULL, "no kernels%s%s%s",
                            range ? " inside range '" : "", range ? range->name : "",
                            range ? "'" : "");
        return colo_trace_finish(t, rc, out);
    }
    json_t *p = t->provenance;
    char src[700];
    snprintf(src, sizeof src, "colosim-capture (CUPTI activity records) of %s", c->path);
    rc |= json_object_set_new(p, "source", json_string(src));
    rc |= json_object_set_new(p, "device", json_string(c->device[0] ? c->device : "unknown"));
    if (range) {
        rc |= json_object_set_new(p, "range", json_string(range->name));
        rc |= json_object_set_new(p, "occurrence", json_integer(occurrence));
        rc |= json_object_set_new(p, "measured_ns", json_integer(range->end - range->start));
    }
    rc |= json_object_set_new(p, "gpu_span_ns", json_integer(last > first ? last - first : 0));
    rc |= json_object_set_new(p, "launch_to_end_ns",
                              json_integer(last > first_launch ? last - first_launch : 0));
    if (c->skipped)
        rc |= json_object_set_new(p, "skipped",
                                  json_sprintf("%zu device-to-device, peer or "
                                               "empty copies",
                                               c->skipped));
    return colo_trace_finish(t, rc ? COLO_ENOMEM : 0, out);
}

void colo_capture_free(colo_trace_t **traces, size_t n)
{
    for (size_t i = 0; i < n; i++)
        colo_trace_free(traces[i]);
    colo_free(traces);
}

int colo_import_capture(const char *path, const colo_kineto_opts_t *o, colo_trace_t ***traces,
                        size_t *n_out, colo_error_t *err)
{
    *traces = NULL;
    *n_out = 0;
    struct capture c;
    memset(&c, 0, sizeof c);
    c.path = path;
    c.err = err;
    int rc = read_file(&c);
    const char *gpu = o->gpu;
    if (!rc && !gpu && !(gpu = colo_gpu_guess(c.device, c.device_gib, 0)))
        rc = colo_error_set(err, COLO_EINVAL, path, 0, "device",
                            "cannot tell which GPU '%s' is: give --gpu", c.device);
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strchr(stem, '.');
    if (dot) *dot = '\0';
    const char *model = o->model ? o->model : stem;
    colo_trace_t **out = NULL;
    size_t n = 0;
    if (!rc && !o->annotation) {
        out = colo_calloc(1, sizeof *out);
        rc = out ? build(&c, o, model, gpu, NULL, 0, &out[0]) : COLO_ENOMEM;
        if (!rc) n = 1;
    } else if (!rc) {
        size_t matches = 0;
        for (size_t i = 0; i < c.n_ranges; i++)
            matches += strstr(c.ranges[i].name, o->annotation) != NULL;
        if (o->occurrence > 0 && (size_t)o->occurrence > matches)
            rc = colo_error_set(err, COLO_ENOENT, path, 0, "annotation",
                                "%zu range%s contain%s '%s': no occurrence %d", matches,
                                matches == 1 ? "" : "s", matches == 1 ? "s" : "", o->annotation,
                                o->occurrence);
        else if (matches == 0)
            rc = colo_error_set(err, COLO_ENOENT, path, 0, "annotation",
                                "no NVTX range contains '%s' (%zu ranges recorded)", o->annotation,
                                c.n_ranges);
        if (!rc && !(out = colo_calloc(matches, sizeof *out))) rc = COLO_ENOMEM;
        int seen = 0;
        for (size_t i = 0; i < c.n_ranges && !rc; i++) {
            if (!strstr(c.ranges[i].name, o->annotation)) continue;
            seen++;
            if (o->occurrence > 0 && seen != o->occurrence) continue;
            rc = build(&c, o, model, gpu, &c.ranges[i], seen, &out[n]);
            if (!rc) n++;
        }
    }
    capture_fini(&c);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    if (rc) {
        colo_capture_free(out, n);
        return rc;
    }
    *traces = out;
    *n_out = n;
    return 0;
}

/* ---- Nsight Compute ---- */

struct ncu_kernel {
    char id[32];
    char *name;
    double dram, l2;
    int have_dram, have_l2, line;
};

/* "1,234.5" in unit ("byte", "Kbyte", "Mbyte", "Gbyte") -> bytes; -1 when not a number. */
static double ncu_bytes(const char *value, const char *unit)
{
    char digits[64];
    size_t k = 0;
    for (const char *s = value; *s && k + 1 < sizeof digits; s++)
        if (*s != ',') digits[k++] = *s;
    digits[k] = '\0';
    char *end;
    errno = 0;
    double v = strtod(digits, &end);
    if (end == digits || *end || errno || !isfinite(v) || v < 0) return -1;
    static const struct {
        const char *unit;
        double scale;
    } units[] = {{"byte", 1}, {"Kbyte", 1e3}, {"Mbyte", 1e6}, {"Gbyte", 1e9}, {"Tbyte", 1e12},
                 {"KB", 1e3}, {"MB", 1e6},    {"GB", 1e9},    {"B", 1}};
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (strcmp(unit, units[i].unit) == 0) return v * units[i].scale;
    return -2;
}

int colo_trace_merge_ncu(colo_trace_t *t, const char *csv_path, colo_error_t *err)
{
    FILE *f;
    char *mem;
    int orc = colo_text_open(csv_path, &f, &mem, err);
    if (orc) return orc;
    char *buf = NULL;
    size_t cap = 0;
    int line = 0, rc = 0, header = 0;
    int c_id = -1, c_name = -1, c_metric = -1, c_unit = -1, c_value = -1;
    struct ncu_kernel *ks = NULL;
    size_t n = 0, kcap = 0;
    char *fields[64];
    while (!rc && getline(&buf, &cap, f) >= 0) {
        line++;
        colo_csv_chomp(buf);
        if (!header) {
            if (strncmp(buf, "\"ID\"", 4) != 0 && strncmp(buf, "ID,", 3) != 0)
                continue; /* ==PROF== lines */
            int nf = colo_csv_split(buf, fields, 64);
            for (int i = 0; i < nf && i < 64; i++) {
                if (strcmp(fields[i], "ID") == 0) c_id = i;
                if (strcmp(fields[i], "Kernel Name") == 0) c_name = i;
                if (strcmp(fields[i], "Metric Name") == 0) c_metric = i;
                if (strcmp(fields[i], "Metric Unit") == 0) c_unit = i;
                if (strcmp(fields[i], "Metric Value") == 0) c_value = i;
            }
            if (c_id < 0 || c_name < 0 || c_metric < 0 || c_unit < 0 || c_value < 0)
                rc = colo_error_set(err, COLO_EPARSE, csv_path, line, NULL,
                                    "not an Nsight Compute CSV in long form: needs the columns "
                                    "ID, Kernel Name, Metric Name, Metric Unit, Metric Value");
            header = 1;
            continue;
        }
        int nf = colo_csv_split(buf, fields, 64);
        int need = c_value > c_metric ? c_value : c_metric;
        if (nf <= need || nf <= c_name || nf <= c_unit || nf <= c_id) {
            rc = colo_error_set(err, COLO_EPARSE, csv_path, line, NULL,
                                "%d fields: fewer than the header's", nf);
            break;
        }
        const char *metric = fields[c_metric];
        int is_dram = strcmp(metric, "dram__bytes_read.sum") == 0 ||
                      strcmp(metric, "dram__bytes_write.sum") == 0;
        int is_l2 = strcmp(metric, "lts__t_bytes.sum") == 0;
        if (!is_dram && !is_l2) continue;
        if (!n || strcmp(ks[n - 1].id, fields[c_id]) != 0) {
            if (colo_grow((void **)&ks, &kcap, n + 1, sizeof *ks)) {
                rc = COLO_ENOMEM;
                break;
            }
            memset(&ks[n], 0, sizeof ks[n]);
            snprintf(ks[n].id, sizeof ks[n].id, "%s", fields[c_id]);
            ks[n].line = line;
            if (!(ks[n].name = colo_strdup(fields[c_name]))) {
                rc = COLO_ENOMEM;
                break;
            }
            n++;
        }
        double v = ncu_bytes(fields[c_value], fields[c_unit]);
        if (v < 0) {
            rc = colo_error_set(err, COLO_EPARSE, csv_path, line, metric,
                                v == -2 ? "unknown unit '%s'" : "not a number: '%s'",
                                v == -2 ? fields[c_unit] : fields[c_value]);
            break;
        }
        if (is_dram) {
            ks[n - 1].dram += v;
            ks[n - 1].have_dram = 1;
        } else {
            ks[n - 1].l2 = v;
            ks[n - 1].have_l2 = 1;
        }
    }
    free(buf);
    fclose(f);
    colo_free(mem);
    if (!rc && !header)
        rc = colo_error_set(err, COLO_EPARSE, csv_path, 0, NULL,
                            "no header line: not an Nsight Compute --csv export");
    size_t k = 0;
    for (size_t i = 0; i < t->n_ops && !rc; i++) {
        colo_op_t *op = &t->ops[i];
        if (op->type != COLO_OP_KERNEL) continue;
        if (k == n) {
            rc = colo_error_set(err, COLO_EINVAL, csv_path, 0, NULL,
                                "has %zu kernels with byte counts; the trace has more (kernel "
                                "%zu is '%.60s')",
                                n, k + 1, op->name);
            break;
        }
        /* ncu prints the mangled name with --print-kernel-base mangled; CUPTI records it. */
        if (strcmp(ks[k].name, op->name) != 0 && !strstr(op->name, ks[k].name)) {
            rc = colo_error_set(err, COLO_EINVAL, csv_path, ks[k].line, "Kernel Name",
                                "kernel %zu is '%.60s' here but '%.60s' in the trace: profile the "
                                "same range with --print-kernel-base mangled",
                                k + 1, ks[k].name, op->name);
            break;
        }
        if (ks[k].have_dram) op->dram_bytes = ks[k].dram;
        if (ks[k].have_l2) op->l2_bytes = ks[k].l2;
        k++;
    }
    if (!rc && k < n)
        rc = colo_error_set(err, COLO_EINVAL, csv_path, ks[k].line, NULL,
                            "has %zu kernels with byte counts; the trace has only %zu", n, k);
    for (size_t i = 0; i < n; i++)
        colo_free(ks[i].name);
    colo_free(ks);
    if (!rc && json_object_set_new(t->provenance, "bytes_from", json_string(csv_path)))
        rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, csv_path, line, NULL, "out of memory");
    return rc;
}
