/* import_kineto.c: PyTorch profiler (Kineto) Chrome Trace Event JSON -> colosim trace. */
#include "import_kineto.h"
#include "alloc.h"
#include "chrome_trace.h"
#include "gpu_catalog.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NONE SIZE_MAX

/* ---- names, each held once ----
 * A long profile repeats a few hundred kernel and range names many thousand times. */
struct names {
    char **s; /* n distinct names, in the order first seen */
    size_t n, cap;
    size_t *slot; /* open addressing: 1 + index into s, 0 free; nslot a power of two */
    size_t nslot;
};

static size_t hash(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

static void place(size_t *slot, size_t nslot, const char *s, size_t v)
{
    size_t i = hash(s) & (nslot - 1);
    while (slot[i])
        i = (i + 1) & (nslot - 1);
    slot[i] = v;
}

/* The index of s in t, added (copied) if new. 0 or COLO_ENOMEM. Amortised O(length). */
static int intern(struct names *t, const char *s, size_t *id)
{
    if (2 * (t->n + 1) > t->nslot) {
        size_t ns = t->nslot ? 2 * t->nslot : 256, *slot = colo_calloc(ns, sizeof *slot);
        if (!slot) return COLO_ENOMEM;
        for (size_t j = 0; j < t->n; j++)
            place(slot, ns, t->s[j], j + 1);
        colo_free(t->slot);
        t->slot = slot;
        t->nslot = ns;
    }
    size_t i = hash(s) & (t->nslot - 1);
    for (; t->slot[i]; i = (i + 1) & (t->nslot - 1))
        if (!strcmp(t->s[t->slot[i] - 1], s)) {
            *id = t->slot[i] - 1;
            return 0;
        }
    if (colo_grow((void **)&t->s, &t->cap, t->n + 1, sizeof *t->s) ||
        !(t->s[t->n] = colo_strdup(s)))
        return COLO_ENOMEM;
    t->slot[i] = ++t->n;
    *id = t->n - 1;
    return 0;
}

/* ---- what is kept of the profile: GPU ops, launches, ranges (not the events) ---- */
struct gpu_op {
    double ts, dur, launch, bytes; /* us; dur and bytes -1 when absent, launch -1 unknown */
    long long corr;
    size_t name, index; /* name: NONE when absent; index: in traceEvents */
    unsigned grid[3], block[3];
    int line, kind, stream, registers, shared; /* kind: 0 kernel, 1 copy */
    bool has_corr, shape_ok;
};
struct launch {
    long long corr;
    double ts;
    size_t index;
};
struct range {
    double ts, dur;
    size_t name;
};

struct kineto {
    struct names names;
    struct gpu_op *ops;
    size_t n_ops, cap_ops;
    struct launch *launch;
    size_t n_launch, cap_launch;
    struct range *range;
    size_t n_range, cap_range;
    json_t *device; /* deviceProperties[0] */
    size_t no_ts;   /* 1 + index of the first kernel or copy without ts; 0 none */
    int no_ts_line, no_ts_kind;
    const char *path; /* for the errors on_event finds */
    colo_error_t *err;
};

/* The longest name kept: 64 KiB, twelve times the longest in HTA's A100 profiles (5,123 bytes,
 * a CUTLASS template); beyond it a "name" is not a kernel's or a range's. */
#define MAX_NAME 65536

static void kineto_fini(struct kineto *k)
{
    for (size_t i = 0; i < k->names.n; i++)
        colo_free(k->names.s[i]);
    colo_free(k->names.s);
    colo_free(k->names.slot);
    colo_free(k->ops);
    colo_free(k->launch);
    colo_free(k->range);
    json_decref(k->device);
}

static double num(json_t *o, const char *key, double dflt)
{
    json_t *v = json_object_get(o, key);
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

static int on_member(void *ctx, const char *key, json_t *value, int line)
{
    struct kineto *k = ctx;
    (void)line;
    if (!strcmp(key, "deviceProperties")) {
        json_decref(k->device);
        k->device = json_incref(json_array_get(value, 0));
    }
    return 0;
}

/* Keeps of one event what the trace needs: a launch's correlation and time, a range's name
 * and times, a kernel's or copy's fields. */
static int on_event(void *ctx, json_t *e, size_t i, int line)
{
    struct kineto *k = ctx;
    const char *cat = json_string_value(json_object_get(e, "cat"));
    const char *name = json_string_value(json_object_get(e, "name"));
    json_t *args = json_object_get(e, "args"), *corr = json_object_get(args, "correlation");
    if (!cat) return 0;
    if (name && json_string_length(json_object_get(e, "name")) > MAX_NAME)
        return colo_error_set(k->err, COLO_EPARSE, k->path, line, "name",
                              "traceEvents[%zu]: a name of %zu bytes; a kernel's or a range's is "
                              "at most %d",
                              i, json_string_length(json_object_get(e, "name")), MAX_NAME);
    if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")) {
        if (!json_is_integer(corr)) return 0;
        if (colo_grow((void **)&k->launch, &k->cap_launch, k->n_launch + 1, sizeof *k->launch))
            return COLO_ENOMEM;
        k->launch[k->n_launch++] = (struct launch){json_integer_value(corr), num(e, "ts", 0), i};
        return 0;
    }
    if (!strcmp(cat, "user_annotation")) {
        size_t id;
        if (!name) return 0;
        if (colo_grow((void **)&k->range, &k->cap_range, k->n_range + 1, sizeof *k->range) ||
            intern(&k->names, name, &id))
            return COLO_ENOMEM;
        k->range[k->n_range++] = (struct range){num(e, "ts", 0), num(e, "dur", 0), id};
        return 0;
    }
    int kind = !strcmp(cat, "kernel") ? 0 : !strcmp(cat, "gpu_memcpy") ? 1 : -1;
    if (kind < 0) return 0;
    double ts = num(e, "ts", -1);
    if (ts < 0) { /* an error, said once the file is known to be a profile of a known GPU */
        if (!k->no_ts) {
            k->no_ts = i + 1;
            k->no_ts_line = line;
            k->no_ts_kind = kind;
        }
        return 0;
    }
    if (colo_grow((void **)&k->ops, &k->cap_ops, k->n_ops + 1, sizeof *k->ops)) return COLO_ENOMEM;
    struct gpu_op *op = &k->ops[k->n_ops];
    *op = (struct gpu_op){.ts = ts,
                          .dur = num(e, "dur", -1),
                          .launch = -1,
                          .bytes = -1,
                          .name = NONE,
                          .index = i,
                          .line = line,
                          .kind = kind,
                          .has_corr = json_is_integer(corr),
                          .corr = json_integer_value(corr)};
    if (name && intern(&k->names, name, &op->name)) return COLO_ENOMEM;
    if (kind == 0) {
        double stream = num(args, "stream", 0);
        double regs = num(args, "registers per thread", -1);
        double smem = num(args, "shared memory", -1);
        op->stream = stream > -2147483648.0 && stream < 2147483647.0 ? (int)stream : 0;
        op->registers = regs >= 0 && regs <= 255 ? (int)regs : -1;
        op->shared = smem >= 0 && smem < 2147483647.0 ? (int)smem : -1;
        op->shape_ok = !dim3(json_object_get(args, "grid"), op->grid) &&
                       !dim3(json_object_get(args, "block"), op->block);
    } else {
        op->bytes = num(args, "bytes", -1);
    }
    k->n_ops++;
    return 0;
}

static int cmp_launch(const void *a, const void *b)
{
    const struct launch *x = a, *y = b;
    if (x->corr != y->corr) return x->corr < y->corr ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_op(const void *a, const void *b)
{
    const struct gpu_op *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Each op's launch time: the last CUDA runtime or driver call of its correlation id in the
 * file. O((launches + ops) log launches); the launches are then freed. */
static void resolve_launches(struct kineto *k)
{
    if (k->n_launch) qsort(k->launch, k->n_launch, sizeof *k->launch, cmp_launch);
    for (size_t i = 0; i < k->n_ops; i++) {
        size_t lo = 0, hi = k->n_launch; /* the first launch past corr */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (k->launch[mid].corr <= k->ops[i].corr)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (k->ops[i].has_corr && lo > 0 && k->launch[lo - 1].corr == k->ops[i].corr)
            k->ops[i].launch = k->launch[lo - 1].ts;
    }
    colo_free(k->launch);
    k->launch = NULL;
    k->n_launch = k->cap_launch = 0;
}

static double when(const struct gpu_op *op) /* the host's launch, else the GPU's start */
{
    return op->launch >= 0 ? op->launch : op->ts;
}

/* Kernels launched from lo to hi, among the sorted launch times w. O(log n). */
static size_t count_in(const double *w, size_t n, double lo, double hi)
{
    size_t a = 0, b = n, c = 0, d = n;
    while (a < b) { /* first >= lo */
        size_t m = a + (b - a) / 2;
        if (w[m] < lo)
            a = m + 1;
        else
            b = m;
    }
    while (c < d) { /* first > hi */
        size_t m = c + (d - c) / 2;
        if (w[m] <= hi)
            c = m + 1;
        else
            d = m;
    }
    return c > a ? c - a : 0;
}

/* A range as summarise_ranges sorts them: by name (its slot in the report), then start. */
struct span {
    size_t slot;
    double lo, hi;
};

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->slot != y->slot) return x->slot < y->slot ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_start(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* The range names into r->names, by first start, with their counts, durations and the kernels
 * launched inside any range of the name (a kernel inside two nested ones counted once).
 * O(ranges log ranges + kernels log kernels). */
static int summarise_ranges(const struct kineto *k, colo_kineto_report_t *r)
{
    size_t nr = k->n_range, nk = 0, *slot = colo_malloc((k->names.n + 1) * sizeof *slot);
    double *w = colo_malloc((k->n_ops + 1) * sizeof *w);
    struct span *sp = colo_malloc((nr + 1) * sizeof *sp), *first = NULL;
    colo_kineto_range_t *names = colo_calloc(nr + 1, sizeof *names);
    int rc = slot && w && sp && names ? 0 : COLO_ENOMEM;
    r->names = names;
    r->n_ranges = nr;
    for (size_t i = 0; !rc && i < k->n_ops; i++)
        if (k->ops[i].kind == 0) w[nk++] = when(&k->ops[i]);
    if (!rc && nk) qsort(w, nk, sizeof *w, cmp_double);
    for (size_t i = 0; !rc && i < k->names.n; i++)
        slot[i] = NONE;
    for (size_t i = 0; !rc && i < nr; i++) {
        const struct range *g = &k->range[i];
        if (slot[g->name] == NONE) {
            slot[g->name] = r->n_names;
            if (!(names[r->n_names++].name = colo_strdup(k->names.s[g->name]))) rc = COLO_ENOMEM;
        }
        names[slot[g->name]].count++;
        names[slot[g->name]].total_us += g->dur;
        sp[i] = (struct span){slot[g->name], g->ts, g->ts + g->dur};
    }
    if (!rc && nr) qsort(sp, nr, sizeof *sp, cmp_span);
    if (!rc && !(first = colo_malloc((r->n_names + 1) * sizeof *first))) rc = COLO_ENOMEM;
    for (size_t i = 0, j; !rc && i < nr; i = j) { /* one name's ranges, merged where they meet */
        double lo = sp[i].lo, hi = sp[i].hi;
        first[sp[i].slot] = (struct span){sp[i].slot, sp[i].lo, 0};
        for (j = i + 1; j <= nr; j++) {
            if (j < nr && sp[j].slot == sp[i].slot && sp[j].lo <= hi) {
                if (sp[j].hi > hi) hi = sp[j].hi;
                continue;
            }
            names[sp[i].slot].kernels += count_in(w, nk, lo, hi);
            if (j == nr || sp[j].slot != sp[i].slot) break;
            lo = sp[j].lo;
            hi = sp[j].hi;
        }
    }
    /* by first start: first[] sorted by start, its slots then say the order */
    colo_kineto_range_t *sorted = rc ? NULL : colo_malloc((r->n_names + 1) * sizeof *sorted);
    if (!rc && !sorted) rc = COLO_ENOMEM;
    for (size_t i = 0; !rc && i < r->n_names; i++)
        first[i] = (struct span){i, first[i].lo, 0};
    if (!rc && r->n_names) qsort(first, r->n_names, sizeof *first, cmp_start);
    for (size_t i = 0; !rc && i < r->n_names; i++)
        sorted[i] = names[first[i].slot];
    if (!rc) {
        r->names = sorted;
        colo_free(names);
    }
    colo_free(slot);
    colo_free(w);
    colo_free(sp);
    colo_free(first);
    return rc;
}

/* "'a' (1), 'b' (2), and 3 more" into buf: as many of names as fit in n bytes. */
static void list_names(char *buf, size_t n, const colo_kineto_range_t *names, size_t count)
{
    size_t used = 0, i = 0;
    buf[0] = '\0';
    for (; i < count; i++) {
        char one[128];
        const char *s = names[i].name;
        int w = snprintf(one, sizeof one, "%s'%.60s%s' (%zu)", i ? ", " : "", s,
                         strlen(s) > 60 ? "..." : "", names[i].count);
        if (w < 0 || used + (size_t)w + 24 >= n) break;
        memcpy(buf + used, one, (size_t)w + 1);
        used += (size_t)w;
    }
    if (i < count) snprintf(buf + used, n - used, ", and %zu more", count - i);
}

/* The window [*lo, *hi] of the o->occurrence-th range whose name contains o->annotation, in
 * file order, and in r what it encloses. Errors list the names the profile has. */
static int choose(const struct kineto *k, const char *path, const colo_kineto_opts_t *o,
                  colo_kineto_report_t *r, double *lo, double *hi, colo_error_t *err)
{
    int seen = 0, want = o->occurrence > 0 ? o->occurrence : 1;
    size_t chosen = NONE;
    for (size_t i = 0; i < k->n_range && seen < want; i++)
        if (strstr(k->names.s[k->range[i].name], o->annotation) && ++seen == want) chosen = i;
    char list[560];
    list_names(list, sizeof list, r->names, r->n_names);
    if (seen == 0 && r->n_names == 0)
        return colo_error_set(err, COLO_ENOENT, path, 0, "--annotation",
                              "no record_function range has a name containing '%s': the profile "
                              "has none (user_annotation events)",
                              o->annotation);
    if (seen == 0)
        return colo_error_set(err, COLO_ENOENT, path, 0, "--annotation",
                              "no record_function range has a name containing '%s'; the "
                              "profile has %zu name%s: %s (--list-annotations)",
                              o->annotation, r->n_names, r->n_names == 1 ? "" : "s", list);
    if (chosen == NONE)
        return colo_error_set(err, COLO_ENOENT, path, 0, "--occurrence",
                              "%d, but only %d record_function range%s a name containing '%s'",
                              want, seen, seen == 1 ? " has" : "s have", o->annotation);
    const struct range *c = &k->range[chosen];
    *lo = c->ts;
    *hi = c->ts + c->dur;
    size_t *at = colo_malloc(k->names.n * sizeof *at); /* name -> enclosed[] */
    r->enclosed = colo_calloc(r->n_names ? r->n_names : 1, sizeof *r->enclosed);
    if (!at || !r->enclosed) {
        colo_free(at);
        return COLO_ENOMEM;
    }
    for (size_t i = 0; i < k->names.n; i++)
        at[i] = NONE;
    int rc = 0;
    for (size_t i = 0; i < k->n_range && !rc; i++) {
        const struct range *g = &k->range[i];
        if (i == chosen || g->ts < *lo || g->ts + g->dur > *hi) continue;
        if (at[g->name] == NONE) {
            at[g->name] = r->n_enclosed;
            if (!(r->enclosed[r->n_enclosed++].name = colo_strdup(k->names.s[g->name])))
                rc = COLO_ENOMEM;
        }
        if (++r->enclosed[at[g->name]].count >= 2 || g->name == c->name)
            r->why |= COLO_KINETO_NESTED;
    }
    colo_free(at);
    return rc;
}

/* The ops launched from lo to hi, in GPU start order, into t: kernels and host-device copies
 * (device-to-device and peer ones counted in the provenance), each with the host gap since the
 * previous op's launch. Span and kernel time into r. */
static int convert(struct kineto *k, const char *path, double lo, double hi, bool annotated,
                   colo_trace_t *t, colo_kineto_report_t *r, colo_error_t *err)
{
    size_t ng = 0, skipped = 0;
    for (size_t i = 0; i < k->n_ops; i++)
        if (when(&k->ops[i]) >= lo && when(&k->ops[i]) <= hi) k->ops[ng++] = k->ops[i];
    if (ng) qsort(k->ops, ng, sizeof *k->ops, cmp_op);
    double prev_launch = -1, first = -1, last = -1;
    int rc = 0;
    for (size_t i = 0; i < ng && !rc; i++) {
        const struct gpu_op *g = &k->ops[i];
        const char *name = g->name == NONE ? NULL : k->names.s[g->name];
        colo_op_t op;
        memset(&op, 0, sizeof op);
        if (!name || g->dur < 0)
            return colo_error_set(err, COLO_EPARSE, path, g->line, "traceEvents",
                                  "a GPU event at ts %.0f has no name or no dur", g->ts);
        if (g->kind == 0) {
            if (!g->shape_ok)
                return colo_error_set(err, COLO_EPARSE, path, g->line, "traceEvents",
                                      "kernel '%.80s' at ts %.0f: grid or block missing or invalid",
                                      name, g->ts);
            op.type = COLO_OP_KERNEL;
            op.name = (char *)name;
            op.dram_bytes = op.l2_bytes = op.flops = -1;
            op.stream = g->stream;
            memcpy(op.grid, g->grid, sizeof op.grid);
            memcpy(op.block, g->block, sizeof op.block);
            op.registers = g->registers;
            op.shared_bytes = g->shared;
            op.duration = colo_time_from_ns(g->dur * 1e3);
            if (op.duration < 1) op.duration = 1;
            r->kernel_time += op.duration;
        } else {
            int h2d = strstr(name, "HtoD") != NULL, d2h = strstr(name, "DtoH") != NULL;
            if (!(h2d || d2h) || g->bytes < 1) { /* device-to-device and peer copies */
                skipped++;
                continue;
            }
            op.type = COLO_OP_COPY;
            op.dir = h2d ? COLO_COPY_H2D : COLO_COPY_D2H;
            op.bytes = (long long)g->bytes;
        }
        double l = when(g);
        op.gap =
            prev_launch < 0 || l < prev_launch ? 0 : colo_time_from_ns((l - prev_launch) * 1e3);
        prev_launch = l;
        if (first < 0) first = g->ts;
        if (g->ts + g->dur > last) last = g->ts + g->dur;
        if (colo_trace_append(t, &op)) rc = COLO_ENOMEM;
    }
    r->span_us = last - first;
    if (!rc && t->n_ops == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, 0, NULL, "no kernels%s",
                            annotated ? " inside that annotation" : "");
    if (!rc && skipped &&
        json_object_set_new(t->provenance, "skipped",
                            json_sprintf("%zu device-to-device or peer copies", skipped)))
        rc = COLO_ENOMEM;
    return rc;
}

/* Applies the gap policy to t's ops, with the gaps before and after into r, and records what
 * was done in the provenance. */
static int treat_gaps(colo_trace_t *t, const colo_gap_policy_t *p, colo_kineto_report_t *r)
{
    for (size_t i = 0; i < t->n_ops; i++) {
        colo_time_t *g = &t->ops[i].gap;
        r->measured_gaps += *g;
        if (*g > r->measured_largest) r->measured_largest = *g;
        if (p->mode == COLO_GAPS_DROP || (p->mode == COLO_GAPS_CAP && *g > p->cap))
            *g = p->mode == COLO_GAPS_DROP ? 0 : p->cap;
        r->gaps += *g;
        if (*g > r->largest) r->largest = *g;
    }
    if (r->gaps > r->kernel_time) r->why |= COLO_KINETO_GAPS;
    if (p->mode == COLO_GAPS_KEEP) return 0;
    char cap[64] = "";
    if (p->mode == COLO_GAPS_CAP) snprintf(cap, sizeof cap, "%g", (double)p->cap / 1e3);
    json_t *s = p->mode == COLO_GAPS_DROP
                    ? json_sprintf("removed (--gaps drop): the profile had %.3f ms between "
                                   "launches, the largest %.3f ms",
                                   COLO_TO_MS(r->measured_gaps), COLO_TO_MS(r->measured_largest))
                    : json_sprintf("each capped at %s us (--gaps cap:%s): %.3f ms here, from "
                                   "%.3f ms in the profile, the largest %.3f ms",
                                   cap, cap, COLO_TO_MS(r->gaps), COLO_TO_MS(r->measured_gaps),
                                   COLO_TO_MS(r->measured_largest));
    return json_object_set_new(t->provenance, "host_gaps", s) ? COLO_ENOMEM : 0;
}

int colo_gap_policy_parse(const char *text, colo_gap_policy_t *p)
{
    if (!strcmp(text, "keep") || !strcmp(text, "drop")) {
        *p = (colo_gap_policy_t){text[0] == 'k' ? COLO_GAPS_KEEP : COLO_GAPS_DROP, 0};
        return 0;
    }
    if (strncmp(text, "cap:", 4)) return COLO_EINVAL;
    char *end;
    double us = strtod(text + 4, &end);
    if (end == text + 4 || *end || !(us >= 0 && us <= 1e12)) return COLO_EINVAL;
    *p = (colo_gap_policy_t){COLO_GAPS_CAP, colo_time_from_ns(us * 1e3)};
    return 0;
}

void colo_kineto_report_fini(colo_kineto_report_t *r)
{
    for (size_t i = 0; i < r->n_names; i++)
        colo_free(r->names[i].name);
    for (size_t i = 0; i < r->n_enclosed; i++)
        colo_free(r->enclosed[i].name);
    colo_free(r->names);
    colo_free(r->enclosed);
    memset(r, 0, sizeof *r);
}

static int no_events(const char *path, colo_error_t *err)
{
    return colo_error_set(err, COLO_EPARSE, path, 0, "traceEvents",
                          "missing: not a Chrome trace from the PyTorch profiler");
}

/* Reads the profile at path into k and its ranges into r. */
static int read_profile(const char *path, struct kineto *k, colo_kineto_report_t *r,
                        colo_error_t *err)
{
    bool events;
    int rc = colo_chrome_read(path, on_member, on_event, k, &events, err);
    if (!rc && !events) rc = no_events(path, err);
    if (!rc) resolve_launches(k);
    if (!rc) rc = summarise_ranges(k, r);
    return rc;
}

int colo_kineto_annotations(const char *path, colo_kineto_report_t *report, colo_error_t *err)
{
    struct kineto k;
    memset(&k, 0, sizeof k);
    k.path = path, k.err = err;
    memset(report, 0, sizeof *report);
    int rc = read_profile(path, &k, report, err);
    kineto_fini(&k);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    return rc;
}

int colo_kineto_convert(const char *path, const colo_kineto_opts_t *o,
                        const colo_gap_policy_t *gaps, colo_trace_t **out,
                        colo_kineto_report_t *report, colo_error_t *err)
{
    static const colo_gap_policy_t keep = {COLO_GAPS_KEEP, 0};
    *out = NULL;
    struct kineto k;
    colo_kineto_report_t r;
    memset(&k, 0, sizeof k);
    k.path = path, k.err = err;
    memset(&r, 0, sizeof r);
    colo_trace_t *t = NULL;
    bool events;
    /* the order of the errors: the file as JSON, the GPU, the events, the annotation */
    int rc = colo_chrome_read(path, on_member, on_event, &k, &events, err);
    const char *gpu = o->gpu, *dname = json_string_value(json_object_get(k.device, "name"));
    if (!rc && !gpu)
        gpu = colo_gpu_guess(dname, num(k.device, "totalGlobalMem", 0) / 1073741824.0,
                             (int)num(k.device, "numSms", 0));
    if (!rc && !gpu)
        rc = colo_error_set(err, COLO_EINVAL, path, 0, "deviceProperties",
                            "cannot tell which GPU '%s' is: give --gpu", dname ? dname : "?");
    if (!rc && !events) rc = no_events(path, err);
    if (!rc) resolve_launches(&k);
    if (!rc) rc = summarise_ranges(&k, &r);
    double lo = -1e300, hi = 1e300;
    if (!rc && o->annotation) rc = choose(&k, path, o, &r, &lo, &hi, err);
    if (!rc && k.no_ts)
        rc = colo_error_set(err, COLO_EPARSE, path, k.no_ts_line, "traceEvents",
                            "event %zu (%s) has no ts", k.no_ts - 1,
                            k.no_ts_kind ? "gpu_memcpy" : "kernel");
    char stem[256];
    const char *base = strrchr(path, '/');
    snprintf(stem, sizeof stem, "%s", base ? base + 1 : path);
    char *dot = strchr(stem, '.');
    if (dot) *dot = '\0';
    if (!rc && !(t = colo_trace_new(o->model ? o->model : stem, o->batch > 0 ? o->batch : 1, gpu)))
        rc = COLO_ENOMEM;
    if (!rc) rc = convert(&k, path, lo, hi, o->annotation != NULL, t, &r, err);
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
    size_t nk = 0;
    for (size_t i = 0; t && i < t->n_ops; i++)
        nk += t->ops[i].type == COLO_OP_KERNEL;
    if (!rc) rc = treat_gaps(t, gaps ? gaps : &keep, &r);
    /* a profile whose one range holds every kernel is that range: choosing it changes nothing */
    if (!rc && !o->annotation && r.n_ranges && !(r.n_ranges == 1 && r.names[0].kernels == nk))
        r.why |= COLO_KINETO_WHOLE;
    kineto_fini(&k);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    if (report)
        *report = r;
    else
        colo_kineto_report_fini(&r);
    return colo_trace_finish(t, rc, out);
}

int colo_import_kineto(const char *path, const colo_kineto_opts_t *o, colo_trace_t **out,
                       colo_error_t *err)
{
    return colo_kineto_convert(path, o, NULL, out, NULL, err);
}
