/* plot.c: gnuplot scripts for sweeps, searches and runs; SVG and PNG written atomically. */
#define _GNU_SOURCE /* popen, open_memstream */
#include "plot.h"
#include "alloc.h"
#include "atomic_file.h"

#include <math.h>
#include <stdbool.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* gnuplot string literal: double quotes, with the characters it treats specially escaped. */
static void gp_string(FILE *f, const char *s)
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

static int render_both(char *body, size_t rows, size_t cols, const char *base, colo_error_t *err)
{
    char svg[128], png[128];
    unsigned w = (unsigned)(cols == 1 ? 760 : cols * 520), h = (unsigned)(rows * 380 + 40);
    snprintf(svg, sizeof svg, "svg size %u,%u dynamic font 'sans,11' background rgb 'white'", w, h);
    snprintf(png, sizeof png, "pngcairo size %u,%u font 'sans,10' background rgb 'white'", w, h);
    int rc = render(body, base, "svg", svg, err);
    if (!rc) rc = render(body, base, "png", png, err);
    return rc;
}

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

/* A metric of one tenant's results, and its axis label. */
static int metric(json_t *t, const char *y, double *v)
{
    json_t *lat = json_object_get(t, "latency_ms");
    if (strcmp(y, "gpus") == 0) { /* t is a cluster's whole results */
        json_t *c = json_object_get(json_object_get(t, "cluster"), "gpus_used");
        if (!json_is_integer(c)) return -1;
        *v = (double)json_integer_value(c);
    } else if (strcmp(y, "throughput") == 0)
        *v = num(t, "throughput_rps");
    else if (strcmp(y, "slo_attainment") == 0) {
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

static const char *y_label(const char *y)
{
    if (strcmp(y, "throughput") == 0) return "throughput (requests/s)";
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
           strcmp(y, "gpus") != 0;
}

struct xy {
    double x, y;
};

static int cmp_xy(const void *a, const void *b)
{
    double d = ((const struct xy *)a)->x - ((const struct xy *)b)->x;
    return (d > 0) - (d < 0);
}

int colo_plot_sweep(json_t *sweep, const char *x, const char *by, const char *y, const char *base,
                    colo_error_t *err)
{
    static const char *const ys[] = {
        "p50", "p90", "p99", "p999", "mean", "throughput", "slo_attainment", "gpus", NULL};
    bool known = false;
    for (size_t k = 0; ys[k]; k++)
        known |= strcmp(ys[k], y) == 0;
    if (!known)
        return colo_error_set(err, COLO_EINVAL, "--y", 0, NULL,
                              "'%s': use p50, p90, p99, p999, mean, throughput, slo_attainment "
                              "or gpus (a cluster's)",
                              y);
    bool whole = strcmp(y, "gpus") == 0; /* one panel: the whole cluster */
    json_t *points = json_object_get(sweep, "points");
    /* tenants from the first point with results; groups from the by values, in order seen */
    json_t *first = NULL, *p;
    size_t i;
    json_array_foreach(points, i, p) if (!first && json_object_get(p, "results")) first =
        json_object_get(json_object_get(p, "results"), "tenants");
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
        bool seen = false;
        size_t k;
        json_t *e;
        json_array_foreach(groups, k, e) seen |= strcmp(json_string_value(e), g) == 0;
        if (!seen) json_array_append_new(groups, json_string(g));
    }
    size_t nt = whole ? 1 : json_array_size(first), cols = nt < 2 ? 1 : 2,
           rows = (nt + cols - 1) / cols;
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        json_decref(groups);
        return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    }
    struct xy *pts = colo_calloc(json_array_size(points) + 1, sizeof *pts);
    int rc = pts ? 0 : COLO_ENOMEM;
    fprintf(f, "set multiplot layout %zu,%zu title ", rows, cols);
    char title[512];
    snprintf(title, sizeof title, "%s: %s against %s%s%s",
             json_string_value(json_object_get(sweep, "study")), y_label(y), x, by ? " by " : "",
             by ? by : "");
    gp_string(f, title);
    fputs(" font 'sans,12'\nset grid\nset key top left box opaque\nset xlabel ", f);
    gp_string(f, strcmp(x, "load_scale") == 0 ? "load (x the scenario's arrival rates)" : x);
    fputs("\nset ylabel ", f);
    gp_string(f, y_label(y));
    fputs(is_latency(y) ? "\nset logscale y\n" : "\nunset logscale y\n", f);
    for (size_t t = 0; t < nt && !rc; t++) {
        const char *tname =
            whole ? "the cluster"
                  : json_string_value(json_object_get(json_array_get(first, t), "name"));
        double slo = whole ? 0 : num(json_array_get(first, t), "slo_ms");
        fputs("set title ", f);
        gp_string(f, tname);
        fputc('\n', f);
        size_t k;
        json_t *g;
        int drawn = 0;
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
                if (is_latency(y) && yv <= 0) continue;
                pts[m].x = xv;
                pts[m++].y = yv;
            }
            qsort(pts, m, sizeof *pts, cmp_xy);
            fprintf(f, "$d%zu_%zu << EOD\n", t, k);
            for (size_t q = 0; q < m; q++)
                fprintf(f, "%.9g %.9g\n", pts[q].x, pts[q].y);
            fputs("EOD\n", f);
            drawn += m > 0;
        }
        if (!drawn) {
            rc = colo_error_set(err, COLO_EINVAL, "--x", 0, NULL,
                                "no numeric values of '%s' with results to plot", x);
            break;
        }
        fputs("plot ", f);
        json_array_foreach(groups, k, g)
        {
            fprintf(f, "%s$d%zu_%zu using 1:2 with linespoints lw 2 pt 7 ps 0.6 title ",
                    k ? ", " : "", t, k);
            gp_string(f, by ? json_string_value(g) : tname);
        }
        if (is_latency(y) && slo > 0)
            fprintf(f, ", %.9g with lines dt 2 lc rgb 'red' title 'SLO'", slo);
        if (strcmp(y, "slo_attainment") == 0)
            fputs(", 99 with lines dt 2 lc rgb 'red' title '99 %'", f);
        fputc('\n', f);
    }
    fputs("unset multiplot\n", f);
    fclose(f);
    json_decref(groups);
    colo_free(pts);
    if (rc == COLO_ENOMEM) rc = colo_error_set(err, rc, base, 0, NULL, "out of memory");
    if (!rc) rc = render_both(body, rows, cols, base, err);
    free(body);
    return rc;
}

int colo_plot_search(json_t *search, const char *base, colo_error_t *err)
{
    json_t *points = json_object_get(search, "points"), *p;
    json_t *head = json_object_get(search, "search");
    const char *key = json_string_value(json_object_get(head, "key"));
    char *body = NULL;
    size_t len = 0, i;
    FILE *f = open_memstream(&body, &len);
    if (!f) return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    char title[512];
    snprintf(title, sizeof title, "%s: highest %s meeting every SLO for %.4g of requests",
             json_string_value(json_object_get(search, "study")), key ? key : "value",
             num(head, "attainment"));
    fputs("set title ", f);
    gp_string(f, title);
    fputs("\nset style data histograms\nset style fill solid 0.7 border -1\nset boxwidth 0.8\n"
          "set grid ytics\nset yrange [0:*]\nset xtics rotate by -30 noenhanced\nset ylabel ",
          f);
    gp_string(f, key && strcmp(key, "load_scale") == 0 ? "capacity (x the scenario's arrival rates)"
                                                       : key);
    fputs("\n$d << EOD\n", f);
    size_t n = 0;
    json_array_foreach(points, i, p)
    {
        if (!json_is_number(json_object_get(p, "capacity"))) continue;
        char label[256] = "";
        size_t used = 0;
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(p, "values"), k, v)
        {
            int w = snprintf(label + used, sizeof label - used, "%s%s", used ? " " : "",
                             json_string_value(v));
            if (w > 0 && (size_t)w < sizeof label - used) used += (size_t)w;
        }
        for (char *c = label; *c; c++)
            if (*c == '"') *c = '\'';
        fprintf(f, "\"%s\" %.9g\n", used ? label : "base", num(p, "capacity"));
        n++;
    }
    fputs("EOD\nplot $d using 2:xtic(1) notitle lc rgb '#4472c4'\n", f);
    fclose(f);
    int rc = n ? render_both(body, 1, 1 + n / 8, base, err)
               : colo_error_set(err, COLO_EINVAL, base, 0, NULL, "no point has a capacity");
    free(body);
    return rc;
}

int colo_plot_cdf(json_t *results, const char *base, colo_error_t *err)
{
    static const char *const q[] = {"p50", "p90", "p99", "p999", "max"};
    static const double frac[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    json_t *ts = json_object_get(results, "tenants"), *t;
    if (!json_array_size(ts))
        return colo_error_set(err, COLO_EINVAL, base, 0, NULL, "not a results file with tenants");
    char *body = NULL;
    size_t len = 0, i;
    FILE *f = open_memstream(&body, &len);
    if (!f) return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    char title[512];
    json_t *sc = json_object_get(results, "scenario");
    const char *file = json_string_value(json_object_get(sc, "file"));
    const char *slash = file ? strrchr(file, '/') : NULL;
    snprintf(title, sizeof title, "%s (%s, %s): latency distribution", slash ? slash + 1 : file,
             json_string_value(json_object_get(sc, "gpu")),
             json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode")));
    fputs("set title ", f);
    gp_string(f, title);
    fputs("\nset grid\nset key top left Left reverse box opaque\nset logscale x\nset xlabel "
          "'latency (ms)'\n"
          "set ylabel 'share of requests at or below' noenhanced\n"
          "set ytics ('0.5' 0.301, '0.9' 1, '0.99' 2, '0.999' 3, 'max' 3.5)\nset yrange [0:3.7]\n",
          f);
    json_array_foreach(ts, i, t)
    {
        json_t *lat = json_object_get(t, "latency_ms");
        fprintf(f, "$d%zu << EOD\n", i);
        for (size_t k = 0; k < 5; k++) {
            double v = num(lat, q[k]);
            if (v > 0) fprintf(f, "%.9g %.6g\n", v, k == 4 ? 3.5 : -log10(1 - frac[k]));
        }
        fputs("EOD\n", f);
    }
    fputs("plot ", f);
    json_array_foreach(ts, i, t)
    {
        fprintf(f, "%s$d%zu using 1:2 with linespoints lw 2 pt 7 title ", i ? ", " : "", i);
        gp_string(f, json_string_value(json_object_get(t, "name")));
    }
    fputc('\n', f);
    fclose(f);
    int rc = render_both(body, 1, 1, base, err);
    free(body);
    return rc;
}
