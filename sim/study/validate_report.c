/* validate_report.c: the validation suite's results: the median error, the JSON record, the
 * table, the Markdown tables of docs/validation.md, and the check against a recorded run. */
#include "validate.h"
#include "alloc.h"
#include "atomic_file.h"
#include "number.h"
#include "errors.h"
#include "json_lines.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define BEGIN_MARK "<!-- colosim validate: begin -->"
#define END_MARK "<!-- colosim validate: end -->"

double colo_vsuite_median(const colo_vsuite_t *s, bool calibration, size_t *n)
{
    double *x = colo_calloc(s->n_cases + 1, sizeof *x);
    size_t m = 0;
    for (size_t i = 0; x && i < s->n_cases; i++)
        if (s->cases[i].calibration == calibration) x[m++] = fabs(s->cases[i].error);
    if (n) *n = m;
    double med = NAN;
    if (x && m) {
        gsl_sort(x, 1, m);
        med = gsl_stats_median_from_sorted_data(x, 1, m);
    }
    colo_free(x);
    return med;
}

json_t *colo_vsuite_json(const colo_vsuite_t *s)
{
    json_t *cases = json_array(), *doc = NULL;
    for (size_t i = 0; cases && i < s->n_cases; i++) {
        const colo_vcase_t *c = &s->cases[i];
        json_t *e =
            json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "id", c->id, "source",
                      s->sources[c->source].name, "category", c->category, "role",
                      c->calibration ? "calibration" : "validation", "what", c->what, "published",
                      c->published, "predicted", c->predicted, "error", c->error, "from", c->from);
        if (e && c->mechanism[0]) json_object_set_new(e, "mechanism", json_string(c->mechanism));
        if (e && c->gpu[0]) json_object_set_new(e, "gpu", json_string(c->gpu));
        if (e && c->substitute) json_object_set_new(e, "substitute", json_string(c->substitute));
        if (e && c->cause) json_object_set_new(e, "cause", json_string(c->cause));
        if (!e || json_array_append_new(cases, e)) {
            json_decref(cases);
            return NULL;
        }
    }
    size_t nv, nc;
    double mv = colo_vsuite_median(s, false, &nv), mc = colo_vsuite_median(s, true, &nc);
    json_t *sources = json_array();
    for (size_t i = 0; sources && i < s->n_sources; i++) {
        const colo_vsource_t *v = &s->sources[i];
        json_t *e = json_pack("{s:s, s:s}", "name", v->name, "cite", v->cite);
        if (e && v->calibrates) json_object_set_new(e, "calibrates", json_string(v->calibrates));
        if (!e || json_array_append_new(sources, e)) {
            json_decref(sources);
            sources = NULL;
        }
    }
    if (cases && sources)
        doc = json_pack("{s:i, s:o, s:o, s:{s:i, s:o, s:i, s:o}}", "colosim_validation", 1,
                        "sources", sources, "cases", cases, "summary", "validation_cases", (int)nv,
                        "median_abs_error", nv ? json_real(mv) : json_null(), "calibration_cases",
                        (int)nc, "median_abs_error_calibration", nc ? json_real(mc) : json_null());
    else {
        json_decref(cases);
        json_decref(sources);
    }
    return doc;
}

/* What a case's figures are in: a ratio of two runs, or its metric's unit. */
static const char *case_unit(const colo_vcase_t *c)
{
    const char *m = c->run.metric;
    if (c->has_over) return "x";
    if (strstr(m, "_ms")) return "ms";
    if (strstr(m, "per_s") || strstr(m, "rps")) return "/s";
    return "";
}

void colo_vsuite_print(const colo_vsuite_t *s, FILE *f)
{
    int w = 4;
    for (size_t i = 0; i < s->n_cases; i++)
        if ((int)strlen(s->cases[i].id) > w) w = (int)strlen(s->cases[i].id);
    fprintf(f, "%-*s %-10s %10s %10s %-2s %8s\n", w, "case", "category", "published", "predicted",
            "", "error");
    for (int cal = 0; cal < 2; cal++) {
        size_t n;
        double med = colo_vsuite_median(s, cal, &n);
        if (!n) continue;
        if (cal) fprintf(f, "calibration cases (their source also set a parameter: not counted)\n");
        for (size_t i = 0; i < s->n_cases; i++) {
            const colo_vcase_t *c = &s->cases[i];
            if (c->calibration != cal) continue;
            char pub[32], pred[32], e[32];
            fprintf(f, "%-*s %-10s %s %s %-2s %7s%%%s\n", w, c->id, c->category,
                    colo_number_cell(pub, sizeof pub, 10, 3, c->published),
                    colo_number_cell(pred, sizeof pred, 10, 3, c->predicted), case_unit(c),
                    colo_number_text(e, sizeof e, 1, true, 100 * c->error),
                    fabs(c->error) > 0.5 ? (c->cause ? " (cause stated)" : " (no cause stated)")
                                         : "");
        }
        char m[32];
        fprintf(f, "median |error| over %zu %s cases: %s %%\n", n,
                cal ? "calibration" : "validation",
                colo_number_text(m, sizeof m, 1, false, 100 * med));
    }
    size_t nv;
    colo_vsuite_median(s, false, &nv);
    if (!nv) fprintf(f, "no validation cases: every source here also set a parameter\n");
    fprintf(f, "%zu cases from %zu sources, %zu simulations; x: a ratio of two runs\n", s->n_cases,
            s->n_sources, s->runs);
}

/* Markdown cell text: pipes and newlines would break the table. */
static void cell(FILE *f, const char *t)
{
    for (; t && *t; t++)
        fputs(*t == '|' ? "\\|" : *t == '\n' ? " " : (char[2]){*t, 0}, f);
}

static void md_tables(const colo_vsuite_t *s, FILE *f)
{
    fprintf(f, "%s\n<!-- written by colosim validate --markdown; do not edit by hand -->\n\n",
            BEGIN_MARK);
    for (int cal = 0; cal < 2; cal++) {
        size_t n;
        double med = colo_vsuite_median(s, cal, &n);
        if (!n) continue;
        if (cal)
            fprintf(f, "\n**Calibration cases** (their source also set a model parameter: listed, "
                       "not counted)\n\n");
        fprintf(f, "| case | category | source | what | published | predicted | error |\n");
        fprintf(f, "|---|---|---|---|---:|---:|---:|\n");
        for (size_t i = 0; i < s->n_cases; i++) {
            const colo_vcase_t *c = &s->cases[i];
            if (c->calibration != cal) continue;
            fprintf(f, "| `%s` | %s | %s | ", c->id, c->category, s->sources[c->source].name);
            cell(f, c->what);
            if (c->substitute) fputs(" (substitute)", f);
            if (fabs(c->error) > 0.5 && c->cause) fputs(" (cause below)", f);
            char e[32];
            fprintf(f, " | %.4g | %.4g | %s %% |\n", c->published, c->predicted,
                    colo_number_text(e, sizeof e, 1, true, 100 * c->error));
        }
        char m[32];
        fprintf(f, "\n**Median absolute error over the %zu %s cases: %s %%.**\n", n,
                cal ? "calibration" : "validation",
                colo_number_text(m, sizeof m, 1, false, 100 * med));
    }
    fprintf(f, "\nSubstitutes, and the causes of errors above 50 %%:\n\n");
    for (size_t i = 0; i < s->n_cases; i++) {
        const colo_vcase_t *c = &s->cases[i];
        bool big = fabs(c->error) > 0.5 && c->cause;
        if (!c->substitute && !big) continue;
        fprintf(f, "- `%s`:", c->id);
        if (c->substitute) {
            fputs(" *substitute:* ", f);
            cell(f, c->substitute);
            fputs(big ? "." : "", f);
        }
        if (big) {
            fputs(" *cause:* ", f);
            cell(f, c->cause);
        }
        fputs("\n", f);
    }
    fprintf(f, "\nSources:\n\n");
    for (size_t i = 0; i < s->n_sources; i++) {
        const colo_vsource_t *v = &s->sources[i];
        fprintf(f, "- **%s** (`%s`): ", v->name, v->file);
        cell(f, v->cite);
        if (v->setup) {
            fputs(". ", f);
            cell(f, v->setup);
        }
        if (v->calibrates) {
            fputs(". *Also set:* ", f);
            cell(f, v->calibrates);
        }
        fputs("\n", f);
    }
    fprintf(f, "\n%s\n", END_MARK);
}

int colo_vsuite_markdown(const colo_vsuite_t *s, const char *md, colo_error_t *err)
{
    char *text = NULL;
    size_t len = 0;
    struct stat st;
    bool absent = stat(md, &st) != 0;
    if (absent || !S_ISREG(st.st_mode))
        return colo_error_set(err, COLO_EINVAL, md, 0, NULL,
                              "%s: --markdown writes into an existing file, between its '%s' and "
                              "'%s' lines",
                              absent ? "no such file" : "not a file", BEGIN_MARK, END_MARK);
    int rc = colo_read_file(md, &text, &len, err);
    if (rc) return rc;
    char *t = colo_realloc(text, len + 1);
    if (!t) {
        colo_free(text);
        return colo_error_set(err, COLO_ENOMEM, md, 0, NULL, "out of memory");
    }
    text = t;
    text[len] = '\0';
    char *a = strstr(text, BEGIN_MARK), *b = a ? strstr(a, END_MARK) : NULL;
    if (!a || !b) {
        colo_free(text);
        return colo_error_set(err, COLO_EINVAL, md, 0, NULL,
                              "no '%s' ... '%s' lines to put the table between", BEGIN_MARK,
                              END_MARK);
    }
    b += strlen(END_MARK);
    if (*b == '\n') b++;
    colo_atomic_file_t af;
    rc = colo_atomic_open(&af, md, err);
    if (!rc) {
        fwrite(text, 1, (size_t)(a - text), af.f);
        md_tables(s, af.f);
        fputs(b, af.f);
        rc = colo_atomic_commit(&af, err);
    }
    colo_free(text);
    return rc;
}

int colo_vsuite_check(const colo_vsuite_t *s, const char *recorded, double tolerance, FILE *report,
                      colo_error_t *err)
{
    json_t *doc;
    char *text;
    size_t len;
    int rc = colo_json_read_file(recorded, &doc, &text, &len, err);
    if (rc) return rc;
    colo_free(text);
    json_t *cases = json_object_get(doc, "cases");
    if (!json_is_array(cases)) {
        json_decref(doc);
        return colo_error_set(err, COLO_EINVAL, recorded, 1, "cases",
                              "missing: not a colosim validate -o file");
    }
    int failed = 0;
    for (size_t i = 0; i < s->n_cases; i++) {
        const colo_vcase_t *c = &s->cases[i];
        json_t *old = NULL, *e;
        size_t k;
        json_array_foreach(cases, k, e)
        {
            const char *id = json_string_value(json_object_get(e, "id"));
            if (id && strcmp(id, c->id) == 0) old = e;
        }
        if (!old) {
            fprintf(report, "%s:%d: case %s is not in %s: record it (validation/record.sh)\n",
                    s->sources[c->source].file, c->line, c->id, recorded);
            failed++;
            continue;
        }
        double was = fabs(json_number_value(json_object_get(old, "error")));
        if (fabs(c->error) > was + tolerance) {
            char now_t[32], was_t[32];
            fprintf(report,
                    "%s:%d: case %s: |error| %s %% is more than %.0f point%s past the recorded "
                    "%s %%\n",
                    s->sources[c->source].file, c->line, c->id,
                    colo_number_text(now_t, sizeof now_t, 1, false, 100 * fabs(c->error)),
                    100 * tolerance, tolerance == 0.01 ? "" : "s",
                    colo_number_text(was_t, sizeof was_t, 1, false, 100 * was));
            failed++;
        }
        if (fabs(c->error) > 0.5 && !c->cause) {
            fprintf(report, "%s:%d: case %s: error %+.1f %% above 50 %% without a stated cause\n",
                    s->sources[c->source].file, c->line, c->id, 100 * c->error);
            failed++;
        }
    }
    size_t k;
    json_t *e;
    json_array_foreach(cases, k, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        bool found = false;
        for (size_t i = 0; id && i < s->n_cases && !found; i++)
            found = strcmp(s->cases[i].id, id) == 0;
        if (!found) {
            fprintf(report, "%s: recorded case %s is no longer in the suite: record again\n",
                    recorded, id ? id : "(without id)");
            failed++;
        }
    }
    json_decref(doc);
    return failed;
}
