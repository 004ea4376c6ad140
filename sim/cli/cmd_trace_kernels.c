/* cmd_trace_kernels.c: colosim trace FILE --against REAL --kernels: pairs each of REAL's kernels
 * with one of FILE's and prints predicted against measured per kernel, with a summary and the
 * kernels left unpaired (docs/traces.md, "Predicted against measured"). */
#include "cmd_trace_kernels.h"
#include "alloc.h"
#include "csv.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most kernel pairs an alignment compares (its table takes a quarter byte each: 64 MiB). */
#define ALIGN_MAX_CELLS ((size_t)1 << 28)
/* Scores of a pair in the alignment: one name, or one family (docs/traces.md). */
#define SCORE_NAME 4
#define SCORE_FAMILY 1
/* Columns of the text table's kernel name, and rows of each list. */
#define NAME_WIDTH 40
#define TOP_N 10

/* A kernel's short name: its name without return type, namespaces, template arguments and
 * parameters ("void at::native::vectorized_elementwise_kernel<4, ...>(...)" ->
 * "vectorized_elementwise_kernel"); the whole name where that leaves nothing. New string, or
 * NULL when out of memory. */
static char *short_name(const char *name)
{
    size_t n = strlen(name), k = 0;
    char *s = colo_malloc(n + 1);
    if (!s) return NULL;
    int depth = 0;
    for (const char *c = name; *c; c++) {
        if (*c == '<' || *c == '(') {
            depth++;
        } else if (*c == '>' || *c == ')') {
            if (depth > 0) depth--;
        } else if (depth == 0) {
            s[k++] = *c;
        }
    }
    while (k > 0 && s[k - 1] == ' ')
        k--;
    s[k] = 0;
    const char *start = strrchr(s, ' ');
    start = start ? start + 1 : s;
    for (const char *c = strstr(start, "::"); c; c = strstr(c + 1, "::"))
        start = c + 2;
    if (!*start) start = name; /* "operator()" and the like: the name as it is */
    memmove(s, start, strlen(start) + 1);
    if (start == name) {
        colo_free(s);
        return colo_strdup(name);
    }
    return s;
}

/* One trace's kernels as the alignment sees them. */
typedef struct side {
    size_t n;
    size_t *op;     /* index in the trace's ops */
    char **name;    /* short names */
    uint64_t *hash; /* of the short names */
    int *family;    /* -1: a cuDNN or cuBLAS kernel; else its math class as traced */
} side_t;

static void side_free(side_t *s)
{
    for (size_t i = 0; s->name && i < s->n; i++)
        colo_free(s->name[i]);
    colo_free(s->name);
    colo_free(s->hash);
    colo_free(s->family);
    /* s->op is handed to the pairing */
}

static int side_of(const colo_trace_t *t, side_t *s)
{
    memset(s, 0, sizeof *s);
    s->n = t->n_kernels;
    s->op = colo_calloc(s->n ? s->n : 1, sizeof *s->op);
    s->name = colo_calloc(s->n ? s->n : 1, sizeof *s->name);
    s->hash = colo_calloc(s->n ? s->n : 1, sizeof *s->hash);
    s->family = colo_calloc(s->n ? s->n : 1, sizeof *s->family);
    if (!s->op || !s->name || !s->hash || !s->family) return COLO_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < t->n_ops && k < s->n; i++) {
        const colo_op_t *op = &t->ops[i];
        if (op->type != COLO_OP_KERNEL) continue;
        s->op[k] = i;
        if (!(s->name[k] = short_name(op->name))) return COLO_ENOMEM;
        uint64_t h = 1469598103934665603ULL; /* FNV-1a */
        for (const char *c = s->name[k]; *c; c++)
            h = (h ^ (unsigned char)*c) * 1099511628211ULL;
        s->hash[k] = h;
        s->family[k] = op->cls.kind != COLO_KIND_OTHER ? -1 : (int)op->cls.math;
        k++;
    }
    return 0;
}

static bool same_name(const side_t *a, size_t i, const side_t *b, size_t j)
{
    return a->hash[i] == b->hash[j] && strcmp(a->name[i], b->name[j]) == 0;
}

/* The score of pairing a's kernel i with b's kernel j; 0: they may not pair. */
static int score(const side_t *a, size_t i, const side_t *b, size_t j)
{
    if (same_name(a, i, b, j)) return SCORE_NAME;
    return a->family[i] == b->family[j] ? SCORE_FAMILY : 0;
}

static void pair(colo_cli_pairing_t *p, const side_t *f, size_t i, const side_t *r, size_t j)
{
    p->partner[j] = i;
    p->file_paired[i] = true;
    p->paired++;
    p->renamed += !same_name(f, i, r, j);
}

/* The alignment of f's kernels [lo_f, hi_f) with r's [lo_r, hi_r) of greatest total score:
 * pairs keep trace order on both sides; ties go to the earliest pair. */
static int align(colo_cli_pairing_t *p, const side_t *f, size_t lo_f, size_t hi_f, const side_t *r,
                 size_t lo_r, size_t hi_r)
{
    size_t a = hi_f - lo_f, b = hi_r - lo_r;
    if (!a || !b) return 0;
    /* best[i][j]: the greatest score of f's kernels from i on with r's from j on, two rows;
     * dir: 0 pair i with j, 1 leave f's i, 2 leave r's j (2 bits a cell) */
    long *next = colo_calloc(b + 1, sizeof *next), *row = colo_calloc(b + 1, sizeof *row);
    unsigned char *dir = colo_calloc((a * b + 3) / 4, 1);
    if (!next || !row || !dir) {
        colo_free(next);
        colo_free(row);
        colo_free(dir);
        return COLO_ENOMEM;
    }
    for (size_t i = a; i-- > 0;) {
        row[b] = 0;
        for (size_t j = b; j-- > 0;) {
            int s = score(f, lo_f + i, r, lo_r + j);
            long best = next[j];
            unsigned d = 1;
            if (s && next[j + 1] + s >= best) {
                best = next[j + 1] + s;
                d = 0;
            }
            if (row[j + 1] > best) {
                best = row[j + 1];
                d = 2;
            }
            row[j] = best;
            size_t c = i * b + j;
            dir[c / 4] = (unsigned char)(dir[c / 4] | d << (2 * (c % 4)));
        }
        long *tmp = next;
        next = row;
        row = tmp;
    }
    for (size_t i = 0, j = 0; i < a && j < b;) {
        size_t c = i * b + j;
        unsigned d = ((unsigned)dir[c / 4] >> (2 * (c % 4))) & 3u;
        if (d == 0) pair(p, f, lo_f + i, r, lo_r + j);
        i += d != 2;
        j += d != 1;
    }
    colo_free(next);
    colo_free(row);
    colo_free(dir);
    return 0;
}

void colo_cli_pairing_free(colo_cli_pairing_t *p)
{
    colo_free(p->real_op);
    colo_free(p->file_op);
    colo_free(p->partner);
    colo_free(p->file_paired);
    memset(p, 0, sizeof *p);
}

int colo_cli_trace_pair(const colo_trace_t *file, const colo_trace_t *real, colo_cli_pairing_t *p,
                        colo_error_t *err)
{
    memset(p, 0, sizeof *p);
    if (strcmp(file->model, real->model) != 0)
        return colo_error_set(err, COLO_EINVAL, real->path, 0, NULL,
                              "cannot pair its kernels with those of %s: it is a trace of %s, "
                              "that one of %s (--kernels pairs two traces of one model)",
                              file->path, real->model, file->model);
    side_t f, r;
    int rc = side_of(file, &f);
    if (!rc)
        rc = side_of(real, &r);
    else
        memset(&r, 0, sizeof r);
    p->n_file = f.n;
    p->n_real = r.n;
    p->file_op = f.op;
    p->real_op = r.op;
    p->partner = colo_calloc(r.n ? r.n : 1, sizeof *p->partner);
    p->file_paired = colo_calloc(f.n ? f.n : 1, sizeof *p->file_paired);
    if (!rc && (!p->partner || !p->file_paired)) rc = COLO_ENOMEM;
    for (size_t j = 0; !rc && j < r.n; j++)
        p->partner[j] = COLO_CLI_UNPAIRED;
    if (!rc && f.n == r.n) {
        p->in_order = true;
        for (size_t j = 0; j < r.n; j++)
            pair(p, &f, j, &r, j);
    } else if (!rc) {
        /* kernels of one name at both ends pair as they are: an alignment would too */
        size_t lo = 0, hi = 0;
        while (lo < f.n && lo < r.n && same_name(&f, lo, &r, lo))
            lo++;
        while (hi < f.n - lo && hi < r.n - lo && same_name(&f, f.n - 1 - hi, &r, r.n - 1 - hi))
            hi++;
        size_t a = f.n - lo - hi, b = r.n - lo - hi;
        if (a && b > ALIGN_MAX_CELLS / a) {
            rc = colo_error_set(err, COLO_EINVAL, real->path, 0, NULL,
                                "cannot pair its kernels with those of %s: %zu and %zu kernels "
                                "differ in number, and are too many to align (%zu x %zu between "
                                "their common ends, at most %zu); two traces with as many "
                                "kernels pair in order",
                                file->path, r.n, f.n, b, a, ALIGN_MAX_CELLS);
        } else {
            for (size_t k = 0; k < lo; k++)
                pair(p, &f, k, &r, k);
            rc = align(p, &f, lo, f.n - hi, &r, lo, r.n - hi);
            for (size_t k = 0; !rc && k < hi; k++)
                pair(p, &f, f.n - 1 - k, &r, r.n - 1 - k);
        }
    }
    if (!rc && !p->paired)
        rc = colo_error_set(err, COLO_EINVAL, real->path, 0, NULL,
                            "cannot pair its kernels with those of %s: none of its %zu has a "
                            "name or family in common with one of their %zu",
                            file->path, r.n, f.n);
    if (rc == COLO_ENOMEM)
        colo_error_set(err, rc, real->path, 0, NULL, "out of memory pairing its kernels");
    side_free(&f);
    side_free(&r);
    if (rc) colo_cli_pairing_free(p);
    return rc;
}

/* A kernel's grid as text: "784", or "28x28x1" where y or z is more than 1. */
static void grid_text(const colo_op_t *op, char *buf, size_t n)
{
    if (op->grid[1] <= 1 && op->grid[2] <= 1)
        snprintf(buf, n, "%u", op->grid[0]);
    else
        snprintf(buf, n, "%ux%ux%u", op->grid[0], op->grid[1], op->grid[2]);
}

/* A kernel's short name in at most NAME_WIDTH columns: cut, with "...", when longer. */
static void name_text(const char *name, char *buf, size_t n)
{
    char *s = short_name(name);
    const char *v = s ? s : name;
    if (strlen(v) > NAME_WIDTH)
        snprintf(buf, n, "%.*s...", NAME_WIDTH - 3, v);
    else
        snprintf(buf, n, "%s", v);
    colo_free(s);
}

/* One paired kernel of REAL. */
typedef struct row {
    size_t j, i;       /* kernel of REAL, its partner in FILE */
    double meas, pred; /* ns */
} row_t;

static double err_pct(const row_t *w)
{
    return 100 * (w->pred - w->meas) / w->meas;
}

static int by_abs_error(const void *pa, const void *pb)
{
    const row_t *a = pa, *b = pb;
    double ea = fabs(a->pred - a->meas), eb = fabs(b->pred - b->meas);
    if (ea != eb) return ea < eb ? 1 : -1;
    return a->j < b->j ? -1 : a->j > b->j;
}

static void print_csv(const colo_trace_t *file, const colo_trace_t *real,
                      const colo_cli_pairing_t *p, const row_t *rows, size_t n,
                      const colo_math_t *pred_math, const colo_gpu_t *dst)
{
    printf("index,file_index,kernel,grid,class,predicted_class,measured_us,predicted_us,"
           "error_pct\n");
    for (size_t k = 0; k < n; k++) {
        const colo_op_t *op = &real->ops[p->real_op[rows[k].j]];
        char grid[64];
        grid_text(op, grid, sizeof grid);
        printf("%zu,%zu,", p->real_op[rows[k].j], p->file_op[rows[k].i]);
        colo_csv_write_field(stdout, op->name);
        printf(",%s,%s,%s,%.3f,%.3f,%.2f\n", grid,
               colo_math_name(colo_gpu_math_runs_as(dst, op->cls.math)),
               colo_math_name(pred_math[rows[k].i]), rows[k].meas / 1e3, rows[k].pred / 1e3,
               err_pct(&rows[k]));
    }
    size_t left_f = p->n_file - p->paired, left_r = p->n_real - p->paired;
    if (left_r)
        fprintf(stderr,
                "colosim: note: %zu of %s's %zu kernels have no partner in %s and are not "
                "in the table (--kernels lists them)\n",
                left_r, real->path, p->n_real, file->path);
    if (left_f)
        fprintf(stderr,
                "colosim: note: %zu of %s's %zu kernels have no partner in %s (--kernels "
                "lists them)\n",
                left_f, file->path, p->n_file, real->path);
}

/* The kernels of one side without a partner: at most TOP_N of them. */
static void print_unpaired(const colo_trace_t *t, const size_t *ops, size_t n,
                           const bool *paired_at, const double *ns, const char *what)
{
    size_t count = 0, shown = 0;
    double sum = 0;
    for (size_t k = 0; k < n; k++)
        if (!paired_at[k]) {
            count++;
            sum += ns[k];
        }
    if (!count) {
        printf("    %s: every kernel paired\n", t->path);
        return;
    }
    printf("    %s: %zu kernel%s unpaired, %.3f us %s:\n", t->path, count, count == 1 ? "" : "s",
           sum / 1e3, what);
    for (size_t k = 0; k < n && shown < TOP_N; k++) {
        if (paired_at[k]) continue;
        const colo_op_t *op = &t->ops[ops[k]];
        char name[NAME_WIDTH + 8], grid[64];
        name_text(op->name, name, sizeof name);
        grid_text(op, grid, sizeof grid);
        printf("      %6zu  %-*s %11s %12.3f\n", ops[k], NAME_WIDTH, name, grid, ns[k] / 1e3);
        shown++;
    }
    if (count > shown) printf("      ... and %zu more\n", count - shown);
}

static void print_summary(const colo_trace_t *file, const colo_trace_t *real,
                          const colo_cli_pairing_t *p, row_t *rows, size_t n, double *scratch,
                          const double *pred_ns, const double *meas_ns, const bool *real_paired)
{
    double meas = 0, pred = 0, abs_all = 0, all = (double)real->kernel_time;
    for (size_t k = 0; k < n; k++) {
        meas += rows[k].meas;
        pred += rows[k].pred;
        abs_all += fabs(rows[k].pred - rows[k].meas);
        scratch[k] = fabs(err_pct(&rows[k]));
    }
    printf("    %zu of %s's %zu kernels paired: measured %.3f us, predicted %.3f us "
           "(%+.1f %%)\n",
           p->paired, real->path, p->n_real, meas / 1e3, pred / 1e3, 100 * (pred - meas) / meas);
    printf("    all its kernels: measured %.3f us (%.3f us of it in kernels without a partner)\n",
           all / 1e3, (all - meas) / 1e3);
    gsl_sort(scratch, 1, n);
    double med = gsl_stats_median_from_sorted_data(scratch, 1, n),
           p90 = gsl_stats_quantile_from_sorted_data(scratch, 1, n, 0.9);
    for (size_t k = 0; k < n; k++)
        scratch[k] = err_pct(&rows[k]);
    gsl_sort(scratch, 1, n);
    printf("    per kernel: |error| median %.1f %%, p90 %.1f %%; signed median %+.1f %%\n", med,
           p90, gsl_stats_median_from_sorted_data(scratch, 1, n));
    if (p->renamed)
        printf("    %zu pair%s kernels of two names (%s)\n", p->renamed,
               p->renamed == 1 ? " holds" : "s hold",
               p->in_order ? "paired in order all the same"
                           : "one family: both cuDNN or cuBLAS, or both of one math class");
    /* the kernels that miss by the most microseconds */
    size_t top = n < TOP_N ? n : TOP_N;
    printf("    the %zu kernel%s with the most absolute error:\n", top, top == 1 ? "" : "s");
    printf("      %6s  %-*s %12s %12s %10s %6s\n", "#", NAME_WIDTH, "kernel", "measured us",
           "predicted us", "error us", "share");
    qsort(rows, n, sizeof *rows, by_abs_error);
    for (size_t k = 0; k < top; k++) {
        char name[NAME_WIDTH + 8];
        name_text(real->ops[p->real_op[rows[k].j]].name, name, sizeof name);
        double e = rows[k].pred - rows[k].meas;
        printf("      %6zu  %-*s %12.3f %12.3f %+10.3f %5.1f%%\n", p->real_op[rows[k].j],
               NAME_WIDTH, name, rows[k].meas / 1e3, rows[k].pred / 1e3, e / 1e3,
               abs_all > 0 ? 100 * fabs(e) / abs_all : 0.0);
    }
    /* what has no partner */
    print_unpaired(real, p->real_op, p->n_real, real_paired, meas_ns, "measured");
    print_unpaired(file, p->file_op, p->n_file, p->file_paired, pred_ns, "predicted on REAL's GPU");
}

int colo_cli_trace_kernels_print(const colo_trace_t *file, const colo_trace_t *real,
                                 const colo_cli_pairing_t *p, const double *pred_ns,
                                 const colo_math_t *pred_math, const colo_gpu_t *dst, bool csv)
{
    size_t nr = p->n_real ? p->n_real : 1;
    row_t *rows = colo_calloc(nr, sizeof *rows);
    double *scratch = colo_calloc(nr, sizeof *scratch), *meas_ns = colo_calloc(nr, sizeof *meas_ns);
    bool *real_paired = colo_calloc(nr, sizeof *real_paired);
    int rc = rows && scratch && meas_ns && real_paired ? 0 : COLO_ENOMEM;
    if (rc) goto out;
    for (size_t j = 0; j < p->n_real; j++) {
        meas_ns[j] = (double)real->ops[p->real_op[j]].duration;
        real_paired[j] = p->partner[j] != COLO_CLI_UNPAIRED;
    }
    size_t n = 0;
    for (size_t j = 0; j < p->n_real; j++)
        if (p->partner[j] != COLO_CLI_UNPAIRED)
            rows[n++] = (row_t){j, p->partner[j], meas_ns[j], pred_ns[p->partner[j]]};
    if (csv) {
        print_csv(file, real, p, rows, n, pred_math, dst);
    } else {
        if (p->in_order)
            printf("  per kernel: both have %zu kernels, paired in order\n", p->n_real);
        else
            printf("  per kernel: %zu kernels in REAL and %zu in FILE, paired by aligning their "
                   "names and families (docs/traces.md)\n",
                   p->n_real, p->n_file);
        printf("    %6s %6s  %-*s %11s %-7s %12s %12s %8s\n", "#", "file#", NAME_WIDTH, "kernel",
               "grid", "class", "measured us", "predicted us", "error");
        bool moved = false;
        for (size_t k = 0; k < n; k++) {
            const colo_op_t *op = &real->ops[p->real_op[rows[k].j]];
            char name[NAME_WIDTH + 8], grid[64], cls[16];
            name_text(op->name, name, sizeof name);
            grid_text(op, grid, sizeof grid);
            colo_math_t m = colo_gpu_math_runs_as(dst, op->cls.math);
            bool differs = m != pred_math[rows[k].i];
            moved |= differs;
            snprintf(cls, sizeof cls, "%s%s", colo_math_name(m), differs ? "*" : "");
            printf("    %6zu %6zu  %-*s %11s %-7s %12.3f %12.3f %+7.1f%%\n", p->real_op[rows[k].j],
                   p->file_op[rows[k].i], NAME_WIDTH, name, grid, cls, rows[k].meas / 1e3,
                   rows[k].pred / 1e3, err_pct(&rows[k]));
        }
        printf("    (#: the kernel's index in REAL's ops, file#: its partner's in FILE's; class: "
               "as it runs on %s%s)\n",
               dst->name, moved ? ", * where FILE's kernel was predicted as another" : "");
        print_summary(file, real, p, rows, n, scratch, pred_ns, meas_ns, real_paired);
    }
out:
    colo_free(rows);
    colo_free(scratch);
    colo_free(meas_ns);
    colo_free(real_paired);
    return rc;
}
