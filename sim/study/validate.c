/* validate.c: the suite of published measurements (docs/validation.md). */
#include "validate.h"
#include "alloc.h"
#include "atomic_file.h"
#include "cfg.h"
#include "cluster.h"
#include "json_lines.h"
#include "layout.h"
#include "serving.h"
#include "trace.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const colo_vcategories[] = {"alone", "cross_gpu",  "batch",      "mig", "mps",
                                        "green", "colocation", "saturation", NULL};

#define BEGIN_MARK "<!-- colosim validate: begin -->"
#define END_MARK "<!-- colosim validate: end -->"

/* ---- reading ---------------------------------------------------------------------------- */

static void run_free(colo_vrun_t *r)
{
    colo_free(r->scenario);
    colo_free(r->trace);
    colo_free(r->gpu);
    colo_free(r->fp32_math);
    colo_free(r->place);
    for (size_t i = 0; i < r->n_sets; i++)
        colo_free(r->sets[i]);
    colo_free(r->sets);
    colo_free(r->set_lines);
    colo_free(r->metric);
    memset(r, 0, sizeof *r);
}

void colo_vsuite_free(colo_vsuite_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->n_sources; i++) {
        colo_vsource_t *src = &s->sources[i];
        colo_free(src->file);
        colo_free(src->name);
        colo_free(src->cite);
        colo_free(src->setup);
        colo_free(src->calibrates);
    }
    for (size_t i = 0; i < s->n_cases; i++) {
        colo_vcase_t *c = &s->cases[i];
        colo_free(c->id);
        colo_free(c->category);
        colo_free(c->what);
        colo_free(c->from);
        colo_free(c->note);
        colo_free(c->substitute);
        colo_free(c->cause);
        run_free(&c->run);
        run_free(&c->over);
    }
    colo_free(s->sources);
    colo_free(s->cases);
    colo_free(s->dir);
    colo_free(s);
}

/* An optional string member copied (NULL when absent). */
static int dup_string(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                      int flags, char **out)
{
    const char *v = NULL;
    int rc = colo_cfg_string(r, g, name, flags, &v);
    if (rc < 0) return rc;
    if (rc == 0 && !*v) {
        return colo_cfg_error(r, config_setting_get_member(g, name), COLO_EINVAL,
                              "must not be empty");
    }
    if (rc == 0 && !(*out = colo_strdup(v))) return COLO_ENOMEM;
    return 0;
}

static char *dir_of(const char *path)
{
    char *d = colo_strdup(path);
    if (!d) return NULL;
    char *slash = strrchr(d, '/');
    if (slash)
        *(slash == d ? slash + 1 : slash) = '\0';
    else
        d[0] = '\0';
    return d;
}

/* A copy of base's string, or NULL. */
static int inherit(const char *from, char **out)
{
    if (from && !(*out = colo_strdup(from))) return COLO_ENOMEM;
    return 0;
}

/* What a case runs (a scenario with overrides, or a trace on a GPU), and the number it takes;
 * for "over", base is the case's run: what over does not say it inherits (over's set adds to the
 * case's overrides unless over names another scenario). */
static int read_run(const colo_cfg_reader_t *r, const config_setting_t *g, const char *dir,
                    const colo_vrun_t *base, colo_vrun_t *out)
{
    const char *scn = NULL, *trace = NULL, *metric = NULL, *gpu = NULL, *fp32 = NULL;
    const char *place = NULL;
    int rc;
    if ((rc = colo_cfg_string(r, g, "place", 0, &place)) < 0 ||
        (rc = colo_cfg_string(r, g, "scenario", 0, &scn)) < 0 ||
        (rc = colo_cfg_string(r, g, "trace", 0, &trace)) < 0 ||
        (rc = colo_cfg_string(r, g, "gpu", 0, &gpu)) < 0 ||
        (rc = colo_cfg_string(r, g, "fp32_math", 0, &fp32)) < 0 ||
        (rc = colo_cfg_string(r, g, "metric", base ? 0 : COLO_CFG_REQUIRED, &metric)) < 0)
        return rc;
    if (scn && trace)
        return colo_cfg_error(r, config_setting_get_member(g, "trace"), COLO_EINVAL,
                              "a run is a scenario or a trace on a GPU, not both");
    bool is_trace = trace || (base && !scn && base->trace);
    if (!base && !scn && !trace)
        return colo_cfg_error(r, g, COLO_EINVAL,
                              "needs scenario = \"FILE\" (with set and metric) or trace = "
                              "\"FILE\" (with gpu and metric)");
    if (!(out->metric = colo_strdup(metric ? metric : base->metric))) return COLO_ENOMEM;
    const config_setting_t *at = config_setting_get_member(g, "metric");
    out->metric_line = at ? (int)config_setting_source_line(at) : base ? base->metric_line : 0;
    at = config_setting_get_member(g, scn ? "scenario" : "trace");
    out->run_line = at ? (int)config_setting_source_line(at) : base ? base->run_line : 0;
    out->scale = 1;
    if ((rc = colo_cfg_double(r, g, "scale", COLO_CFG_POSITIVE, &out->scale)) < 0) return rc;
    const config_setting_t *set = config_setting_get_member(g, "set");
    if (is_trace) {
        static const char *const metrics[] = {"kernels_ms", "request_ms", "samples_per_s", NULL};
        if (set)
            return colo_cfg_error(r, set, COLO_EINVAL,
                                  "a trace run takes gpu, batch and fp32_math, not set");
        if (trace) rc = colo_path_join(dir, trace, &out->trace);
        else rc = inherit(base->trace, &out->trace);
        if (!rc) rc = gpu ? inherit(gpu, &out->gpu) : inherit(base ? base->gpu : NULL, &out->gpu);
        if (!rc) rc = inherit(fp32 ? fp32 : base ? base->fp32_math : NULL, &out->fp32_math);
        if (!rc) rc = inherit(place ? place : base ? base->place : NULL, &out->place);
        if (rc) return rc;
        if (out->place && strncmp(out->place, "mig:", 4) && strncmp(out->place, "mps:", 4) &&
            strncmp(out->place, "sms:", 4) && strcmp(out->place, "whole"))
            return colo_cfg_error(r, config_setting_get_member(g, "place"), COLO_EINVAL,
                                  "'%s': whole, mig:PROFILE, mps:PERCENT or sms:N", out->place);
        if (!out->gpu)
            return colo_cfg_error(r, g, COLO_EINVAL, "a trace run needs gpu = \"NAME\"");
        if (out->fp32_math && colo_fp32_math_parse(out->fp32_math) == COLO_FP32_POLICIES)
            return colo_cfg_error(r, config_setting_get_member(g, "fp32_math"), COLO_EINVAL,
                                  "'%s': pytorch, fp32 or tf32", out->fp32_math);
        long long batch = base ? base->batch : 0;
        if ((rc = colo_cfg_int(r, g, "batch", COLO_CFG_NONNEG, &batch)) < 0) return rc;
        if (batch > 65536)
            return colo_cfg_error(r, config_setting_get_member(g, "batch"), COLO_ERANGE,
                                  "at most 65536");
        out->batch = (int)batch;
        int ok = 0;
        for (int k = 0; metrics[k]; k++)
            ok |= strcmp(metrics[k], out->metric) == 0;
        if (!ok)
            return colo_cfg_error(r, config_setting_get_member(g, "metric"), COLO_EINVAL,
                                  "'%s': a trace run gives kernels_ms, request_ms or "
                                  "samples_per_s",
                                  out->metric);
        return 0;
    }
    if (gpu || fp32 || place || config_setting_get_member(g, "batch"))
        return colo_cfg_error(r,
                              config_setting_get_member(g, gpu     ? "gpu"
                                                           : fp32  ? "fp32_math"
                                                           : place ? "place"
                                                                   : "batch"),
                              COLO_EINVAL,
                              "gpu, batch, fp32_math and place are for trace runs: a scenario "
                              "run sets its own with set = [\"gpu=...\", ...]");
    if (scn) {
        if ((rc = colo_path_join(dir, scn, &out->scenario))) return rc;
    } else if (!(out->scenario = colo_strdup(base->scenario))) {
        return COLO_ENOMEM;
    }
    if (set && config_setting_type(set) != CONFIG_TYPE_ARRAY)
        return colo_cfg_error(r, set, COLO_EINVAL, "set = [\"key=value\", ...]");
    size_t inherited = base && !scn ? base->n_sets : 0;
    size_t own = set ? (size_t)config_setting_length(set) : 0;
    if (inherited + own &&
        (!(out->sets = colo_calloc(inherited + own, sizeof *out->sets)) ||
         !(out->set_lines = colo_calloc(inherited + own, sizeof *out->set_lines))))
        return COLO_ENOMEM;
    for (size_t i = 0; i < inherited; i++) {
        if (!(out->sets[i] = colo_strdup(base->sets[i]))) return COLO_ENOMEM;
        out->set_lines[i] = base->set_lines[i];
        out->n_sets = i + 1;
    }
    for (size_t i = 0; i < own; i++) {
        const char *v = config_setting_get_string_elem(set, (int)i);
        if (!v || !strchr(v, '='))
            return colo_cfg_error(r, config_setting_get_elem(set, (unsigned)i), COLO_EINVAL,
                                  "each entry is \"key=value\"");
        if (!(out->sets[inherited + i] = colo_strdup(v))) return COLO_ENOMEM;
        out->set_lines[inherited + i] =
            (int)config_setting_source_line(config_setting_get_elem(set, (unsigned)i));
        out->n_sets = inherited + i + 1;
    }
    return 0;
}

static int read_case(const colo_cfg_reader_t *r, const config_setting_t *g, const char *dir,
                     colo_vsuite_t *s, size_t source)
{
    static const char *const keys[] = {
        "id",    "category", "what",   "published", "from", "note", "substitute",
        "cause", "scenario", "set",    "trace",     "gpu",  "batch", "fp32_math",
        "place", "metric",   "scale",  "over",      NULL};
    static const char *const over_keys[] = {"scenario",  "set",   "trace",  "gpu",   "batch",
                                            "fp32_math", "place", "metric", "scale", NULL};
    colo_vcase_t *c = &s->cases[s->n_cases];
    memset(c, 0, sizeof *c);
    s->n_cases++; /* freed with the suite whatever happens below */
    c->source = source;
    c->line = (int)config_setting_source_line(g);
    c->calibration = s->sources[source].calibrates != NULL;
    int rc = colo_cfg_check_keys(r, g, keys);
    if (!rc) rc = dup_string(r, g, "id", COLO_CFG_REQUIRED, &c->id);
    if (!rc) rc = dup_string(r, g, "category", COLO_CFG_REQUIRED, &c->category);
    if (!rc) rc = dup_string(r, g, "what", COLO_CFG_REQUIRED, &c->what);
    if (!rc) rc = dup_string(r, g, "from", COLO_CFG_REQUIRED, &c->from);
    if (!rc) rc = dup_string(r, g, "note", 0, &c->note);
    if (!rc) rc = dup_string(r, g, "substitute", 0, &c->substitute);
    if (!rc) rc = dup_string(r, g, "cause", 0, &c->cause);
    if (!rc) rc = colo_cfg_double(r, g, "published", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE,
                                  &c->published);
    if (rc) return rc;
    int known = 0;
    for (int k = 0; colo_vcategories[k]; k++)
        known |= strcmp(colo_vcategories[k], c->category) == 0;
    if (!known)
        return colo_cfg_error(r, config_setting_get_member(g, "category"), COLO_EINVAL,
                              "'%s': one of alone, cross_gpu, batch, mig, mps, green, "
                              "colocation, saturation",
                              c->category);
    for (const char *p = c->id; *p; p++)
        if (!(isalnum((unsigned char)*p) || strchr("._-+", *p)))
            return colo_cfg_error(r, config_setting_get_member(g, "id"), COLO_EINVAL,
                                  "'%s': letters, digits and . _ - + only", c->id);
    for (size_t i = 0; i + 1 < s->n_cases; i++)
        if (strcmp(s->cases[i].id, c->id) == 0)
            return colo_cfg_error(r, config_setting_get_member(g, "id"), COLO_EINVAL,
                                  "'%s' is already the id of a case in %s", c->id,
                                  s->sources[s->cases[i].source].file);
    if ((rc = read_run(r, g, dir, NULL, &c->run))) return rc;
    const config_setting_t *over;
    if ((rc = colo_cfg_aggregate(r, g, "over", 0, CONFIG_TYPE_GROUP, &over)) < 0) return rc;
    if (over) {
        if ((rc = colo_cfg_check_keys(r, over, over_keys))) return rc;
        c->has_over = true;
        if ((rc = read_run(r, over, dir, &c->run, &c->over))) return rc;
    }
    return 0;
}

static int read_file(colo_vsuite_t *s, const char *path, colo_error_t *err)
{
    static const char *const top[] = {"source", "cases", NULL};
    static const char *const src_keys[] = {"name", "cite", "setup", "calibrates", NULL};
    config_t cfg;
    config_init(&cfg);
    int rc = colo_cfg_read_file(&cfg, path, err);
    colo_cfg_reader_t r = {path, err};
    const config_setting_t *root = config_root_setting(&cfg), *src = NULL, *cases = NULL;
    char *dir = NULL;
    if (!rc) rc = colo_cfg_check_keys(&r, root, top);
    if (!rc) rc = colo_cfg_aggregate(&r, root, "source", COLO_CFG_REQUIRED, CONFIG_TYPE_GROUP, &src);
    if (!rc) rc = colo_cfg_aggregate(&r, root, "cases", COLO_CFG_REQUIRED, CONFIG_TYPE_LIST, &cases);
    if (!rc) rc = colo_cfg_check_keys(&r, src, src_keys);
    size_t n = !rc ? (size_t)config_setting_length(cases) : 0;
    if (!rc && n == 0) rc = colo_cfg_error(&r, cases, COLO_EINVAL, "no cases");
    if (!rc) {
        colo_vsource_t *grown = colo_realloc(s->sources, (s->n_sources + 1) * sizeof *grown);
        colo_vcase_t *more = grown ? colo_realloc(s->cases, (s->n_cases + n) * sizeof *more) : NULL;
        if (grown) s->sources = grown;
        if (more) s->cases = more;
        if (!grown || !more) rc = COLO_ENOMEM;
    }
    size_t si = s->n_sources;
    if (!rc) {
        memset(&s->sources[si], 0, sizeof s->sources[si]);
        s->n_sources++;
        colo_vsource_t *v = &s->sources[si];
        if (!(v->file = colo_strdup(path)) || !(dir = dir_of(path))) rc = COLO_ENOMEM;
        if (!rc) rc = dup_string(&r, src, "name", COLO_CFG_REQUIRED, &v->name);
        if (!rc) rc = dup_string(&r, src, "cite", COLO_CFG_REQUIRED, &v->cite);
        if (!rc) rc = dup_string(&r, src, "setup", 0, &v->setup);
        if (!rc) rc = dup_string(&r, src, "calibrates", 0, &v->calibrates);
    }
    for (size_t i = 0; !rc && i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(cases, (unsigned)i);
        if (!config_setting_is_group(g))
            rc = colo_cfg_error(&r, g, COLO_EINVAL, "each case is a group { id = ...; ... }");
        else
            rc = read_case(&r, g, dir, s, si);
    }
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    colo_free(dir);
    config_destroy(&cfg);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int colo_vsuite_load(const char *dir, colo_vsuite_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_vsuite_t *s = colo_calloc(1, sizeof *s);
    if (!s || !(s->dir = colo_strdup(dir))) {
        colo_free(s);
        return colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    }
    DIR *d = opendir(dir);
    if (!d) {
        colo_vsuite_free(s);
        return colo_error_set(err, COLO_EIO, dir, 0, NULL, "cannot open the folder: %s",
                              strerror(errno));
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".cfg") != 0 || e->d_name[0] == '.') continue;
        if (n == cap && colo_grow((void **)&names, &cap, n + 1, sizeof *names)) {
            rc = COLO_ENOMEM;
            break;
        }
        if (colo_path_join(dir, e->d_name, &names[n])) rc = COLO_ENOMEM;
        else n++;
    }
    closedir(d);
    if (!rc) qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; !rc && i < n; i++)
        rc = read_file(s, names[i], err);
    if (!rc && s->n_cases == 0)
        rc = colo_error_set(err, COLO_ENOENT, dir, 0, NULL,
                            "no case files (*.cfg with a source and its cases)");
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, dir, 0, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        colo_free(names[i]);
    colo_free(names);
    if (rc) {
        colo_vsuite_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- running ---------------------------------------------------------------------------- */

/* The number at path in results: dots separate keys; in an array, "[N]" is an element, "*" the
 * sum over all elements of what follows, anything else the element whose "name" it is. */
/* Appends " (here: K1 K2 ...)" naming what v holds: an object's keys, a list's element names. */
static void say_keys(const json_t *v, char *why, size_t n)
{
    size_t used = strlen(why);
    const char *open = " (here:";
    if (json_is_object(v)) {
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m)
        {
            if (used >= n) return;
            used += (size_t)snprintf(why + used, n - used, "%s %s", open, k);
            open = "";
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            const char *name = json_string_value(json_object_get(e, "name"));
            if (!name || used >= n) continue;
            used += (size_t)snprintf(why + used, n - used, "%s %s", open, name);
            open = "";
        }
    }
    if (!*open && used < n) snprintf(why + used, n - used, ")");
}

static int metric_at(json_t *v, const char *path, double *out, char *why, size_t n)
{
    if (!*path) {
        if (!json_is_number(v)) {
            snprintf(why, n, json_is_object(v) || json_is_array(v)
                                 ? "names a group, not a number: add one of its parts"
                                 : "names something that is not a number");
            say_keys(v, why, n);
            return -1;
        }
        *out = json_number_value(v);
        return 0;
    }
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : path + len;
    char key[128];
    if (len == 0 || len >= sizeof key) {
        snprintf(why, n, "an empty or too long part");
        return -1;
    }
    memcpy(key, path, len);
    key[len] = '\0';
    if (json_is_array(v)) {
        if (strcmp(key, "*") == 0) {
            double sum = 0, x;
            size_t i;
            json_t *e;
            json_array_foreach(v, i, e)
            {
                if (metric_at(e, rest, &x, why, n)) return -1;
                sum += x;
            }
            *out = sum;
            return 0;
        }
        if (key[0] == '[') {
            char *end;
            long i = strtol(key + 1, &end, 10);
            if (strcmp(end, "]") != 0 || i < 0 || (size_t)i >= json_array_size(v)) {
                snprintf(why, n, "no element %s in a list of %zu", key, json_array_size(v));
                return -1;
            }
            return metric_at(json_array_get(v, (size_t)i), rest, out, why, n);
        }
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e)
        {
            const char *name = json_string_value(json_object_get(e, "name"));
            if (name && strcmp(name, key) == 0) return metric_at(e, rest, out, why, n);
        }
        snprintf(why, n, "no element named '%s'", key);
        say_keys(v, why, n);
        return -1;
    }
    json_t *m = json_is_object(v) ? json_object_get(v, key) : NULL;
    if (!m) {
        snprintf(why, n, "no '%s'", key);
        say_keys(v, why, n);
        return -1;
    }
    return metric_at(m, rest, out, why, n);
}

struct cached {
    char *key;
    json_t *res;
};

static char *run_key(const colo_vrun_t *r)
{
    size_t len = strlen(r->scenario) + 2;
    for (size_t i = 0; i < r->n_sets; i++)
        len += strlen(r->sets[i]) + 1;
    char *k = colo_malloc(len);
    if (!k) return NULL;
    strcpy(k, r->scenario);
    for (size_t i = 0; i < r->n_sets; i++) {
        strcat(k, "\n");
        strcat(k, r->sets[i]);
    }
    return k;
}

static int case_error_at(const colo_vsuite_t *s, const colo_vcase_t *c, colo_error_t *err, int code,
                         int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
static int case_error_at(const colo_vsuite_t *s, const colo_vcase_t *c, colo_error_t *err, int code,
                         int line, const char *key, const char *fmt, ...)
{
    char text[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    char k[300];
    snprintf(k, sizeof k, "%s (case %s)", key, c->id);
    return colo_error_set(err, code, s->sources[c->source].file, line > 0 ? line : c->line, k,
                          "%s", text);
}
#define case_error(s, c, err, code, key, ...) case_error_at(s, c, err, code, 0, key, __VA_ARGS__)

/* A run that failed: an override's error at its line of the case file, anything else (the
 * scenario, a trace, a GPU) at the case with what it said. A bad input either way. */
static int run_error(const colo_vsuite_t *s, const colo_vcase_t *c, const colo_vrun_t *r,
                     bool over, const colo_error_t *sub, colo_error_t *err)
{
    char key[64], msg[600];
    if (strcmp(sub->source, "--set") == 0 && sub->line >= 1 && (size_t)sub->line <= r->n_sets) {
        size_t i = (size_t)sub->line - 1;
        snprintf(key, sizeof key, "%sset[%zu]", over ? "over." : "", i);
        return case_error_at(s, c, err, COLO_EINVAL, r->set_lines[i], key, "%s: %s", sub->key,
                             sub->text);
    }
    colo_error_format(sub, msg, sizeof msg);
    snprintf(key, sizeof key, "%s%s", over ? "over." : "", r->trace ? "trace" : "scenario");
    return case_error_at(s, c, err, COLO_EINVAL, r->run_line, key, "its run fails: %s", msg);
}

/* A trace run: the trace alone on the whole of a GPU, as colosim trace --on computes it. */
static int trace_value(const colo_vrun_t *r, double *out, colo_error_t *err)
{
    colo_trace_t *t = NULL;
    colo_gpu_t *src = NULL, *g = NULL;
    int rc = colo_trace_load(r->trace, &t, err);
    if (!rc) rc = colo_gpu_open(t->gpu, NULL, NULL, &src, t->path, t->gpu_line, "gpu", err);
    if (!rc) rc = colo_gpu_open(r->gpu, NULL, NULL, &g, "gpu", 0, NULL, err);
    if (!rc) {
        colo_variant_t v;
        colo_tenant_cfg_t c;
        colo_fp32_math_t fp =
            r->fp32_math ? colo_fp32_math_parse(r->fp32_math) : COLO_FP32_PYTORCH;
        colo_tenant_cfg_of_trace(&c, &v, t, src, r->batch, fp, false);
        int b = r->batch ? r->batch : t->batch;
        colo_time_t req, ker;
        const colo_mig_profile_t *prof = NULL;
        int sms = 0;
        if (r->place && strncmp(r->place, "mig:", 4) == 0) {
            if (!(prof = colo_gpu_mig_profile(g, r->place + 4)))
                rc = colo_error_set(err, COLO_EINVAL, "place", 0, NULL,
                                    "%s has no MIG profile '%s'", g->name, r->place + 4);
        } else if (r->place && strcmp(r->place, "whole") != 0) {
            char *end;
            long n = strtol(r->place + 4, &end, 10);
            int mps = strncmp(r->place, "mps:", 4) == 0;
            if (*end || n < 1 || n > (mps ? 100 : g->sm.count))
                rc = colo_error_set(err, COLO_EINVAL, "place", 0, NULL,
                                    "'%s': %s", r->place,
                                    mps ? "a percentage from 1 to 100" : "SMs the GPU has");
            else
                sms = mps ? colo_layout_mps_cap(g, g->sm.count, (int)n) : (int)n;
        }
        if (!rc)
            rc = colo_request_time(&c, g, colo_place_rates_of(g, prof, sms), b, &req, &ker, err);
        if (!rc)
            *out = strcmp(r->metric, "kernels_ms") == 0   ? COLO_TO_MS(ker)
                   : strcmp(r->metric, "request_ms") == 0 ? COLO_TO_MS(req)
                                                          : b / COLO_TO_S(req);
    }
    colo_gpu_free(src);
    colo_gpu_free(g);
    colo_trace_free(t);
    return rc;
}

/* The number of one run: simulated once per distinct scenario and overrides. */
static int evaluate(colo_vsuite_t *s, const colo_vcase_t *c, const colo_vrun_t *r, const char *key,
                    struct cached **cache, size_t *n_cache, size_t *cap, double *out,
                    colo_error_t *err)
{
    if (r->trace) {
        colo_error_t sub;
        colo_error_clear(&sub);
        double v = 0;
        int rc = trace_value(r, &v, &sub);
        if (rc) return run_error(s, c, r, r == &c->over, &sub, err);
        *out = v * r->scale;
        return 0;
    }
    char *k = run_key(r);
    if (!k) return colo_error_set(err, COLO_ENOMEM, s->dir, 0, NULL, "out of memory");
    json_t *res = NULL;
    for (size_t i = 0; i < *n_cache && !res; i++)
        if (strcmp((*cache)[i].key, k) == 0) res = (*cache)[i].res;
    if (!res) {
        colo_error_t sub;
        colo_error_clear(&sub);
        int rc = colo_simulate_file(r->scenario, (const char *const *)r->sets, r->n_sets, &res,
                                    &sub);
        if (rc) {
            colo_free(k);
            return run_error(s, c, r, r == &c->over, &sub, err);
        }
        s->runs++;
        if (*n_cache == *cap && colo_grow((void **)cache, cap, *n_cache + 1, sizeof **cache)) {
            json_decref(res);
            colo_free(k);
            return colo_error_set(err, COLO_ENOMEM, s->dir, 0, NULL, "out of memory");
        }
        (*cache)[(*n_cache)++] = (struct cached){k, res};
        k = NULL;
    }
    colo_free(k);
    char why[200];
    double v;
    if (metric_at(res, r->metric, &v, why, sizeof why))
        return case_error_at(s, c, err, COLO_EINVAL, r->metric_line, key,
                             "'%s': %s", r->metric, why);
    if (!(v > 0) || !isfinite(v))
        return case_error_at(s, c, err, COLO_EINVAL, r->metric_line, key,
                          "metric '%s' is %g: a case needs a positive number", r->metric, v);
    *out = v * r->scale;
    return 0;
}

int colo_vsuite_run(colo_vsuite_t *s, colo_error_t *err)
{
    struct cached *cache = NULL;
    size_t n_cache = 0, cap = 0;
    int rc = 0;
    s->runs = 0;
    for (size_t i = 0; i < s->n_cases && !rc; i++) {
        colo_vcase_t *c = &s->cases[i];
        double a = 0, b = 1;
        rc = evaluate(s, c, &c->run, "metric", &cache, &n_cache, &cap, &a, err);
        if (!rc && c->has_over)
            rc = evaluate(s, c, &c->over, "over.metric", &cache, &n_cache, &cap, &b, err);
        if (!rc) {
            c->predicted = a / b;
            c->error = (c->predicted - c->published) / c->published;
        }
    }
    for (size_t i = 0; i < n_cache; i++) {
        colo_free(cache[i].key);
        json_decref(cache[i].res);
    }
    colo_free(cache);
    return rc;
}

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

/* ---- reporting -------------------------------------------------------------------------- */

json_t *colo_vsuite_json(const colo_vsuite_t *s)
{
    json_t *cases = json_array(), *doc = NULL;
    for (size_t i = 0; cases && i < s->n_cases; i++) {
        const colo_vcase_t *c = &s->cases[i];
        json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:s}", "id", c->id,
                              "source", s->sources[c->source].name, "category", c->category,
                              "role", c->calibration ? "calibration" : "validation", "what",
                              c->what, "published", c->published, "predicted", c->predicted,
                              "error", c->error, "from", c->from);
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
                        "sources", sources, "cases", cases, "summary", "validation_cases",
                        (int)nv, "median_abs_error", nv ? json_real(mv) : json_null(),
                        "calibration_cases", (int)nc, "median_abs_error_calibration",
                        nc ? json_real(mc) : json_null());
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
            fprintf(f, "%-*s %-10s %10.3f %10.3f %-2s %+7.1f%%%s\n", w, c->id, c->category,
                    c->published, c->predicted, case_unit(c), 100 * c->error,
                    fabs(c->error) > 0.5 ? (c->cause ? " (cause stated)" : " (no cause stated)")
                                         : "");
        }
        fprintf(f, "median |error| over %zu %s cases: %.1f %%\n", n,
                cal ? "calibration" : "validation", 100 * med);
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
            fprintf(f, " | %.4g | %.4g | %+.1f %% |\n", c->published, c->predicted,
                    100 * c->error);
        }
        fprintf(f, "\n**Median absolute error over the %zu %s cases: %.1f %%.**\n", n,
                cal ? "calibration" : "validation", 100 * med);
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

int colo_vsuite_check(const colo_vsuite_t *s, const char *recorded, double tolerance,
                      FILE *report, colo_error_t *err)
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
            fprintf(report,
                    "%s:%d: case %s: |error| %.1f %% is more than %.0f point%s past the recorded "
                    "%.1f %%\n",
                    s->sources[c->source].file, c->line, c->id, 100 * fabs(c->error),
                    100 * tolerance, tolerance == 0.01 ? "" : "s", 100 * was);
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
