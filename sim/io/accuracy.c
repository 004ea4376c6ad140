/* accuracy.c: the validation record's errors for the kind of prediction a run makes (accuracy.h;
 * docs/validation.md, "The accuracy beside the answer"). */
#include "accuracy.h"
#include "alloc.h"
#include "datadir.h"
#include "json_lines.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <string.h>

/* Keeps s in the first free of n slots of list unless it is there: its index, or -1. */
static int keep(char (*list)[64], size_t *n, size_t cap, const char *s)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(list[i], s) == 0) return (int)i;
    if (*n == cap) return -1;
    snprintf(list[*n], 64, "%s", s);
    return (int)(*n)++;
}

/* Notes a trace moved from `from` to `to` in *f (the first 4 pairs). */
static void add_moved(colo_accuracy_facts_t *f, const char *from, const char *to)
{
    if (strcmp(from, to) == 0) return;
    for (size_t k = 0; k < f->n_moved; k++)
        if (!strcmp(f->moved[k][0], from) && !strcmp(f->moved[k][1], to)) return;
    if (f->n_moved == 4) return;
    snprintf(f->moved[f->n_moved][0], 64, "%s", from);
    snprintf(f->moved[f->n_moved++][1], 64, "%s", to);
}

/* Whether tenant c may run a batch at a size none of its traces was profiled at. */
static bool scales_batch(const colo_tenant_cfg_t *c)
{
    if (c->max_batch <= 0) return false;
    for (int b = 1; b <= c->max_batch; b++) {
        bool have = false;
        for (size_t v = 0; v < c->n_variants && !have; v++)
            have = c->variants[v].trace->batch == b;
        if (!have) return true;
    }
    return false;
}

void colo_accuracy_add(colo_accuracy_facts_t *f, const colo_scenario_t *sc)
{
    if ((int)sc->sharing.mode >= 0 && (int)sc->sharing.mode < 4)
        f->mechanism[sc->sharing.mode] = true;
    f->colocated |= sc->n_tenants > 1;
    int g = keep(f->gpu, &f->n_gpus, 4, sc->gpu->name);
    if (g >= 0) f->calibrated[g] = sc->gpu->calibration.path != NULL;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *c = &sc->tenants[i];
        if (c->llm) {
            f->llm = true;
            continue;
        }
        f->batch_scaled |= scales_batch(c);
        f->host |= c->framework != COLO_FW_TRACE;
        f->precision |= c->precision != COLO_MATH_AUTO;
        for (size_t v = 0; v < c->n_variants; v++)
            add_moved(f, c->variants[v].gpu->name, sc->gpu->name);
    }
}

void colo_accuracy_add_results(colo_accuracy_facts_t *f, json_t *results)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(json_object_get(results, "cluster"), "gpus"), i, g)
        colo_accuracy_add_results(f, json_object_get(g, "results"));
    json_t *sc = json_object_get(results, "scenario");
    const char *gpu = json_string_value(json_object_get(sc, "gpu"));
    const char *mode = json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode"));
    if (!gpu || !mode) return; /* a cluster's own summary: its GPUs said above */
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    for (int m = 0; m < 4; m++)
        if (strcmp(mode, modes[m]) == 0) f->mechanism[m] = true;
    json_t *ts = json_object_get(results, "tenants"), *t;
    f->colocated |= json_array_size(ts) > 1;
    int k = keep(f->gpu, &f->n_gpus, 4, gpu);
    if (k >= 0) f->calibrated[k] = json_is_object(json_object_get(sc, "calibration"));
    json_array_foreach(ts, i, t)
    {
        const char *from = json_string_value(json_object_get(t, "trace_gpu"));
        f->llm |= json_object_get(t, "llm") != NULL;
        if (from) add_moved(f, from, gpu);
    }
}

char *colo_accuracy_record_path(void)
{
    char buf[4096];
    if (colo_datadir_lookup("recorded.json", "validation", buf, sizeof buf)) return NULL;
    return colo_strdup(buf);
}

/* A case of the record that a predicate selects. */
typedef bool (*pick_fn)(json_t *c, const void *arg);

static bool by_mechanism(json_t *c, const void *arg)
{
    const char *m = arg, *cm = json_string_value(json_object_get(c, "mechanism"));
    const char *cat = json_string_value(json_object_get(c, "category"));
    return cm && strcmp(cm, m) == 0 && !(cat && strcmp(cat, "green_bw") == 0);
}

static bool by_category(json_t *c, const void *arg)
{
    const char *cat = json_string_value(json_object_get(c, "category"));
    return cat && strcmp(cat, arg) == 0;
}

static bool colocated_under(json_t *c, const void *arg)
{
    const char *m = json_string_value(json_object_get(c, "mechanism"));
    return by_category(c, "colocation") && m && strcmp(m, arg) == 0;
}

static bool by_gpu(json_t *c, const void *arg)
{
    const char *g = json_string_value(json_object_get(c, "gpu"));
    return g && strcmp(g, arg) == 0;
}

static bool any_case(json_t *c, const void *arg)
{
    (void)c;
    (void)arg;
    return true;
}

/* Median and worst |error| over the validation cases of the record that pick selects, and the
 * worst one's id: their count (0: none). */
static size_t errors_of(json_t *cases, pick_fn pick, const void *arg, double *median, double *worst,
                        const char **worst_id)
{
    size_t n = 0, i;
    json_t *c;
    double *x = colo_calloc(json_array_size(cases) + 1, sizeof *x);
    if (!x) return 0;
    *worst = 0;
    *worst_id = NULL;
    json_array_foreach(cases, i, c)
    {
        const char *role = json_string_value(json_object_get(c, "role"));
        json_t *e = json_object_get(c, "error");
        if (!role || strcmp(role, "validation") != 0 || !json_is_number(e) || !pick(c, arg))
            continue;
        x[n] = fabs(json_number_value(e));
        if (x[n] >= *worst) {
            *worst = x[n];
            *worst_id = json_string_value(json_object_get(c, "id"));
        }
        n++;
    }
    if (n) {
        gsl_sort(x, 1, n);
        *median = gsl_stats_median_from_sorted_data(x, 1, n);
    }
    colo_free(x);
    return n;
}

/* Appends {what, cases, median_error, worst_error, worst_case} to applies, or what to
 * not_covered when no case is picked. Nonzero when out of memory. */
static int add(json_t *cases, json_t *applies, json_t *uncovered, const char *what, pick_fn pick,
               const void *arg)
{
    double med = 0, worst = 0;
    const char *id;
    size_t n = errors_of(cases, pick, arg, &med, &worst, &id);
    while (!n && *what == ' ') /* listed apart from what it was under */
        what++;
    if (!n) return json_array_append_new(uncovered, json_pack("{s:s,s:n}", "what", what, "note"));
    return json_array_append_new(applies, json_pack("{s:s,s:I,s:f,s:f,s:s}", "what", what, "cases",
                                                    (json_int_t)n, "median_error", med,
                                                    "worst_error", worst, "worst_case", id));
}

json_t *colo_accuracy_json(const colo_accuracy_facts_t *f, const char *path, colo_error_t *err)
{
    json_t *rec, *out = NULL;
    char *text;
    size_t len;
    if (colo_json_read_file(path, &rec, &text, &len, err)) return NULL;
    colo_free(text);
    json_t *cases = json_object_get(rec, "cases");
    json_t *applies = json_array(), *uncovered = json_array();
    static const char *const mech[] = {"timeslice", "mps", "mig", "green"};
    static const char *const mech_words[] = {"time-slicing", "MPS", "MIG", "Green Contexts"};
    int bad = !applies || !uncovered;
    char what[256];
    for (int m = 0; m < 4 && !bad; m++) {
        if (!f->mechanism[m]) continue;
        snprintf(what, sizeof what, "%s", mech_words[m]);
        bad |= add(cases, applies, uncovered, what, by_mechanism, mech[m]);
        if (m == COLO_SHARE_GREEN && !bad) /* the SMs' share of DRAM bandwidth, measured alone */
            bad |= add(cases, applies, uncovered, "  a context's DRAM bandwidth", by_category,
                       "green_bw");
        if (f->colocated && !bad) { /* tenants side by side under this mechanism */
            snprintf(what, sizeof what, "  tenants side by side under %s", mech_words[m]);
            bad |= add(cases, applies, uncovered, what, colocated_under, mech[m]);
        }
    }
    if (f->n_moved && !bad) { /* one line: the record's cases are of other pairs of GPUs */
        int used = snprintf(what, sizeof what, "a model moved between GPUs, any pair (here ");
        for (size_t k = 0; k < f->n_moved && used >= 0 && (size_t)used < sizeof what; k++)
            used += snprintf(what + used, sizeof what - (size_t)used, "%s%s to %s%s", k ? ", " : "",
                             f->moved[k][0], f->moved[k][1], k + 1 == f->n_moved ? ")" : "");
        bad |= add(cases, applies, uncovered, what, by_category, "cross_gpu");
    }
    if (f->n_moved && !bad)
        bad |= add(cases, applies, uncovered, "  its kernels, one by one (GEMMs)", by_category,
                   "kernels");
    if (f->batch_scaled && !bad)
        bad |= add(cases, applies, uncovered, "a batch size scaled from a trace's", by_category,
                   "batch");
    if (f->host && !bad)
        bad |= add(cases, applies, uncovered, "a framework's host time (eager, graphs)",
                   by_category, "host");
    if (f->precision && !bad)
        bad |=
            add(cases, applies, uncovered, "a model at two precisions", by_category, "precision");
    for (size_t g = 0; g < f->n_gpus && !bad; g++) {
        snprintf(what, sizeof what, "on %s (%s)", f->gpu[g],
                 f->calibrated[g] ? "calibrated" : "datasheet values");
        bad |= add(cases, applies, uncovered, what, by_gpu, f->gpu[g]);
    }
    if (f->llm && !bad)
        bad |= json_array_append_new(
            uncovered, json_pack("{s:s,s:s}", "what", "LLM tenants", "note",
                                 "docs/llm.md compares them with Vidur, a simulator"));
    double med = 0, worst;
    const char *id;
    size_t n = bad ? 0 : errors_of(cases, any_case, NULL, &med, &worst, &id);
    if (!bad)
        out = json_pack("{s:s,s:I,s:f,s:O,s:O}", "record", "validation/recorded.json", "cases",
                        (json_int_t)n, "median_error", med, "applies", applies, "not_covered",
                        uncovered);
    json_decref(applies);
    json_decref(uncovered);
    json_decref(rec);
    if (!out) colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    return out;
}

json_t *colo_accuracy_find(const colo_accuracy_facts_t *f)
{
    char *path = colo_accuracy_record_path();
    char msg[3072];
    if (!path) {
        char where[2048];
        colo_datadir_search_path(where, sizeof where);
        snprintf(msg, sizeof msg, "no validation record (validation/recorded.json) in %s", where);
        return json_pack("{s:n,s:s}", "record", "error", msg);
    }
    colo_error_t err;
    colo_error_clear(&err);
    json_t *acc = colo_accuracy_json(f, path, &err);
    if (!acc) {
        colo_error_format(&err, msg, sizeof msg);
        acc = json_pack("{s:s,s:s}", "record", "validation/recorded.json", "error", msg);
    }
    colo_free(path);
    return acc;
}

void colo_accuracy_print(json_t *acc, FILE *out)
{
    if (!acc) return;
    const char *why = json_string_value(json_object_get(acc, "error"));
    if (why) {
        fprintf(out, "\naccuracy: unknown: %s\n", why);
        return;
    }
    fprintf(out,
            "\naccuracy: %lld published measurements, median error %.1f %% (colosim validate); "
            "those of the kind made here:\n",
            (long long)json_integer_value(json_object_get(acc, "cases")),
            100 * json_number_value(json_object_get(acc, "median_error")));
    size_t i;
    json_t *a;
    json_array_foreach(json_object_get(acc, "applies"), i, a)
    {
        const char *what = json_string_value(json_object_get(a, "what"));
        if (strlen(what) > 44) { /* on a line of its own, the figures under it in their column */
            fprintf(out, "  %s\n", what);
            what = "";
        }
        fprintf(out, "  %-44s %3lld cases, median %5.1f %%, worst %5.1f %% (%s)\n", what,
                (long long)json_integer_value(json_object_get(a, "cases")),
                100 * json_number_value(json_object_get(a, "median_error")),
                100 * json_number_value(json_object_get(a, "worst_error")),
                json_string_value(json_object_get(a, "worst_case")));
    }
    json_array_foreach(json_object_get(acc, "not_covered"), i, a)
    {
        const char *note = json_string_value(json_object_get(a, "note"));
        fprintf(out, "  %-44s no published case covers it%s%s\n",
                json_string_value(json_object_get(a, "what")), note ? "; " : "", note ? note : "");
    }
}
