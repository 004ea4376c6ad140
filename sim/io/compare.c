/* compare.c: results files side by side. */
#include "compare.h"
#include "number.h"
#include "alloc.h"
#include "json_lines.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* A metric of a tenant: where it is in the results, how it is shown and compared. */
struct metric {
    const char *label;
    const char *group; /* NULL: a key of the tenant itself; "a.b": key of group b in group a */
    const char *key;
    double scale;  /* shown value = value * scale */
    bool fraction; /* differences in percentage points, not relative */
    const char *name; /* its key in compare's JSON; NULL: key */
    bool llm;         /* an LLM tenant's: its row is left out where no column has it */
};

static const struct metric tenant_metrics[] = {
    {"p50 ms", "latency_ms", "p50", 1, false, NULL, false},
    {"p99 ms", "latency_ms", "p99", 1, false, NULL, false},
    {"p99.9 ms", "latency_ms", "p999", 1, false, NULL, false},
    {"mean ms", "latency_ms", "mean", 1, false, NULL, false},
    {"queue ms", NULL, "queue_ms_mean", 1, false, NULL, false},
    {"throughput/s", NULL, "throughput_rps", 1, false, NULL, false},
    {"goodput/s", NULL, "goodput_rps", 1, false, NULL, false},
    {"SLO met %", NULL, "slo_attainment", 100, true, NULL, false},
    {"dropped", NULL, "dropped", 1, false, NULL, false},
    {"TTFT p50 ms", "llm.ttft_ms", "p50", 1, false, "ttft_p50_ms", true},
    {"TTFT p99 ms", "llm.ttft_ms", "p99", 1, false, "ttft_p99_ms", true},
    {"TPOT p50 ms", "llm.tpot_ms", "p50", 1, false, "tpot_p50_ms", true},
    {"TPOT p99 ms", "llm.tpot_ms", "p99", 1, false, "tpot_p99_ms", true},
    {"tokens/s", "llm", "output_tokens_per_s", 1, false, "output_tokens_per_s", true},
    {"prefix hit %", "llm.prefix_cache", "hit_rate_tokens", 100, true, "prefix_hit_rate_tokens",
     true},
};

static const struct metric gpu_metrics[] = {
    {"busy %", "gpu", "busy_fraction", 100, true, NULL, false},
    {"switching %", "gpu", "switching_fraction", 100, true, NULL, false},
};

static int add_col(colo_compare_t *c, const char *label, const char *suffix, json_t *results)
{
    if (colo_grow((void **)&c->col, &c->cap, c->n + 1, sizeof *c->col)) return COLO_ENOMEM;
    size_t len = strlen(label) + (suffix ? strlen(suffix) + 1 : 0) + 1;
    char *s = colo_malloc(len);
    if (!s) return COLO_ENOMEM;
    snprintf(s, len, "%s%s%s", label, suffix ? ":" : "", suffix ? suffix : "");
    c->col[c->n++] = (colo_compare_col_t){s, json_incref(results)};
    return 0;
}

/* The problem with r as a results object, or NULL when it is one. */
static const char *not_results(json_t *r, const char **key)
{
    json_t *fmt = json_object_get(json_object_get(r, "colosim"), "results_format");
    *key = "colosim.results_format";
    if (!json_is_integer(fmt)) return "missing: not a colosim results file";
    if (json_integer_value(fmt) != 1) return "is not 1: written by another colosim version";
    *key = "tenants";
    json_t *ts = json_object_get(r, "tenants"), *t;
    size_t i;
    if (!json_is_array(ts)) return "missing or not a list";
    json_array_foreach(
        ts, i, t) if (!json_is_string(json_object_get(t, "name"))) return "a tenant without a name";
    return NULL;
}

int colo_compare_load(colo_compare_t *c, const char *path, colo_error_t *err)
{
    json_t *doc;
    char *text;
    size_t len;
    int rc = colo_json_read_file(path, &doc, &text, &len, err);
    if (rc) return rc;
    colo_free(text);
    const char *key, *why;
    json_t *modes = json_object_get(doc, "modes");
    if (json_is_object(modes) && json_is_string(json_object_get(doc, "compare"))) {
        const char *mode;
        json_t *r;
        size_t before = c->n;
        json_object_foreach(modes, mode, r)
        {
            if (json_object_get(r, "error")) continue; /* the mechanism could not run */
            if ((why = not_results(r, &key))) {
                char k[128];
                snprintf(k, sizeof k, "modes.%s.%s", mode, key);
                rc = colo_error_set(err, COLO_EINVAL, path, 0, k, "%s", why);
                break;
            }
            if ((rc = add_col(c, path, mode, r))) break;
        }
        if (!rc && c->n == before)
            rc = colo_error_set(err, COLO_EINVAL, path, 0, "modes", "holds no results");
    } else if ((why = not_results(doc, &key))) {
        rc = colo_error_set(err, COLO_EINVAL, path, 0, key, "%s", why);
    } else {
        rc = add_col(c, path, NULL, doc);
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    json_decref(doc);
    return rc;
}

void colo_compare_fini(colo_compare_t *c)
{
    for (size_t i = 0; i < c->n; i++) {
        colo_free(c->col[i].label);
        json_decref(c->col[i].results);
    }
    colo_free(c->col);
    memset(c, 0, sizeof *c);
}

static json_t *tenant_named(json_t *results, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(results, "tenants"), i, t)
    {
        if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0) return t;
    }
    return NULL;
}

/* The metric's value in obj (a tenant, or the whole results for the GPU); NAN when absent. */
static double value(json_t *obj, const struct metric *m)
{
    json_t *o = obj;
    if (m->group) {
        const char *dot = strchr(m->group, '.');
        if (dot) {
            char first[32];
            snprintf(first, sizeof first, "%.*s", (int)(dot - m->group), m->group);
            o = json_object_get(json_object_get(o, first), dot + 1);
        } else {
            o = json_object_get(o, m->group);
        }
    }
    json_t *v = json_object_get(o, m->key);
    return json_is_number(v) ? json_number_value(v) * m->scale : NAN;
}

/* Tenant names in order of first appearance across the runs. */
static size_t tenant_names(const colo_compare_t *c, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t k = 0; k < c->n; k++) {
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(c->col[k].results, "tenants"), i, t)
        {
            const char *name = json_string_value(json_object_get(t, "name"));
            size_t j = 0;
            while (j < n && strcmp(names[j], name) != 0)
                j++;
            if (j == n && n < cap) names[n++] = name;
        }
    }
    return n;
}

#define COL_W 22
#define MAX_TENANTS 256

/* A column's GPU and mechanism: "h100-sxm, mps", or a cluster's "7 x h100-sxm, mig" (a cluster's
 * results have no one GPU). */
static void column_setup(json_t *res, char *buf, size_t n)
{
    json_t *sc = json_object_get(res, "scenario"), *cl = json_object_get(res, "cluster");
    const char *gpu = json_string_value(json_object_get(sc, "gpu"));
    const char *mode = json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode"));
    if (!gpu && cl) {
        json_t *by = json_object_get(cl, "gpus_by_model");
        const char *mech = json_string_value(json_object_get(cl, "mechanism"));
        const char *model =
            json_object_size(by) == 1 ? json_object_iter_key(json_object_iter(by)) : NULL;
        if (model)
            snprintf(buf, n, "%lld x %s, %s",
                     (long long)json_integer_value(json_object_get(by, model)), model,
                     mech ? mech : "?");
        else
            snprintf(buf, n, "%lld GPUs, %s",
                     (long long)json_integer_value(json_object_get(cl, "gpus_used")),
                     mech ? mech : "?");
        return;
    }
    snprintf(buf, n, "%s, %s", gpu ? gpu : "?", mode ? mode : "?");
}

/* A difference with its sign, to one decimal, within 7 characters ("+1.2e+300" beyond). */
static const char *signed_cell(char *buf, size_t n, double d)
{
    if (snprintf(buf, n, "%+.1f", d) > 7) snprintf(buf, n, "%+.2g", d);
    return buf;
}

/* Whether any column has a value of m (an LLM metric's row is shown only then). */
static bool any_value(const colo_compare_t *c, const struct metric *m, json_t *const *objs)
{
    for (size_t k = 0; k < c->n; k++)
        if (objs[k] && !isnan(value(objs[k], m))) return true;
    return false;
}

static void print_row(const colo_compare_t *c, const struct metric *m, json_t *const *objs, FILE *f)
{
    if (m->llm && !any_value(c, m, objs)) return;
    fprintf(f, "  %-16s", m->label);
    double base = NAN;
    for (size_t k = 0; k < c->n; k++) {
        double v = objs[k] ? value(objs[k], m) : NAN;
        char cell[96], diff[48] = "";
        if (isnan(v)) {
            snprintf(cell, sizeof cell, "%*s", COL_W, "-");
        } else {
            if (k == 0) base = v;
            if (k > 0 && !isnan(base)) {
                char num[32];
                if (m->fraction)
                    snprintf(diff, sizeof diff, "%s pt", signed_cell(num, sizeof num, v - base));
                else if (base != 0)
                    snprintf(diff, sizeof diff, "%s %%",
                             signed_cell(num, sizeof num, 100 * (v - base) / base));
                else
                    snprintf(diff, sizeof diff, "%s", v == 0 ? "+0.0 %" : "new");
            }
            int dec = v == floor(v) ? 0 : fabs(v) < 100 ? 3 : 1; /* counts without decimals */
            char num[32];
            snprintf(cell, sizeof cell, "%s %10s", colo_number_cell(num, sizeof num, 11, dec, v),
                     diff);
        }
        fprintf(f, " | %s", cell);
    }
    fputc('\n', f);
}

void colo_compare_print(const colo_compare_t *c, FILE *f)
{
    if (c->n == 0) return;
    fprintf(f, "%-18s", "");
    for (size_t k = 0; k < c->n; k++) {
        /* a column is named by its file (no folder, no .json; ":mode" kept), and a name too
         * long for it keeps its start and end around "..." */
        const char *l = c->col[k].label, *slash = strrchr(l, '/');
        char name[256], shown[COL_W + 1];
        snprintf(name, sizeof name, "%s", slash ? slash + 1 : l);
        char *ext = strstr(name, ".json");
        if (ext) memmove(ext, ext + 5, strlen(ext + 5) + 1);
        size_t len = strlen(name);
        if (len > COL_W) {
            size_t head = (COL_W - 3) / 2, tail = COL_W - 3 - head;
            snprintf(shown, sizeof shown, "%.*s...%s", (int)head, name, name + len - tail);
        } else {
            memcpy(shown, name, len + 1);
        }
        fprintf(f, " | %*s", COL_W, shown);
    }
    fprintf(f, "\n%-18s", "");
    for (size_t k = 0; k < c->n; k++) {
        char what[64];
        column_setup(c->col[k].results, what, sizeof what);
        fprintf(f, " | %*.*s", COL_W, COL_W, what);
    }
    fputc('\n', f);
    const char *names[MAX_TENANTS];
    size_t nt = tenant_names(c, names, MAX_TENANTS);
    json_t **objs = colo_calloc(c->n, sizeof *objs);
    if (!objs) return;
    for (size_t i = 0; i < nt; i++) {
        fprintf(f, "%s\n", names[i]);
        for (size_t k = 0; k < c->n; k++)
            objs[k] = tenant_named(c->col[k].results, names[i]);
        for (size_t m = 0; m < sizeof tenant_metrics / sizeof *tenant_metrics; m++)
            print_row(c, &tenant_metrics[m], objs, f);
    }
    fprintf(f, "GPU\n");
    for (size_t k = 0; k < c->n; k++)
        objs[k] = c->col[k].results;
    for (size_t m = 0; m < sizeof gpu_metrics / sizeof *gpu_metrics; m++)
        print_row(c, &gpu_metrics[m], objs, f);
    fprintf(f, "\ndifferences are to the first column: %% relative, pt in percentage points\n");
    colo_free(objs);
}

static json_t *metric_values(const colo_compare_t *c, const struct metric *m, json_t *const *objs)
{
    json_t *a = json_array();
    for (size_t k = 0; k < c->n && a; k++) {
        double v = objs[k] ? value(objs[k], m) : NAN;
        if (json_array_append_new(a, isnan(v) ? json_null() : json_real(v))) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

json_t *colo_compare_json(const colo_compare_t *c)
{
    json_t *runs = json_array(), *tenants = json_object(), *gpu = json_object();
    json_t *doc = json_pack("{s:o,s:o,s:o}", "runs", runs, "tenants", tenants, "gpu", gpu);
    json_t **objs = colo_calloc(c->n ? c->n : 1, sizeof *objs);
    int bad = !doc || !objs;
    for (size_t k = 0; k < c->n && !bad; k++)
        bad |= json_array_append_new(runs, json_string(c->col[k].label));
    const char *names[MAX_TENANTS];
    size_t nt = bad ? 0 : tenant_names(c, names, MAX_TENANTS);
    for (size_t i = 0; i < nt && !bad; i++) {
        json_t *t = json_object();
        bad |= json_object_set_new(tenants, names[i], t);
        for (size_t k = 0; k < c->n; k++)
            objs[k] = tenant_named(c->col[k].results, names[i]);
        for (size_t m = 0; m < sizeof tenant_metrics / sizeof *tenant_metrics && !bad; m++) {
            const struct metric *mt = &tenant_metrics[m];
            if (mt->llm && !any_value(c, mt, objs)) continue;
            bad |= json_object_set_new(t, mt->name ? mt->name : mt->key,
                                       metric_values(c, mt, objs));
        }
    }
    for (size_t k = 0; k < c->n && !bad; k++)
        objs[k] = c->col[k].results;
    for (size_t m = 0; m < sizeof gpu_metrics / sizeof *gpu_metrics && !bad; m++)
        bad |=
            json_object_set_new(gpu, gpu_metrics[m].key, metric_values(c, &gpu_metrics[m], objs));
    colo_free(objs);
    if (bad) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}
