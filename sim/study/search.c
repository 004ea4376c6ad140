/* search.c: SLO capacity search: for each point of a study, bisection on one key, each value
 * judged over replications by a lower confidence bound on every tenant's SLO attainment. */
#include "study.h"
#include "study_internal.h"
#include "alloc.h"
#include "atomic_file.h"
#include "csv.h"
#include "errors.h"
#include "results.h"

#include <gsl/gsl_cdf.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Whether every tenant with an SLO meets the goal at this value, over the replications. */
static int passes(const colo_study_t *s, char **sets, size_t n, double x, bool *ok,
                  colo_error_t *err)
{
    char kv[256], seed[64], num_text[64];
    colo_study_float_text(num_text, sizeof num_text, 9, x);
    snprintf(kv, sizeof kv, "%s=%s", s->search.key, num_text);
    sets[n] = kv;
    sets[n + 1] = seed;
    int reps = s->search.replications;
    double sum[64] = {0}, sq[64] = {0};
    int cnt[64] = {0}; /* replications in which tenant i had arrivals (an attainment) */
    size_t nt = 0;
    bool any_slo = false;
    int rc = 0;
    for (int r = 0; r < reps && !rc; r++) {
        snprintf(seed, sizeof seed, "seed=%d", r + 1);
        json_t *res;
        rc = colo_study_simulate(s->scenario, sets, n + 2, &res, err);
        if (rc) break;
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(res, "tenants"), i, t)
        {
            if (i >= 64) break;
            json_t *a = json_object_get(t, "slo_attainment");
            if (json_is_number(json_object_get(t, "slo_ms")) || json_is_number(a)) any_slo = true;
            if (!json_is_number(a)) continue;
            cnt[i]++;
            double v = json_number_value(a);
            sum[i] += v;
            sq[i] += v * v;
            if (i + 1 > nt) nt = i + 1;
        }
        json_decref(res);
    }
    sets[n] = sets[n + 1] = NULL;
    if (rc) return rc;
    if (!any_slo)
        return colo_error_set(err, COLO_EINVAL, s->scenario, 0, NULL,
                              "no tenant has an SLO (slo_ms, or an LLM tenant's slo_ttft_ms or slo_tpot_ms): "
                              "search has nothing to meet");
    /* A replication in which a tenant had no arrivals has no attainment (null: no request to
     * meet or miss): the mean and its confidence bound are over the replications that have one. */
    *ok = true;
    for (size_t i = 0; i < nt; i++) {
        if (!cnt[i]) continue;
        double k = cnt[i];
        double mean = sum[i] / k;
        double var = k > 1 ? (sq[i] - k * mean * mean) / (k - 1) : 0;
        double t = k > 1 ? gsl_cdf_tdist_Pinv(s->search.confidence, k - 1) : 0;
        double lower = mean - t * sqrt(var > 0 ? var : 0) / sqrt(k);
        if (lower < s->search.attainment - 1e-12) *ok = false;
    }
    return 0;
}

int colo_search_point(const colo_study_t *s, char **sets, size_t n, double *capacity,
                      bool *lo_fails, bool *hi_passes, colo_error_t *err)
{
    double lo = s->search.lo, hi = s->search.hi;
    bool ok;
    *lo_fails = *hi_passes = false;
    int rc = passes(s, sets, n, lo, &ok, err);
    if (rc) return rc;
    if (!ok) {
        *lo_fails = true;
        *capacity = lo;
        return 0;
    }
    if ((rc = passes(s, sets, n, hi, &ok, err))) return rc;
    if (ok) {
        *hi_passes = true;
        *capacity = hi;
        return 0;
    }
    while (hi - lo > s->search.tolerance * lo) {
        double mid = 0.5 * (lo + hi);
        if ((rc = passes(s, sets, n, mid, &ok, err))) return rc;
        if (ok)
            lo = mid;
        else
            hi = mid;
    }
    *capacity = lo;
    return 0;
}

static json_t *search_point(const colo_study_t *s, size_t i, char **sets, size_t n)
{
    colo_error_t err;
    colo_error_clear(&err);
    double cap = 0;
    bool lo_fails, hi_passes;
    int rc = colo_search_point(s, sets, n, &cap, &lo_fails, &hi_passes, &err);
    json_t *doc =
        json_pack("{s:I,s:o,s:o}", "point", (json_int_t)i, "values", colo_study_values_json(s, i),
                  "overrides", colo_study_string_array(sets, n));
    if (!doc) return NULL;
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        json_object_set_new(doc, "error", json_string(msg));
        return doc;
    }
    json_object_set_new(doc, "capacity", json_real(cap));
    json_object_set_new(doc, "bracket",
                        json_string(lo_fails    ? "below lo"
                                    : hi_passes ? "at or above hi"
                                                : "found"));
    return doc;
}

int colo_search_run(const colo_study_t *s, const colo_sweep_opts_t *o, colo_error_t *err)
{
    if (!s->search.given)
        return colo_error_set(err, COLO_EINVAL, s->path, 0, "search",
                              "the study has no search = { key = \"load_scale\"; ... } section");
    const char *dir = o->out_dir ? o->out_dir : s->out_dir;
    json_t *points, *doc;
    int rc = colo_study_run_and_gather(s, o, "search", search_point, "search", &points, &doc, err);
    if (rc == 1) return 0; /* another process gathers the results */
    if (!rc) {
        json_object_set_new(doc, "search",
                            json_pack("{s:s,s:f,s:f,s:f,s:i,s:f,s:f}", "key", s->search.key, "lo",
                                      s->search.lo, "hi", s->search.hi, "tolerance",
                                      s->search.tolerance, "replications", s->search.replications,
                                      "confidence", s->search.confidence, "attainment",
                                      s->search.attainment));
    }
    char *jpath = colo_study_joined(dir, "search.json"),
         *cpath = colo_study_joined(dir, "search.csv");
    if (!rc && (!jpath || !cpath))
        rc = colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    if (!rc) rc = colo_results_write(doc, jpath, err);
    colo_atomic_file_t af;
    if (!rc && !(rc = colo_atomic_open(&af, cpath, err))) {
        fputs("point", af.f);
        for (size_t a = 0; a < s->n_axes; a++) {
            fputc(',', af.f);
            colo_csv_write_field(af.f, s->axes[a].key);
        }
        fprintf(af.f, ",capacity_%s,bracket,error\n", s->search.key);
        size_t i;
        json_t *p;
        json_array_foreach(points, i, p)
        {
            fprintf(af.f, "%zu", i);
            for (size_t a = 0; a < s->n_axes; a++) {
                fputc(',', af.f);
                colo_csv_write_field(af.f, colo_study_value(s, i, a));
            }
            json_t *e = json_object_get(p, "error");
            if (e) {
                fputs(",,,", af.f);
                colo_csv_write_field(af.f, json_string_value(e));
                fputc('\n', af.f);
            } else {
                fprintf(af.f, ",%.6g,%s,\n", colo_study_num(p, "capacity"),
                        json_string_value(json_object_get(p, "bracket")));
            }
        }
        rc = colo_atomic_commit(&af, err);
    }
    if (!rc && !o->quiet) {
        printf("highest %s at which every tenant meets its SLO for >= %.4g of requests (%d "
               "replications, %.0f %% lower confidence bound)\n\n",
               s->search.key, s->search.attainment, s->search.replications,
               100 * s->search.confidence);
        for (size_t a = 0; a < s->n_axes; a++)
            printf("%-16.16s ", s->axes[a].key);
        printf("%12s\n", "capacity");
        size_t i;
        json_t *p;
        json_array_foreach(points, i, p)
        {
            for (size_t a = 0; a < s->n_axes; a++)
                printf("%-16.16s ", colo_study_value(s, i, a));
            json_t *e = json_object_get(p, "error");
            const char *br = json_string_value(json_object_get(p, "bracket"));
            if (e)
                printf("%12s  %s\n", "-", json_string_value(e));
            else
                printf("%12.4g%s\n", colo_study_num(p, "capacity"),
                       strcmp(br, "found") == 0      ? ""
                       : strcmp(br, "below lo") == 0 ? "  (fails even at lo)"
                                                     : "  (meets it at hi: raise hi)");
        }
        printf("\nwritten to %s and %s\n", jpath, cpath);
    }
    colo_free(jpath);
    colo_free(cpath);
    json_decref(points);
    json_decref(doc);
    return rc;
}
