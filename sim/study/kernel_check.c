/* kernel_check.c: NeuSight's ops moved between the GPUs they were measured on, through the kernel
 * model, against their measured times. */
#include "kernel_check.h"
#include "alloc.h"
#include "csv.h"
#include "folder.h"
#include "gpu_catalog.h"
#include "kernel_model.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *device, *gpu;
} gpus[] = {
    {"Tesla T4", "tesla-t4"},
    {"Tesla P4", "tesla-p4"},
    {"Tesla P100-PCIE-16GB", "tesla-p100-pcie"},
    {"Tesla V100-PCIE-32GB", "v100-pcie-32gb"},
    {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
};

const char *colo_kcheck_gpu_of(const char *device)
{
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
        if (strcmp(gpus[i].device, device) == 0) return gpus[i].gpu;
    return NULL;
}

/* NeuSight timed each op alone with PyTorch's host work in the loop. The shortest ops of a
 * table measure the host's time per op (25-57 us on these five machines), and an op's latency
 * above it still holds the part of the host's work between the timer's start and the kernel's
 * launch: the intercept of latency against bytes for the large elementwise ops is 0.42-0.59 of
 * the table's shortest latency on the five machines (docs/validation.md). Half of it comes
 * off; ops under three times it are left out. */
double colo_kcheck_kernel_ns(double latency_ns, double host_ns)
{
    if (latency_ns < 3 * host_ns) return -1;
    return latency_ns - 0.5 * host_ns;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_shape(const void *a, const void *b)
{
    const colo_ns_row_t *x = a, *y = b;
    for (int i = 0; i < COLO_NS_SHAPE; i++)
        if (x->shape[i] != y->shape[i]) return x->shape[i] < y->shape[i] ? -1 : 1;
    return 0;
}

static int push(colo_kcell_t *c, colo_kpick_t p)
{
    if (c->n == c->cap) {
        size_t nc = c->cap ? 2 * c->cap : 256;
        colo_kpick_t *np = colo_realloc(c->picks, nc * sizeof *np);
        if (!np) return COLO_ENOMEM;
        c->picks = np;
        c->cap = nc;
    }
    c->picks[c->n++] = p;
    return 0;
}

static int finish(colo_kcell_t *c)
{
    if (!c->n) return 0;
    double *e = colo_malloc(c->n * sizeof *e);
    if (!e) return COLO_ENOMEM;
    for (size_t i = 0; i < c->n; i++)
        e[i] = c->picks[i].pred_ns / c->picks[i].dst_ns - 1;
    qsort(e, c->n, sizeof *e, cmp_double);
    c->signed_median = e[c->n / 2];
    for (size_t i = 0; i < c->n; i++)
        e[i] = fabs(e[i]);
    qsort(e, c->n, sizeof *e, cmp_double);
    c->median = e[c->n / 2];
    c->p90 = e[(size_t)(0.9 * (double)(c->n - 1))];
    colo_free(e);
    return 0;
}

static int gpu_index(colo_kcheck_t *k, const colo_ns_table_t *t, colo_error_t *err)
{
    for (size_t g = 0; g < k->n_gpus; g++)
        if (strcmp(k->device[g], t->device) == 0) return (int)g;
    const char *name = colo_kcheck_gpu_of(t->device);
    if (!name)
        return colo_error_set(err, COLO_EINVAL, t->path, 2, "Device",
                              "colosim has no GPU file for '%s'", t->device);
    if (k->n_gpus == COLO_KCHECK_MAX_GPUS)
        return colo_error_set(err, COLO_ERANGE, t->path, 2, "Device", "more than %d GPUs",
                              COLO_KCHECK_MAX_GPUS);
    if (!(k->device[k->n_gpus] = colo_strdup(t->device))) return COLO_ENOMEM;
    if (!(k->gpu[k->n_gpus] = colo_strdup(name))) {
        colo_free(k->device[k->n_gpus]);
        k->device[k->n_gpus] = NULL;
        return COLO_ENOMEM;
    }
    return (int)k->n_gpus++;
}

static void dump_row(FILE *f, const colo_ns_table_t *s, const colo_gpu_t *gs, const colo_gpu_t *gd,
                     const colo_ns_row_t *r, const colo_ns_row_t *m, double ks, double kd,
                     double pred, const colo_op_t *op)
{
    fprintf(f, "%s,%s,%s,%s", colo_ns_op_name(s->op), gs->name, gd->name,
            colo_ns_class_name(colo_ns_op_class(s->op)));
    for (int i = 0; i < COLO_NS_SHAPE; i++)
        fprintf(f, ",%lld", r->shape[i]);
    fputc(',', f);
    colo_csv_write_field(f, r->kernel);
    fprintf(f, ",%u,%u,%u,", r->grid[0], r->grid[1], r->grid[2]);
    colo_csv_write_field(f, m->kernel);
    fprintf(f, ",%u,%u,%u,%.0f,%.0f,%.0f,%.6g,%.6g,%u,%u\n", m->grid[0], m->grid[1], m->grid[2], ks,
            kd, pred, op->flops, op->dram_bytes, r->block[0] * r->block[1] * r->block[2],
            m->block[0] * m->block[1] * m->block[2]);
}

/* Every op of table s that table d measured too, moved from s's GPU to d's. */
static int compare(colo_kcheck_t *k, const colo_ns_table_t *s, const colo_gpu_t *gs,
                   const colo_ns_table_t *d, const colo_gpu_t *gd, colo_kcell_t *cell,
                   colo_error_t *err)
{
    double hs = s->shortest_ns, hd = d->shortest_ns;
    for (size_t i = 0; i < s->n; i++) {
        const colo_ns_row_t *r = &s->rows[i];
        const colo_ns_row_t *m = bsearch(r, d->rows, d->n, sizeof *r, cmp_shape);
        if (!m) continue;
        double ks = colo_kcheck_kernel_ns(r->latency_ns, hs);
        double kd = colo_kcheck_kernel_ns(m->latency_ns, hd);
        if (ks < 0 || kd < 0) continue;
        colo_op_t op;
        colo_ns_row_op(s, r, &op);
        op.duration = colo_time_from_ns(ks);
        colo_kernel_work_t w;
        int rc = colo_kernel_work(&op, gs, gd, COLO_FP32_PYTORCH, &w, s->path, i, err);
        if (rc == COLO_ERANGE) { /* its block cannot run on d's GPU: not comparable */
            colo_error_clear(err);
            continue;
        }
        if (rc) return rc;
        double pred = (double)colo_kernel_duration(&w, gd);
        if ((rc = push(cell, (colo_kpick_t){s, r, ks, kd, pred}))) return rc;
        if (k->dump) dump_row(k->dump, s, gs, gd, r, m, ks, kd, pred, &op);
    }
    return 0;
}

int colo_kcheck_run(const char *dir, colo_kcheck_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_kcheck_t *k = colo_calloc(1, sizeof *k);
    if (!k) return colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    static const char *const tables[] = {".csv", ".csv.gz", NULL};
    char **names = NULL;
    size_t n = 0;
    int rc = colo_folder_list(dir, tables, &names, &n, err);
    if (!rc && n == 0)
        rc = colo_error_set(err, COLO_ENOENT, dir, 0, NULL,
                            "no NeuSight tables (OP__DEVICE.csv or .csv.gz) in the folder");
    int *gi = NULL;
    colo_gpu_t *g[COLO_KCHECK_MAX_GPUS] = {0};
    const char *dump = getenv("COLOSIM_KCHECK_DUMP");
    if (!rc && dump && !(k->dump = fopen(dump, "w")))
        rc = colo_error_set(err, COLO_EIO, dump, 0, "COLOSIM_KCHECK_DUMP", "cannot write: %s",
                            strerror(errno));
    if (!rc &&
        (!(k->tables = colo_calloc(n, sizeof *k->tables)) || !(gi = colo_calloc(n, sizeof *gi))))
        rc = COLO_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        if ((rc = colo_ns_read(names[i], &k->tables[i], err))) break;
        k->n_tables++;
        k->rows += k->tables[i]->n;
        colo_ns_table_t *t = k->tables[i];
        qsort(t->rows, t->n, sizeof *t->rows, cmp_shape);
        int x = gpu_index(k, t, err);
        if (x < 0) rc = x;
        gi[i] = x;
    }
    for (size_t i = 0; !rc && i < k->n_tables; i++)
        for (size_t j = i + 1; !rc && j < k->n_tables; j++)
            if (k->tables[i]->op == k->tables[j]->op && gi[i] == gi[j])
                rc = colo_error_set(err, COLO_EINVAL, k->tables[j]->path, 0, NULL,
                                    "a second table of %s on %s (the first: %s)",
                                    colo_ns_op_name(k->tables[j]->op), k->tables[j]->device,
                                    k->tables[i]->path);
    for (size_t x = 0; !rc && x < k->n_gpus; x++)
        rc = colo_gpu_open(k->gpu[x], NULL, NULL, &g[x], NULL, 0, NULL, err);
    for (size_t i = 0; !rc && i < k->n_tables; i++) {
        double h = k->tables[i]->shortest_ns;
        for (size_t r = 0; r < k->tables[i]->n; r++)
            k->host_bound += colo_kcheck_kernel_ns(k->tables[i]->rows[r].latency_ns, h) < 0;
        for (size_t j = 0; !rc && j < k->n_tables; j++) {
            const colo_ns_table_t *s = k->tables[i], *d = k->tables[j];
            if (i == j || s->op != d->op) continue;
            rc = compare(k, s, g[gi[i]], d, g[gi[j]],
                         &k->cell[gi[i]][gi[j]][colo_ns_op_class(s->op)], err);
        }
    }
    for (size_t x = 0; x < k->n_gpus; x++)
        colo_gpu_free(g[x]);
    if (k->dump) fclose(k->dump);
    k->dump = NULL;
    colo_folder_free(names, n);
    colo_free(gi);
    if (rc == COLO_ENOMEM) colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    if (rc) {
        colo_kcheck_free(k);
        return rc;
    }
    for (size_t a = 0; !rc && a < k->n_gpus; a++)
        for (size_t b = 0; !rc && b < k->n_gpus; b++)
            for (int c = 0; !rc && c < COLO_NS_CLASSES; c++)
                rc = finish(&k->cell[a][b][c]);
    if (rc) {
        colo_kcheck_free(k);
        return colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    }
    *out = k;
    return 0;
}

void colo_kcheck_free(colo_kcheck_t *k)
{
    if (!k) return;
    for (size_t i = 0; i < k->n_tables; i++)
        colo_ns_table_free(k->tables[i]);
    colo_free(k->tables);
    for (size_t x = 0; x < k->n_gpus; x++) {
        colo_free(k->device[x]);
        colo_free(k->gpu[x]);
        for (size_t y = 0; y < COLO_KCHECK_MAX_GPUS; y++)
            for (int c = 0; c < COLO_NS_CLASSES; c++)
                colo_free(k->cell[x][y][c].picks);
    }
    colo_free(k);
}

void colo_kcheck_print(const colo_kcheck_t *k, FILE *f, bool md)
{
    if (md)
        fprintf(f, "| from | to | ops | kernels | median | p90 | signed median |\n"
                   "|---|---|---|---:|---:|---:|---:|\n");
    else
        fprintf(f, "%-16s %-16s %-7s %8s %8s %8s %8s\n", "from", "to", "ops", "kernels", "median",
                "p90", "signed");
    size_t all = 0, good = 0, cells = 0;
    for (int c = 0; c < COLO_NS_CLASSES; c++)
        for (size_t a = 0; a < k->n_gpus; a++)
            for (size_t b = 0; b < k->n_gpus; b++) {
                const colo_kcell_t *x = &k->cell[a][b][c];
                if (!x->n) continue;
                all += x->n;
                if (x->n >= 200) {
                    cells++;
                    good += x->median <= 0.10 && x->p90 <= 0.25;
                }
                if (md)
                    fprintf(f, "| %s | %s | %s | %zu | %.1f %% | %.1f %% | %+.1f %% |\n", k->gpu[a],
                            k->gpu[b], colo_ns_class_name((colo_ns_class_t)c), x->n,
                            100 * x->median, 100 * x->p90, 100 * x->signed_median);
                else
                    fprintf(f, "%-16s %-16s %-7s %8zu %7.1f%% %7.1f%% %+7.1f%%\n", k->gpu[a],
                            k->gpu[b], colo_ns_class_name((colo_ns_class_t)c), x->n,
                            100 * x->median, 100 * x->p90, 100 * x->signed_median);
            }
    fprintf(f,
            "%s%zu rows read, %zu left out as host-bound; %zu comparisons; %zu of %zu cells with "
            "200 or more kernels meet median <= 10 %% and p90 <= 25 %%\n",
            md ? "\n" : "", k->rows, k->host_bound, all, good, cells);
}

static int by_src_time(const void *a, const void *b)
{
    const colo_kpick_t *x = a, *y = b;
    return (x->src_ns > y->src_ns) - (x->src_ns < y->src_ns);
}

/* One cell's trace: up to per_cell of its ops, evenly spaced by their time on the source. */
static int derive_cell(const colo_kcheck_t *k, size_t a, size_t b, int c, const char *dir,
                       const char *rel, size_t per_cell, FILE *cfg, int *n_cases, colo_error_t *err)
{
    const colo_kcell_t *x = &k->cell[a][b][c];
    colo_kpick_t *p = colo_malloc(x->n * sizeof *p);
    if (!p) return COLO_ENOMEM;
    memcpy(p, x->picks, x->n * sizeof *p);
    qsort(p, x->n, sizeof *p, by_src_time);
    char model[96], path[1024];
    snprintf(model, sizeof model, "neusight_%s_to_%s_%s", k->gpu[a], k->gpu[b],
             colo_ns_class_name((colo_ns_class_t)c));
    snprintf(path, sizeof path, "%s/%s.json", dir, model);
    colo_trace_t *t = colo_trace_new(model, 1, k->gpu[a]);
    int rc = t ? 0 : COLO_ENOMEM;
    size_t lo = (x->n - 1) / 20, hi = (x->n - 1) - (x->n - 1) / 20;
    size_t m = x->n < per_cell ? x->n : per_cell;
    if (m > hi - lo + 1) m = hi - lo + 1; /* no op twice */
    double sum_dst = 0, sum_pred = 0;
    char ops[256] = "";
    unsigned seen = 0;
    for (size_t i = 0; !rc && i < m; i++) {
        /* evenly spaced from the 5th to the 95th percentile: the longest ops of the
         * power-limited boards (seconds of GEMM on the P4 at a tenth of its peak) would
         * otherwise make the sum theirs */
        const colo_kpick_t *q = &p[m > 1 ? lo + i * (hi - lo) / (m - 1) : lo];
        colo_op_t op;
        colo_ns_row_op(q->table, q->row, &op);
        op.duration = colo_time_from_ns(q->src_ns);
        op.line = 0;
        rc = colo_trace_append(t, &op);
        sum_dst += q->dst_ns;
        sum_pred += q->pred_ns;
        seen |= 1u << q->table->op;
    }
    for (int o = 0; o < COLO_NS_OPS; o++)
        if (seen & (1u << o)) {
            if (ops[0]) strcat(ops, ", ");
            strcat(ops, colo_ns_op_name((colo_ns_op_t)o));
        }
    if (!rc) {
        char src[512];
        snprintf(
            src, sizeof src,
            "NeuSight (ASPLOS'25), github.com/sitar-lab/NeuSight @ 6945927, "
            "scripts/asplos/data/dataset/train/collect (PyTorch 2.1, FP32): %zu of the %zu %s "
            "ops measured on both %s and %s, evenly spaced by their time on %s from its 5th to its "
            "95th percentile; duration: the "
            "op's latency less half the table's shortest (the host's part)",
            m, x->n, colo_ns_class_name((colo_ns_class_t)c), k->device[a], k->device[b],
            k->device[a]);
        int bad = json_object_set_new(t->provenance, "source", json_string(src));
        bad |= json_object_set_new(t->provenance, "measured_on", json_string(k->gpu[a]));
        bad |= json_object_set_new(t->provenance, "license", json_string("MIT (NeuSight)"));
        bad |= json_object_set_new(t->provenance, "converted_by",
                                   json_string("colosim validate --kernels --derive"));
        if (bad) rc = COLO_ENOMEM;
    }
    if (!rc) {
        colo_trace_summarise(t);
        rc = colo_trace_save(t, path, err);
    }
    if (!rc)
        fprintf(
            cfg,
            "%s  { id = \"neusight.%s.%s_to_%s\"; category = \"kernels\";\n"
            "    what = \"%zu %s ops (%s): %s kernel time predicted from %s (ms)\";\n"
            "    published = %.4f; from = \"sum of the same ops' latencies on %s, each less "
            "half the table's shortest\";\n"
            "    trace = \"%s/%s.json\"; gpu = \"%s\"; metric = \"kernels_ms\";%s }",
            *n_cases ? ",\n" : "", colo_ns_class_name((colo_ns_class_t)c), k->gpu[a], k->gpu[b], m,
            colo_ns_class_name((colo_ns_class_t)c), ops, k->device[b], k->device[a], sum_dst / 1e6,
            k->device[b], rel, model, k->gpu[b],
            fabs(sum_pred / sum_dst - 1) > 0.4
                ? "\n    cause = \"the kernel model's sustained FP32 rates of the two GPUs, and "
                  "the other kernels the target's libraries run for these shapes "
                  "(docs/validation.md, 'Kernels across GPUs')\";"
                : "");
    if (!rc) ++*n_cases;
    colo_trace_free(t);
    colo_free(p);
    return rc;
}

int colo_kcheck_derive(const colo_kcheck_t *k, const char *dir, const char *rel, size_t per_cell,
                       FILE *cfg, colo_error_t *err)
{
    int rc = 0, n_cases = 0;
    for (int c = 0; !rc && c < COLO_NS_CLASSES; c++)
        for (size_t a = 0; !rc && a < k->n_gpus; a++)
            for (size_t b = 0; !rc && b < k->n_gpus; b++)
                if (k->cell[a][b][c].n >= 20)
                    rc = derive_cell(k, a, b, c, dir, rel, per_cell, cfg, &n_cases, err);
    if (rc == COLO_ENOMEM) colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    return rc;
}
