/* live_fit.c: a process's fit: its entries, and the fit file its fitting child writes. */
#include "live_run_internal.h"
#include "alloc.h"

#include <stdio.h>
#include <string.h>

int colo_live_fit_add(colo_live_fit_t *f, size_t tenant, size_t op, long long iters,
                      double target_ns, double fitted_ns)
{
    if (colo_grow((void **)&f->e, &f->cap, f->n + 1, sizeof *f->e)) return COLO_ENOMEM;
    f->e[f->n++] = (colo_live_fit_entry_t){tenant, op, iters, target_ns, fitted_ns};
    return 0;
}

void colo_live_fit_free(colo_live_fit_t *f)
{
    colo_free(f->e);
    memset(f, 0, sizeof *f);
}

static void fit_path(const char *run_dir, int proc, char *buf, size_t len)
{
    snprintf(buf, len, "%s/fit-%d.txt", run_dir, proc);
}

/* "TENANT OP ITERS TARGET_NS FITTED_NS" per line; written whole (atomic rename). */
int colo_live_fit_save(const char *run_dir, int proc, const colo_live_fit_t *f)
{
    char path[4400], tmp[4500];
    fit_path(run_dir, proc, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.part", path);
    FILE *o = fopen(tmp, "w");
    if (!o) return COLO_EIO;
    for (size_t k = 0; k < f->n; k++)
        fprintf(o, "%zu %zu %lld %.17g %.17g\n", f->e[k].tenant, f->e[k].op, f->e[k].iters,
                f->e[k].target_ns, f->e[k].fitted_ns);
    if (fclose(o) || rename(tmp, path)) return COLO_EIO;
    return 0;
}

/* 0, or COLO_EIO when the process's fit file is missing (its fit failed). */
int colo_live_fit_load(const char *run_dir, int proc, colo_live_fit_t *f)
{
    char path[4400];
    fit_path(run_dir, proc, path, sizeof path);
    FILE *in = fopen(path, "r");
    if (!in) return COLO_EIO;
    colo_live_fit_entry_t e;
    int rc = 0;
    while (!rc && fscanf(in, "%zu %zu %lld %lg %lg", &e.tenant, &e.op, &e.iters, &e.target_ns,
                         &e.fitted_ns) == 5)
        rc = colo_live_fit_add(f, e.tenant, e.op, e.iters, e.target_ns, e.fitted_ns);
    fclose(in);
    return rc;
}
