/* study.c: study files, and sweeps on local cores with resume; the search is in search.c, the
 * pool of worker processes in point_pool.c. */
#define _GNU_SOURCE /* strdup in the child; sysconf names */
#include "study.h"
#include "accuracy.h"
#include "study_internal.h"
#include "alloc.h"
#include "atomic_file.h"
#include "cfg.h"
#include "cluster.h"
#include "csv.h"
#include "json_lines.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"
#include "stop.h"
#include "version.h"

#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_AXIS_VALUES 100000
#define MAX_POINTS 1000000

/* ---- reading ---- */

/* rel joined to dir, or NULL when out of memory. */
char *colo_study_joined(const char *dir, const char *rel)
{
    char *p;
    return colo_path_join(dir, rel, &p) ? NULL : p;
}

/* A number to digits significant digits as --set takes it, kept a float for the loader: 2 -> "2.0".
 */
void colo_study_float_text(char *buf, size_t n, int digits, double v)
{
    snprintf(buf, n, "%.*g", digits, v);
    if (!strpbrk(buf, ".eEn")) strncat(buf, ".0", n - strlen(buf) - 1);
}

/* A scalar setting as --set would take it. */
static char *scalar_text(const config_setting_t *v)
{
    char buf[64];
    switch (config_setting_type(v)) {
    case CONFIG_TYPE_STRING:
        return colo_strdup(config_setting_get_string(v));
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        snprintf(buf, sizeof buf, "%lld", config_setting_get_int64(v));
        return colo_strdup(buf);
    case CONFIG_TYPE_FLOAT:
        colo_study_float_text(buf, sizeof buf, 15, config_setting_get_float(v));
        return colo_strdup(buf);
    case CONFIG_TYPE_BOOL:
        return colo_strdup(config_setting_get_bool(v) ? "true" : "false");
    default:
        return NULL;
    }
}

static bool valid_key(const char *k)
{
    return k[0] && !strchr(k, '=') && !strchr(k, ' ');
}

static int read_axis(const colo_cfg_reader_t *r, const config_setting_t *g, colo_axis_t *a)
{
    static const char *const keys[] = {"key", "values", "from", "to", "steps", NULL};
    if (!config_setting_is_group(g))
        return colo_cfg_error(r, g, COLO_EINVAL,
                              "each axis is a group { key = ...; values = [...]; }");
    int rc = colo_cfg_check_keys(r, g, keys);
    const char *key;
    if (rc || (rc = colo_cfg_string(r, g, "key", COLO_CFG_REQUIRED, &key))) return rc;
    if (!valid_key(key))
        return colo_cfg_error(r, config_setting_get_member(g, "key"), COLO_EINVAL,
                              "'%s' is not a scenario key", key);
    if (!(a->key = colo_strdup(key))) return COLO_ENOMEM;
    a->line = (int)config_setting_source_line(config_setting_get_member(g, "key"));
    const config_setting_t *vals = config_setting_get_member(g, "values");
    if (vals) {
        if (config_setting_get_member(g, "from"))
            return colo_cfg_error(r, vals, COLO_EINVAL, "give values or from/to/steps, not both");
        if (!config_setting_is_aggregate(vals) || config_setting_is_group(vals))
            return colo_cfg_error(r, vals, COLO_EINVAL, "values must be an array [ ... ]");
        int n = config_setting_length(vals);
        if (n < 1 || n > MAX_AXIS_VALUES)
            return colo_cfg_error(r, vals, COLO_ERANGE, "1 to %d values", MAX_AXIS_VALUES);
        if (!(a->values = colo_calloc((size_t)n, sizeof *a->values))) return COLO_ENOMEM;
        for (int i = 0; i < n; i++) {
            const config_setting_t *v = config_setting_get_elem(vals, (unsigned)i);
            if (config_setting_is_aggregate(v))
                return colo_cfg_error(r, v, COLO_EINVAL, "values are numbers or strings");
            if (!(a->values[i] = scalar_text(v))) return COLO_ENOMEM;
            a->n = (size_t)i + 1;
        }
        return 0;
    }
    if (!config_setting_get_member(g, "from"))
        return colo_cfg_error(r, g, COLO_EINVAL,
                              "an axis needs values = [ ... ] or from, to and steps");
    double from, to;
    long long steps;
    if ((rc = colo_cfg_double(r, g, "from", COLO_CFG_REQUIRED, &from)) ||
        (rc = colo_cfg_double(r, g, "to", COLO_CFG_REQUIRED, &to)) ||
        (rc = colo_cfg_int(r, g, "steps", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE, &steps)))
        return rc;
    if (steps > MAX_AXIS_VALUES)
        return colo_cfg_error(r, config_setting_get_member(g, "steps"), COLO_ERANGE, "at most %d",
                              MAX_AXIS_VALUES);
    if (!(a->values = colo_calloc((size_t)steps, sizeof *a->values))) return COLO_ENOMEM;
    for (long long i = 0; i < steps; i++) {
        double v = steps == 1 ? from : from + (to - from) * (double)i / (double)(steps - 1);
        char buf[64];
        colo_study_float_text(buf, sizeof buf, 6, v);
        if (!(a->values[i] = colo_strdup(buf))) return COLO_ENOMEM;
        a->n = (size_t)i + 1;
    }
    return 0;
}

static int read_list(const colo_cfg_reader_t *r, const config_setting_t *l, colo_study_t *s)
{
    static const char *const keys[] = {"keys", "points", NULL};
    int rc = colo_cfg_check_keys(r, l, keys);
    if (rc) return rc;
    const config_setting_t *ks = config_setting_get_member(l, "keys");
    const config_setting_t *ps = config_setting_get_member(l, "points");
    if (!ks || config_setting_type(ks) != CONFIG_TYPE_ARRAY || config_setting_length(ks) < 1)
        return colo_cfg_error(r, ks ? ks : l, COLO_EINVAL, "keys = [\"key\", ...] is needed");
    if (!ps || config_setting_type(ps) != CONFIG_TYPE_LIST || config_setting_length(ps) < 1)
        return colo_cfg_error(r, ps ? ps : l, COLO_EINVAL,
                              "points = ( (value, ...), ... ) is needed");
    size_t na = (size_t)config_setting_length(ks), np = (size_t)config_setting_length(ps);
    if (np > MAX_POINTS) return colo_cfg_error(r, ps, COLO_ERANGE, "at most %d points", MAX_POINTS);
    if (!(s->axes = colo_calloc(na, sizeof *s->axes))) return COLO_ENOMEM;
    for (size_t a = 0; a < na; a++) {
        const config_setting_t *k = config_setting_get_elem(ks, (unsigned)a);
        const char *key = config_setting_get_string(k);
        if (!key || !valid_key(key))
            return colo_cfg_error(r, k, COLO_EINVAL, "keys are scenario keys, as strings");
        s->n_axes = a + 1;
        if (!(s->axes[a].key = colo_strdup(key))) return COLO_ENOMEM;
        s->axes[a].line = (int)config_setting_source_line(k);
    }
    if (!(s->points = colo_calloc(np, sizeof *s->points))) return COLO_ENOMEM;
    for (size_t i = 0; i < np; i++) {
        const config_setting_t *p = config_setting_get_elem(ps, (unsigned)i);
        if (!config_setting_is_aggregate(p) || config_setting_is_group(p) ||
            (size_t)config_setting_length(p) != na)
            return colo_cfg_error(r, p, COLO_EINVAL, "each point is a list of %zu values", na);
        s->n_points = i + 1;
        if (!(s->points[i] = colo_calloc(na, sizeof **s->points))) return COLO_ENOMEM;
        for (size_t a = 0; a < na; a++) {
            const config_setting_t *v = config_setting_get_elem(p, (unsigned)a);
            if (config_setting_is_aggregate(v))
                return colo_cfg_error(r, v, COLO_EINVAL, "values are numbers or strings");
            if (!(s->points[i][a] = scalar_text(v))) return COLO_ENOMEM;
        }
    }
    return 0;
}

static int read_search(const colo_cfg_reader_t *r, const config_setting_t *g, colo_study_t *s)
{
    static const char *const keys[] = {"key",        "lo",           "hi",
                                       "tolerance",  "replications", "max_replications",
                                       "confidence", "attainment",   NULL};
    int rc = colo_cfg_check_keys(r, g, keys);
    if (rc) return rc;
    const char *key = "load_scale";
    if ((rc = colo_cfg_string(r, g, "key", 0, &key)) < 0) return rc;
    if (!(s->search.key = colo_strdup(key))) return COLO_ENOMEM;
    const config_setting_t *ks = config_setting_get_member(g, "key");
    s->search.line = (int)config_setting_source_line(ks ? ks : g);
    s->search.given = true;
    s->search.lo = 0.01;
    s->search.hi = 10;
    s->search.tolerance = 0.01;
    s->search.replications = 3;
    s->search.confidence = 0.95;
    s->search.attainment = 0.99;
    long long reps = 3, most = -1;
    if ((rc = colo_cfg_double(r, g, "lo", COLO_CFG_POSITIVE, &s->search.lo)) < 0 ||
        (rc = colo_cfg_double(r, g, "hi", COLO_CFG_POSITIVE, &s->search.hi)) < 0 ||
        (rc = colo_cfg_double(r, g, "tolerance", COLO_CFG_POSITIVE, &s->search.tolerance)) < 0 ||
        (rc = colo_cfg_int(r, g, "replications", COLO_CFG_POSITIVE, &reps)) < 0 ||
        (rc = colo_cfg_int(r, g, "max_replications", COLO_CFG_POSITIVE, &most)) < 0 ||
        (rc = colo_cfg_double(r, g, "confidence", COLO_CFG_POSITIVE, &s->search.confidence)) < 0 ||
        (rc = colo_cfg_double(r, g, "attainment", COLO_CFG_POSITIVE, &s->search.attainment)) < 0)
        return rc;
    if (s->search.hi <= s->search.lo)
        return colo_cfg_error(r, config_setting_get_member(g, "hi"), COLO_ERANGE,
                              "must be above lo (%g)", s->search.lo);
    const config_setting_t *slo = config_setting_get_member(g, "lo"),
                           *shi = config_setting_get_member(g, "hi");
    s->search.integer = slo && shi && config_setting_type(slo) != CONFIG_TYPE_FLOAT &&
                        config_setting_type(shi) != CONFIG_TYPE_FLOAT;
    if (s->search.tolerance >= 1 || s->search.tolerance < COLO_SEARCH_MIN_TOLERANCE)
        return colo_cfg_error(r, config_setting_get_member(g, "tolerance"), COLO_ERANGE,
                              "a fraction of the answer from %g to below 1 (got %g): a finer one "
                              "is below what a double can tell apart",
                              COLO_SEARCH_MIN_TOLERANCE, s->search.tolerance);
    if (reps > 1000)
        return colo_cfg_error(r, config_setting_get_member(g, "replications"), COLO_ERANGE,
                              "at most 1000");
    s->search.replications = (int)reps;
    if (most < 0) most = 4 * reps; /* not given */
    if (most < reps || most > 4000)
        return colo_cfg_error(r, config_setting_get_member(g, "max_replications"), COLO_ERANGE,
                              "from replications (%lld: no more runs) to 4000", reps);
    s->search.max_replications = (int)most;
    if (s->search.confidence >= 1)
        return colo_cfg_error(r, config_setting_get_member(g, "confidence"), COLO_ERANGE,
                              "a probability below 1");
    if (s->search.attainment > 1)
        return colo_cfg_error(r, config_setting_get_member(g, "attainment"), COLO_ERANGE,
                              "a fraction, at most 1");
    return 0;
}

static int read_plot(const colo_cfg_reader_t *r, const config_setting_t *g, colo_study_t *s)
{
    static const char *const keys[] = {"x", "by", "y", NULL};
    int rc = colo_cfg_check_keys(r, g, keys);
    const char *x = NULL, *by = NULL, *y = "p99";
    if (rc || (rc = colo_cfg_string(r, g, "x", 0, &x)) < 0 ||
        (rc = colo_cfg_string(r, g, "by", 0, &by)) < 0 ||
        (rc = colo_cfg_string(r, g, "y", 0, &y)) < 0)
        return rc;
    if ((x && !(s->plot.x = colo_strdup(x))) || (by && !(s->plot.by = colo_strdup(by))) ||
        !(s->plot.y = colo_strdup(y)))
        return COLO_ENOMEM;
    return 0;
}

static int read_study(const colo_cfg_reader_t *r, const config_setting_t *root, colo_study_t *s)
{
    static const char *const keys[] = {"scenario", "output", "set",  "grid",
                                       "list",     "search", "plot", NULL};
    int rc = colo_cfg_check_keys(r, root, keys);
    const char *scn, *outp = NULL;
    if (rc || (rc = colo_cfg_string(r, root, "scenario", COLO_CFG_REQUIRED, &scn))) return rc;
    if ((rc = colo_cfg_string(r, root, "output", 0, &outp)) < 0) return rc;
    if (!(s->scenario = colo_study_joined(s->dir, scn))) return COLO_ENOMEM;
    s->scenario_line = (int)config_setting_source_line(config_setting_get_member(root, "scenario"));
    if (outp) {
        if (!(s->out_dir = colo_study_joined(s->dir, outp))) return COLO_ENOMEM;
    } else {
        size_t n = strlen(s->path);
        const char *dot = strrchr(s->path, '.');
        if (dot && !strchr(dot, '/')) n = (size_t)(dot - s->path);
        if (!(s->out_dir = colo_malloc(n + 5))) return COLO_ENOMEM;
        memcpy(s->out_dir, s->path, n);
        memcpy(s->out_dir + n, ".out", 5);
    }
    const config_setting_t *set = config_setting_get_member(root, "set");
    if (set) {
        if (config_setting_type(set) != CONFIG_TYPE_ARRAY)
            return colo_cfg_error(r, set, COLO_EINVAL, "set = [\"key=value\", ...]");
        int n = config_setting_length(set);
        if (n > 0 && (!(s->sets = colo_calloc((size_t)n, sizeof *s->sets)) ||
                      !(s->set_lines = colo_calloc((size_t)n, sizeof *s->set_lines))))
            return COLO_ENOMEM;
        for (int i = 0; i < n; i++) {
            const char *v = config_setting_get_string_elem(set, i);
            s->set_lines[i] =
                (int)config_setting_source_line(config_setting_get_elem(set, (unsigned)i));
            if (!v || !strchr(v, '='))
                return colo_cfg_error(r, config_setting_get_elem(set, (unsigned)i), COLO_EINVAL,
                                      "each entry is \"key=value\"");
            if (!(s->sets[i] = colo_strdup(v))) return COLO_ENOMEM;
            s->n_sets = (size_t)i + 1;
        }
    }
    const config_setting_t *grid = config_setting_get_member(root, "grid");
    const config_setting_t *list = config_setting_get_member(root, "list");
    if (grid && list)
        return colo_cfg_error(r, list, COLO_EINVAL, "a study is a grid or a list, not both");
    if (grid) {
        if (config_setting_type(grid) != CONFIG_TYPE_LIST || config_setting_length(grid) < 1)
            return colo_cfg_error(r, grid, COLO_EINVAL,
                                  "grid = ( { key = ...; values = [...]; }, ... )");
        size_t n = (size_t)config_setting_length(grid);
        if (!(s->axes = colo_calloc(n, sizeof *s->axes))) return COLO_ENOMEM;
        double total = 1;
        for (size_t a = 0; a < n; a++) {
            s->n_axes = a + 1;
            if ((rc = read_axis(r, config_setting_get_elem(grid, (unsigned)a), &s->axes[a])))
                return rc;
            total *= (double)s->axes[a].n;
        }
        if (total > MAX_POINTS)
            return colo_cfg_error(r, grid, COLO_ERANGE, "%.0f points: at most %d", total,
                                  MAX_POINTS);
        s->grid = true;
    } else if (list) {
        if (!config_setting_is_group(list))
            return colo_cfg_error(r, list, COLO_EINVAL, "list = { keys = [...]; points = (...); }");
        if ((rc = read_list(r, list, s))) return rc;
    } else {
        s->grid = true; /* no axes: one point, the base scenario */
    }
    const config_setting_t *g;
    if ((rc = colo_cfg_aggregate(r, root, "search", 0, CONFIG_TYPE_GROUP, &g)) < 0) return rc;
    if (g && (rc = read_search(r, g, s))) return rc;
    if ((rc = colo_cfg_aggregate(r, root, "plot", 0, CONFIG_TYPE_GROUP, &g)) < 0) return rc;
    if (g && (rc = read_plot(r, g, s))) return rc;
    return colo_study_one_key_each(s, r->err);
}

int colo_study_load(const char *path, colo_study_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_study_t *s = colo_calloc(1, sizeof *s);
    if (!s || !(s->path = colo_strdup(path)) || !(s->dir = colo_strdup(path))) {
        colo_study_free(s);
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    char *slash = strrchr(s->dir, '/');
    if (slash)
        *(slash == s->dir ? slash + 1 : slash) = '\0';
    else
        s->dir[0] = '\0';
    config_t cfg;
    config_init(&cfg);
    int rc = colo_cfg_read_file(&cfg, path, err);
    if (!rc) {
        colo_cfg_reader_t r = {path, err};
        rc = read_study(&r, config_root_setting(&cfg), s);
        if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    }
    config_destroy(&cfg);
    if (rc) {
        colo_study_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void colo_study_free(colo_study_t *s)
{
    if (!s) return;
    for (size_t a = 0; a < s->n_axes; a++) {
        for (size_t i = 0; i < s->axes[a].n; i++)
            colo_free(s->axes[a].values[i]);
        colo_free(s->axes[a].values);
        colo_free(s->axes[a].key);
    }
    colo_free(s->axes);
    for (size_t i = 0; i < s->n_points; i++) {
        for (size_t a = 0; s->points[i] && a < s->n_axes; a++)
            colo_free(s->points[i][a]);
        colo_free(s->points[i]);
    }
    colo_free(s->points);
    for (size_t i = 0; i < s->n_sets; i++)
        colo_free(s->sets[i]);
    colo_free(s->sets);
    colo_free(s->set_lines);
    colo_free(s->search.key);
    colo_free(s->plot.x);
    colo_free(s->plot.by);
    colo_free(s->plot.y);
    colo_free(s->path);
    colo_free(s->dir);
    colo_free(s->scenario);
    colo_free(s->out_dir);
    colo_free(s);
}

/* ---- points ---- */

size_t colo_study_n_points(const colo_study_t *s)
{
    if (!s->grid) return s->n_points;
    size_t n = 1;
    for (size_t a = 0; a < s->n_axes; a++)
        n *= s->axes[a].n;
    return n;
}

const char *colo_study_value(const colo_study_t *s, size_t i, size_t a)
{
    if (!s->grid) return s->points[i][a];
    size_t stride = 1; /* the last axis varies fastest */
    for (size_t b = s->n_axes; b-- > a + 1;)
        stride *= s->axes[b].n;
    return s->axes[a].values[(i / stride) % s->axes[a].n];
}

int colo_study_point(const colo_study_t *s, size_t i, char ***sets_out, size_t *n_out)
{
    size_t n = s->n_sets + s->n_axes;
    char **sets = colo_calloc(n + 2, sizeof *sets); /* room for search's key and seed */
    if (!sets) return COLO_ENOMEM;
    for (size_t k = 0; k < s->n_sets; k++)
        if (!(sets[k] = colo_strdup(s->sets[k]))) goto oom;
    for (size_t a = 0; a < s->n_axes; a++) {
        const char *v = colo_study_value(s, i, a);
        size_t len = strlen(s->axes[a].key) + strlen(v) + 2;
        if (!(sets[s->n_sets + a] = colo_malloc(len))) goto oom;
        snprintf(sets[s->n_sets + a], len, "%s=%s", s->axes[a].key, v);
    }
    *sets_out = sets;
    *n_out = n;
    return 0;
oom:
    colo_study_point_free(sets, n);
    return COLO_ENOMEM;
}

void colo_study_point_free(char **sets, size_t n)
{
    if (!sets) return;
    for (size_t k = 0; k < n + 2; k++)
        colo_free(sets[k]);
    colo_free(sets);
}

/* ---- the local points runner (its pieces are in point_pool.c) ---- */

/* Runs fn for every point without a finished file in dir, jobs at a time, on this machine. */
static int run_points(const colo_study_t *s, const colo_sweep_opts_t *o, const char *dir,
                      colo_point_fn fn, colo_error_t *err)
{
    size_t total = colo_study_n_points(s), *todo, n_todo;
    int rc = colo_study_todo(s, dir, &todo, &n_todo, err);
    if (rc) return rc;
    colo_point_pool_t *pool =
        colo_pool_new(o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN));
    if (!pool) {
        colo_free(todo);
        return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    }
    colo_study_progress_t pr = {.on = o->progress, .total = total, .skipped = total - n_todo};
    size_t next = 0, done = total - n_todo, point;
    int failed = 0;
    bool ok;
    colo_study_progress(&pr, done, false);
    bool counted = pr.on && colo_study_runs_open() == 0; /* the bar counts the children's runs */
    /* with a bar: every finished child reaped at once, then a wait for the next to end
     * (SIGCHLD, held pending while blocked) of at most 0.1 s, so the bar moves while points
     * run (a search's probes) and short points are not held back */
    sigset_t chld, was;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    if (counted) sigprocmask(SIG_BLOCK, &chld, &was);
    while (!rc && (next < n_todo || colo_pool_running(pool) > 0)) {
        if (!rc) rc = colo_pool_fill(pool, s, fn, dir, todo, n_todo, &next, err);
        bool reaped = false;
        while (colo_pool_reap(pool, !counted, &point, &ok)) {
            done++;
            failed += !ok;
            reaped = true;
            if (!counted) break; /* blocking: one at a time, as it ends */
        }
        if (counted && !reaped) sigtimedwait(&chld, NULL, &(struct timespec){0, 100000000});
        colo_study_progress(&pr, done, false);
        if (!rc && colo_stop_requested()) rc = COLO_EINTR;
    }
    if (counted) sigprocmask(SIG_SETMASK, &was, NULL);
    while (colo_pool_reap(pool, true, &point, &ok)) { /* after a failed fork or a stop: the rest */
        done++;
        failed += !ok;
    }
    colo_study_progress(&pr, done, true);
    if (counted) colo_study_runs_close();
    if (rc != COLO_EINTR) colo_study_say_skipped(o, total - n_todo, total);
    colo_pool_free(pool);
    colo_free(todo);
    if (rc == COLO_EINTR) return colo_study_stopped(dir, done - (size_t)failed, total, err);
    return rc ? rc : colo_study_points_failed(dir, failed, err);
}

/* ---- sweep ---- */

static json_t *sweep_point(const colo_study_t *s, size_t i, char **sets, size_t n)
{
    colo_error_t err;
    colo_error_clear(&err);
    json_t *res;
    int rc = colo_study_simulate(s, sets, n, &res, &err);
    json_t *doc =
        json_pack("{s:I,s:o,s:o}", "point", (json_int_t)i, "values", colo_study_values_json(s, i),
                  "overrides", colo_study_string_array(sets, n));
    if (!doc) {
        json_decref(res);
        return NULL;
    }
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        json_object_set_new(doc, "error", json_string(msg));
    } else {
        json_object_set_new(doc, "results", res);
    }
    return doc;
}

static const char *const csv_metrics[] = {"p50", "p90", "p99", "p999", "mean"};

double colo_study_num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static int write_sweep_csv(const colo_study_t *s, json_t *points, const char *path,
                           colo_error_t *err)
{
    colo_atomic_file_t af;
    int rc = colo_atomic_open(&af, path, err);
    if (rc) return rc;
    FILE *f = af.f;
    fputs("point", f);
    for (size_t a = 0; a < s->n_axes; a++) {
        fputc(',', f);
        colo_csv_write_field(f, s->axes[a].key);
    }
    fputs(",tenant,arrived,completed,dropped,p50_ms,p90_ms,p99_ms,p999_ms,mean_ms,"
          "throughput_rps,goodput_rps,slo_ms,slo_attainment,gpu_busy,error,ttft_p99_ms,"
          "tpot_p99_ms,output_tokens_per_s\n",
          f);
    size_t i;
    json_t *p;
    json_array_foreach(points, i, p)
    {
        json_t *res = json_object_get(p, "results");
        json_t *ts = json_object_get(res, "tenants");
        size_t nt = res ? json_array_size(ts) : 1;
        for (size_t t = 0; t < nt; t++) {
            fprintf(f, "%zu", i);
            for (size_t a = 0; a < s->n_axes; a++) {
                fputc(',', f);
                colo_csv_write_field(f, colo_study_value(s, i, a));
            }
            if (!res) {
                fputs(",,,,,,,,,,,,,,,", f);
                colo_csv_write_field(f, json_string_value(json_object_get(p, "error")));
                fputs(",,,\n", f);
                continue;
            }
            json_t *tn = json_array_get(ts, t), *lat = json_object_get(tn, "latency_ms");
            fputc(',', f);
            colo_csv_write_field(f, json_string_value(json_object_get(tn, "name")));
            fprintf(f, ",%lld,%lld,%lld",
                    (long long)json_integer_value(json_object_get(tn, "arrived")),
                    (long long)json_integer_value(json_object_get(tn, "completed")),
                    (long long)json_integer_value(json_object_get(tn, "dropped")));
            for (size_t m = 0; m < sizeof csv_metrics / sizeof *csv_metrics; m++)
                fprintf(f, ",%.6g", colo_study_num(lat, csv_metrics[m]));
            fprintf(f, ",%.6g", colo_study_num(tn, "throughput_rps"));
            json_t *g = json_object_get(tn, "goodput_rps"), *slo = json_object_get(tn, "slo_ms");
            json_t *att = json_object_get(tn, "slo_attainment");
            if (json_is_number(g))
                fprintf(f, ",%.6g", json_number_value(g));
            else
                fputc(',', f);
            if (json_is_number(slo))
                fprintf(f, ",%.6g", json_number_value(slo));
            else
                fputc(',', f);
            if (json_is_number(att))
                fprintf(f, ",%.6g", json_number_value(att));
            else
                fputc(',', f);
            fprintf(f, ",%.6g,", colo_study_num(json_object_get(res, "gpu"), "busy_fraction"));
            json_t *l = json_object_get(tn, "llm"); /* LLM tenants; empty cells for others */
            if (l)
                fprintf(f, ",%.6g,%.6g,%.6g\n",
                        colo_study_num(json_object_get(l, "ttft_ms"), "p99"),
                        colo_study_num(json_object_get(l, "tpot_ms"), "p99"),
                        colo_study_num(l, "output_tokens_per_s"));
            else
                fputs(",,,\n", f);
        }
    }
    if (ferror(f)) {
        colo_atomic_abort(&af);
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot write");
    }
    return colo_atomic_commit(&af, err);
}

/* Reads every point file of dir into an array, in point order. */
static int gather(const colo_study_t *s, const char *dir, json_t **out, colo_error_t *err)
{
    size_t total = colo_study_n_points(s);
    json_t *points = json_array();
    char file[4096];
    for (size_t i = 0; i < total && points; i++) {
        snprintf(file, sizeof file, "%s/%06zu.json", dir, i);
        json_error_t je;
        json_t *doc = json_load_file(file, 0, &je);
        if (!doc) {
            json_decref(points);
            return colo_error_set(err, COLO_EIO, file, je.line, NULL, "%s", je.text);
        }
        if (json_array_append_new(points, doc)) {
            json_decref(points);
            points = NULL;
        }
    }
    if (!points) return colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    *out = points;
    return 0;
}

static json_t *study_head(const colo_study_t *s, const char *kind)
{
    json_t *axes = json_array();
    for (size_t a = 0; a < s->n_axes && axes; a++)
        json_array_append_new(axes, json_string(s->axes[a].key));
    return json_pack("{s:{s:s,s:i},s:s,s:s,s:s,s:o,s:o}", "colosim", "version", COLO_VERSION,
                     "results_format", 1, "kind", kind, "study", s->path, "scenario", s->scenario,
                     "axes", axes, "set", colo_study_string_array(s->sets, s->n_sets));
}

/* Runs every point of the study into DIR/sub (by o's runner, or here), then reads them into
 * *points and starts the result document of this kind (*doc, with the points). 1 when another
 * process gathers the results (an MPI worker); 0; or a negative code with err set. */
int colo_study_run_and_gather(const colo_study_t *s, const colo_sweep_opts_t *o, const char *sub,
                              colo_point_fn fn, const char *kind, json_t **points, json_t **doc,
                              colo_error_t *err)
{
    *points = *doc = NULL;
    char *pdir = colo_study_joined(o->out_dir ? o->out_dir : s->out_dir, sub);
    if (!pdir) return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    int rc = colo_study_check(s, strcmp(kind, "search") == 0, err);
    if (!rc) rc = (o->runner ? o->runner : run_points)(s, o, pdir, fn, err);
    if (!rc) rc = gather(s, pdir, points, err);
    colo_free(pdir);
    if (!rc && !(*doc = study_head(s, kind)))
        rc = colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    if (!rc) json_object_set(*doc, "points", *points);
    if (!rc && json_object_set_new(*doc, "accuracy", colo_study_accuracy(s)))
        rc = colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
    return rc;
}

int colo_sweep_run(const colo_study_t *s, const colo_sweep_opts_t *o, colo_error_t *err)
{
    const char *dir = o->out_dir ? o->out_dir : s->out_dir;
    json_t *points, *doc;
    int rc = colo_study_run_and_gather(s, o, "points", sweep_point, "sweep", &points, &doc, err);
    if (rc == 1) return 0; /* another process gathers the results */
    char *jpath = colo_study_joined(dir, "sweep.json"),
         *cpath = colo_study_joined(dir, "sweep.csv");
    if (!rc && (!jpath || !cpath))
        rc = colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    if (!rc) rc = colo_results_write(doc, jpath, err);
    if (!rc) rc = write_sweep_csv(s, points, cpath, err);
    if (!rc && !o->quiet) {
        size_t failed = 0, i;
        json_t *p;
        json_array_foreach(points, i, p) failed += json_object_get(p, "error") != NULL;
        printf("%zu points (%zu could not run: see \"error\"); written to %s and %s\n",
               json_array_size(points), failed, jpath, cpath);
        colo_accuracy_print(json_object_get(doc, "accuracy"), stdout);
    }
    colo_free(jpath);
    colo_free(cpath);
    json_decref(points);
    json_decref(doc);
    return rc;
}
