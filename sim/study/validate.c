/* validate.c: the suite of published measurements (docs/validation.md): its case files read;
 * running the cases is in validate_run.c, reporting them in validate_report.c. */
#include "validate.h"
#include "alloc.h"
#include "cfg.h"
#include "folder.h"
#include "host.h"
#include "kernel_model.h"
#include "kernel_class.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const colo_vcategories[] = {
    "alone",      "cross_gpu", "batch",   "mig",       "mps",  "green", "colocation",
    "saturation", "green_bw",  "kernels", "precision", "host", NULL};

/* ---- reading ---------------------------------------------------------------------------- */

static void run_free(colo_vrun_t *r)
{
    colo_free(r->scenario);
    colo_free(r->trace);
    colo_free(r->gpu);
    colo_free(r->fp32_math);
    colo_free(r->framework);
    colo_free(r->precision);
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
    const char *place = NULL, *fw = NULL, *prec = NULL;
    int rc;
    if ((rc = colo_cfg_string(r, g, "framework", 0, &fw)) < 0 ||
        (rc = colo_cfg_string(r, g, "precision", 0, &prec)) < 0 ||
        (rc = colo_cfg_string(r, g, "place", 0, &place)) < 0 ||
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
                                  "a trace run takes gpu, batch, fp32_math, framework and "
                                  "precision, not set");
        if (trace)
            rc = colo_path_join(dir, trace, &out->trace);
        else
            rc = inherit(base->trace, &out->trace);
        if (!rc) rc = gpu ? inherit(gpu, &out->gpu) : inherit(base ? base->gpu : NULL, &out->gpu);
        if (!rc) rc = inherit(fp32 ? fp32 : base ? base->fp32_math : NULL, &out->fp32_math);
        if (!rc) rc = inherit(place ? place : base ? base->place : NULL, &out->place);
        if (!rc) rc = inherit(fw ? fw : base ? base->framework : NULL, &out->framework);
        if (!rc) rc = inherit(prec ? prec : base ? base->precision : NULL, &out->precision);
        if (rc) return rc;
        if (out->framework && colo_framework_parse(out->framework) == COLO_FRAMEWORKS)
            return colo_cfg_error(r, config_setting_get_member(g, "framework"), COLO_EINVAL,
                                  "'%s': trace, pytorch_eager, cuda_graphs or tensorrt",
                                  out->framework);
        if (out->precision && colo_precision_parse(out->precision) == COLO_MATH_CLASSES)
            return colo_cfg_error(r, config_setting_get_member(g, "precision"), COLO_EINVAL,
                                  "'%s': fp16, bf16, int8 or fp8", out->precision);
        if (out->place && strncmp(out->place, "mig:", 4) && strncmp(out->place, "mps:", 4) &&
            strncmp(out->place, "sms:", 4) && strcmp(out->place, "whole"))
            return colo_cfg_error(r, config_setting_get_member(g, "place"), COLO_EINVAL,
                                  "'%s': whole, mig:PROFILE, mps:PERCENT or sms:N", out->place);
        if (!out->gpu) return colo_cfg_error(r, g, COLO_EINVAL, "a trace run needs gpu = \"NAME\"");
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
    if (gpu || fp32 || place || fw || prec || config_setting_get_member(g, "batch"))
        return colo_cfg_error(r,
                              config_setting_get_member(g, gpu     ? "gpu"
                                                           : fp32  ? "fp32_math"
                                                           : place ? "place"
                                                           : fw    ? "framework"
                                                           : prec  ? "precision"
                                                                   : "batch"),
                              COLO_EINVAL,
                              "gpu, batch, fp32_math, framework, precision and place are for "
                              "trace runs: a scenario run sets its own with set = "
                              "[\"gpu=...\", ...]");
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
        "id",    "category", "what",  "published", "from",      "note",      "substitute",
        "cause", "scenario", "set",   "trace",     "gpu",       "batch",     "fp32_math",
        "place", "metric",   "scale", "over",      "framework", "precision", NULL};
    static const char *const over_keys[] = {"scenario", "set",       "trace",     "gpu",
                                            "batch",    "fp32_math", "place",     "metric",
                                            "scale",    "framework", "precision", NULL};
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
    if (!rc)
        rc = colo_cfg_double(r, g, "published", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE,
                             &c->published);
    if (rc) return rc;
    int known = 0;
    for (int k = 0; colo_vcategories[k]; k++)
        known |= strcmp(colo_vcategories[k], c->category) == 0;
    if (!known)
        return colo_cfg_error(r, config_setting_get_member(g, "category"), COLO_EINVAL,
                              "'%s': one of alone, cross_gpu, batch, mig, mps, green, "
                              "colocation, saturation, green_bw, kernels",
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
    if (!rc)
        rc = colo_cfg_aggregate(&r, root, "source", COLO_CFG_REQUIRED, CONFIG_TYPE_GROUP, &src);
    if (!rc)
        rc = colo_cfg_aggregate(&r, root, "cases", COLO_CFG_REQUIRED, CONFIG_TYPE_LIST, &cases);
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

int colo_vsuite_load(const char *dir, colo_vsuite_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_vsuite_t *s = colo_calloc(1, sizeof *s);
    if (!s || !(s->dir = colo_strdup(dir))) {
        colo_free(s);
        return colo_error_set(err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    }
    static const char *const cfg[] = {".cfg", NULL};
    char **names;
    size_t n;
    int rc = colo_folder_list(dir, cfg, &names, &n, err);
    if (rc) {
        colo_vsuite_free(s);
        return rc == COLO_ENOMEM ? colo_error_set(err, rc, dir, 0, NULL, "out of memory") : rc;
    }
    for (size_t i = 0; !rc && i < n; i++)
        rc = read_file(s, names[i], err);
    if (!rc && s->n_cases == 0)
        rc = colo_error_set(err, COLO_ENOENT, dir, 0, NULL,
                            "no case files (*.cfg with a source and its cases)");
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, dir, 0, NULL, "out of memory");
    colo_folder_free(names, n);
    if (rc) {
        colo_vsuite_free(s);
        return rc;
    }
    *out = s;
    return 0;
}
