/* validate_run.c: running the validation cases: each case's runs simulated (identical runs
 * once) or computed from a trace, and the number its metric names taken from the results. */
#include "validate.h"
#include "alloc.h"
#include "cluster.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "kernel_class.h"
#include "layout.h"
#include "serving.h"
#include "simtime.h"
#include "trace.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            snprintf(why, n,
                     json_is_object(v) || json_is_array(v)
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
    return colo_error_set(err, code, s->sources[c->source].file, line > 0 ? line : c->line, k, "%s",
                          text);
}
#define case_error(s, c, err, code, key, ...) case_error_at(s, c, err, code, 0, key, __VA_ARGS__)

/* A run that failed: an override's error at its line of the case file, anything else (the
 * scenario, a trace, a GPU) at the case with what it said. A bad input either way. */
static int run_error(const colo_vsuite_t *s, const colo_vcase_t *c, const colo_vrun_t *r, bool over,
                     const colo_error_t *sub, colo_error_t *err)
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
        colo_fp32_math_t fp = r->fp32_math ? colo_fp32_math_parse(r->fp32_math) : COLO_FP32_PYTORCH;
        colo_framework_t fw = r->framework ? colo_framework_parse(r->framework) : COLO_FW_TRACE;
        colo_math_t pm = r->precision ? colo_precision_parse(r->precision) : COLO_MATH_AUTO;
        colo_tenant_cfg_of_trace_as(&c, &v, t, src, r->batch, fp, fw, pm, g);
        if (pm != COLO_MATH_AUTO && g->sm.math_per_clock[pm] <= 0)
            rc = colo_error_set(err, COLO_EINVAL, "precision", 0, NULL, "%s has no %s unit",
                                g->name, r->precision);
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
                rc = colo_error_set(err, COLO_EINVAL, "place", 0, NULL, "'%s': %s", r->place,
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
static int evaluate(colo_vsuite_t *s, colo_vcase_t *c, const colo_vrun_t *r, const char *key,
                    struct cached **cache, size_t *n_cache, size_t *cap, double *out,
                    colo_error_t *err)
{
    colo_vcase_t *mc = r == &c->run ? c : NULL; /* what ran, for the record */
    if (r->trace) {
        colo_error_t sub;
        colo_error_clear(&sub);
        double v = 0;
        int rc = trace_value(r, &v, &sub);
        if (rc) return run_error(s, c, r, r == &c->over, &sub, err);
        *out = v * r->scale;
        if (mc) {
            const char *p = r->place;
            snprintf(mc->mechanism, sizeof mc->mechanism, "%s",
                     !p || !strcmp(p, "whole") ? "alone"
                     : !strncmp(p, "mig:", 4)  ? "mig"
                     : !strncmp(p, "mps:", 4)  ? "mps"
                                               : "green");
            snprintf(mc->gpu, sizeof mc->gpu, "%s", r->gpu);
        }
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
        size_t n = r->n_sets + s->n_extra_sets;
        const char **sets = colo_malloc((n ? n : 1) * sizeof *sets);
        if (!sets) {
            colo_free(k);
            return colo_error_set(err, COLO_ENOMEM, s->dir, 0, NULL, "out of memory");
        }
        for (size_t i = 0; i < n; i++)
            sets[i] = i < r->n_sets ? r->sets[i] : s->extra_sets[i - r->n_sets];
        int rc = colo_simulate_file(r->scenario, sets, n, &res, &sub);
        colo_free(sets);
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
    if (mc) {
        json_t *sc = json_object_get(res, "scenario");
        const char *mode =
                       json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode")),
                   *gpu = json_string_value(json_object_get(sc, "gpu"));
        snprintf(mc->mechanism, sizeof mc->mechanism, "%s", mode ? mode : "");
        snprintf(mc->gpu, sizeof mc->gpu, "%s", gpu ? gpu : "");
    }
    char why[200];
    double v;
    if (metric_at(res, r->metric, &v, why, sizeof why))
        return case_error_at(s, c, err, COLO_EINVAL, r->metric_line, key, "'%s': %s", r->metric,
                             why);
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
