/* study_check.c: a study's mistakes found before any point runs (a key set twice, a study that
 * names itself, overrides with which no point can be set up), and an error in a point's override
 * blamed on the study's line that wrote it. */
#include "study.h"
#include "study_internal.h"
#include "cluster.h"
#include "stop.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The key of a "key=value" override, into buf. */
static const char *set_key(const char *kv, char *buf, size_t n)
{
    size_t len = strcspn(kv, "=");
    snprintf(buf, n, "%.*s", (int)len, kv);
    return buf;
}

/* Override k of the study's own (its sets, its axes, then search's key): its key (into buf
 * for a set), and where the study file writes it (line, and its path in the file into where). */
static const char *own_key(const colo_study_t *s, size_t k, char *buf, size_t n, int *line,
                           char *where, size_t wn)
{
    if (k < s->n_sets) {
        *line = s->set_lines[k];
        snprintf(where, wn, "set.[%zu]", k);
        return set_key(s->sets[k], buf, n);
    }
    if (k < s->n_sets + s->n_axes) {
        size_t a = k - s->n_sets;
        *line = s->axes[a].line;
        snprintf(where, wn, s->grid ? "grid.[%zu].key" : "list.keys.[%zu]", a);
        return s->axes[a].key;
    }
    *line = s->search.line;
    snprintf(where, wn, "search.key");
    return s->search.key;
}

int colo_study_one_key_each(const colo_study_t *s, colo_error_t *err)
{
    size_t n = s->n_sets + s->n_axes + (s->search.given ? 1 : 0);
    char a[256], b[256], wa[64], wb[64];
    int la, lb;
    for (size_t j = 1; j < n; j++)
        for (size_t i = 0; i < j; i++) {
            const char *ki = own_key(s, i, a, sizeof a, &la, wa, sizeof wa);
            const char *kj = own_key(s, j, b, sizeof b, &lb, wb, sizeof wb);
            if (strcmp(ki, kj) == 0)
                return colo_error_set(err, COLO_EINVAL, s->path, lb, wb,
                                      "'%s' is also %s (line %d): a key is set once, by set, an "
                                      "axis or the search, which varies its key itself",
                                      kj, i < s->n_sets ? "in set" : "an axis", la);
        }
    return 0;
}

/* Override k of a point (n of them: its sets, its axes, search's key and seed): what wrote it
 * ("set", "grid", "list", "search") and its line in the study. */
static const char *override_origin(const colo_study_t *s, size_t k, int *line)
{
    size_t na = s->n_sets + s->n_axes;
    *line = k < s->n_sets ? s->set_lines[k] : k < na ? s->axes[k - s->n_sets].line : s->search.line;
    return k < s->n_sets ? "set" : k < na ? (s->grid ? "grid" : "list") : "search";
}

/* Nothing was given with --set: an error blamed on override k of a point ("--set", line
 * k + 1) is blamed on the study's line that wrote it, and says which; a note that a group was
 * changed by "--set:k" names the study's lines. */
static void blame_study(const colo_study_t *s, char **sets, size_t n, colo_error_t *err)
{
    if (!err) return;
    static const char mark[] = " (this group was changed by --set:";
    char *m = strstr(err->text, mark);
    if (m) {
        char note[sizeof err->text] = " (this group was changed by the study's";
        size_t used = strlen(note);
        const char *p = m + sizeof mark - 1;
        for (bool first = true;; first = false) {
            char *end;
            long k = strtol(p, &end, 10);
            if (end == p || k < 1 || (size_t)k > n) break;
            int line;
            const char *what = override_origin(s, (size_t)k - 1, &line);
            int w = snprintf(note + used, sizeof note - used, "%s %s \"%s\" (line %d)",
                             first ? "" : ",", what, sets[k - 1], line);
            if (w < 0 || (size_t)w >= sizeof note - used) break;
            used += (size_t)w;
            if (strncmp(end, ", --set:", 8) != 0) break;
            p = end + 8;
        }
        snprintf(m, sizeof err->text - (size_t)(m - err->text), "%s)", note);
    }
    if (strcmp(err->source, "--set") != 0 || err->line < 1 || (size_t)err->line > n) return;
    int line;
    const char *what = override_origin(s, (size_t)err->line - 1, &line);
    colo_error_prefix(err, "%s \"%s\": ", what, sets[err->line - 1]);
    snprintf(err->source, sizeof err->source, "%s", s->path);
    err->line = line;
}

int colo_study_simulate(const colo_study_t *s, char **sets, size_t n, json_t **res,
                        colo_error_t *err)
{
    int rc = colo_simulate_file(s->scenario, (const char *const *)sets, n, res, err);
    if (rc) blame_study(s, sets, n, err);
    colo_study_count_run();
    return rc;
}

/* Whether a and b name one file. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int colo_study_check(const colo_study_t *s, bool with_search, colo_error_t *err)
{
    if (same_file(s->scenario, s->path))
        return colo_error_set(err, COLO_EINVAL, s->path, s->scenario_line, "scenario",
                              "names this study itself: a study's scenario is the scenario file "
                              "(one GPU or a cluster) whose keys it varies");
    size_t np = colo_study_n_points(s);
    colo_error_t first;
    colo_error_clear(&first);
    char kv[320];
    with_search = with_search && s->search.given;
    if (with_search) colo_study_search_kv(s, s->search.lo, kv, sizeof kv);
    for (size_t i = 0; i < np; i++) {
        char **sets;
        size_t n;
        if (colo_study_point(s, i, &sets, &n))
            return colo_error_set(err, COLO_ENOMEM, s->path, 0, NULL, "out of memory");
        if (with_search) sets[n] = kv;
        colo_error_t e;
        colo_error_clear(&e);
        size_t nn = n + (with_search ? 1 : 0);
        int rc = colo_check_file(s->scenario, (const char *const *)sets, nn, &e);
        if (rc) blame_study(s, sets, nn, &e);
        sets[n] = NULL;
        colo_study_point_free(sets, n);
        if (!rc) return 0;
        if (rc == COLO_ENOMEM || rc == COLO_EINTR) {
            *err = e;
            return rc;
        }
        if (i == 0) first = e;
        if (colo_stop_requested()) break;
    }
    if (err && !err->code) {
        *err = first;
        if (np > 1) colo_error_prefix(err, "no point of the study can be set up: ");
    }
    return first.code;
}

json_t *colo_study_string_array(char **v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n && a; i++)
        if (json_array_append_new(a, json_string(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

json_t *colo_study_values_json(const colo_study_t *s, size_t i)
{
    json_t *o = json_object();
    for (size_t a = 0; a < s->n_axes && o; a++)
        if (json_object_set_new(o, s->axes[a].key, json_string(colo_study_value(s, i, a)))) {
            json_decref(o);
            return NULL;
        }
    return o;
}
