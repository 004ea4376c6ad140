/* plot_cdf.c: a run's latency distribution per tenant (colosim plot cdf). */
#define _GNU_SOURCE /* open_memstream */
#include "plot.h"
#include "plot_internal.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a run's latency distribution ---- */

/* Where share q of requests falls on the tail-stretched axis: -log10(1 - q), the maximum (q = 1)
 * half a decade above p99.9. */
static double stretch(double q)
{
    return q <= 0 ? 0 : q >= 1 - 1e-12 || -log10(1 - q) > 3.5 ? 3.5 : -log10(1 - q);
}

int colo_plot_cdf(json_t *results, const char *base, colo_error_t *err)
{
    static const char *const q[] = {"p50", "p90", "p99", "p999", "max"};
    static const double frac[] = {0.5, 0.9, 0.99, 0.999, 1.0};
    json_t *ts = json_object_get(results, "tenants"), *t;
    size_t nt = json_array_size(ts), i, drawn = 0, nslo = 0;
    if (!nt)
        return colo_error_set(err, COLO_EINVAL, base, 0, NULL, "not a results file with tenants");
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) return colo_error_set(err, COLO_ENOMEM, base, 0, NULL, "out of memory");
    fputs("set encoding utf8\n", f);
    colo_plot_styles(f, nt);
    double xlo = HUGE_VAL, xhi = 0, slos[16];
    bool any_over = false, exact = true, all_cdf = true;
    json_array_foreach(ts, i, t)
    {
        json_t *lat = json_object_get(t, "latency_ms"), *a = json_object_get(t, "slo_attainment");
        double slo = colo_plot_num(t, "slo_ms"), v = 0;
        json_t *cdf = json_object_get(lat, "cdf"), *pt; /* from the samples or histogram */
        if (colo_plot_num(lat, "p50") > 0) {
            fprintf(f, "$d%zu << EOD\n", i);
            size_t j;
            all_cdf &= json_array_size(cdf) > 0;
            json_array_foreach(cdf, j, pt) /* older results: the percentiles below */
                if ((v = json_number_value(json_array_get(pt, 0))) > 0)
                    fprintf(f, "%.9g %.6g\n", v, stretch(json_number_value(json_array_get(pt, 1))));
            for (size_t k = 0; k < 5 && !json_array_size(cdf); k++)
                if ((v = colo_plot_num(lat, q[k])) > 0)
                    fprintf(f, "%.9g %.6g\n", v, stretch(frac[k]));
            fprintf(f, "EOD\n$o%zu << EOD\n%.9g 3.5\nEOD\n", i, v); /* the longest that finished */
            xlo = fmin(xlo, colo_plot_num(lat, "p50")), xhi = fmax(xhi, v), drawn++;
        }
        if (slo > 0 && json_is_number(a)) { /* the share within the SLO: on the SLO's line */
            fprintf(f, "$s%zu << EOD\n%.9g %.6g\nEOD\n", i, slo, stretch(json_number_value(a)));
            bool seen = false;
            for (size_t k = 0; k < nslo; k++)
                seen |= slos[k] == slo;
            if (!seen && nslo < 16)
                fprintf(f,
                        "set arrow from %.9g, graph 0 to %.9g, graph 1 nohead ls 91 back\n"
                        "set label 'SLO %.4g ms' at %.9g, graph 0.975 left offset 0.5,0 "
                        "tc ls 91\n",
                        slo, slo, slo, slo),
                    slos[nslo++] = slo;
            xlo = fmin(xlo, slo), xhi = fmax(xhi, slo);
        }
        const char *pc = json_string_value(json_object_get(lat, "percentiles"));
        exact &= !pc || strcmp(pc, "exact") == 0;
    }
    if (!drawn) {
        fclose(f);
        free(body);
        return colo_error_set(err, COLO_EINVAL, base, 0, NULL, "no tenant completed a request");
    }
    unsigned w = 1060, h = 540;
    json_t *sc = json_object_get(results, "scenario"), *cl = json_object_get(results, "cluster"),
           *o;
    /* the mechanism and the overrides that set the load, in words, before the GPU */
    const char *mode = json_string_value(json_object_get(json_object_get(sc, "sharing"), "mode"));
    char lead[512] = "", desc[1024], facts[1024], words[160];
    if (!mode) mode = json_string_value(json_object_get(cl, "mechanism"));
    if (mode)
        snprintf(lead, sizeof lead, "%s",
                 colo_plot_value_name("sharing.mode", mode, words, sizeof words));
    json_array_foreach(json_object_get(sc, "overrides"), i, o)
    {
        const char *ov = json_string_value(o) ? json_string_value(o) : "";
        size_t used = strlen(lead);
        if (strncmp(ov, "load_scale=", 11) == 0)
            snprintf(lead + used, sizeof lead - used, "%sload x%s", used ? ", " : "", ov + 11);
    }
    colo_plot_runs_words(sc, json_string_value(json_object_get(sc, "file")), NULL, cl, false, lead,
                         desc, facts, sizeof desc);
    size_t used = strlen(facts);
    snprintf(facts + used, sizeof facts - used, "; %s",
             exact ? "latencies exact" : "latencies from the histogram (within 0.1 %)");
    fprintf(f,
            "set tmargin at screen %.4f\nset grid\nset logscale x\nset format x '%%g'\n"
            "set xrange [%.9g:%.9g]\nset xlabel 'latency (ms)'\nset ylabel 'share of requests "
            "at or below (tail stretched)' noenhanced\nset ytics ('0' 0, '0.5' 0.301, '0.9' 1, "
            "'0.99' 2, '0.999' 3, 'max' 3.5)\nset yrange [0:3.75]\nset key outside right top "
            "vertical Left reverse samplen 4 spacing 1.3 width 1\n",
            1 - (colo_plot_heading_px(desc, facts, w) + 12.0) / h, pow(10, floor(log10(xlo))),
            pow(10, ceil(log10(xhi * 1.05))));
    colo_plot_heading(f,
                      all_cdf ? "Latency distribution of each service"
                              : "Latency distribution of each "
                                "service, from its percentiles",
                      desc, facts, w, h);
    fputs("plot ", f);
    size_t k = 0;
    json_array_foreach(ts, i, t)
    {
        double left = colo_plot_num(t, "in_flight"), slo = colo_plot_num(t, "slo_ms");
        bool over = left > 0 || json_is_true(json_object_get(t, "overloaded"));
        json_t *a = json_object_get(t, "slo_attainment");
        char name[512];
        int n = snprintf(name, sizeof name, "%s", json_string_value(json_object_get(t, "name")));
        if (slo > 0 && json_is_number(a) && n > 0)
            n += snprintf(name + n, sizeof name - (size_t)n, ": %.1f %% within %.4g ms",
                          100 * json_number_value(a), slo);
        if (left > 0 && n > 0 && (size_t)n < sizeof name)
            snprintf(name + n, sizeof name - (size_t)n, ", %.0f of %.0f left at end", left,
                     colo_plot_num(t, "arrived"));
        else if (over && n > 0 && (size_t)n < sizeof name)
            snprintf(name + n, sizeof name - (size_t)n, ", overloaded");
        if (colo_plot_num(json_object_get(t, "latency_ms"), "p50") > 0) {
            fprintf(f, "%s$d%zu using 1:2 with %s ls %zu title ", k++ ? ", " : "", i,
                    json_array_size(json_object_get(json_object_get(t, "latency_ms"), "cdf"))
                        ? "lines"
                        : "linespoints",
                    i + 1);
            colo_plot_gp_string(f, name);
            if (over) fprintf(f, ", $o%zu using 1:2 with points ls 90 notitle", i);
            any_over |= over;
        }
        if (slo > 0 && json_is_number(a))
            fprintf(f, "%s$s%zu using 1:2 with points pt 12 ps 2.4 lw 2 lc rgb '%s' notitle",
                    k++ ? ", " : "", i, colo_plot_colours[i % 7]);
    }
    if (nslo)
        fputs(", NaN with lines ls 91 title 'SLO', NaN with points pt 12 ps 2.4 lw 2 "
              "lc rgb 'black' title 'share within its SLO'",
              f);
    if (any_over)
        fputs(", NaN with points ls 90 title 'overloaded (its queue grew, or requests were left)'",
              f);
    fputc('\n', f);
    int rc = colo_plot_render_both(f, &body, w, h, base, err);
    free(body);
    return rc;
}
