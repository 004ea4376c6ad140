/* import_neusight.c: NeuSight single-op latency CSVs -> rows -> colosim kernels. */
#include "import_neusight.h"
#include "alloc.h"
#include "csv.h"

#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *const op_names[COLO_NS_OPS] = {"bmm",  "linear", "conv", "softmax", "ln",  "add",
                                                  "addu", "mul",    "relu", "gelu",    "tanh"};
static const char *const class_names[COLO_NS_CLASSES] = {"gemm", "conv", "elementwise",
                                                         "softmax_ln"};

const char *colo_ns_op_name(colo_ns_op_t op)
{
    return op < COLO_NS_OPS ? op_names[op] : "?";
}

colo_ns_class_t colo_ns_op_class(colo_ns_op_t op)
{
    return op <= COLO_NS_LINEAR                        ? COLO_NS_GEMM
           : op == COLO_NS_CONV                        ? COLO_NS_CONVS
           : op == COLO_NS_SOFTMAX || op == COLO_NS_LN ? COLO_NS_ROWS
                                                       : COLO_NS_ELEMENTWISE;
}

const char *colo_ns_class_name(colo_ns_class_t c)
{
    return c < COLO_NS_CLASSES ? class_names[c] : "?";
}

/* Elements each op reads and writes per element of its result, beyond the matrix products:
 * add and mul read two tensors (NeuSight's add and mul of two B x H tensors), addu (a tensor
 * plus a scalar), relu, gelu and tanh read one; softmax reads its row once to find the maximum
 * and the sum in one pass (PyTorch's warp and block softmax keep the row in registers or shared
 * memory when it fits) and writes it; layer norm reads the row and its weight and bias. */
double colo_ns_bytes(colo_ns_op_t op, const long long *s)
{
    const double e = 4; /* FP32 */
    double B = (double)s[0], M = (double)s[1], N = (double)s[2], K = (double)s[3];
    switch (op) {
    case COLO_NS_BMM: /* a[B,M,K] x b[B,K,N] -> c[B,M,N] */
        return e * B * (M * K + K * N + M * N);
    case COLO_NS_LINEAR: /* x[B,M,N] x W[K,N]^T + bias[K] -> y[B,M,K] */
        return e * (B * M * N + K * N + K + B * M * K);
    case COLO_NS_CONV: {
        double cin = M, cout = N, ks = K, in = (double)s[4], st = (double)s[5], pad = (double)s[6];
        double o = floor((in + 2 * pad - ks) / (st > 0 ? st : 1)) + 1;
        if (o < 1) o = 1;
        return e * (B * cin * in * in + cout * cin * ks * ks + B * cout * o * o);
    }
    case COLO_NS_ADD:
    case COLO_NS_MUL:
        return e * 3 * B * M;
    case COLO_NS_LN:
        return e * (2 * B * M + 2 * M);
    default: /* softmax, addu, relu, gelu, tanh: one in, one out */
        return e * 2 * B * M;
    }
}

/* Multiply-adds count two FLOPs; elementwise ops one per element (their time is their bytes). */
double colo_ns_flops(colo_ns_op_t op, const long long *s)
{
    double B = (double)s[0], M = (double)s[1], N = (double)s[2], K = (double)s[3];
    switch (op) {
    case COLO_NS_BMM:
    case COLO_NS_LINEAR:
        return 2 * B * M * N * K;
    case COLO_NS_CONV: {
        double cin = M, cout = N, ks = K, in = (double)s[4], st = (double)s[5], pad = (double)s[6];
        double o = floor((in + 2 * pad - ks) / (st > 0 ? st : 1)) + 1;
        if (o < 1) o = 1;
        return 2 * B * cout * o * o * cin * ks * ks;
    }
    case COLO_NS_SOFTMAX: /* max, subtract, exp, sum, divide */
        return 5 * B * M;
    case COLO_NS_LN: /* mean, variance, normalise, scale, shift */
        return 8 * B * M;
    default:
        return B * M;
    }
}

void colo_ns_row_op(const colo_ns_table_t *t, const colo_ns_row_t *r, colo_op_t *op)
{
    memset(op, 0, sizeof *op);
    op->type = COLO_OP_KERNEL;
    op->line = r->line;
    op->name = r->kernel;
    memcpy(op->grid, r->grid, sizeof op->grid);
    memcpy(op->block, r->block, sizeof op->block);
    op->registers = -1;
    op->shared_bytes = -1;
    op->duration = colo_time_from_ns(r->latency_ns);
    op->kclass =
        colo_ns_op_class(t->op) >= COLO_NS_ELEMENTWISE ? COLO_KCLASS_MEMORY : COLO_KCLASS_COMPUTE;
    op->math = COLO_MATH_AUTO;
    op->flops = colo_ns_flops(t->op, r->shape);
    op->dram_bytes = colo_ns_bytes(t->op, r->shape);
    op->l2_bytes = -1;
}

/* ---- reading ---- */

enum {
    C_OP,
    C_LAT,
    C_DEV,
    C_KNAME,
    C_GX,
    C_GY,
    C_GZ,
    C_BX,
    C_BY,
    C_BZ,
    C_KERNELS,
    C_S0 /* shape columns follow, in the order of shape_cols */
};
#define N_COLS (C_S0 + COLO_NS_SHAPE)
static const char *const fixed_cols[C_S0] = {"OPName",  "Latency", "Device", "Kernel Name",
                                             "Grid x",  "Grid y",  "Grid z", "Block x",
                                             "Block y", "Block z", "Kernels"};
/* Shape columns by op family, as NeuSight's headers spell them (Kernel_Szie included). */
static const char *const gemm_cols[] = {"B", "M", "N", "K", NULL};
static const char *const conv_cols[] = {
    "B", "Input_Channel", "Output_Channel", "Kernel_Szie", "Input_Size", "Stride", "Padding", NULL};
static const char *const vec_cols[] = {"B", "H", NULL};

static const char *const *shape_cols(colo_ns_op_t op)
{
    return op <= COLO_NS_LINEAR ? gemm_cols : op == COLO_NS_CONV ? conv_cols : vec_cols;
}

/* One line of any length; 1 read, 0 end of file, negative on error. */
static int read_line(gzFile f, char **buf, size_t *cap)
{
    size_t len = 0;
    if (!*buf) {
        *cap = 4096;
        if (!(*buf = colo_malloc(*cap))) return COLO_ENOMEM;
    }
    for (;;) {
        if (!gzgets(f, *buf + len, (int)(*cap - len))) return len > 0 ? 1 : 0;
        len += strlen(*buf + len);
        if (len > 0 && (*buf)[len - 1] == '\n') return 1;
        if (len + 1 < *cap) return 1; /* last line without a newline */
        char *nb = colo_realloc(*buf, *cap * 2);
        if (!nb) return COLO_ENOMEM;
        *buf = nb;
        *cap *= 2;
    }
}

static int number(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

static int count_kernels(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == ';';
    return n > 0 ? n : 1;
}

static int parse_row(colo_ns_table_t *t, char **fields, int n, const int *col, int lineno,
                     colo_ns_row_t *r, colo_error_t *err)
{
    memset(r, 0, sizeof *r);
    r->line = lineno;
    for (int c = 0; c < N_COLS; c++) {
        if (col[c] < 0) continue;
        if (col[c] >= n)
            return colo_error_set(err, COLO_EPARSE, t->path, lineno, NULL,
                                  "%d fields where the header has more", n);
    }
    const char *opname = fields[col[C_OP]];
    if (strcmp(opname, op_names[t->op]) != 0)
        return colo_error_set(err, COLO_EPARSE, t->path, lineno, "OPName", "'%s' in a table of %s",
                              opname, op_names[t->op]);
    if (strcmp(fields[col[C_DEV]], t->device) != 0)
        return colo_error_set(err, COLO_EPARSE, t->path, lineno, "Device", "'%s' in a table of %s",
                              fields[col[C_DEV]], t->device);
    double v;
    if (number(fields[col[C_LAT]], &v) || !(v > 0) || v * 1e6 > COLO_OP_MAX_NS)
        return colo_error_set(err, COLO_ERANGE, t->path, lineno, "Latency",
                              "'%s' is not a time in ms above 0", fields[col[C_LAT]]);
    r->latency_ns = v * 1e6;
    for (int d = 0; d < 3; d++) {
        double g, b;
        /* CUDA's limits, as the trace reader applies them: grid x up to 2^31 - 1, y and z up
         * to 65535; block x and y up to 1024, z up to 64 */
        double gmax = d == 0 ? 2147483647.0 : 65535.0, bmax = d == 2 ? 64 : 1024;
        if (number(fields[col[C_GX + d]], &g) || g < 1 || g > gmax || g != floor(g))
            return colo_error_set(err, COLO_ERANGE, t->path, lineno, fixed_cols[C_GX + d],
                                  "'%s' is not a block count from 1 to %.0f", fields[col[C_GX + d]],
                                  gmax);
        if (number(fields[col[C_BX + d]], &b) || b < 1 || b > bmax || b != floor(b))
            return colo_error_set(err, COLO_ERANGE, t->path, lineno, fixed_cols[C_BX + d],
                                  "'%s' is not a thread count from 1 to %.0f",
                                  fields[col[C_BX + d]], bmax);
        r->grid[d] = (unsigned)g;
        r->block[d] = (unsigned)b;
    }
    if ((double)r->block[0] * r->block[1] * r->block[2] > 1024)
        return colo_error_set(err, COLO_ERANGE, t->path, lineno, "Block x",
                              "%u x %u x %u threads: a block has at most 1024", r->block[0],
                              r->block[1], r->block[2]);
    r->n_kernels = col[C_KERNELS] >= 0 ? count_kernels(fields[col[C_KERNELS]]) : 1;
    const char *const *sc = shape_cols(t->op);
    for (int i = 0; sc[i]; i++) {
        double x;
        if (number(fields[col[C_S0 + i]], &x) || x < 0 || x > 1e12 || x != floor(x))
            return colo_error_set(err, COLO_ERANGE, t->path, lineno, sc[i],
                                  "'%s' is not a whole number from 0 to 1e12",
                                  fields[col[C_S0 + i]]);
        r->shape[i] = (long long)x;
    }
    if (t->op != COLO_NS_CONV && r->shape[0] < 1)
        return colo_error_set(err, COLO_ERANGE, t->path, lineno, "B", "a batch of 0");
    if (!(r->kernel = colo_strdup(fields[col[C_KNAME]]))) return COLO_ENOMEM;
    return 0;
}

/* The header: which column holds what, and the op, from the first data row's OPName. */
static int header(colo_ns_table_t *t, char **fields, int n, int *col, int lineno, colo_error_t *err)
{
    for (int c = 0; c < N_COLS; c++)
        col[c] = -1;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < C_S0; c++)
            if (strcmp(fields[i], fixed_cols[c]) == 0) col[c] = i;
    for (int c = 0; c < C_S0; c++)
        if (col[c] < 0 && c != C_KERNELS)
            return colo_error_set(err, COLO_EPARSE, t->path, lineno, fixed_cols[c],
                                  "column missing from the header (a NeuSight table has OPName, "
                                  "Latency, Device, Kernel Name, Grid x/y/z, Block x/y/z and the "
                                  "op's shape)");
    return 0;
}

static int shape_header(colo_ns_table_t *t, char **hdr, int nh, int *col, colo_error_t *err)
{
    const char *const *sc = shape_cols(t->op);
    for (int i = 0; sc[i]; i++) {
        for (int j = 0; j < nh; j++)
            if (strcmp(hdr[j], sc[i]) == 0) col[C_S0 + i] = j;
        if (col[C_S0 + i] < 0)
            return colo_error_set(err, COLO_EPARSE, t->path, 1, sc[i],
                                  "column missing from the header (a %s table gives its shape "
                                  "as columns)",
                                  op_names[t->op]);
    }
    return 0;
}

#define MAX_FIELDS 64

int colo_ns_read(const char *path, colo_ns_table_t **out, colo_error_t *err)
{
    *out = NULL;
    gzFile f = gzopen(path, "rb");
    if (!f) return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open: %s", strerror(errno));
    colo_ns_table_t *t = colo_calloc(1, sizeof *t);
    char *line = NULL, *hdr_line = NULL;
    size_t cap = 0, cap_rows = 0;
    char *hdr[MAX_FIELDS], *fields[MAX_FIELDS];
    int col[N_COLS], nh = 0, lineno = 0, rc = t && (t->path = colo_strdup(path)) ? 0 : COLO_ENOMEM;
    bool have_header = false;
    for (int c = 0; c < N_COLS; c++)
        col[c] = -1;
    while (!rc) {
        int got = read_line(f, &line, &cap);
        if (got <= 0) {
            rc = got;
            break;
        }
        lineno++;
        colo_csv_chomp(line);
        if (!have_header && strncmp(line, "\xEF\xBB\xBF", 3) == 0) /* UTF-8 byte order mark */
            memmove(line, line + 3, strlen(line + 3) + 1);
        if (!line[0]) continue;
        if (!have_header) { /* the first line that is not blank */
            have_header = true;
            if (!(hdr_line = colo_strdup(line))) {
                rc = COLO_ENOMEM;
                break;
            }
            nh = colo_csv_split(hdr_line, hdr, MAX_FIELDS);
            if (nh < 0 || nh > MAX_FIELDS)
                rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "not a NeuSight header");
            else
                rc = header(t, hdr, nh, col, lineno, err);
            continue;
        }
        int n = colo_csv_split(line, fields, MAX_FIELDS);
        if (n < 0 || n > MAX_FIELDS) {
            rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL,
                                n < 0 ? "unterminated quoted field" : "too many fields");
            break;
        }
        if (!t->device) { /* the first row says which op and GPU the table is of */
            int k = col[C_OP] < n ? col[C_OP] : -1;
            for (int o = 0; k >= 0 && o < COLO_NS_OPS && !t->device; o++)
                if (strcmp(fields[k], op_names[o]) == 0) {
                    t->op = (colo_ns_op_t)o;
                    if (!(t->device = colo_strdup(col[C_DEV] < n ? fields[col[C_DEV]] : "")))
                        rc = COLO_ENOMEM;
                }
            if (!rc && !t->device)
                rc = colo_error_set(err, COLO_EPARSE, path, lineno, "OPName",
                                    "'%s' is not an op NeuSight measured (bmm, linear, conv, "
                                    "softmax, ln, add, addu, mul, relu, gelu, tanh)",
                                    k >= 0 ? fields[k] : "");
            if (!rc) rc = shape_header(t, hdr, nh, col, err);
            if (rc) break;
        }
        if (t->n == cap_rows) {
            size_t nc = cap_rows ? 2 * cap_rows : 1024;
            colo_ns_row_t *nr = colo_realloc(t->rows, nc * sizeof *nr);
            if (!nr) {
                rc = COLO_ENOMEM;
                break;
            }
            t->rows = nr;
            cap_rows = nc;
        }
        rc = parse_row(t, fields, n, col, lineno, &t->rows[t->n], err);
        if (!rc && (t->n == 0 || t->rows[t->n].latency_ns < t->shortest_ns))
            t->shortest_ns = t->rows[t->n].latency_ns;
        if (!rc) t->n++;
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, COLO_ENOMEM, path, lineno, NULL, "out of memory");
    int zerr = 0;
    const char *zmsg = gzerror(f, &zerr);
    /* a cut or corrupt stream: its half line is not a bad row */
    if (rc != COLO_ENOMEM && zerr != Z_OK && zerr != Z_STREAM_END)
        rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "cannot decompress: %s", zmsg);
    gzclose(f);
    colo_free(line);
    colo_free(hdr_line);
    if (!rc && t->n == 0) rc = colo_error_set(err, COLO_EPARSE, path, lineno, NULL, "no rows");
    if (rc) {
        colo_ns_table_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void colo_ns_table_free(colo_ns_table_t *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->n; i++)
        colo_free(t->rows[i].kernel);
    colo_free(t->rows);
    colo_free(t->path);
    colo_free(t->device);
    colo_free(t);
}
