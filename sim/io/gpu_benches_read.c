/* gpu_benches_read.c: gpu-benches result files read into rows of numbers, a reader per kind. */
#include "gpu_benches.h"
#include "alloc.h"
#include "gpu_benches_internal.h"
#include "json_lines.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
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

/* ---- reading a result file ----------------------------------------------------------------- */

void colo_gb_table_free(struct colo_gb_table *t)
{
    colo_free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

/* Unit words printed as tokens of their own, and unit suffixes glued to a number. */
static int unit_word(const char *s)
{
    static const char *const words[] = {
        "kB",   "ms",  "%",   "GB/s", "GB/s:", "|",    "blocks", "its",
        "Fl/B", "Mhz", "MHz", "W",    "°C",    "GF/s", NULL};
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

int colo_gb_row_error(colo_error_t *err, const struct colo_gb_table *t, int line, const char *fmt,
                      ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return colo_error_set(err, COLO_EPARSE, t->full, line, NULL, "%s", text);
}

/* Splits one line into numbers (units dropped) and at most `words` leading words. */
static int split(char *s, struct colo_gb_row *r, int words, const struct colo_gb_table *t, int line,
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
                return colo_gb_row_error(err, t, line, "more than %d values in a row", MAX_NUMS);
            r->v[r->n++] = x;
        } else if (r->n == 0 && nw < words && strlen(tok) < sizeof r->w[0]) {
            snprintf(r->w[nw++], sizeof r->w[0], "%s", tok);
        } else {
            return colo_gb_row_error(err, t, line, "'%.40s' is not a number", tok);
        }
    }
    if (nw < words && r->n > 0)
        return colo_gb_row_error(err, t, line, "expected %d word%s before the numbers", words,
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
static int read_table(struct colo_gb_table *t, enum reader kind, int words, int min_n, int max_n,
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
        rc = colo_gb_row_error(err, t, line + 1, "not a text file (a NUL byte)");
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
                rc = colo_gb_row_error(err, t, line,
                                       "expected the header 'blockSize threads %%occ | ...': "
                                       "not a gpu-stream result");
                break;
            }
            seen_header = 1;
            continue;
        }
        if (!in_rows && kind == R_HEADER_DATASET && !seen_header) {
            if (strncmp(lead, "data set", 8) != 0) {
                rc = colo_gb_row_error(
                    err, t, line, "expected the header 'data set  exec time ...': not a %s result",
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
            struct colo_gb_row *grown = colo_realloc(t->rows, 2 * cap * sizeof *grown);
            if (!grown) {
                rc = COLO_ENOMEM;
                break;
            }
            t->rows = grown;
            cap *= 2;
        }
        struct colo_gb_row *r = &t->rows[t->n];
        memset(r, 0, sizeof *r);
        if ((rc = split(text, r, words, t, line, err))) break;
        if (r->n < min_n || r->n > max_n) {
            if (min_n == max_n)
                rc = colo_gb_row_error(err, t, line, "expected %d values, found %d", min_n, r->n);
            else
                rc = colo_gb_row_error(err, t, line, "expected %d to %d values, found %d", min_n,
                                       max_n, r->n);
            break;
        }
        in_rows = 1;
        t->n++;
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, t->full, 0, NULL, "out of memory");
    if (!rc && t->n == 0) rc = colo_gb_row_error(err, t, line, "no result rows");
    colo_free(buf);
    if (rc) colo_gb_table_free(t);
    return rc;
}

/* ---- opening a benchmark's file -------------------------------------------------------- */

int colo_gb_open_table(struct colo_gb_ctx *c, colo_gb_kind_t k, const char *stem,
                       const char *suffix, const char *note, struct colo_gb_table *t, int *found)
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
int colo_gb_tag_small(struct colo_gb_ctx *c, struct colo_gb_table *t)
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
            return colo_gb_row_error(c->err, t, t->rows[i].line,
                                     "expected n, traffic and at least one bandwidth");
    }
    return 0;
}
