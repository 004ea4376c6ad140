/* search.c: SLO capacity search: for each point of a study, bisection on one key, each value
 * judged on every tenant's SLO attainment, its requests pooled over the replications, with
 * Wilson score bounds saying whether they decide it. */
#include "study.h"
#include "scenario.h"
#include "cluster.h"
#include "study_internal.h"
#include "accuracy.h"
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

void colo_study_search_kv(const colo_study_t *s, double x, char *buf, size_t n)
{
    char num[64];
    if (s->search.integer)
        snprintf(num, sizeof num, "%.0f", x);
    else
        colo_study_float_text(num, sizeof num, 9, x);
    snprintf(buf, n, "%s=%s", s->search.key, num);
}

/* The requests of each tenant with an SLO over the runs so far at one value: arrived in the
 * measured window (n) and met within the SLO (m), pooled over replications. */
struct tally {
    size_t nt;
    bool any_slo;
    double n[64], m[64];
    int runs;
};

/* Runs replications first .. first + count - 1 (seeds first + 1, ...) at value x into *ta;
 * rep_ok[k] (when not NULL): whether replication first + k alone met the goal (every tenant's
 * attainment in it at least the goal: the point rule on its own requests). */
static int run_reps(const colo_study_t *s, char **sets, size_t n, double x, int first, int count,
                    struct tally *ta, bool *rep_ok, colo_error_t *err)
{
    char kv[320], seed[64];
    colo_study_search_kv(s, x, kv, sizeof kv);
    sets[n] = kv;
    sets[n + 1] = seed;
    int rc = 0;
    for (int r = first; r < first + count && !rc; r++) {
        snprintf(seed, sizeof seed, "seed=%d", r + 1);
        json_t *res;
        rc = colo_study_simulate(s, sets, n + 2, &res, err);
        if (rc) break;
        size_t i;
        json_t *t;
        if (rep_ok) rep_ok[r - first] = true;
        ta->runs++;
        json_array_foreach(json_object_get(res, "tenants"), i, t)
        {
            if (i >= 64) break;
            json_t *a = json_object_get(t, "slo_attainment");
            if (json_is_number(json_object_get(t, "slo_ms")) || json_is_number(a))
                ta->any_slo = true;
            if (!json_is_number(a)) continue; /* no arrivals: nothing to meet or miss */
            double v = json_number_value(a);
            double arrived = (double)json_integer_value(json_object_get(t, "arrived"));
            ta->n[i] += arrived;
            ta->m[i] += round(v * arrived);
            if (rep_ok && v < s->search.attainment - 1e-12) rep_ok[r - first] = false;
            if (i + 1 > ta->nt) ta->nt = i + 1;
        }
        json_decref(res);
    }
    sets[n] = sets[n + 1] = NULL;
    if (!rc && !ta->any_slo)
        rc = colo_error_set(
            err, COLO_EINVAL, s->scenario, 0, NULL,
            "no tenant has an SLO (slo_ms, or an LLM tenant's slo_ttft_ms or slo_tpot_ms): "
            "search has nothing to meet");
    return rc;
}

/* Wilson's score interval for m of n at one-sided confidence (z): its lower and upper ends. */
static void wilson(double m, double n, double z, double *lower, double *upper)
{
    double p = m / n, z2 = z * z;
    double centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    double half = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
    *lower = fmax(0, centre - half);
    *upper = fmin(1, centre + half);
}

/* What a tally says at the study's goal: the binding tenant (the lowest attainment, then the
 * lowest bound), its requests, attainment and Wilson bounds; pass: every tenant's pooled attainment
 * at least the goal (the rule); sure: the bounds decide it at the study's confidence (every lower
 * bound at least the goal, or some upper bound below it). */
struct verdict {
    bool pass, sure;
    double requests, attainment, lower, upper;
    double needed; /* requests at this attainment that would decide it (0: these do; -1: none) */
};

static struct verdict judge(const colo_study_t *s, const struct tally *ta)
{
    struct verdict v = {.pass = true, .sure = true, .attainment = 1, .lower = 1, .upper = 1};
    /* a value may be looked at up to `looks` times as its runs are lengthened: each look at
     * confidence 1 - (1 - c) / looks keeps the chance that any look decides it wrongly within
     * 1 - c (Bonferroni), as a fixed-length test at c would */
    int looks =
        s->search.max_replications > s->search.replications
            ? (s->search.max_replications + s->search.replications - 1) / s->search.replications
            : 1;
    double z = gsl_cdf_ugaussian_Pinv(1 - (1 - s->search.confidence) / looks),
           goal = s->search.attainment - 1e-12;
    bool all_above = true, one_below = false, have = false;
    for (size_t i = 0; i < ta->nt; i++) {
        if (ta->n[i] <= 0) continue;
        double lo, hi, p = ta->m[i] / ta->n[i];
        wilson(ta->m[i], ta->n[i], z, &lo, &hi);
        if (p < goal) v.pass = false;
        if (lo < goal) all_above = false;
        if (hi < goal) one_below = true;
        if (!have || p < v.attainment || (p == v.attainment && lo < v.lower)) {
            v.attainment = p, v.requests = ta->n[i], v.lower = lo, v.upper = hi;
            have = true;
        }
    }
    v.sure = all_above || one_below;
    /* the requests that would decide the binding tenant at this attainment (doubling) */
    v.needed = v.sure ? 0 : -1;
    for (double k = 2 * v.requests;
         !v.sure && have && v.attainment != s->search.attainment && k > 0 && k <= 1e12; k *= 2) {
        double lo, hi;
        wilson(v.attainment * k, k, z, &lo, &hi);
        if (lo >= goal || hi < goal) {
            v.needed = k;
            break;
        }
    }
    return v;
}

/* A value above lo at which the scenario cannot be set up (so many copies do not fit the GPU's
 * memory, or a MIG layout): nothing can run there, so it does not meet the goal (1, the
 * error cleared). Other errors stay errors (rc). */
static int cannot_hold(const colo_study_t *s, double x, int rc, colo_error_t *err)
{
    if (x <= s->search.lo || (rc != COLO_EINVAL && rc != COLO_ERANGE && rc != COLO_EUNSUPPORTED))
        return rc;
    colo_error_clear(err);
    return 1;
}

/* The point rule alone on replications first .. first + count - 1 (a replication's own
 * capacity is found with it); a value that cannot be set up does not pass. */
static int passes(const colo_study_t *s, char **sets, size_t n, double x, int first, int count,
                  bool *ok, colo_error_t *err)
{
    struct tally ta = {0};
    int rc = run_reps(s, sets, n, x, first, count, &ta, NULL, err);
    if (!rc) *ok = judge(s, &ta).pass;
    if (rc && (rc = cannot_hold(s, x, rc, err)) == 1) rc = 0, *ok = false;
    return rc;
}

enum { MAX_PROBES = 256 };

/* Whether [lo, hi] is still to be narrowed, and the value between to try: to the tolerance for
 * a number, to neighbours for a count (the largest count that passes is exact). */
static bool wide(const colo_study_t *s, double lo, double hi)
{
    return s->search.integer ? hi - lo > 1 : hi - lo > s->search.tolerance * lo;
}

static double between(const colo_study_t *s, double lo, double hi)
{
    return s->search.integer ? floor(0.5 * (lo + hi)) : 0.5 * (lo + hi);
}

/* The values tried at one point, and which replications passed at each. */
struct probes {
    int n, reps;
    double x[MAX_PROBES];
    struct verdict v[MAX_PROBES];
    int runs[MAX_PROBES];  /* replications run there */
    bool held[MAX_PROBES]; /* false: the scenario cannot be set up there */
    bool *ok;              /* ok[j * reps + r] */
};

static int probe(const colo_study_t *s, char **sets, size_t n, struct probes *pr, double x,
                 bool *ok, colo_error_t *err)
{
    bool *row = pr->n < MAX_PROBES ? pr->ok + (size_t)pr->n * (size_t)pr->reps : NULL;
    struct tally ta = {0};
    int rc = run_reps(s, sets, n, x, 0, pr->reps, &ta, row, err);
    struct verdict v = judge(s, &ta);
    /* requests too few to decide it: more seeds, a batch of replications at a time, up to
     * max_replications (the replications' own capacities keep to the first ones) */
    while (!rc && !v.sure && ta.runs < s->search.max_replications) {
        int more = s->search.max_replications - ta.runs;
        rc = run_reps(s, sets, n, x, ta.runs, more < pr->reps ? more : pr->reps, &ta, NULL, err);
        if (!rc) v = judge(s, &ta);
    }
    bool held = true;
    if (rc && (rc = cannot_hold(s, x, rc, err)) == 1) {
        rc = 0, held = false;
        v = (struct verdict){.pass = false, .sure = true};
        for (int r = 0; row && r < pr->reps; r++)
            row[r] = false;
    }
    if (!rc) *ok = v.pass;
    if (!rc && row) {
        pr->v[pr->n] = v;
        pr->runs[pr->n] = ta.runs;
        pr->held[pr->n] = held;
        pr->x[pr->n++] = x;
    }
    return rc;
}

/* Replication r's own capacity: the bracket the shared probes give it (the highest value it
 * passed at, the lowest above that it failed at), narrowed to the tolerance by runs of its
 * seed alone. */
static int rep_capacity(const colo_study_t *s, char **sets, size_t n, const struct probes *pr,
                        int r, double *cap, colo_error_t *err)
{
    double lo = -1, hi = -1;
    for (int j = 0; j < pr->n; j++)
        if (pr->ok[(size_t)j * (size_t)pr->reps + (size_t)r] && pr->x[j] > lo) lo = pr->x[j];
    if (lo < 0) { /* it failed at lo, the first value tried */
        *cap = s->search.lo;
        return 0;
    }
    for (int j = 0; j < pr->n; j++)
        if (!pr->ok[(size_t)j * (size_t)pr->reps + (size_t)r] && pr->x[j] > lo &&
            (hi < 0 || pr->x[j] < hi))
            hi = pr->x[j];
    int rc = 0;
    bool ok;
    if (hi < 0) { /* it passed at every value tried: is hi within it? */
        if (lo >= s->search.hi) {
            *cap = s->search.hi;
            return 0;
        }
        if ((rc = passes(s, sets, n, s->search.hi, r, 1, &ok, err))) return rc;
        if (ok) {
            *cap = s->search.hi;
            return 0;
        }
        hi = s->search.hi;
    }
    for (int step = 0; wide(s, lo, hi) && step < COLO_SEARCH_MAX_STEPS; step++) {
        double mid = between(s, lo, hi);
        if (mid <= lo || mid >= hi) break; /* neighbouring doubles: nothing between them */
        if ((rc = passes(s, sets, n, mid, r, 1, &ok, err))) return rc;
        if (ok)
            lo = mid;
        else
            hi = mid;
    }
    *cap = lo;
    return 0;
}

/* The values tried at one point, as search.json records them. NULL when out of memory. */
static json_t *probes_json(const struct probes *pr)
{
    json_t *a = json_array();
    for (int j = 0; a && j < pr->n; j++) {
        const struct verdict *v = &pr->v[j];
        const char *say = !pr->held[j] ? "cannot be set up"
                          : v->sure    ? (v->pass ? "passes" : "fails")
                                       : (v->pass ? "passes, undecided" : "fails, undecided");
        json_t *o = pr->held[j]
                        ? json_pack("{s:f,s:f,s:f,s:f,s:f,s:i,s:s}", "value", pr->x[j], "requests",
                                    v->requests, "attainment", v->attainment, "lower", v->lower,
                                    "upper", v->upper, "runs", pr->runs[j], "verdict", say)
                        : json_pack("{s:f,s:s}", "value", pr->x[j], "verdict", say);
        if (o && pr->held[j] && !v->sure)
            json_object_set_new(o, "requests_to_decide",
                                v->needed > 0 ? json_real(v->needed) : json_null());
        if (!o || json_array_append_new(a, o)) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Whether the probes that fix capacity cap (the value it passed at, the lowest above that it
 * failed at) were decided by their requests at the study's confidence. */
static bool decided(const struct probes *pr, double cap)
{
    double above = INFINITY;
    bool at = true, next = true;
    for (int j = 0; j < pr->n; j++) {
        bool sure = pr->v[j].sure; /* one that cannot be set up is sure (probe) */
        if (pr->x[j] == cap) at = sure;
        if (pr->x[j] > cap && pr->x[j] < above) above = pr->x[j], next = sure;
    }
    return at && next;
}

int colo_search_point(const colo_study_t *s, char **sets, size_t n, double *capacity,
                      bool *lo_fails, bool *hi_passes, bool *sure, double *rep_caps,
                      json_t **probes, colo_error_t *err)
{
    double lo = s->search.lo, hi = s->search.hi;
    bool ok;
    *lo_fails = *hi_passes = false;
    struct probes pr = {.reps = s->search.replications};
    pr.ok = colo_calloc((size_t)MAX_PROBES * (size_t)pr.reps, sizeof *pr.ok);
    if (!pr.ok) return colo_error_set(err, COLO_ENOMEM, s->scenario, 0, NULL, "out of memory");
    int rc = probe(s, sets, n, &pr, lo, &ok, err);
    if (!rc && !ok) {
        *lo_fails = true;
        *capacity = lo;
    }
    if (!rc && ok && !(rc = probe(s, sets, n, &pr, hi, &ok, err)) && ok) {
        *hi_passes = true;
        *capacity = hi;
    }
    for (int step = 0;
         !rc && !*lo_fails && !*hi_passes && wide(s, lo, hi) && step < COLO_SEARCH_MAX_STEPS;
         step++) {
        double mid = between(s, lo, hi);
        if (mid <= lo || mid >= hi) break; /* neighbouring doubles: nothing between them */
        if ((rc = probe(s, sets, n, &pr, mid, &ok, err))) break;
        if (ok)
            lo = mid;
        else
            hi = mid;
    }
    if (!rc && !*lo_fails && !*hi_passes) *capacity = lo;
    if (!rc && sure) *sure = decided(&pr, *capacity);
    for (int r = 0; !rc && rep_caps && r < pr.reps; r++)
        rc = rep_capacity(s, sets, n, &pr, r, &rep_caps[r], err);
    if (!rc && probes && !(*probes = probes_json(&pr)))
        rc = colo_error_set(err, COLO_ENOMEM, s->scenario, 0, NULL, "out of memory");
    colo_free(pr.ok);
    return rc;
}

/* The replications' own capacities, their mean and its two-sided confidence interval at the
 * search's confidence (Student t; none for one replication), its top raised by the bisection's
 * resolution: a replication's capacity c says only that it passes at c and fails at the next
 * value up (c + 1 for a count, c x (1 + tolerance) at most otherwise), so replications that all
 * found 6 copies put the capacity in [6, 7], not at 6 exactly. NULL when out of memory. */
static json_t *reps_json(const colo_study_t *s, const double *c)
{
    int k = s->search.replications;
    double mean = 0, var = 0;
    json_t *caps = json_array();
    for (int r = 0; r < k && caps; r++) {
        mean += c[r] / k;
        if (json_array_append_new(caps, json_real(c[r]))) json_decref(caps), caps = NULL;
    }
    for (int r = 0; r < k; r++)
        var += k > 1 ? (c[r] - mean) * (c[r] - mean) / (k - 1) : 0;
    double half =
        k > 1 ? gsl_cdf_tdist_Pinv(0.5 + 0.5 * s->search.confidence, k - 1) * sqrt(var) / sqrt(k)
              : 0;
    /* no capacity is below 0: the interval is cut there */
    double step = s->search.integer ? 1 : s->search.tolerance * mean;
    json_t *ci = k > 1 ? json_pack("[f,f]", fmax(0, mean - half), mean + half + step) : json_null();
    return caps && ci ? json_pack("{s:o,s:f,s:o,s:f}", "capacities", caps, "mean", mean, "ci", ci,
                                  "ci_level", s->search.confidence)
                      : NULL;
}

/* What the tenants offer with the search key at x, in requests per second: the open-loop ones'
 * rates (closed loops, offline bursts and replayed logs offer what they are served, and count
 * 0), or -1 when it cannot be told (a cluster, or the scenario does not load). */
static double offered_at(const colo_study_t *s, char **sets, size_t n, double x)
{
    char kv[320];
    colo_study_search_kv(s, x, kv, sizeof kv);
    sets[n] = kv;
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc = NULL;
    double rps = -1;
    if (colo_cluster_detect(s->scenario, (const char *const *)sets, n + 1, &err) == 0 &&
        colo_scenario_load(s->scenario, (const char *const *)sets, n + 1, &sc, &err) == 0) {
        rps = 0;
        for (size_t i = 0; i < sc->n_tenants; i++)
            rps += colo_arrival_rate(&sc->tenants[i].arrival); /* load_scale applied */
    }
    colo_scenario_free(sc);
    sets[n] = NULL;
    return rps;
}

static json_t *search_point(const colo_study_t *s, size_t i, char **sets, size_t n)
{
    colo_error_t err;
    colo_error_clear(&err);
    double cap = 0;
    bool lo_fails, hi_passes, sure = false;
    double *reps = colo_calloc((size_t)s->search.replications, sizeof *reps);
    json_t *probes = NULL;
    int rc = reps ? colo_search_point(s, sets, n, &cap, &lo_fails, &hi_passes, &sure, reps, &probes,
                                      &err)
                  : colo_error_set(&err, COLO_ENOMEM, s->scenario, 0, NULL, "out of memory");
    json_t *doc =
        json_pack("{s:I,s:o,s:o}", "point", (json_int_t)i, "values", colo_study_values_json(s, i),
                  "overrides", colo_study_string_array(sets, n));
    if (!doc) {
        colo_free(reps);
        return NULL;
    }
    if (rc) {
        colo_free(reps);
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        json_object_set_new(doc, "error", json_string(msg));
        return doc;
    }
    json_object_set_new(doc, "capacity", json_real(cap));
    json_object_set_new(doc, "decided", json_boolean(sure));
    json_object_set_new(doc, "probes", probes);
    double rps = offered_at(s, sets, n, cap);
    if (rps >= 0) json_object_set_new(doc, "capacity_rps", json_real(rps));
    json_object_set_new(doc, "replications", reps_json(s, reps));
    colo_free(reps);
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
                            json_pack("{s:s,s:f,s:f,s:f,s:i,s:f,s:f,s:s}", "key", s->search.key,
                                      "lo", s->search.lo, "hi", s->search.hi, "tolerance",
                                      s->search.tolerance, "replications", s->search.replications,
                                      "confidence", s->search.confidence, "attainment",
                                      s->search.attainment, "rule",
                                      "a value passes when every tenant's attainment, its "
                                      "requests pooled over the replications, is at least the "
                                      "goal; each value's one-sided Wilson score bounds at the "
                                      "confidence say whether its requests decide it, and one "
                                      "they do not is run with more seeds, up to "
                                      "max_replications"));
        json_object_set_new(json_object_get(doc, "search"), "integer",
                            json_boolean(s->search.integer));
        json_object_set_new(json_object_get(doc, "search"), "max_replications",
                            json_integer(s->search.max_replications));
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
        fprintf(af.f, ",capacity_%s,capacity_rps,bracket,replications_mean,ci_low,ci_high,error\n",
                s->search.key);
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
                fputs(",,,,,,,", af.f);
                colo_csv_write_field(af.f, json_string_value(e));
                fputc('\n', af.f);
            } else {
                json_t *rp = json_object_get(p, "replications"), *ci = json_object_get(rp, "ci");
                fprintf(af.f, ",%.6g,", colo_study_num(p, "capacity"));
                if (json_is_number(json_object_get(p, "capacity_rps")))
                    fprintf(af.f, "%.6g", colo_study_num(p, "capacity_rps"));
                fprintf(af.f, ",%s,%.6g,", json_string_value(json_object_get(p, "bracket")),
                        colo_study_num(rp, "mean"));
                if (json_is_array(ci))
                    fprintf(af.f, "%.6g,%.6g", json_number_value(json_array_get(ci, 0)),
                            json_number_value(json_array_get(ci, 1)));
                else
                    fputc(',', af.f);
                fputs(",\n", af.f);
            }
        }
        rc = colo_atomic_commit(&af, err);
    }
    if (!rc && !o->quiet) {
        printf("highest %s at which every tenant meets its SLO for >= %.4g of its requests, "
               "pooled over %d replications (up to %d where their %.0f %% Wilson bounds cannot "
               "decide); each replication's own capacity by the same rule, their mean and its "
               "%.0f %% confidence interval; a capacity still undecided is marked ?\n\n",
               s->search.key, s->search.attainment, s->search.replications,
               s->search.max_replications, 100 * s->search.confidence, 100 * s->search.confidence);
        for (size_t a = 0; a < s->n_axes; a++)
            printf("%-16.16s ", s->axes[a].key);
        printf("%12s  %10s  %s\n", "capacity", "req/s", "replications' own: mean [CI]");
        size_t i;
        json_t *p;
        json_array_foreach(points, i, p)
        {
            for (size_t a = 0; a < s->n_axes; a++)
                printf("%-16.16s ", colo_study_value(s, i, a));
            json_t *e = json_object_get(p, "error");
            const char *br = json_string_value(json_object_get(p, "bracket"));
            if (e)
                printf("%12s  %10s  %s\n", "-", "-", json_string_value(e));
            else {
                json_t *rp = json_object_get(p, "replications"), *ci = json_object_get(rp, "ci");
                char own[96] = "";
                if (json_is_array(ci))
                    snprintf(own, sizeof own, "  %.4g [%.4g, %.4g]", colo_study_num(rp, "mean"),
                             json_number_value(json_array_get(ci, 0)),
                             json_number_value(json_array_get(ci, 1)));
                char rps[32] = "-";
                if (json_is_number(json_object_get(p, "capacity_rps")))
                    snprintf(rps, sizeof rps, "%.4g", colo_study_num(p, "capacity_rps"));
                bool sure = json_is_true(json_object_get(p, "decided"));
                printf("%12.4g%s %10s%s%s\n", colo_study_num(p, "capacity"), sure ? " " : "?", rps,
                       own,
                       strcmp(br, "found") == 0      ? ""
                       : strcmp(br, "below lo") == 0 ? "  (fails even at lo)"
                                                     : "  (meets it at hi: raise hi)");
            }
        }
        bool any = false;
        json_array_foreach(points, i, p) any |= json_is_false(json_object_get(p, "decided"));
        if (any)
            printf("\n?: the runs at the capacity or just above it have too few requests to tell "
                   "them apart at %.0f %%, even with %d replications (search.json: probes, "
                   "requests_to_decide): raise max_replications, or run longer\n",
                   100 * s->search.confidence, s->search.max_replications);
        colo_accuracy_print(json_object_get(doc, "accuracy"), stdout);
        printf("\nwritten to %s and %s\n", jpath, cpath);
    }
    colo_free(jpath);
    colo_free(cpath);
    json_decref(points);
    json_decref(doc);
    return rc;
}
