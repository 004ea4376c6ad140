/* trace.c: reading, validating and writing kernel traces. */
#include "trace.h"
#include "alloc.h"
#include "atomic_file.h"
#include "json_lines.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *colo_kclass_name(colo_kclass_t c)
{
    return c == COLO_KCLASS_COMPUTE ? "compute" : c == COLO_KCLASS_MEMORY ? "memory" : "unknown";
}

const char *colo_copy_dir_name(colo_copy_dir_t d)
{
    return d == COLO_COPY_H2D ? "h2d" : "d2h";
}

colo_trace_t *colo_trace_new(const char *model, int batch, const char *gpu)
{
    colo_trace_t *t = colo_calloc(1, sizeof *t);
    if (!t) return NULL;
    t->batch = batch;
    t->model = colo_strdup(model);
    t->gpu = colo_strdup(gpu);
    t->provenance = json_object();
    if (!t->model || !t->gpu || !t->provenance) {
        colo_trace_free(t);
        return NULL;
    }
    return t;
}

int colo_trace_append(colo_trace_t *t, const colo_op_t *op)
{
    if (colo_grow((void **)&t->ops, &t->cap_ops, t->n_ops + 1, sizeof *t->ops)) return COLO_ENOMEM;
    colo_op_t *d = &t->ops[t->n_ops];
    *d = *op;
    d->name = NULL;
    if (op->name && !(d->name = colo_strdup(op->name))) return COLO_ENOMEM;
    t->n_ops++;
    return 0;
}

void colo_trace_summarise(colo_trace_t *t)
{
    t->n_kernels = t->n_copies = 0;
    t->kernel_time = 0;
    t->copy_bytes[0] = t->copy_bytes[1] = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const colo_op_t *op = &t->ops[i];
        /* saturating: readers bound each op (COLO_OP_MAX_*), not how many there are */
        if (op->type == COLO_OP_KERNEL) {
            t->ops[i].cls = colo_kernel_classify(op->name, op->math);
            t->n_kernels++;
            if (__builtin_add_overflow(t->kernel_time, op->duration, &t->kernel_time))
                t->kernel_time = COLO_TIME_MAX;
        } else {
            t->n_copies++;
            long long *b = &t->copy_bytes[op->dir];
            if (__builtin_add_overflow(*b, op->bytes, b)) *b = LLONG_MAX;
        }
    }
}

void colo_trace_free(colo_trace_t *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n_ops; i++)
        colo_free(t->ops[i].name);
    colo_free(t->ops);
    colo_free(t->path);
    colo_free(t->model);
    colo_free(t->gpu);
    json_decref(t->provenance);
    colo_free(t);
}

/* ---- reading ---- */

struct reader {
    const char *path;
    colo_error_t *err; /* where errors go: while ops are read, the first op's error waits in */
    colo_error_t *deferred; /* ... this one, until the header says the file is a trace */
    int deferred_rc;
    int *lines; /* line of each op read so far */
    size_t n_lines;
    const char *text; /* the file, for the lines of top-level keys */
    size_t len;
};

static int op_error(const struct reader *r, size_t i, const char *member, int code, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));

static int op_error(const struct reader *r, size_t i, const char *member, int code, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = colo_json_element_verror(r->err, code, r->path, "ops", i, r->lines, r->n_lines,
                                      member, fmt, ap);
    va_end(ap);
    return rc;
}

static int check_keys(const struct reader *r, size_t i, json_t *obj, const char *const *allowed)
{
    const char *k = colo_json_unknown_key(obj, allowed);
    return k ? op_error(r, i, k, COLO_EINVAL, "unknown key") : 0;
}

/* Optional non-negative number; *out keeps its value when absent. */
static int get_number(const struct reader *r, size_t i, json_t *obj, const char *key, int required,
                      double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) return required ? op_error(r, i, key, COLO_EINVAL, "missing (required)") : 0;
    if (!json_is_number(v)) return op_error(r, i, key, COLO_EINVAL, "must be a number");
    double d = json_number_value(v);
    if (!isfinite(d) || d < 0)
        return op_error(r, i, key, COLO_ERANGE, "must be a non-negative number (got %g)", d);
    *out = d;
    return 0;
}

static int get_int_field(const struct reader *r, size_t i, json_t *obj, const char *key,
                         long long max, int *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        return op_error(r, i, key, COLO_EINVAL, "must be an integer from 0 to %lld", max);
    *out = (int)json_integer_value(v);
    return 0;
}

/* grid / block: one positive integer or an array of 1 to 3. */
static int get_dim3(const struct reader *r, size_t i, json_t *obj, const char *key, int required,
                    unsigned dim[3])
{
    json_t *v = json_object_get(obj, key);
    if (!v) return required ? op_error(r, i, key, COLO_EINVAL, "missing (required)") : 0;
    dim[0] = dim[1] = dim[2] = 1;
    size_t n = json_is_array(v) ? json_array_size(v) : 1;
    if (n < 1 || n > 3) return op_error(r, i, key, COLO_EINVAL, "must have 1 to 3 dimensions");
    for (size_t d = 0; d < n; d++) {
        json_t *e = json_is_array(v) ? json_array_get(v, d) : v;
        if (!json_is_integer(e) || json_integer_value(e) < 1 || json_integer_value(e) > 0x7fffffff)
            return op_error(r, i, key, COLO_EINVAL, "dimensions must be positive integers");
        dim[d] = (unsigned)json_integer_value(e);
    }
    return 0;
}

static int read_kernel(const struct reader *r, size_t i, json_t *o, colo_op_t *op)
{
    static const char *const keys[] = {
        "type",   "name",       "grid",       "block",    "registers", "shared_bytes",
        "duration_ns", "class", "math", "blocks_per_sm", "dram_bytes", "l2_bytes", "flops",
        "gap_ns", "stream", NULL};
    int rc = check_keys(r, i, o, keys);
    if (rc) return rc;
    json_t *name = json_object_get(o, "name");
    if (!json_is_string(name) || !json_string_length(name))
        return op_error(r, i, "name", COLO_EINVAL, "missing or not a non-empty string");
    op->type = COLO_OP_KERNEL;
    op->registers = op->shared_bytes = -1;
    op->dram_bytes = op->l2_bytes = op->flops = -1;
    double dur = 0, gap = 0;
    if ((rc = get_dim3(r, i, o, "grid", 1, op->grid)) ||
        (rc = get_dim3(r, i, o, "block", 0, op->block)) ||
        (rc = get_int_field(r, i, o, "registers", 255, &op->registers)) ||
        (rc = get_int_field(r, i, o, "shared_bytes", 0x7fffffff, &op->shared_bytes)) ||
        (rc = get_int_field(r, i, o, "stream", 0x7fffffff, &op->stream)) ||
        (rc = get_int_field(r, i, o, "blocks_per_sm", 1024, &op->blocks_per_sm)) ||
        (rc = get_number(r, i, o, "duration_ns", 1, &dur)) ||
        (rc = get_number(r, i, o, "gap_ns", 0, &gap)) ||
        (rc = get_number(r, i, o, "dram_bytes", 0, &op->dram_bytes)) ||
        (rc = get_number(r, i, o, "l2_bytes", 0, &op->l2_bytes)) ||
        (rc = get_number(r, i, o, "flops", 0, &op->flops)))
        return rc;
    /* CUDA's launch limits (every GPU since compute capability 2.0; CUDA C++ Programming Guide,
     * "Compute Capabilities", table of technical specifications): a kernel outside them was
     * never launched, and a live replay could not launch it either */
    if (op->block[0] > 1024 || op->block[1] > 1024 || op->block[2] > 64 ||
        (unsigned long long)op->block[0] * op->block[1] * op->block[2] > 1024)
        return op_error(r, i, "block", COLO_EINVAL,
                        "%u x %u x %u threads is beyond CUDA's limit (x, y <= 1024, z <= 64, "
                        "x*y*z <= 1024)",
                        op->block[0], op->block[1], op->block[2]);
    if (op->grid[1] > 65535 || op->grid[2] > 65535)
        return op_error(r, i, "grid", COLO_EINVAL,
                        "y and z are at most 65535 blocks (CUDA's limit; got %u x %u x %u)",
                        op->grid[0], op->grid[1], op->grid[2]);
    if (!(dur >= 0.5))
        return op_error(r, i, "duration_ns", COLO_ERANGE, "must be at least 1 ns (got %g)", dur);
    if (dur > COLO_OP_MAX_NS || gap > COLO_OP_MAX_NS)
        return op_error(r, i, dur > COLO_OP_MAX_NS ? "duration_ns" : "gap_ns", COLO_ERANGE,
                        "is longer than 11 days; not a kernel");
    op->duration = colo_time_from_ns(dur);
    op->gap = colo_time_from_ns(gap);
    json_t *cls = json_object_get(o, "class");
    if (cls) {
        const char *c = json_string_value(cls);
        if (c && strcmp(c, "compute") == 0)
            op->kclass = COLO_KCLASS_COMPUTE;
        else if (c && strcmp(c, "memory") == 0)
            op->kclass = COLO_KCLASS_MEMORY;
        else if (c && strcmp(c, "unknown") == 0)
            op->kclass = COLO_KCLASS_UNKNOWN;
        else
            return op_error(r, i, "class", COLO_EINVAL,
                            "must be \"compute\", \"memory\" or \"unknown\"");
    }
    json_t *math = json_object_get(o, "math");
    if (math) {
        op->math = colo_math_parse(json_string_value(math));
        if (op->math == COLO_MATH_CLASSES)
            return op_error(r, i, "math", COLO_EINVAL,
                            "must be one of \"auto\", \"memory\", \"fp32\", \"fp64\", \"tf32\", "
                            "\"fp16\", \"bf16\", \"int8\", \"fp8\"");
    }
    if (!(op->name = colo_strdup(json_string_value(name)))) return COLO_ENOMEM;
    return 0;
}

static int read_copy(const struct reader *r, size_t i, json_t *o, colo_op_t *op)
{
    static const char *const keys[] = {"type", "direction", "bytes", "gap_ns", NULL};
    int rc = check_keys(r, i, o, keys);
    if (rc) return rc;
    op->type = COLO_OP_COPY;
    const char *d = json_string_value(json_object_get(o, "direction"));
    if (d && strcmp(d, "h2d") == 0)
        op->dir = COLO_COPY_H2D;
    else if (d && strcmp(d, "d2h") == 0)
        op->dir = COLO_COPY_D2H;
    else
        return op_error(r, i, "direction", COLO_EINVAL, "must be \"h2d\" or \"d2h\"");
    json_t *b = json_object_get(o, "bytes");
    if (!json_is_integer(b) || json_integer_value(b) < 1)
        return op_error(r, i, "bytes", COLO_EINVAL, "missing or not a positive integer");
    if ((double)json_integer_value(b) > COLO_OP_MAX_BYTES)
        return op_error(r, i, "bytes", COLO_ERANGE, "is more than 1 PB; not a copy");
    op->bytes = (long long)json_integer_value(b);
    double gap = 0;
    if ((rc = get_number(r, i, o, "gap_ns", 0, &gap))) return rc;
    if (gap > COLO_OP_MAX_NS)
        return op_error(r, i, "gap_ns", COLO_ERANGE, "is longer than 11 days");
    op->gap = colo_time_from_ns(gap);
    return 0;
}

static int top_error(const struct reader *r, const char *key, const char *what)
{
    int line = key ? colo_json_key_line(r->text, r->len, key) : 0;
    return colo_error_set(r->err, COLO_EINVAL, r->path, line, key, "%s", what);
}

/* The document's keys but "ops" (read op by op as they come, read_ops): checked once all are. */
static int read_header(const struct reader *r, json_t *root, bool have_ops, colo_trace_t *t)
{
    static const char *const keys[] = {"colosim_trace", "model", "batch", "gpu",
                                       "provenance",    "ops",   NULL};
    json_t *ver = json_object_get(root, "colosim_trace");
    if (!json_is_integer(ver))
        return top_error(
            r, "colosim_trace",
            "missing: not a colosim trace (convert other formats with colosim import)");
    if (json_integer_value(ver) != COLO_TRACE_FORMAT_VERSION)
        return colo_error_set(r->err, COLO_EUNSUPPORTED, r->path,
                              colo_json_key_line(r->text, r->len, "colosim_trace"), "colosim_trace",
                              "format version %lld; this colosim reads version %d",
                              (long long)json_integer_value(ver), COLO_TRACE_FORMAT_VERSION);
    const char *unknown = colo_json_unknown_key(root, keys);
    if (unknown) return top_error(r, unknown, "unknown key");
    const char *model = json_string_value(json_object_get(root, "model"));
    const char *gpu = json_string_value(json_object_get(root, "gpu"));
    json_t *batch = json_object_get(root, "batch");
    json_t *prov = json_object_get(root, "provenance");
    if (!model || !*model) return top_error(r, "model", "missing or not a non-empty string");
    if (!gpu || !*gpu) return top_error(r, "gpu", "missing or not a non-empty string");
    if (!json_is_integer(batch) || json_integer_value(batch) < 1 ||
        json_integer_value(batch) > 1000000)
        return top_error(r, "batch", "missing or not a positive integer");
    if (!json_is_object(prov) || !json_is_string(json_object_get(prov, "source")))
        return top_error(r, "provenance", "missing, or has no \"source\" string");
    if (!have_ops || t->n_ops == 0)
        return top_error(r, "ops", "missing or empty: a trace needs at least one kernel");
    if (!(t->model = colo_strdup(model)) || !(t->gpu = colo_strdup(gpu))) return COLO_ENOMEM;
    t->batch = (int)json_integer_value(batch);
    t->gpu_line = colo_json_key_line(r->text, r->len, "gpu");
    t->provenance = json_incref(prov);
    colo_trace_summarise(t);
    if (t->n_kernels == 0) return top_error(r, "ops", "has no kernels");
    return 0;
}

/* ---- the document, streamed ----
 * A trace may hold millions of ops: the whole document as Jansson values took about 1.3 KB per
 * kernel. The top level is walked here and each op parsed by Jansson on its own, converted and
 * freed, so that what a trace holds is its text and its ops (docs/traces.md gives the budget). */
struct stream {
    const char *s;
    size_t len, i;
    int line;
    const char *path;
    colo_error_t *err;
};

static void ws(struct stream *p)
{
    for (; p->i < p->len; p->i++) {
        char c = p->s[p->i];
        if (c == '\n')
            p->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
    }
}

static int syntax(const struct stream *p, const char *what)
{
    return colo_error_set(p->err, COLO_EPARSE, p->path, p->line, NULL, "JSON error: %s", what);
}

/* The JSON value at p->i, by Jansson (flags: its decoding flags); p->i and p->line move past. */
static int value(struct stream *p, size_t flags, json_t **out)
{
    size_t start = p->i, end = start;
    json_error_t je;
    unsigned long failed_before = colo_alloc_failures();
    if (start >= p->len) return syntax(p, "unexpected end of file");
    char c = p->s[start];
    if (c == '{' || c == '[') {
        *out = json_loadb(p->s + start, p->len - start, flags | JSON_DISABLE_EOF_CHECK, &je);
        if (*out && (je.position <= 0 || (size_t)je.position > p->len - start)) {
            json_decref(*out); /* Jansson counts in an int: a value of 2 GiB or more */
            *out = NULL;
            return colo_error_set(p->err, COLO_EPARSE, p->path, p->line, NULL,
                                  "JSON error: a value of 2 GiB or more");
        }
        if (*out) end = start + (size_t)je.position;
    } else { /* a scalar: its extent, then Jansson on exactly that */
        if (c == '"') {
            for (end = start + 1; end < p->len && p->s[end] != '"'; end++)
                if (p->s[end] == '\\') end++;
            end = end < p->len ? end + 1 : p->len;
        } else {
            while (end < p->len && p->s[end] && strchr("+-.0123456789eEtruefalsn", p->s[end]))
                end++;
        }
        *out = end > start ? json_loadb(p->s + start, end - start, flags | JSON_DECODE_ANY, &je)
                           : NULL;
        if (end == start) snprintf(je.text, sizeof je.text, "'%c' is not a JSON value", c);
    }
    if (!*out) {
        bool jansson = c == '{' || c == '[' || end > start; /* je is Jansson's */
        if ((jansson && json_error_code(&je) == json_error_out_of_memory) ||
            colo_alloc_failures() != failed_before)
            return colo_error_set(p->err, COLO_ENOMEM, p->path, 0, NULL, "out of memory");
        return colo_error_set(p->err, COLO_EPARSE, p->path,
                              p->line + (jansson && je.line > 1 ? je.line - 1 : 0), NULL,
                              "JSON error: %s", je.text);
    }
    for (size_t k = start; k < end; k++)
        p->line += p->s[k] == '\n';
    p->i = end;
    return 0;
}

/* "ops": [ ... ] from its '[': each op parsed, converted into t, freed. */
static int read_ops(struct stream *p, struct reader *r, colo_trace_t *t)
{
    p->i++; /* [ */
    ws(p);
    if (p->i < p->len && p->s[p->i] == ']') {
        p->i++;
        return 0;
    }
    for (size_t i = 0;; i++) {
        ws(p);
        if (i == t->cap_ops &&
            (colo_grow((void **)&t->ops, &t->cap_ops, i + 1, sizeof *t->ops) ||
             colo_grow((void **)&r->lines, &r->n_lines, i + 1, sizeof *r->lines)))
            return COLO_ENOMEM;
        r->lines[i] = p->line;
        memset(&t->ops[i], 0, sizeof t->ops[i]);
        t->n_ops = i + 1; /* so a partly read op is freed */
        t->ops[i].line = p->line;
        json_t *o;
        int rc = value(p, JSON_REJECT_DUPLICATES, &o);
        if (rc) return rc;
        if (r->deferred_rc) { /* an earlier op was wrong: the rest is only checked as JSON */
            json_decref(o);
            t->n_ops = i; /* nothing of this one was read */
            goto next;
        }
        const char *type = json_string_value(json_object_get(o, "type"));
        if (!json_is_object(o))
            rc = op_error(r, i, NULL, COLO_EINVAL, "must be an object");
        else if (type && strcmp(type, "kernel") == 0)
            rc = read_kernel(r, i, o, &t->ops[i]);
        else if (type && strcmp(type, "copy") == 0)
            rc = read_copy(r, i, o, &t->ops[i]);
        else
            rc = op_error(r, i, "type", COLO_EINVAL, "must be \"kernel\" or \"copy\"");
        json_decref(o);
        if (rc == COLO_ENOMEM) return rc;
        if (rc) { /* said once the header is known to be a trace's (read_document) */
            r->deferred_rc = rc;
            *r->deferred = *r->err;
            colo_error_clear(r->err);
        }
    next:
        ws(p);
        if (p->i < p->len && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->len && p->s[p->i] == ']') {
            p->i++;
            return 0;
        }
        return syntax(p, "',' or ']' expected after an op");
    }
}

static int read_document(const char *text, size_t len, struct reader *r, colo_trace_t *t)
{
    struct stream p = {text, len, 0, 1, r->path, r->err};
    json_t *root = json_object();
    if (!root) return COLO_ENOMEM;
    bool have_ops = false, seen_ops = false;
    int rc = 0;
    ws(&p);
    if (p.i >= len || text[p.i] != '{') { /* what Jansson says of it, if it is not JSON */
        json_decref(root);
        json_t *v = NULL;
        rc = value(&p, 0, &v);
        json_decref(v);
        return rc ? rc : top_error(r, NULL, "a trace must be a JSON object");
    }
    p.i++;
    ws(&p);
    if (p.i < len && text[p.i] == '}') p.i++;
    else
        for (;;) {
            ws(&p);
            json_t *k = NULL;
            if (p.i >= len || text[p.i] != '"') {
                rc = syntax(&p, "a key (a string) expected");
                break;
            }
            if ((rc = value(&p, 0, &k))) break;
            const char *name = json_string_value(k);
            ws(&p);
            if (p.i >= len || text[p.i] != ':') {
                json_decref(k);
                rc = syntax(&p, "':' expected");
                break;
            }
            p.i++;
            ws(&p);
            if (json_object_get(root, name) || (seen_ops && strcmp(name, "ops") == 0)) {
                rc = colo_error_set(r->err, COLO_EPARSE, r->path, p.line, NULL,
                                    "JSON error: duplicate object key '%s'", name);
                json_decref(k);
                break;
            }
            if (strcmp(name, "ops") == 0) seen_ops = true;
            if (strcmp(name, "ops") == 0 && p.i < len && text[p.i] == '[') {
                have_ops = true;
                rc = read_ops(&p, r, t);
            } else {
                json_t *v = NULL;
                rc = value(&p, JSON_REJECT_DUPLICATES, &v);
                if (!rc && strcmp(name, "ops") != 0 && json_object_set_new(root, name, v))
                    rc = COLO_ENOMEM;
                else if (!rc && strcmp(name, "ops") == 0)
                    json_decref(v); /* not a list: "missing or empty" below */
            }
            json_decref(k);
            if (rc) break;
            ws(&p);
            if (p.i < len && text[p.i] == ',') {
                p.i++;
                continue;
            }
            if (p.i < len && text[p.i] == '}') {
                p.i++;
                break;
            }
            rc = syntax(&p, "',' or '}' expected");
            break;
        }
    if (!rc) {
        ws(&p);
        if (p.i < len) rc = syntax(&p, "end of file expected");
    }
    if (!rc) {
        /* the header first: an op error in a file that is not a trace (no colosim_trace), or
         * one of a later format, would not be the point */
        json_t *ver = json_object_get(root, "colosim_trace");
        bool trace_of_ours =
            json_is_integer(ver) && json_integer_value(ver) == COLO_TRACE_FORMAT_VERSION;
        if (r->deferred_rc && trace_of_ours) {
            *r->err = *r->deferred;
            rc = r->deferred_rc;
        } else {
            rc = read_header(r, root, have_ops && !r->deferred_rc, t);
            if (!rc && r->deferred_rc) { /* cannot be: read_header refused it */
                *r->err = *r->deferred;
                rc = r->deferred_rc;
            }
        }
    }
    json_decref(root);
    return rc;
}

int colo_trace_load(const char *path, colo_trace_t **out, colo_error_t *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    int rc = colo_read_file(path, &buf, &len, err);
    if (rc) return rc;
    colo_error_t deferred;
    colo_error_clear(&deferred);
    struct reader r = {path, err, &deferred, 0, NULL, 0, buf, len};
    colo_trace_t *t = colo_calloc(1, sizeof *t);
    rc = t ? read_document(buf, len, &r, t) : COLO_ENOMEM;
    if (rc == 0 && !(t->path = colo_strdup(path))) rc = COLO_ENOMEM;
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    colo_free(r.lines);
    colo_free(buf);
    if (rc) {
        colo_trace_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

/* ---- writing ---- */

static json_t *dim3_json(const unsigned d[3])
{
    if (d[1] == 1 && d[2] == 1) return json_integer(d[0]);
    return json_pack("[III]", (json_int_t)d[0], (json_int_t)d[1], (json_int_t)d[2]);
}

static json_t *op_json(const colo_op_t *op)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = 0;
    if (op->type == COLO_OP_COPY) {
        bad |= json_object_set_new(o, "type", json_string("copy"));
        bad |= json_object_set_new(o, "direction", json_string(colo_copy_dir_name(op->dir)));
        bad |= json_object_set_new(o, "bytes", json_integer(op->bytes));
    } else {
        bad |= json_object_set_new(o, "type", json_string("kernel"));
        bad |= json_object_set_new(o, "name", json_string(op->name));
        bad |= json_object_set_new(o, "grid", dim3_json(op->grid));
        if (op->block[0]) bad |= json_object_set_new(o, "block", dim3_json(op->block));
        if (op->registers >= 0)
            bad |= json_object_set_new(o, "registers", json_integer(op->registers));
        if (op->shared_bytes >= 0)
            bad |= json_object_set_new(o, "shared_bytes", json_integer(op->shared_bytes));
        bad |= json_object_set_new(o, "duration_ns", json_integer(op->duration));
        if (op->stream) bad |= json_object_set_new(o, "stream", json_integer(op->stream));
        bad |= json_object_set_new(o, "class", json_string(colo_kclass_name(op->kclass)));
        if (op->math != COLO_MATH_AUTO)
            bad |= json_object_set_new(o, "math", json_string(colo_math_name(op->math)));
        if (op->blocks_per_sm > 0)
            bad |= json_object_set_new(o, "blocks_per_sm", json_integer(op->blocks_per_sm));
        if (op->dram_bytes >= 0)
            bad |= json_object_set_new(o, "dram_bytes", json_real(op->dram_bytes));
        if (op->l2_bytes >= 0) bad |= json_object_set_new(o, "l2_bytes", json_real(op->l2_bytes));
        if (op->flops >= 0) bad |= json_object_set_new(o, "flops", json_real(op->flops));
    }
    if (op->gap) bad |= json_object_set_new(o, "gap_ns", json_integer(op->gap));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Writes prefix and v, indenting continuation lines by two spaces to sit inside the object. */
static int dump_value(FILE *f, const char *prefix, json_t *v, size_t flags)
{
    char *s = v ? json_dumps(v, flags) : NULL;
    if (!s) return COLO_ENOMEM;
    fputs(prefix, f);
    for (const char *c = s; *c; c++) {
        fputc(*c, f);
        if (*c == '\n') fputs("  ", f);
    }
    colo_free(s); /* Jansson allocates through colo_malloc (see colo_json_use_hooks) */
    return 0;
}

int colo_trace_savable(const colo_trace_t *t, const char *path, colo_error_t *err)
{
    for (size_t i = 0; i < t->n_ops; i++) {
        const colo_op_t *op = &t->ops[i];
        char key[48];
        if ((double)op->gap > COLO_OP_MAX_NS) {
            snprintf(key, sizeof key, "ops[%zu].gap_ns", i);
            return colo_error_set(err, COLO_ERANGE, path, 0, key,
                                  "%lld ns after the op before it, longer than the 11 days a "
                                  "trace may hold: the profile spans more than one run (select "
                                  "one with --annotation); nothing written",
                                  (long long)op->gap);
        }
        if ((double)op->duration > COLO_OP_MAX_NS ||
            (op->type == COLO_OP_COPY && (double)op->bytes > COLO_OP_MAX_BYTES)) {
            snprintf(key, sizeof key, "ops[%zu]", i);
            return colo_error_set(err, COLO_ERANGE, path, 0, key,
                                  "longer than 11 days or more than 1 PB, which no trace may "
                                  "hold; nothing written");
        }
    }
    return 0;
}

int colo_trace_save(const colo_trace_t *t, const char *path, colo_error_t *err)
{
    int rc = colo_trace_savable(t, path, err);
    if (rc) return rc;
    colo_atomic_file_t af;
    rc = colo_atomic_open(&af, path, err);
    if (rc) return rc;
    FILE *f = af.f;
    size_t compact = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12);
    fprintf(f, "{\n  \"colosim_trace\": %d,\n", COLO_TRACE_FORMAT_VERSION);
    json_t *model = json_string(t->model), *gpu = json_string(t->gpu);
    rc = dump_value(f, "  \"model\": ", model, JSON_ENCODE_ANY);
    fprintf(f, ",\n  \"batch\": %d,\n", t->batch);
    if (!rc) rc = dump_value(f, "  \"gpu\": ", gpu, JSON_ENCODE_ANY);
    if (!rc)
        rc = dump_value(f, ",\n  \"provenance\": ", t->provenance,
                        JSON_INDENT(4) | JSON_PRESERVE_ORDER);
    json_decref(model);
    json_decref(gpu);
    fprintf(f, ",\n  \"ops\": [\n");
    for (size_t i = 0; i < t->n_ops && !rc; i++) {
        json_t *o = op_json(&t->ops[i]);
        rc = dump_value(f, "    ", o, compact);
        json_decref(o);
        fprintf(f, "%s\n", i + 1 < t->n_ops ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (rc) {
        colo_atomic_abort(&af);
        return colo_error_set(err, rc, path, 0, NULL, "out of memory");
    }
    return colo_atomic_commit(&af, err);
}

static int cmp_timed(const void *a, const void *b)
{
    const colo_timed_op_t *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

int colo_trace_append_timed(colo_trace_t *t, colo_timed_op_t *ops, size_t n)
{
    if (n) qsort(ops, n, sizeof *ops, cmp_timed);
    long long prev = -1;
    for (size_t i = 0; i < n; i++) {
        long long l = ops[i].launch >= 0 ? ops[i].launch : ops[i].start;
        ops[i].op.gap = prev < 0 || l < prev ? 0 : l - prev;
        prev = l;
        if (colo_trace_append(t, &ops[i].op)) return COLO_ENOMEM;
    }
    return 0;
}

int colo_trace_finish(colo_trace_t *t, int rc, colo_trace_t **out)
{
    if (rc) {
        colo_trace_free(t);
        return rc;
    }
    colo_trace_summarise(t);
    *out = t;
    return 0;
}
