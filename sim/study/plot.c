/* plot.c: gnuplot scripts for sweeps, searches and runs; SVG and PNG written atomically. */
#define _GNU_SOURCE /* popen, open_memstream */
#include "plot.h"
#include "plot_internal.h"
#include "alloc.h"
#include "atomic_file.h"
#include "cfg.h"
#include "gpu.h"
#include "gpu_catalog.h"

#include <libconfig.h>
#include <math.h>
#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* gnuplot string literal: double quotes, with the characters it treats specially escaped. */
void colo_plot_gp_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if (*s == '_' || *s == '^' || *s == '@' || *s == '&' || *s == '{' || *s == '}') {
            fputc('\\', f); /* enhanced-text markup */
            fputc('\\', f);
        }
        if (*s != '\n') fputc(*s, f);
    }
    fputc('"', f);
}

/* Runs the script (its body; the terminal and output lines are added) for one format, into
 * BASE.EXT through a temporary file renamed at the end. */
static int render(const char *body, const char *base, const char *ext, const char *terminal,
                  colo_error_t *err)
{
    size_t n = strlen(base) + 32;
    char *out = colo_malloc(n), *tmp = colo_malloc(n + 8);
    if (!out || !tmp) {
        colo_free(out);
        colo_free(tmp);
        return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    }
    snprintf(out, n, "%s.%s", base, ext);
    snprintf(tmp, n + 8, "%s.tmp", out);
    colo_atomic_track(tmp); /* removed if a signal ends colosim while gnuplot writes it */
    const char *gp = getenv("COLOSIM_GNUPLOT");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s >/dev/null", gp && *gp ? gp : "gnuplot");
    FILE *p = popen(cmd, "w");
    int rc = 0;
    if (!p) {
        rc = colo_error_set(err, COLO_EIO, out, 0, NULL, "cannot start gnuplot");
    } else {
        fprintf(p, "set terminal %s\nset output '", terminal);
        for (const char *c = tmp; *c; c++) /* single quotes: no escapes but '' */
            fputs(*c == '\'' ? "''" : (char[]){*c, 0}, p);
        fputs("'\n", p);
        fputs(body, p);
        fputs("\nunset output\n", p);
        int st = pclose(p);
        if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            remove(tmp);
            rc = colo_error_set(err, COLO_EIO, out, 0, NULL,
                                WIFEXITED(st) && WEXITSTATUS(st) == 127
                                    ? "gnuplot is not installed (apt-get install gnuplot-nox)"
                                    : "gnuplot failed (exit %d)",
                                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        } else if (access(tmp, F_OK) != 0 || rename(tmp, out) != 0) {
            remove(tmp);
            rc = colo_error_set(err, COLO_EIO, out, 0, NULL, "gnuplot wrote no file");
        }
    }
    colo_atomic_untrack(tmp);
    colo_free(out);
    colo_free(tmp);
    return rc;
}

/* Closes the script f (its text in *body) and draws it at w x h pixels as SVG, then PNG. */
int colo_plot_render_both(FILE *f, char **body, unsigned w, unsigned h, const char *base,
                          colo_error_t *err)
{
    if (fclose(f) != 0 || !*body)
        return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    char svg[128], png[128];
    snprintf(svg, sizeof svg, "svg size %u,%u dynamic font 'sans,11' background rgb 'white'", w, h);
    snprintf(png, sizeof png, "pngcairo size %u,%u font 'sans,10' background rgb 'white'", w, h);
    int rc = render(*body, base, "svg", svg, err);
    if (!rc) rc = render(*body, base, "png", png, err);
    return rc;
}

double colo_plot_num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* ---- words: keys, values, GPUs and scenarios as a reader names them ---- */

static const struct {
    const char *key, *name, *axis; /* axis: the axis label, when it says more than name */
} key_words[] = {{"load_scale", "load", "load (x the scenario's arrival rates)"},
                 {"sharing.mode", "sharing mechanism", NULL},
                 {"gpu", "GPU", NULL},
                 {"cluster.policy", "placement policy", NULL},
                 {"scheduler.policy", "scheduling policy", NULL},
                 {"sharing.timeslice", "time-slice length", NULL},
                 {"duration_s", "run length", "run length (s)"},
                 {"seed", "seed", "random seed"}};

static const struct {
    const char *key, *value, *words;
} value_words[] = {{"sharing.mode", "timeslice", "time-slicing"},
                   {"sharing.mode", "mps", "MPS"},
                   {"sharing.mode", "mig", "MIG"},
                   {"sharing.mode", "green", "Green Contexts"},
                   {"cluster.policy", "first_fit", "first fit"},
                   {"cluster.policy", "best_fit", "best fit"},
                   {"cluster.policy", "interference_aware", "interference-aware"}};

/* Whether key is a tenant's key ending in leaf ("tenants.[0].copies", "tenants.bert.copies"). */
static bool tenant_key(const char *key, const char *leaf)
{
    size_t k = strlen(key), l = strlen(leaf);
    return strncmp(key, "tenants.", 8) == 0 && k > l + 1 && key[k - l - 1] == '.' &&
           strcmp(key + k - l, leaf) == 0;
}

/* A study key in words (axis: the axis label); an unknown key is itself. */
static const char *key_name(const char *key, bool axis)
{
    for (size_t i = 0; key && i < sizeof key_words / sizeof *key_words; i++)
        if (strcmp(key, key_words[i].key) == 0)
            return axis && key_words[i].axis ? key_words[i].axis : key_words[i].name;
    if (key && tenant_key(key, "copies")) return axis ? "copies of the service" : "copies";
    if (key && tenant_key(key, "active_thread_percentage")) return "MPS thread cap";
    return key ? key : "value";
}

/* A GPU by its description's full name, less "NVIDIA " ("H100 SXM5 80GB HBM3"); the name as
 * given when no description is found. Reads the description file. */
static void gpu_words(const char *name, char *buf, size_t n)
{
    colo_gpu_t *g = NULL;
    colo_error_t e;
    colo_error_clear(&e);
    const char *s = name ? name : "";
    if (name && colo_gpu_open(name, NULL, "none", &g, NULL, 0, NULL, &e) == 0 && g->full_name) {
        s = g->full_name;
        if (strncmp(s, "NVIDIA ", 7) == 0) s += 7;
    }
    snprintf(buf, n, "%s", s);
    colo_gpu_free(g);
}

/* The value of a study key in words (buf); an unknown value is itself. */
const char *colo_plot_value_name(const char *key, const char *value, char *buf, size_t n)
{
    snprintf(buf, n, "%s", value ? value : "");
    if (!key || !value) return buf;
    if (strcmp(key, "gpu") == 0) gpu_words(value, buf, n);
    if (tenant_key(key, "active_thread_percentage") && strcmp(value, "100") == 0)
        snprintf(buf, n, "MPS threads uncapped");
    else if (tenant_key(key, "active_thread_percentage"))
        snprintf(buf, n, "threads capped at %s %%", value);
    for (size_t i = 0; i < sizeof value_words / sizeof *value_words; i++)
        if (strcmp(key, value_words[i].key) == 0 && strcmp(value, value_words[i].value) == 0)
            snprintf(buf, n, "%s", value_words[i].words);
    return buf;
}

/* What the runs were, for a figure's subtitle: into desc the scenario's description (else its
 * file's name, no folder or .cfg); into facts, after lead, its GPU in words (unless gpu_axis:
 * the figure names them) and the runs' length. sc: a run's "scenario" object, or NULL to read
 * the scenario file at path, with the study's overrides set (a search). */
void colo_plot_runs_words(json_t *sc, const char *path, json_t *set, json_t *cluster, bool gpu_axis,
                          const char *lead, char *desc, char *facts, size_t n)
{
    const char *d = json_string_value(json_object_get(sc, "description"));
    const char *gname = json_string_value(json_object_get(sc, "gpu"));
    double dur = colo_plot_num(sc, "duration_s"), warm = colo_plot_num(sc, "warmup_s");
    config_t c;
    config_init(&c);
    colo_error_t e;
    colo_error_clear(&e);
    if (!sc && path && colo_cfg_read_file(&c, path, &e) == 0) { /* a search: no results */
        config_set_options(&c, CONFIG_OPTION_AUTOCONVERT);
        (void)config_lookup_string(&c, "description", &d);
        (void)config_lookup_string(&c, "gpu", &gname);
        (void)config_lookup_float(&c, "duration_s", &dur);
        (void)config_lookup_float(&c, "warmup_s", &warm);
    }
    size_t i;
    json_t *v;
    json_array_foreach(set, i, v) /* the study's fixed overrides */
    {
        const char *s = json_string_value(v) ? json_string_value(v) : "";
        if (strncmp(s, "gpu=", 4) == 0) gname = s + 4;
        if (strncmp(s, "duration_s=", 11) == 0) dur = atof(s + 11);
        if (strncmp(s, "warmup_s=", 9) == 0) warm = atof(s + 9);
    }
    if (!gname) /* a cluster's pool */
        gname = json_string_value(
            json_object_get(json_array_get(json_object_get(cluster, "pool"), 0), "model"));
    const char *slash = path ? strrchr(path, '/') : NULL;
    snprintf(desc, n, "%s", d ? d : slash ? slash + 1 : path ? path : "");
    char *dot = d ? NULL : strstr(desc, ".cfg");
    if (dot) *dot = '\0';
    char gpu[160] = "";
    if (gname && !gpu_axis) gpu_words(gname, gpu, sizeof gpu);
    int used = snprintf(facts, n, "%s%s%s", lead ? lead : "", lead && *gpu ? ", " : "", gpu);
    if (dur > 0 && used >= 0 && (size_t)used < n)
        snprintf(facts + used, n - (size_t)used, "%s%.3g s measured after %.3g s warm-up",
                 used ? "; " : "", dur - warm, warm);
    config_destroy(&c);
}

/* Height in pixels of a heading over a figure w pixels wide (colo_plot_heading()). */
unsigned colo_plot_heading_px(const char *desc, const char *facts, unsigned w)
{
    return strlen(desc) + strlen(facts) + 3 <= w / 8 ? 58 : 76;
}

/* A figure's title, centred at the top, and under it the runs (desc and facts) on one line or,
 * when they do not fit the width w, two. h: the figure's height in pixels. */
void colo_plot_heading(FILE *f, const char *title, const char *desc, const char *facts, unsigned w,
                       unsigned h)
{
    bool join = colo_plot_heading_px(desc, facts, w) < 76;
    char *one = NULL;
    if (join && asprintf(&one, "%s%s%s", desc, *desc && *facts ? " \xe2\x80\x94 " : "", facts) < 0)
        one = NULL;
    const char *lines[3] = {title, one ? one : desc, one ? NULL : facts};
    for (int k = 0; k < 3; k++) {
        if (!lines[k] || !*lines[k]) continue;
        fprintf(f, "set label %d ", 901 + k);
        colo_plot_gp_string(f, lines[k]);
        fprintf(f, " at screen 0.5,%.4f center font ',%d'\n", 1 - (20.0 + 20 * k) / h, k ? 10 : 14);
    }
    free(one);
}

/* The series' colours: Okabe and Ito's, told apart by readers with a colour-vision deficiency. */
const char *const colo_plot_colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                         "#E69F00", "#56B4E9", "#000000"};

/* Line styles 1..n for the series, each with its own dash and point type, wider and larger
 * first, so a series drawn over an equal one leaves it visible; 90: overloaded points; 91: an
 * SLO or goal line. */
void colo_plot_styles(FILE *f, size_t n)
{
    static const char *const dash[] = {"1",     "(14,6)", "(3,4)",         "(14,5,3,5)",
                                       "(7,4)", "(2,2)",  "(18,4,3,4,3,4)"};
    static const int pt[] = {7, 5, 9, 11, 13, 15, 3};
    for (size_t k = 0; k < n; k++) {
        double lw = 3.2 - 0.6 * (double)(k % 7), ps = 1.6 - 0.2 * (double)(k % 7);
        fprintf(f, "set style line %zu lc rgb '%s' dt %s lw %.2f pt %d ps %.2f\n", k + 1,
                colo_plot_colours[k % 7], dash[k % 7], lw < 1.2 ? 1.2 : lw, pt[k % 7],
                ps < 0.8 ? 0.8 : ps);
    }
    fputs("set style line 90 lc rgb 'black' lw 1.5 pt 6 ps 2.8\n"
          "set style line 91 lc rgb '#B00000' lw 1.5 dt (8,5)\n",
          f);
}

/* ---- sweeps ---- */

/* Index of string s in array a, appended when absent. */
static size_t index_of(json_t *a, const char *s)
{
    size_t k;
    json_t *e;
    json_array_foreach(a, k, e) if (strcmp(json_string_value(e), s) == 0) return k;
    json_array_append_new(a, json_string(s));
    return json_array_size(a) - 1;
}

/* A metric of one tenant's results. */
static int metric(json_t *t, const char *y, double *v)
{
    json_t *lat = json_object_get(t, "latency_ms");
    if (strcmp(y, "gpus") == 0) { /* t is a cluster's whole results */
        json_t *c = json_object_get(json_object_get(t, "cluster"), "gpus_used");
        if (!json_is_integer(c)) return -1;
        *v = (double)json_integer_value(c);
    } else if (strcmp(y, "throughput") == 0)
        *v = colo_plot_num(t, "throughput_rps");
    else if (strcmp(y, "tokens_per_s") == 0) { /* an LLM tenant's output tokens */
        json_t *r = json_object_get(json_object_get(t, "llm"), "output_tokens_per_s");
        if (!json_is_number(r)) return -1;
        *v = json_number_value(r);
    } else if (strncmp(y, "ttft_", 5) == 0 || strncmp(y, "tpot_", 5) == 0) {
        json_t *m = json_object_get(
            json_object_get(json_object_get(t, "llm"), y[1] == 't' ? "ttft_ms" : "tpot_ms"), y + 5);
        if (!json_is_number(m)) return -1; /* not an LLM tenant */
        *v = json_number_value(m);
    } else if (strcmp(y, "slo_attainment") == 0) {
        json_t *a = json_object_get(t, "slo_attainment");
        if (!json_is_number(a)) return -1;
        *v = 100 * json_number_value(a);
    } else {
        json_t *m = json_object_get(lat, y);
        if (!json_is_number(m)) return -1;
        *v = json_number_value(m);
    }
    return 0;
}

/* Whether a run could not keep up, so that its percentiles, of the requests that finished, are
 * capped by the run's length: requests that arrived in the window were still unfinished when it
 * stopped (of any tenant when t is a cluster's whole results), or, for a tenant, its results
 * mark it "overloaded" (docs/results.md; files written before that mark: the requests
 * completed in the window fell short of those that arrived in it by more than 5 % and more than
 * 5 requests (the queue grew through the window, though the drain then emptied it; a stable run
 * is short by the few requests in service at the window's ends: at most 6 in the shipped
 * p99_vs_load sweep)). sc: the run's "scenario" object. */
static bool overloaded(json_t *t, json_t *sc, bool whole)
{
    if (!whole) {
        json_t *marked = json_object_get(t, "overloaded"); /* the run's own rule, when it has it */
        if (json_is_boolean(marked))
            return json_is_true(marked) || colo_plot_num(t, "in_flight") > 0;
        double window = colo_plot_num(sc, "duration_s") - colo_plot_num(sc, "warmup_s");
        double arrived = colo_plot_num(t, "arrived");
        double short_by = arrived - colo_plot_num(t, "throughput_rps") * window;
        return colo_plot_num(t, "in_flight") > 0 ||
               (window > 0 && short_by > 0.05 * arrived && short_by > 5);
    }
    double s = 0;
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(t, "tenants"), i, e) s += colo_plot_num(e, "in_flight");
    return s > 0;
}

/* The SLO a tenant's metric y is held to (0: none): slo_ms for latencies, an LLM tenant's
 * slo_ttft_ms or slo_tpot_ms for its TTFT or TPOT. */
static double slo_of(json_t *t, const char *y)
{
    if (strncmp(y, "ttft_", 5) == 0 || strncmp(y, "tpot_", 5) == 0)
        return colo_plot_num(json_object_get(t, "llm"),
                             y[1] == 't' ? "slo_ttft_ms" : "slo_tpot_ms");
    return colo_plot_num(t, "slo_ms");
}

static const char *y_label(const char *y)
{
    if (strcmp(y, "throughput") == 0) return "throughput (requests/s)";
    if (strcmp(y, "tokens_per_s") == 0) return "output tokens/s";
    static char llm[64];
    if (strncmp(y, "ttft_", 5) == 0 || strncmp(y, "tpot_", 5) == 0) {
        snprintf(llm, sizeof llm, "%s %s (ms)",
                 y[1] == 't' ? "time to first token" : "time per output token",
                 strcmp(y + 5, "p999") == 0 ? "p99.9" : y + 5);
        return llm;
    }
    if (strcmp(y, "gpus") == 0) return "GPUs used";
    if (strcmp(y, "slo_attainment") == 0) return "requests within SLO (%)";
    if (strcmp(y, "mean") == 0) return "mean latency (ms)";
    if (strcmp(y, "p999") == 0) return "p99.9 latency (ms)";
    static char buf[64];
    snprintf(buf, sizeof buf, "%s latency (ms)", y);
    return buf;
}

static bool is_latency(const char *y)
{
    return strcmp(y, "throughput") != 0 && strcmp(y, "slo_attainment") != 0 &&
           strcmp(y, "gpus") != 0 && strcmp(y, "tokens_per_s") != 0;
}

struct xy {
    double x, y;
};

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const struct xy *)a)->x - ((const struct xy *)b)->x;
    return (d > 0) - (d < 0);
}

/* A sweep figure's key rows and bottom margin, in pixels (its panels: pw x ph each). */
enum { KEY_ROW_PX = 22, FOOT_PX = 8 };

/* Panel t's data blocks: $dT_K per group, $oT its overloaded points (*nover of them, the block
 * left out when none). Widens range (y lo, hi, x lo, hi) to what they hold. Returns the number
 * of groups with points. */
static size_t panel_data(FILE *f, json_t *points, json_t *groups, size_t t, const char *x,
                         const char *by, const char *y, bool whole, struct xy *pts, struct xy *over,
                         double range[4], size_t *nover)
{
    size_t k, i, drawn = 0, no = 0;
    json_t *g, *p;
    json_array_foreach(groups, k, g)
    {
        size_t m = 0;
        json_array_foreach(points, i, p)
        {
            json_t *vals = json_object_get(p, "values");
            if (by &&
                strcmp(json_string_value(json_object_get(vals, by)), json_string_value(g)) != 0)
                continue;
            json_t *res = json_object_get(p, "results");
            json_t *tn = whole ? res : json_array_get(json_object_get(res, "tenants"), t);
            char *end;
            double xv = strtod(json_string_value(json_object_get(vals, x)), &end);
            double yv;
            if (!tn || *end || metric(tn, y, &yv)) continue;
            if (is_latency(y) && yv <= 0) continue; /* nothing finished: no latency */
            pts[m++] = (struct xy){xv, yv};
            if (overloaded(tn, json_object_get(res, "scenario"), whole))
                over[no++] = (struct xy){xv, yv};
            range[0] = fmin(range[0], yv), range[1] = fmax(range[1], yv);
            range[2] = fmin(range[2], xv), range[3] = fmax(range[3], xv);
        }
        qsort(pts, m, sizeof *pts, cmp_xy);
        fprintf(f, "$d%zu_%zu << EOD\n", t, k);
        for (size_t q = 0; q < m; q++)
            fprintf(f, "%.9g %.9g\n", pts[q].x, pts[q].y);
        fputs("EOD\n", f);
        drawn += m > 0;
    }
    if (no) { /* overloaded points: a series of their own, drawn over the lines */
        fprintf(f, "$o%zu << EOD\n", t);
        for (size_t q = 0; q < no; q++)
            fprintf(f, "%.9g %.9g\n", over[q].x, over[q].y);
        fputs("EOD\n", f);
    }
    *nover = no;
    return drawn;
}

int colo_plot_sweep(json_t *sweep, const char *x, const char *by, const char *y, const char *base,
                    colo_error_t *err)
{
    static const char *const ys[] = {"p50",
                                     "p90",
                                     "p99",
                                     "p999",
                                     "mean",
                                     "throughput",
                                     "slo_attainment",
                                     "gpus",
                                     "ttft_p50",
                                     "ttft_p90",
                                     "ttft_p99",
                                     "ttft_mean",
                                     "tpot_p50",
                                     "tpot_p90",
                                     "tpot_p99",
                                     "tpot_mean",
                                     "tokens_per_s",
                                     NULL};
    bool known = false;
    for (size_t k = 0; ys[k]; k++)
        known |= strcmp(ys[k], y) == 0;
    if (!known)
        return colo_error_set(err, COLO_EINVAL, "--y", 0, NULL,
                              "'%s': use p50, p90, p99, p999, mean, throughput, slo_attainment, "
                              "gpus (a cluster's), or an LLM tenant's ttft_p50, ttft_p90, "
                              "ttft_p99, ttft_mean, tpot_p50, tpot_p90, tpot_p99, tpot_mean or "
                              "tokens_per_s",
                              y);
    bool whole = strcmp(y, "gpus") == 0; /* one panel: the whole cluster */
    json_t *points = json_object_get(sweep, "points");
    /* tenants from the first point with results; groups from the by values, in order seen */
    json_t *first = NULL, *res0 = NULL, *p;
    size_t i;
    json_array_foreach(points, i, p) if (!res0 && json_object_get(p, "results")) res0 =
        json_object_get(p, "results");
    first = json_object_get(res0, "tenants");
    if (!first) return colo_error_set(err, COLO_EINVAL, base, 0, NULL, "no point has results");
    json_t *groups = json_array();
    json_array_foreach(points, i, p)
    {
        json_t *vals = json_object_get(p, "values");
        if (!json_is_string(json_object_get(vals, x)))
            return json_decref(groups), colo_error_set(err, COLO_EINVAL, "--x", 0, NULL,
                                                       "'%s' is not an axis of the study", x);
        const char *g = by ? json_string_value(json_object_get(vals, by)) : "";
        if (by && !g)
            return json_decref(groups), colo_error_set(err, COLO_EINVAL, "--by", 0, NULL,
                                                       "'%s' is not an axis of the study", by);
        index_of(groups, g);
    }
    size_t nt = whole ? 1 : json_array_size(first), cols = nt < 2 ? 1 : 2,
           rows = (nt + cols - 1) / cols, ng = json_array_size(groups);
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        json_decref(groups);
        return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    }
    size_t np = json_array_size(points) + 1;
    struct xy *pts = colo_calloc(2 * np, sizeof *pts);
    size_t *nover = colo_calloc(nt + 1, sizeof *nover);
    int rc = pts && nover ? 0 : COLO_ENOMEM;
    fputs("set encoding utf8\n", f);
    colo_plot_styles(f, ng);
    double range[4] = {HUGE_VAL, -HUGE_VAL, HUGE_VAL, -HUGE_VAL};
    bool any_over = false, any_slo = false, goal = strcmp(y, "slo_attainment") == 0;
    for (size_t t = 0; t < nt && !rc; t++) {
        if (!panel_data(f, points, groups, t, x, by, y, whole, pts, pts + np, range, &nover[t]))
            rc = colo_error_set(err, COLO_EINVAL, "--x", 0, NULL,
                                "no numeric values of '%s' with results to plot", x);
        any_over |= nover[t] > 0;
        double slo = whole ? 0 : slo_of(json_array_get(first, t), y);
        if (is_latency(y) && slo > 0) {
            any_slo = true;
            range[0] = fmin(range[0], slo), range[1] = fmax(range[1], slo);
        }
    }
    any_slo |= goal; /* the 99 % line */
    /* one y range for every panel: the same quantity on the same scale */
    double lo = 0, hi = range[1] > 0 ? 1.1 * range[1] : 1;
    if (is_latency(y)) {
        lo = pow(10, floor(log10(range[0]))), hi = pow(10, ceil(log10(range[1])));
        hi = hi <= lo ? 10 * lo : hi;
    } else if (goal) {
        lo = floor(range[0] < 99 ? range[0] : 99), hi = 100;
        hi += 0.04 * (hi - lo), lo -= 0.02 * (hi - lo);
    }
    double xpad = range[3] > range[2] ? 0.03 * (range[3] - range[2]) : 0.5;
    /* the key, above the panels: as many columns as fit the figure's width */
    size_t keys = ng + any_slo + any_over, longest = any_over ? 34 : 28;
    char words[256];
    for (size_t k = 0; k < ng; k++) {
        size_t l = strlen(colo_plot_value_name(by, json_string_value(json_array_get(groups, k)),
                                               words, sizeof words));
        longest = l > longest ? l : longest;
    }
    unsigned pw = cols == 1 ? 800 : 540, ph = 360, w = (unsigned)cols * pw;
    size_t kcols = w / (unsigned)(longest * 9 + 100);
    kcols = kcols < 1 ? 1 : kcols > keys ? keys : kcols;
    char title[256], desc[1024], facts[1024];
    snprintf(title, sizeof title, "%s against %s%s%s", y_label(y), key_name(x, false),
             by ? ", by " : "", by ? key_name(by, false) : "");
    char *unit = strstr(title, " ("); /* "p99 latency (ms) against" -> "p99 latency against" */
    if (unit) memmove(unit, strchr(unit, ')') + 1, strlen(strchr(unit, ')') + 1) + 1);
    if (title[0] >= 'a' && title[0] <= 'z' && !(title[1] >= '0' && title[1] <= '9'))
        title[0] = (char)(title[0] - 'a' + 'A'); /* "Requests within SLO", not "P99 latency" */
    bool gpu_axis = strcmp(x, "gpu") == 0 || (by && strcmp(by, "gpu") == 0);
    colo_plot_runs_words(
        json_object_get(res0, "scenario"), json_string_value(json_object_get(sweep, "scenario")),
        NULL, json_object_get(res0, "cluster"), gpu_axis, NULL, desc, facts, sizeof desc);
    unsigned top = colo_plot_heading_px(desc, facts, w) +
                   (unsigned)((keys + kcols - 1) / kcols) * KEY_ROW_PX + 16;
    unsigned h = top + (unsigned)rows * ph + FOOT_PX;
    fputs("set multiplot\nset grid\nunset key\nset lmargin 11\nset rmargin 9\nset tmargin 2.2\n"
          "set bmargin 3.6\nset xlabel ",
          f);
    colo_plot_gp_string(f, key_name(x, true));
    fputs("\nset ylabel ", f);
    colo_plot_gp_string(f, y_label(y));
    fputs(is_latency(y) ? "\nset logscale y\nset format y '%g'\n" : "\nunset logscale y\n", f);
    fprintf(f, "set yrange [%.9g:%.9g]\nset xrange [%.9g:%.9g]\n", lo, hi, range[2] - xpad,
            range[3] + xpad);
    for (size_t t = 0; t < nt && !rc; t++) {
        size_t r = t / cols, c = t % cols;
        fprintf(f, "set origin %.5f,%.5f\nset size %.5f,%.5f\nset title ", (double)(c * pw) / w,
                (double)((rows - 1 - r) * ph + FOOT_PX) / h, (double)pw / w, (double)ph / h);
        json_t *tn = json_array_get(first, t);
        colo_plot_gp_string(f, whole ? "" : json_string_value(json_object_get(tn, "name")));
        double slo = goal ? 99 : whole || !is_latency(y) ? 0 : slo_of(tn, y);
        if (slo > 0) /* named in the right margin, clear of the data */
            fprintf(f,
                    "\nset label 1 \"%s\\n%.4g %s\" at graph 1, first %.9g left offset 0.8,0 "
                    "tc ls 91 front",
                    goal ? "goal" : "SLO", slo, goal ? "%" : "ms", slo);
        fputs("\nplot ", f);
        for (size_t k = 0; k < ng; k++)
            fprintf(f, "%s$d%zu_%zu using 1:2 with linespoints ls %zu notitle", k ? ", " : "", t, k,
                    k + 1);
        if (slo > 0) fprintf(f, ", %.9g with lines ls 91 notitle", slo);
        if (nover[t]) fprintf(f, ", $o%zu using 1:2 with points ls 90 notitle", t);
        fputs("\nunset label 1\n", f);
    }
    /* the heading and the key, drawn by an empty plot over the whole figure */
    fprintf(f,
            "set origin 0,0\nset size 1,1\nunset border\nunset tics\nunset grid\nunset xlabel\n"
            "unset ylabel\nunset title\nunset logscale\nset xrange [0:1]\nset yrange [0:1]\n"
            "set key at screen 0.5,%.4f center top horizontal maxcols %zu Left reverse "
            "samplen 5 spacing 1.3 width 2\n",
            1 - (double)(colo_plot_heading_px(desc, facts, w) + 2) / h, kcols);
    colo_plot_heading(f, title, desc, facts, w, h);
    fputs("plot ", f);
    for (size_t k = 0; k < ng; k++) {
        fprintf(f, "%sNaN with linespoints ls %zu title ", k ? ", " : "", k + 1);
        colo_plot_gp_string(
            f, by ? colo_plot_value_name(by, json_string_value(json_array_get(groups, k)), words,
                                         sizeof words)
                  : y_label(y));
    }
    if (any_slo)
        fputs(goal ? ", NaN with lines ls 91 title '99 % of requests within SLO'"
                   : ", NaN with lines ls 91 title 'SLO (each service''s)'",
              f);
    if (any_over) fputs(", NaN with points ls 90 title 'overloaded (its queue grew)'", f);
    fputs("\nunset multiplot\n", f);
    json_decref(groups);
    colo_free(pts);
    colo_free(nover);
    if (rc == COLO_ENOMEM) rc = colo_error_set(err, rc, base, 0, NULL, "out of memory");
    if (!rc)
        rc = colo_plot_render_both(f, &body, w, h, base, err);
    else
        fclose(f);
    free(body);
    return rc;
}

/* ---- searches ---- */

/* A point's values in words, those of every axis but skip, joined by ", " into buf. */
static void values_words(json_t *vals, const char *skip, char *buf, size_t n)
{
    size_t used = 0;
    const char *k;
    json_t *v;
    buf[0] = '\0';
    json_object_foreach(vals, k, v)
    {
        if (skip && strcmp(k, skip) == 0) continue;
        char w[160];
        int r = snprintf(buf + used, n - used, "%s%s", used ? ", " : "",
                         colo_plot_value_name(k, json_string_value(v), w, sizeof w));
        if (r > 0 && (size_t)r < n - used) used += (size_t)r;
    }
}

int colo_plot_search(json_t *search, const char *base, colo_error_t *err)
{
    json_t *points = json_object_get(search, "points"), *p, *a;
    json_t *head = json_object_get(search, "search"), *axes = json_object_get(search, "axes");
    const char *key = json_string_value(json_object_get(head, "key"));
    /* bars grouped by GPU when it is an axis, else by the first of several axes */
    const char *gkey = NULL;
    size_t i;
    json_array_foreach(axes, i, a) if (strcmp(json_string_value(a), "gpu") == 0) gkey = "gpu";
    if (!gkey && json_array_size(axes) > 1) gkey = json_string_value(json_array_get(axes, 0));
    json_t *groups = json_array(), *series = json_array();
    char *body = NULL, w[256], text[64];
    size_t len = 0, n = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        json_decref(groups);
        json_decref(series);
        return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    }
    /* one row per point: x, capacity, its whisker's ends, the value as text, its series; the
     * whisker is the replications' own capacities' confidence interval, else (older files) the
     * bisection's bracket */
    double tol = colo_plot_num(head, "tolerance"), top = 0;
    bool all_ci = true, undecided = false;
    fputs("set encoding utf8\n$b << EOD\n", f);
    json_array_foreach(points, i, p)
    {
        json_t *vals = json_object_get(p, "values");
        const char *gv = json_string_value(json_object_get(vals, gkey ? gkey : ""));
        size_t g = index_of(groups, gkey ? colo_plot_value_name(gkey, gv, w, sizeof w) : "");
        values_words(vals, gkey, w, sizeof w);
        size_t s = index_of(series, *w ? w : "base");
        double cap = colo_plot_num(p, "capacity"), up = cap, down = cap;
        json_t *ci = json_object_get(json_object_get(p, "replications"), "ci");
        const char *br = json_string_value(json_object_get(p, "bracket"));
        if (!json_is_number(json_object_get(p, "capacity")))
            snprintf(text, sizeof text, "cannot run"); /* its error is in search.json */
        else if (br && strcmp(br, "below lo") == 0)
            snprintf(text, sizeof text, "< %g", cap);
        else if (br && strcmp(br, "at or above hi") == 0)
            snprintf(text, sizeof text, "\xe2\x89\xa5 %g", cap);   /* >= */
        else if (json_is_true(json_object_get(head, "integer"))) { /* a count: exact to 1 */
            up = cap + 1;
            snprintf(text, sizeof text, "%.0f", cap);
        } else {
            up = cap * (1 + tol); /* passes at cap, fails at most tolerance x cap above */
            snprintf(text, sizeof text, "%#.3g", cap);
        }
        if (json_is_array(ci))
            down = json_number_value(json_array_get(ci, 0)),
            up = json_number_value(json_array_get(ci, 1));
        if (json_is_false(json_object_get(p, "decided")) && strlen(text) + 1 < sizeof text)
            strcat(text, "?"), undecided = true; /* as the table marks it */
        all_ci &= json_is_array(ci) || !json_is_number(json_object_get(p, "capacity"));
        fprintf(f, "%zu %.9g %.9g %.9g \"%s\" %zu\n", g, cap, down, up, text, s);
        top = up > top ? up : top;
        n += json_is_number(json_object_get(p, "capacity"));
    }
    fputs("EOD\n", f);
    size_t ng = json_array_size(groups), ns = json_array_size(series);
    if (!n) {
        fclose(f);
        free(body);
        json_decref(groups);
        json_decref(series);
        return colo_error_set(err, COLO_EINVAL, base, 0, NULL, "no point has a capacity");
    }
    colo_plot_styles(f, ns);
    fprintf(f, "bar(g, s) = g * %zu + s\n", ns + 1); /* bar s of group g */
    unsigned wpx = (unsigned)(ng * (ns + 1)) * 64 + 330, hpx = 500;
    if (wpx < 820) wpx = 820;
    fprintf(f,
            "set tmargin at screen %.4f\nset lmargin 11\nset grid ytics\nset yrange [0:%.9g]\n"
            "set xrange [-0.8:%.9g]\nset style fill solid 0.85 border rgb 'black'\n"
            "set boxwidth 0.85\nset key outside right top vertical Left reverse samplen 2 "
            "spacing 1.3\nset ylabel ",
            1 - 84.0 / hpx, top * 1.15, (double)(ng * (ns + 1)) - 1.2);
    colo_plot_gp_string(f, key && strcmp(key, "load_scale") == 0
                               ? "capacity (x the scenario's arrival rates)"
                               : key_name(key, true));
    fputs("\nset xtics scale 0 (", f);
    for (size_t k = 0; k < (gkey ? ng : ns); k++) { /* groups, else each bar */
        fputs(k ? ", " : "", f);
        colo_plot_gp_string(f, json_string_value(json_array_get(gkey ? groups : series, k)));
        fprintf(f, " %.9g", gkey ? (double)(k * (ns + 1)) + 0.5 * (double)(ns - 1) : (double)k);
    }
    fputs(gkey ? ") font ',11'\n" : ") rotate by -25\nset xlabel ", f);
    if (!gkey)
        colo_plot_gp_string(f, key_name(json_string_value(json_array_get(axes, 0)), true)),
            fputc('\n', f);
    char title[256], desc[1024], facts[1024], lead[160];
    snprintf(title, sizeof title, "Capacity: the %s %s meeting every SLO for %.4g %% of requests",
             json_is_true(json_object_get(head, "integer")) ? "most" : "highest",
             key_name(key, false), 100 * colo_plot_num(head, "attainment"));
    /* files written before the pooled rule (issue 41) have no rule: theirs was a lower bound */
    bool pooled = json_is_string(json_object_get(head, "rule"));
    char how[64] = "requests pooled over";
    if (!pooled)
        snprintf(how, sizeof how, "%.4g %% lower confidence bound over",
                 100 * colo_plot_num(head, "confidence"));
    snprintf(lead, sizeof lead, "%s %lld replication%s", how,
             json_integer_value(json_object_get(head, "replications")),
             json_integer_value(json_object_get(head, "replications")) == 1 ? "" : "s");
    colo_plot_runs_words(NULL, json_string_value(json_object_get(search, "scenario")),
                         json_object_get(search, "set"), NULL, gkey && strcmp(gkey, "gpu") == 0,
                         lead, desc, facts, sizeof desc);
    colo_plot_heading(f, title, desc, facts, wpx, hpx);
    fputs("plot ", f); /* bars, then their brackets and values over them */
    for (size_t s = 0; s < ns; s++) {
        fprintf(f, "%s$b using (bar($1,$6)):($6 == %zu ? $2 : NaN) with boxes lc rgb '%s' ",
                s ? ", " : "", s, colo_plot_colours[s % 7]);
        if (gkey)
            fputs("title ", f),
                colo_plot_gp_string(f, json_string_value(json_array_get(series, s)));
        else
            fputs("notitle", f); /* each bar is named on the axis */
    }
    char whisker[96];
    snprintf(whisker, sizeof whisker,
             all_ci ? "replications' capacities, %.4g %% CI" : "bisection bracket (+%.3g %%)",
             100 * (all_ci ? colo_plot_num(head, "confidence") : tol));
    fputs(", $b using (bar($1,$6)):3:(0):($4-$3) with vectors heads size screen 0.008,90 lc rgb "
          "'black' lw 1.2 title ",
          f);
    colo_plot_gp_string(f, whisker);
    fputs(", $b using (bar($1,$6)):4:5 with labels offset 0,0.8 font ',9' notitle", f);
    if (undecided) fputs(", NaN with points pt -1 title '?: too few requests to decide'", f);
    fputc('\n', f);
    json_decref(groups);
    json_decref(series);
    int rc = colo_plot_render_both(f, &body, wpx, hpx, base, err);
    free(body);
    return rc;
}
