/* gpu_benches.c: model parameters from gpu-benches result files (docs/calibration.md,
 * "From published micro-benchmarks"). Each benchmark prints a space-aligned table; a reader per
 * kind turns it into rows of numbers, and a derivation per kind turns rows into values, each
 * with the file lines it used. */
#include "gpu_benches.h"
#include "alloc.h"
#include "calibration.h"
#include "json_lines.h"
#include "version.h"

#include <ctype.h>
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const kind_dirs[] = {
#define COLO__X(id, dir) dir,
    COLO_GB_KINDS(COLO__X)
#undef COLO__X
};

const char *colo_gb_kind_dir(colo_gb_kind_t k)
{
    return k < COLO_GB_KIND_N ? kind_dirs[k] : "?";
}

/* ---- which files describe which GPU ------------------------------------------------------ */

/* The result files upstream holds for each GPU colosim describes. A file of another board with
 * the same chip (the A100s share GA100, its clocks, SMs and L2) stands in where the GPU has none
 * of its own, and says so. */
struct stem {
    const char *stem, *note;
};
#define GA100_80 "the A100-80GB's file: same GA100 chip, SMs, clocks and L2 as the 40 GB board"
#define GA100_40 "the A100-40GB's file: same GA100 chip, SMs and clocks as the 80 GB board"
#define GA100_ANY "an A100 (the file does not say which memory size): same GA100 SMs and L1"
#define GV100_PCIE                                                                                 \
    "a V100 PCIe (its clock samples are 1380 MHz, the PCIe board's boost; the SXM2's is "       \
    "1530): same GV100 chip, 80 SMs, 6 MB L2 and 900 GB/s HBM2; clock-bound rates run ~10 % "  \
    "lower than on the SXM2"
static const struct {
    const char *gpu;
    struct stem s[COLO_GB_KIND_N]; /* in COLO_GB_KINDS order; NULL stem: no such file */
} known[] = {
    {"v100-sxm2", {{"v100", GV100_PCIE}, {NULL, NULL}, {"v100", GV100_PCIE},
                   {"v100", GV100_PCIE}, {"v100", GV100_PCIE}, {NULL, NULL}, {NULL, NULL}}},
    {"a100-40gb", {{"a100_40", NULL}, {"a100_80", GA100_80}, {"a100_80", GA100_80},
                   {"a100_40", NULL}, {"a100_80", GA100_80}, {"alex_a100_40", NULL},
                   {"a100", GA100_ANY}}},
    {"a100-80gb", {{"a100_80", NULL}, {"a100_80", NULL}, {"a100_80", NULL}, {"a100_80", NULL},
                   {"a100_80", NULL}, {"alex_a100_40", GA100_40}, {"a100", GA100_ANY}}},
    {"h100-pcie", {{"h100_pcie", NULL}, {"h100_pcie", NULL}, {"h100_pcie", NULL},
                   {"h100_pcie", NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}}},
    {"h200", {{"h200", NULL}, {"h200", NULL}, {NULL, NULL}, {NULL, NULL}, {"h200", NULL},
              {"h200", NULL}, {"h200", NULL}}},
};

/* ---- reading a result file ----------------------------------------------------------------- */

#define MAX_NUMS 16

struct row {
    int line;
    int n;              /* numbers */
    double v[MAX_NUMS]; /* in the order printed, units stripped */
    char w[2][16];      /* leading words (gpu-strides: type and pattern) */
};

struct table {
    char path[256];  /* as recorded: "gpu-stream/a100_40.txt" */
    char full[4096]; /* as opened, for messages */
    const char *note;
    size_t n;
    struct row *rows;
};

static void table_free(struct table *t)
{
    colo_free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

/* Unit words printed as tokens of their own, and unit suffixes glued to a number. */
static int unit_word(const char *s)
{
    static const char *const words[] = {"kB",  "ms",   "%",   "GB/s", "GB/s:", "|",  "blocks",
                                        "its", "Fl/B", "Mhz", "MHz",  "W",     "°C", "GF/s", NULL};
    for (int i = 0; words[i]; i++)
        if (strcmp(s, words[i]) == 0) return 1;
    return 0;
}

static int unit_suffix(const char *s)
{
    return !*s || unit_word(s);
}

enum reader {
    R_HEADER_BLOCKSIZE, /* gpu-stream: a "blockSize ..." header, rows of 9 numbers */
    R_HEADER_DATASET,   /* gpu-cache, gpu-l2-cache: a "data set ..." header */
    R_CLOCK,            /* gpu-latency, gpu-strides: a "clock: ..." line first */
    R_PLAIN,            /* gpu-small-kernels: rows only */
    R_BUILD_LOG,        /* gpu-roofline: build-log lines may come before the rows */
};

static int row_error(colo_error_t *err, const struct table *t, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int row_error(colo_error_t *err, const struct table *t, int line, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return colo_error_set(err, COLO_EPARSE, t->full, line, NULL, "%s", text);
}

/* Splits one line into numbers (units dropped) and at most `words` leading words. */
static int split(char *s, struct row *r, int words, const struct table *t, int line,
                 colo_error_t *err)
{
    r->line = line;
    r->n = 0;
    int nw = 0;
    char *save = NULL;
    for (char *tok = strtok_r(s, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
        if (unit_word(tok)) continue;
        char *end;
        errno = 0;
        double x = strtod(tok, &end);
        int numeric = end != tok && (isdigit((unsigned char)tok[0]) || tok[0] == '-' ||
                                     tok[0] == '.' || tok[0] == '+');
        if (numeric && unit_suffix(end) && isfinite(x) && errno != ERANGE) {
            if (r->n == MAX_NUMS)
                return row_error(err, t, line, "more than %d values in a row", MAX_NUMS);
            r->v[r->n++] = x;
        } else if (r->n == 0 && nw < words && strlen(tok) < sizeof r->w[0]) {
            snprintf(r->w[nw++], sizeof r->w[0], "%s", tok);
        } else {
            return row_error(err, t, line, "'%.40s' is not a number", tok);
        }
    }
    if (nw < words && r->n > 0)
        return row_error(err, t, line, "expected %d word%s before the numbers", words,
                         words == 1 ? "" : "s");
    return 0;
}

static int blank(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return !*s;
}

/* The whole file as a NUL-terminated string (colo_free). */
static int read_text(const char *path, char **text, size_t *len, colo_error_t *err)
{
    char *buf = NULL;
    int rc = colo_read_file(path, &buf, len, err);
    if (rc) return rc;
    char *t = colo_realloc(buf, *len + 1);
    if (!t) {
        colo_free(buf);
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    t[*len] = '\0';
    *text = t;
    return 0;
}

/* Reads full into t->rows: each data row with at least min_n numbers (and at most max_n). */
static int read_table(struct table *t, enum reader kind, int words, int min_n, int max_n,
                      colo_error_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_text(t->full, &buf, &len, err);
    if (rc) return rc;
    size_t cap = 64;
    t->rows = colo_calloc(cap, sizeof *t->rows);
    if (!t->rows) rc = COLO_ENOMEM;
    int line = 0, seen_header = 0, in_rows = 0;
    if (memchr(buf, '\0', len)) {
        const char *nul = memchr(buf, '\0', len);
        for (const char *p = buf; p < nul; p++)
            line += *p == '\n';
        rc = row_error(err, t, line + 1, "not a text file (a NUL byte)");
        line = 0;
    }
    for (char *s = buf; !rc && s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl) *nl = '\0';
        line++;
        char *text = s;
        s = nl ? nl + 1 : NULL;
        if (blank(text)) continue;
        const char *lead = text;
        while (isspace((unsigned char)*lead))
            lead++;
        if (!in_rows && kind == R_HEADER_BLOCKSIZE && !seen_header) {
            if (strncmp(lead, "blockSize", 9) != 0) {
                rc = row_error(err, t, line, "expected the header 'blockSize threads %%occ | ...': "
                                             "not a gpu-stream result");
                break;
            }
            seen_header = 1;
            continue;
        }
        if (!in_rows && kind == R_HEADER_DATASET && !seen_header) {
            if (strncmp(lead, "data set", 8) != 0) {
                rc = row_error(err, t, line,
                               "expected the header 'data set  exec time ...': not a %s result",
                               t->path);
                break;
            }
            seen_header = 1;
            continue;
        }
        if (kind == R_CLOCK && !in_rows && strncmp(lead, "clock:", 6) == 0) continue;
        if (kind == R_BUILD_LOG && !in_rows) {
            /* build output before the first row: "-- ..." lines and lone numbers */
            const char *p = lead;
            while (isdigit((unsigned char)*p))
                p++;
            if (strncmp(lead, "--", 2) == 0 || (p > lead && blank(p))) continue;
        }
        if (t->n == cap) {
            struct row *grown = colo_realloc(t->rows, 2 * cap * sizeof *grown);
            if (!grown) {
                rc = COLO_ENOMEM;
                break;
            }
            t->rows = grown;
            cap *= 2;
        }
        struct row *r = &t->rows[t->n];
        memset(r, 0, sizeof *r);
        if ((rc = split(text, r, words, t, line, err))) break;
        if (r->n < min_n || r->n > max_n) {
            if (min_n == max_n)
                rc = row_error(err, t, line, "expected %d values, found %d", min_n, r->n);
            else
                rc = row_error(err, t, line, "expected %d to %d values, found %d", min_n, max_n,
                               r->n);
            break;
        }
        in_rows = 1;
        t->n++;
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, t->full, 0, NULL, "out of memory");
    if (!rc && t->n == 0) rc = row_error(err, t, line, "no result rows");
    colo_free(buf);
    if (rc) table_free(t);
    return rc;
}

/* ---- values and their sources ---------------------------------------------------------- */

struct ctx {
    const colo_gb_options_t *o;
    const colo_gpu_t *gpu;
    json_t *params, *meas;
    colo_error_t *err;
    int have_l2_file; /* gpu-l2-cache gave l2.bandwidth_gbps */
};

/* "2-6, 9, 33": the lines of a row set (in increasing order). */
static void lines_text(const int *lines, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size;) {
        size_t j = i;
        while (j + 1 < n && lines[j + 1] == lines[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, size - used, "%s%d-%d", used ? ", " : "", lines[i],
                                 lines[j])
                      : snprintf(buf + used, size - used, "%s%d", used ? ", " : "", lines[i]);
        if (w < 0) break;
        used += (size_t)w;
        i = j + 1;
    }
}

static const char *commit_of(const struct ctx *c, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < c->o->n_file_commits; i++) {
        const char *fc = c->o->file_commits[i];
        if (strncmp(fc, path, n) == 0 && fc[n] == '=') return fc + n + 1;
    }
    return c->o->commit;
}

static json_t *source(const struct ctx *c, const struct table *t, const int *lines, size_t n)
{
    char text[1024];
    lines_text(lines, n, text, sizeof text);
    const char *commit = commit_of(c, t->path);
    json_t *s = json_pack("{s:s, s:s, s:s}", "repository",
                          c->o->repository ? c->o->repository : "te42kyfo/gpu-benches", "path",
                          t->path, "lines", text);
    if (s && commit) json_object_set_new(s, "commit", json_string(commit));
    if (s && t->note) json_object_set_new(s, "note", json_string(t->note));
    return s;
}

static int nomem(const struct ctx *c)
{
    return colo_error_set(c->err, COLO_ENOMEM, c->o->dir, 0, NULL, "out of memory");
}

/* A derivation's scratch: the rows it selects (n_idx) and the lines it cites (n_lines), both
 * zeroed; on failure neither (NULL) and the error set. */
static int scratch(const struct ctx *c, size_t n_idx, size_t n_lines, int **idx, int **lines)
{
    *idx = colo_calloc(n_idx, sizeof **idx);
    *lines = colo_calloc(n_lines, sizeof **lines);
    if (*idx && *lines) return 0;
    colo_free(*idx);
    colo_free(*lines);
    *idx = *lines = NULL;
    return nomem(c);
}

/* A model parameter: value, unit, the datasheet value it replaces, method and source. */
static int param(struct ctx *c, colo_cal_param_t p, double value, const char *method,
                 const struct table *t, const int *lines, size_t n)
{
    /* what the calibration loader would refuse, said here at the rows it came from */
    double sheet = colo_cal_get(c->gpu, p);
    if (!(value > 0) || !isfinite(value))
        return row_error(c->err, t, lines[0], "%s comes out as %g: not a measurement",
                         colo_cal_key(p), value);
    if (strcmp(colo_cal_unit(p), "us") != 0 && sheet > 0 &&
        (value > 10 * sheet || value < sheet / 10))
        return row_error(c->err, t, lines[0],
                         "%s comes out as %g %s, more than 10 times off %s's %g: results of "
                         "another GPU, or broken ones",
                         colo_cal_key(p), value, colo_cal_unit(p), c->gpu->name, sheet);
    if (p == COLO_CAL_DRAM && value > c->gpu->memory.peak_gbps)
        return row_error(c->err, t, lines[0],
                         "%s comes out as %g GB/s, above %s's peak (%g GB/s): results of "
                         "another GPU, or broken ones",
                         colo_cal_key(p), value, c->gpu->name, c->gpu->memory.peak_gbps);
    json_t *s = source(c, t, lines, n);
    json_t *e = s ? json_pack("{s:s, s:f, s:s, s:f, s:s, s:o}", "key", colo_cal_key(p), "value",
                              value, "unit", colo_cal_unit(p), "datasheet",
                              colo_cal_get(c->gpu, p), "method", method, "source", s)
                  : NULL;
    if (!e || json_array_append_new(c->params, e)) return nomem(c);
    return 0;
}

/* A value the model does not use, kept with its source: measurements.NAME. */
static int measurement(struct ctx *c, const char *name, json_t *values, const char *method,
                       const struct table *t, const int *lines, size_t n)
{
    json_t *s = source(c, t, lines, n);
    if (!values || !s) {
        json_decref(values);
        json_decref(s);
        return nomem(c);
    }
    json_object_set_new(values, "method", json_string(method));
    json_object_set_new(values, "source", s);
    if (json_object_set_new(c->meas, name, values)) return nomem(c);
    return 0;
}

/* Median of v[idx[k]] (k < n); NAN when n is 0. */
static double median_of(const struct table *t, int col, const int *idx, size_t n)
{
    if (n == 0) return NAN;
    double *x = colo_calloc(n, sizeof *x);
    if (!x) return NAN;
    for (size_t k = 0; k < n; k++)
        x[k] = t->rows[idx[k]].v[col];
    gsl_sort(x, 1, n);
    double m = gsl_stats_median_from_sorted_data(x, 1, n);
    colo_free(x);
    return m;
}

/* Row indices -> their file lines, in place-safe scratch. */
static void to_lines(const struct table *t, const int *idx, size_t n, int *lines)
{
    for (size_t k = 0; k < n; k++)
        lines[k] = t->rows[idx[k]].line;
}

/* ---- the derivations ------------------------------------------------------------------- */

/* gpu-stream: blockSize, threads (SMs x blockSize), occupancy %, then GB/s of init, read,
 * scale, triad and two stencils. Two blocks per SM; one 8-byte element per thread. */
static int from_stream(struct ctx *c, const struct table *t)
{
    enum { BS, THREADS, OCC, INIT, READ, SCALE, TRIAD };
    int sms = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        if (!(r->v[BS] >= 1 && r->v[BS] <= 1024) || r->v[BS] != floor(r->v[BS]))
            return row_error(c->err, t, r->line, "blockSize %g is not 1 to 1024 threads",
                             r->v[BS]);
        double q = r->v[THREADS] / r->v[BS];
        if (!(q >= 1 && q <= 100000) || q != floor(q) || (sms && (int)q != sms))
            return row_error(c->err, t, r->line,
                             "threads %.0f is not the SM count times blockSize %.0f as in the "
                             "rows before",
                             r->v[THREADS], r->v[BS]);
        sms = (int)q;
        if (r->v[OCC] <= 0 || r->v[OCC] > 100)
            return row_error(c->err, t, r->line, "occupancy %g %% is not in (0, 100]", r->v[OCC]);
        for (int k = INIT; k < r->n; k++)
            if (r->v[k] <= 0)
                return row_error(c->err, t, r->line, "bandwidth %g GB/s must be positive",
                                 r->v[k]);
    }
    if (sms != c->gpu->sm.count)
        return row_error(c->err, t, t->rows[0].line,
                         "measured on a GPU with %d SMs (threads / blockSize); %s has %d", sms,
                         c->gpu->name, c->gpu->sm.count);
    /* Achievable: the best of the kernels that read and write (scale, triad), as STREAM reports. */
    size_t best = 0;
    int best_col = SCALE;
    double peak_scale = 0;
    for (size_t i = 0; i < t->n; i++) {
        for (int k = SCALE; k <= TRIAD; k++)
            if (t->rows[i].v[k] > t->rows[best].v[best_col]) {
                best = i;
                best_col = k;
            }
        if (t->rows[i].v[SCALE] > peak_scale) peak_scale = t->rows[i].v[SCALE];
    }
    int line = t->rows[best].line;
    char method[512];
    snprintf(method, sizeof method,
             "gpu-stream: the highest bandwidth of the kernels that read and write (scale, "
             "triad) at any occupancy, here %s at %.1f %% occupancy",
             best_col == SCALE ? "scale" : "triad", t->rows[best].v[OCC]);
    int rc = param(c, COLO_CAL_DRAM, t->rows[best].v[best_col], method, t, &line, 1);
    /* Per SM: below half the peak DRAM is not the limit and bandwidth grows with the threads in
     * flight; a line through the origin, extended to full occupancy, is what one SM moves. */
    int *idx, *lines;
    int src = scratch(c, t->n, t->n, &idx, &lines);
    size_t m = 0;
    double sxy = 0, sxx = 0;
    if (!rc) rc = src;
    for (size_t i = 0; !rc && i < t->n; i++)
        if (t->rows[i].v[SCALE] < 0.5 * peak_scale) {
            /* threads resident per SM: two blocks (the %occ column is rounded, 3.125 -> "3") */
            double x = 2 * t->rows[i].v[BS];
            sxy += x * t->rows[i].v[SCALE];
            sxx += x * x;
            idx[m++] = (int)i;
        }
    if (!rc && m < 3)
        rc = row_error(c->err, t, t->rows[0].line,
                       "only %zu rows below half the peak scale bandwidth: the per-SM rate needs "
                       "at least 3",
                       m);
    if (!rc) {
        to_lines(t, idx, m, lines);
        rc = param(c, COLO_CAL_DRAM_PER_SM, sxy / sxx * c->gpu->sm.max_threads / sms,
                   "gpu-stream scale (one read, one write per thread): least-squares line "
                   "through the origin of bandwidth against the threads resident per SM (two "
                   "blocks), over the rows below half its peak, at the SM's full thread count, "
                   "divided by the SMs",
                   t, lines, m);
    }
    if (!rc) {
        const struct row *last = &t->rows[t->n - 1];
        rc = measurement(c, "dram_stream",
                         json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "sm_count", sms,
                                   "occupancy_percent", last->v[OCC], "init_gbps", last->v[INIT],
                                   "read_gbps", last->v[READ], "scale_gbps", last->v[SCALE],
                                   "triad_gbps", last->v[TRIAD]),
                         "gpu-stream at the highest occupancy (init stores only, read loads only)",
                         t, &last->line, 1);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* Rows (indices) whose column col lies in [lo, hi]. */
static size_t rows_in(const struct table *t, int col, double lo, double hi, int *idx)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[col] >= lo && t->rows[i].v[col] <= hi) idx[m++] = (int)i;
    return m;
}

/* gpu-l2-cache: per-block kB, footprint kB, time, spread, GB/s (counters after). */
static int from_l2(struct ctx *c, const struct table *t)
{
    enum { BLOCK_KB, FOOT_KB, MS, SPREAD, BW };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++) {
        if (t->rows[i].v[BW] <= 0 || t->rows[i].v[FOOT_KB] <= 0)
            return row_error(c->err, t, t->rows[i].line,
                             "footprint and bandwidth must be positive");
        if (i && t->rows[i].v[FOOT_KB] <= t->rows[i - 1].v[FOOT_KB])
            return row_error(c->err, t, t->rows[i].line,
                             "footprints must grow from row to row (%.0f kB after %.0f kB)",
                             t->rows[i].v[FOOT_KB], t->rows[i - 1].v[FOOT_KB]);
    }
    int *idx, *lines;
    if (scratch(c, t->n, t->n, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t np = rows_in(t, FOOT_KB, 0, l2 / 2 / 1024, idx);
    double plateau = median_of(t, BW, idx, np);
    char method[512];
    if (np < 3)
        rc = row_error(c->err, t, t->rows[0].line,
                       "%zu rows with a footprint within half the L2 (%.0f kB): need 3", np,
                       l2 / 2 / 1024);
    if (!rc) {
        to_lines(t, idx, np, lines);
        snprintf(method, sizeof method,
                 "gpu-l2-cache: median bandwidth of the footprints within half the datasheet L2 "
                 "(%.1f MiB)",
                 l2 / 2 / 1048576);
        rc = param(c, COLO_CAL_L2, plateau, method, t, lines, np);
        c->have_l2_file = 1;
    }
    size_t last_plateau = np ? (size_t)idx[np - 1] : 0;
    size_t nd = rc ? 0 : rows_in(t, FOOT_KB, 4 * l2 / 1024, INFINITY, idx);
    double dram = median_of(t, BW, idx, nd);
    if (!rc && nd < 3)
        rc = row_error(c->err, t, t->rows[t->n - 1].line,
                       "%zu rows with a footprint of 4 L2s or more (%.0f kB): need 3", nd,
                       4 * l2 / 1024);
    if (!rc) {
        to_lines(t, idx, nd, lines);
        rc = measurement(c, "dram_read_many_loads", json_pack("{s:f}", "gbps", dram),
                         "gpu-l2-cache: median bandwidth of the footprints of 4 L2s or more "
                         "(32 loads in flight per thread)",
                         t, lines, nd);
    }
    /* The knee: where bandwidth has fallen half way from the L2 plateau to DRAM's. */
    double mid = (plateau + dram) / 2, knee = NAN;
    size_t at = 0;
    for (size_t i = last_plateau + 1; !rc && i < t->n && isnan(knee); i++)
        if (t->rows[i].v[BW] < mid) {
            const struct row *a = &t->rows[i - 1], *b = &t->rows[i];
            double f = a->v[BW] > b->v[BW] ? (a->v[BW] - mid) / (a->v[BW] - b->v[BW]) : 0;
            if (f < 0) f = 0;
            knee = a->v[FOOT_KB] + f * (b->v[FOOT_KB] - a->v[FOOT_KB]);
            at = i;
        }
    if (!rc && isnan(knee))
        rc = row_error(c->err, t, t->rows[t->n - 1].line,
                       "bandwidth never falls half way from the L2 plateau (%.0f GB/s) to DRAM's "
                       "(%.0f GB/s)",
                       plateau, dram);
    if (!rc) {
        int two[2] = {t->rows[at - 1].line, t->rows[at].line};
        snprintf(method, sizeof method,
                 "gpu-l2-cache: the footprint at which bandwidth has fallen half way from the L2 "
                 "plateau (%.0f GB/s) to DRAM's (%.0f GB/s), interpolated between the rows",
                 plateau, dram);
        rc = param(c, COLO_CAL_L2_CAPACITY, knee * 1024 / 1048576, method, t, two, 2);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-cache: buffer kB, time, spread, GB/s (counters after); one 256-thread block per SM. */
static int from_cache(struct ctx *c, const struct table *t)
{
    enum { KB, MS, SPREAD, BW };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[BW] <= 0 || t->rows[i].v[KB] <= 0)
            return row_error(c->err, t, t->rows[i].line, "size and bandwidth must be positive");
    int *idx, *lines;
    if (scratch(c, t->n, t->n, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t n1 = rows_in(t, KB, 0, 64, idx);
    double l1 = median_of(t, BW, idx, n1);
    if (n1 < 3)
        rc = row_error(c->err, t, t->rows[0].line, "%zu rows of at most 64 kB: need 3", n1);
    double knee = 0;
    for (size_t i = 0; !rc && i < t->n && knee == 0; i++)
        if (t->rows[i].v[KB] > 64 && t->rows[i].v[BW] < l1 / 2) knee = t->rows[i].v[KB];
    if (!rc && knee == 0)
        rc = row_error(c->err, t, t->rows[t->n - 1].line,
                       "bandwidth never falls below half the L1 plateau (%.0f GB/s)", l1);
    if (!rc) {
        to_lines(t, idx, n1, lines);
        rc = measurement(c, "l1", json_pack("{s:f, s:f}", "gbps", l1, "falls_by_kb", knee),
                         "gpu-cache: median bandwidth of buffers up to 64 kB (all SMs, one "
                         "256-thread block each, re-reading one buffer), and the first buffer "
                         "at which it has fallen below half",
                         t, lines, n1);
    }
    size_t n2 = rc ? 0 : rows_in(t, KB, 2 * knee, l2 / 2 / 1024, idx);
    if (!rc && n2 < 3)
        rc = row_error(c->err, t, t->rows[0].line,
                       "%zu rows between twice the L1 (%.0f kB) and half the L2: need 3", n2,
                       2 * knee);
    if (!rc) {
        double l2bw = median_of(t, BW, idx, n2);
        to_lines(t, idx, n2, lines);
        const char *how = "gpu-cache: median bandwidth of the buffers between twice the size at "
                          "which L1 gives out and half the datasheet L2 (one 256-thread block "
                          "per SM)";
        if (c->have_l2_file)
            rc = measurement(c, "l2_one_block_per_sm", json_pack("{s:f}", "gbps", l2bw), how, t,
                             lines, n2);
        else
            rc = param(c, COLO_CAL_L2, l2bw, how, t, lines, n2);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-latency: loads, clock MHz, buffer kB, time ms, cycles per load. */
static int from_latency(struct ctx *c, const struct table *t)
{
    enum { LOADS, MHZ, KB, MS, CYCLES };
    const double l2 = (double)c->gpu->l2.bytes;
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].v[MHZ] <= 0 || t->rows[i].v[CYCLES] <= 0 || t->rows[i].v[KB] <= 0)
            return row_error(c->err, t, t->rows[i].line,
                             "clock, buffer and cycles must be positive");
    static const struct {
        const char *name;
        double lo_kb, hi_l2; /* buffer in [lo_kb, hi_l2 x L2] (hi_l2 < 0: no upper bound) */
    } levels[] = {{"l1", 0, 0}, {"l2", 1024, 0.25}, {"dram", 0, -1}};
    int *idx, *lines;
    if (scratch(c, t->n, 3 * t->n, &idx, &lines)) return COLO_ENOMEM;
    json_t *v = json_object();
    if (!v) {
        colo_free(idx);
        colo_free(lines);
        return nomem(c);
    }
    int rc = 0;
    size_t nl = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        double lo = k == 0 ? 0 : k == 1 ? 1024 : 1.5 * l2 / 1024;
        double hi = k == 0 ? 16 : k == 1 ? 0.25 * l2 / 1024 : INFINITY;
        size_t m = rows_in(t, KB, lo, hi, idx);
        if (m < 3) {
            rc = row_error(c->err, t, t->rows[t->n - 1].line,
                           "%zu rows with buffers of %.0f to %.0f kB (%s): need 3", m, lo, hi,
                           levels[k].name);
            break;
        }
        double cyc = median_of(t, CYCLES, idx, m), mhz = median_of(t, MHZ, idx, m);
        char key[32];
        snprintf(key, sizeof key, "%s_cycles", levels[k].name);
        json_object_set_new(v, key, json_real(cyc));
        snprintf(key, sizeof key, "%s_ns", levels[k].name);
        json_object_set_new(v, key, json_real(cyc / mhz * 1e3));
        to_lines(t, idx, m, lines + nl);
        nl += m;
    }
    if (!rc) {
        gsl_sort_int(lines, 1, nl);
        rc = measurement(c, "latency", v,
                         "gpu-latency: median cycles per dependent load of buffers up to 16 kB "
                         "(L1), from 1 MiB to a quarter of the datasheet L2 (L2), and of 1.5 L2s "
                         "or more (DRAM); ns at the clock of those rows",
                         t, lines, nl);
    } else {
        json_decref(v);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-small-kernels: n, traffic kB, then GB/s per block size (1-D); or the edge d of a d x d
 * grid, then GB/s per block shape (2-D, traffic 16 (d-2)^2 B). Per launch: bytes / best GB/s. */
static int launch_us(struct ctx *c, const struct table *t, double *us, int *lines, size_t *nl)
{
    double first = 0;
    double *times = colo_calloc(t->n, sizeof *times);
    if (!times) return nomem(c);
    size_t m = 0;
    int rc = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const struct row *r = &t->rows[i];
        /* tag_small marks the rows of the 1-D form */
        int oned = r->w[0][0] == 'k';
        double traffic = oned ? 16 * r->v[0] : 16 * (r->v[0] - 2) * (r->v[0] - 2);
        double best = 0;
        for (int k = oned ? 2 : 1; k < r->n; k++)
            if (r->v[k] > best) best = r->v[k];
        if (traffic <= 0 || best <= 0 || (!oned && r->v[0] <= 2)) {
            rc = row_error(c->err, t, r->line, "size and bandwidths must be positive");
            break;
        }
        if (first == 0) first = traffic;
        if (traffic <= 2 * first) {
            times[m] = traffic / (best * 1e3);
            lines[m++] = r->line;
        }
    }
    if (!rc && m < 3)
        rc = row_error(c->err, t, t->rows[0].line,
                       "%zu rows with at most twice the first row's traffic: need 3", m);
    if (!rc) {
        gsl_sort(times, 1, m); /* lines stay in file order */
        *us = gsl_stats_median_from_sorted_data(times, 1, m);
        *nl = m;
    }
    colo_free(times);
    return rc;
}

static int from_small(struct ctx *c, const struct table *t, const char *variant)
{
    int *lines = colo_calloc(t->n, sizeof *lines);
    if (!lines) return nomem(c);
    double us = 0;
    size_t nl = 0;
    int rc = launch_us(c, t, &us, lines, &nl);
    const char *how = "gpu-small-kernels: per launch, the smallest kernels' bytes over the best "
                      "bandwidth of any block size, median over the rows with at most twice the "
                      "first row's traffic";
    if (!rc && !*variant)
        rc = param(c, COLO_CAL_LAUNCH_HOST, us, how, t, lines, nl);
    else if (!rc && strcmp(variant, "_graph") == 0)
        rc = param(c, COLO_CAL_LAUNCH_GRAPH, us, how, t, lines, nl);
    else if (!rc) {
        char name[32];
        snprintf(name, sizeof name, "launch%s_us", variant);
        rc = measurement(c, name, json_pack("{s:f}", "us", us), how, t, lines, nl);
    }
    colo_free(lines);
    return rc;
}

/* gpu-roofline: device, blocks, iterations, flop/B, GB/s, GFLOP/s, MHz, W, C. */
static int from_roofline(struct ctx *c, const struct table *t)
{
    enum { DEV, BLOCKS, ITS, INTENSITY, GBPS, GFLOPS, MHZ, WATT, TEMP };
    int best_at[64];
    for (int d = 0; d < 64; d++)
        best_at[d] = -1;
    int *idx, *lines;
    if (scratch(c, t->n, t->n + 64, &idx, &lines)) return COLO_ENOMEM;
    int rc = 0;
    size_t n0 = 0;
    for (size_t i = 0; i < t->n && !rc; i++) {
        const struct row *r = &t->rows[i];
        int d = r->v[DEV] >= 0 && r->v[DEV] < 64 ? (int)r->v[DEV] : -1;
        if (d < 0 || d != r->v[DEV] || r->v[GFLOPS] <= 0 || r->v[MHZ] <= 0)
            rc = row_error(c->err, t, r->line,
                           "device %g and GFLOP/s, MHz must be a device index (0-63) and positive",
                           r->v[DEV]);
        else if (best_at[d] < 0 || r->v[GFLOPS] > t->rows[best_at[d]].v[GFLOPS])
            best_at[d] = (int)i;
        if (!rc && r->v[ITS] == 0) idx[n0++] = (int)i;
    }
    size_t nd = 0;
    double per_dev[64], mhz[64];
    for (int d = 0; d < 64 && !rc; d++)
        if (best_at[d] >= 0) {
            per_dev[nd] = t->rows[best_at[d]].v[GFLOPS];
            mhz[nd] = t->rows[best_at[d]].v[MHZ];
            lines[nd++] = t->rows[best_at[d]].line;
        }
    if (!rc) {
        gsl_sort(per_dev, 1, nd);
        gsl_sort(mhz, 1, nd);
        double gf = gsl_stats_median_from_sorted_data(per_dev, 1, nd) / c->gpu->sm.count;
        double sheet = colo_gpu_sm_fp32_rate(c->gpu);
        json_t *v = json_pack("{s:f, s:f, s:f, s:f, s:i}", "fp32_gflops_per_sm", gf,
                              "datasheet_gflops_per_sm", sheet, "share_of_datasheet", gf / sheet,
                              "clock_mhz", gsl_stats_median_from_sorted_data(mhz, 1, nd),
                              "devices", (int)nd);
        if (v && n0) {
            json_object_set_new(v, "dram_gbps_no_flops", json_real(median_of(t, GBPS, idx, n0)));
            int *more = lines + nd;
            to_lines(t, idx, n0, more);
        }
        size_t all = nd + n0;
        gsl_sort_int(lines, 1, all);
        rc = measurement(c, "fp32_fma", v,
                         "gpu-roofline: each device's highest GFLOP/s (chains of FMAs per loaded "
                         "value), median over devices, per SM; DRAM GB/s at 0 FMAs. Not applied: "
                         "the GPU file's sustained shares already say what a kernel reaches",
                         t, lines, all);
    }
    colo_free(idx);
    colo_free(lines);
    return rc;
}

/* gpu-strides: type, pattern, two sizes, cycles per warp load, bytes per cycle per SM, counts. */
static int from_strides(struct ctx *c, const struct table *t)
{
    enum { A, B, CYCLES, BPC };
    json_t *v = json_object();
    int lines[2];
    size_t nl = 0;
    if (!v) return nomem(c);
    for (size_t i = 0; i < t->n; i++) {
        const struct row *r = &t->rows[i];
        if (r->n != 7) {
            json_decref(v);
            return row_error(c->err, t, r->line, "expected 7 values, found %d", r->n);
        }
        if (strcmp(r->w[0], "float") && strcmp(r->w[0], "double")) {
            json_decref(v);
            return row_error(c->err, t, r->line, "'%s': the type is float or double", r->w[0]);
        }
        if (strcmp(r->w[1], "stride") == 0 && r->v[A] == 1 && nl < 2) {
            char key[48];
            snprintf(key, sizeof key, "%s_stride1_bytes_per_cycle_per_sm", r->w[0]);
            if (!json_object_get(v, key)) {
                json_object_set_new(v, key, json_real(r->v[BPC]));
                lines[nl++] = r->line;
            }
        }
    }
    if (nl == 0) {
        json_decref(v);
        return row_error(c->err, t, t->rows[0].line, "no 'stride 1' row");
    }
    if (nl == 2 && lines[0] > lines[1]) {
        int x = lines[0];
        lines[0] = lines[1];
        lines[1] = x;
    }
    return measurement(c, "l1_loads", v,
                       "gpu-strides: bytes per cycle one SM loads at stride 1 (one 1024-thread "
                       "block)",
                       t, lines, nl);
}

/* ---- putting it together --------------------------------------------------------------- */

static int open_table(struct ctx *c, colo_gb_kind_t k, const char *stem, const char *suffix,
                      const char *note, struct table *t, int *found)
{
    memset(t, 0, sizeof *t);
    *found = 0;
    snprintf(t->path, sizeof t->path, "%s/%s%s.txt", kind_dirs[k], stem, suffix);
    int w = snprintf(t->full, sizeof t->full, "%s/%s", c->o->dir, t->path);
    if (w < 0 || (size_t)w >= sizeof t->full)
        return colo_error_set(c->err, COLO_EINVAL, c->o->dir, 0, NULL, "path too long");
    t->note = note;
    if (access(t->full, F_OK) != 0) return 0;
    *found = 1;
    switch (k) {
    case COLO_GB_STREAM:
        return read_table(t, R_HEADER_BLOCKSIZE, 0, 9, 9, c->err);
    case COLO_GB_L2:
        return read_table(t, R_HEADER_DATASET, 0, 5, 9, c->err);
    case COLO_GB_CACHE:
        return read_table(t, R_HEADER_DATASET, 0, 4, 8, c->err);
    case COLO_GB_LATENCY:
        return read_table(t, R_CLOCK, 0, 5, 5, c->err);
    case COLO_GB_SMALL:
        return read_table(t, R_PLAIN, 0, 2, MAX_NUMS, c->err);
    case COLO_GB_ROOFLINE:
        return read_table(t, R_BUILD_LOG, 0, 9, 9, c->err);
    case COLO_GB_STRIDES:
        return read_table(t, R_CLOCK, 2, 7, 7, c->err);
    default:
        return 0;
    }
}

/* gpu-small-kernels rows of the 1-D form print the traffic as "NNkB" glued; the 2-D form has
 * no such column. The reader strips units, so look at the file's first row again. */
static int tag_small(struct ctx *c, struct table *t)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = read_text(t->full, &buf, &len, c->err);
    if (rc) return rc;
    int oned = 0;
    char *s = buf;
    while (*s && isspace((unsigned char)*s))
        s++;
    while (*s && !isspace((unsigned char)*s))
        s++;
    while (*s == ' ' || *s == '\t')
        s++;
    char *e = s;
    while (*e && !isspace((unsigned char)*e))
        e++;
    oned = e - s > 2 && strncmp(e - 2, "kB", 2) == 0;
    colo_free(buf);
    for (size_t i = 0; i < t->n; i++) {
        t->rows[i].w[0][0] = oned ? 'k' : '\0';
        if (oned && t->rows[i].n < 3)
            return row_error(c->err, t, t->rows[i].line,
                             "expected n, traffic and at least one bandwidth");
    }
    return 0;
}

int colo_gb_import(const colo_gb_options_t *o, const colo_gpu_t *gpu, json_t **out,
                   colo_error_t *err)
{
    *out = NULL;
    const struct stem *stems = NULL;
    struct stem given[COLO_GB_KIND_N];
    if (o->stem) {
        for (int k = 0; k < COLO_GB_KIND_N; k++)
            given[k] = (struct stem){o->stem, NULL};
        stems = given;
    } else {
        for (size_t i = 0; i < sizeof known / sizeof known[0] && !stems; i++)
            if (strcmp(known[i].gpu, gpu->name) == 0) stems = known[i].s;
        if (!stems) {
            char list[256];
            size_t used = 0;
            for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                         known[i].gpu);
            return colo_error_set(err, COLO_EINVAL, "--gpu", 0, NULL,
                                  "gpu-benches has published no results for %s (it has for %s); "
                                  "give --stem STEM for files of your own",
                                  gpu->name, list);
        }
    }
    json_t *doc = json_object(), *params = json_array(), *meas = json_object();
    json_t *files = json_array(), *missing = json_array();
    struct ctx c = {o, gpu, params, meas, err, 0};
    int rc = doc && params && meas && files && missing ? 0 : nomem(&c);
    static const char *const variants[] = {"", "_graph", "_gsync", "_pt"};
    int sms_from_stream = 0;
    for (int k = 0; k < COLO_GB_KIND_N && !rc; k++) {
        if (!stems[k].stem) continue;
        int nv = k == COLO_GB_SMALL ? 4 : 1;
        for (int v = 0; v < nv && !rc; v++) {
            struct table t;
            int found;
            rc = open_table(&c, (colo_gb_kind_t)k, stems[k].stem, variants[v], stems[k].note, &t,
                            &found);
            if (!rc && !found && v <= 1 && json_array_append_new(missing, json_string(t.path)))
                rc = nomem(&c);
            if (rc || !found) continue;
            if (k == COLO_GB_SMALL) rc = tag_small(&c, &t);
            if (!rc) {
                switch ((colo_gb_kind_t)k) {
                case COLO_GB_STREAM:
                    rc = from_stream(&c, &t);
                    sms_from_stream = !rc;
                    break;
                case COLO_GB_L2:
                    rc = from_l2(&c, &t);
                    break;
                case COLO_GB_CACHE:
                    rc = from_cache(&c, &t);
                    break;
                case COLO_GB_LATENCY:
                    rc = from_latency(&c, &t);
                    break;
                case COLO_GB_SMALL:
                    rc = from_small(&c, &t, variants[v]);
                    break;
                case COLO_GB_ROOFLINE:
                    rc = from_roofline(&c, &t);
                    break;
                case COLO_GB_STRIDES:
                    rc = from_strides(&c, &t);
                    break;
                default:
                    break;
                }
            }
            if (!rc) {
                const char *commit = commit_of(&c, t.path);
                json_t *f = json_pack("{s:s}", "path", t.path);
                if (f && commit) json_object_set_new(f, "commit", json_string(commit));
                if (f && t.note) json_object_set_new(f, "note", json_string(t.note));
                if (!f || json_array_append_new(files, f)) rc = nomem(&c);
            }
            table_free(&t);
        }
    }
    if (!rc && json_array_size(files) == 0)
        rc = colo_error_set(err, COLO_ENOENT, o->dir, 0, NULL,
                            "no gpu-benches result file for %s here (looked for gpu-stream/%s.txt "
                            "and the like)",
                            gpu->name, stems[0].stem ? stems[0].stem : o->stem ? o->stem : "?");
    if (!rc) {
        json_t *device = json_pack("{s:s, s:O, s:O}", "name", "published gpu-benches results",
                                   "files", files, "missing", missing);
        if (device && sms_from_stream)
            json_object_set_new(device, "sm_count", json_integer(gpu->sm.count));
        char tool[128];
        snprintf(tool, sizeof tool, "colosim %s calibrate import gpu-benches", COLO_VERSION);
        if (!device ||
            json_object_set_new(doc, "colosim_calibration", json_integer(1)) ||
            json_object_set_new(doc, "gpu", json_string(gpu->name)) ||
            json_object_set_new(doc, "device", device) ||
            json_object_set_new(doc, "date", json_string("date not recorded")) ||
            json_object_set_new(doc, "command",
                                json_string(o->command ? o->command : "colosim calibrate import "
                                                                      "gpu-benches")) ||
            json_object_set_new(doc, "tool", json_string(tool)) ||
            json_object_set(doc, "parameters", params) ||
            json_object_set(doc, "measurements", meas))
            rc = nomem(&c);
    }
    json_decref(params);
    json_decref(meas);
    json_decref(files);
    json_decref(missing);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}
