/* cmd_plot.c: colosim plot: figures of a sweep, a search or a run's latency CDF. */
#include "cli.h"
#include "errors.h"
#include "plot.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_plot[] =
    "usage: colosim plot sweep DIR|sweep.json [--x KEY] [--by KEY] [--y METRIC] [-o BASE]\n"
    "       colosim plot search DIR|search.json [-o BASE]\n"
    "       colosim plot cdf RESULTS.json [-o BASE]\n"
    "\n"
    "Writes BASE.svg and BASE.png with gnuplot (apt-get install gnuplot-nox). Titles name the\n"
    "scenario (its description), the GPU and the keys in words; legends sit outside the data.\n"
    "  sweep   METRIC (p50, p90, p99, p999, mean, throughput, slo_attainment; default p99)\n"
    "          against axis KEY, one line per value of the --by axis (each its own colour,\n"
    "          dash and point type), one panel per tenant, all on one y range, with its SLO;\n"
    "          a point whose run left requests unfinished is circled as overloaded (its\n"
    "          percentiles are of the requests that finished). Defaults from the study's plot\n"
    "          section. BASE: DIR/sweep_METRIC\n"
    "          For a sweep of a cluster scenario, METRIC gpus: the GPUs each point needs.\n"
    "          LLM tenants: ttft_p50|p90|p99|mean and tpot_p50|p90|p99|mean (with their\n"
    "          slo_ttft_ms / slo_tpot_ms), tokens_per_s (output tokens).\n"
    "  search  capacity per point as bars grouped by GPU (else by the first axis), each with\n"
    "          its value and the confidence interval of the replications' own capacities\n"
    "          (older files: the bisection's bracket). BASE: DIR/search\n"
    "  cdf     each tenant's latency distribution (latency_ms.cdf; older files: p50 ... max)\n"
    "          on a tail-stretched axis, with its SLO and the share within it. BASE: RESULTS\n"
    "          without .json, plus _cdf\n";

static int cmd_plot(int argc, char **argv)
{
    static const struct option longs[] = {
        {"x", required_argument, NULL, 'x'}, {"by", required_argument, NULL, 'b'},
        {"y", required_argument, NULL, 'y'}, {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},    {NULL, 0, NULL, 0}};
    const char *x = NULL, *by = NULL, *y = NULL, *out = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'x':
            x = optarg;
            break;
        case 'b':
            by = optarg;
            break;
        case 'y':
            y = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(usage_plot, stdout);
            return 0;
        default:
            fputs(usage_plot, stderr);
            return EXIT_INPUT;
        }
    }
    if (optind != argc - 2)
        return colo_cli_usage_error(usage_plot, "%s", "expected KIND and an input");
    const char *kind = argv[optind], *in = argv[optind + 1];
    bool is_sweep = strcmp(kind, "sweep") == 0, is_search = strcmp(kind, "search") == 0;
    if (!is_sweep && !is_search && strcmp(kind, "cdf") != 0)
        return colo_cli_usage_error(usage_plot, "unknown plot '%s' (sweep, search or cdf)", kind);
    /* a study's output folder, or the JSON file itself */
    char path[4096], base[4200];
    struct stat st;
    bool is_dir = stat(in, &st) == 0 && S_ISDIR(st.st_mode);
    if (is_dir)
        snprintf(path, sizeof path, "%s/%s.json", in, kind);
    else
        snprintf(path, sizeof path, "%s", in);
    colo_error_t err;
    colo_error_clear(&err);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    int rc = 0;
    if (!doc) {
        colo_error_set(&err, COLO_EIO, path, je.line, NULL, "%s", je.text);
        colo_cli_print_error(&err);
        return EXIT_INPUT;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    if (is_sweep) {
        if (out) {
            json_t *axes = json_object_get(doc, "axes");
            if (!x) x = json_string_value(json_array_get(axes, json_array_size(axes) > 1 ? 1 : 0));
            if (!by && json_array_size(axes) > 1) by = json_string_value(json_array_get(axes, 0));
            rc = colo_plot_sweep(doc, x, by, y ? y : "p99", out, &err);
            if (!rc) printf("plot written to %s.svg and %s.png\n", out, out);
        } else {
            json_decref(doc);
            doc = NULL;
            rc = colo_cli_plot_sweep(NULL, dir, x, by, y, &err);
        }
    } else {
        if (out)
            snprintf(base, sizeof base, "%s", out);
        else if (is_search)
            snprintf(base, sizeof base, "%s/search", dir);
        else {
            snprintf(base, sizeof base, "%s", path);
            size_t n = strlen(base);
            if (n > 5 && strcmp(base + n - 5, ".json") == 0) base[n - 5] = '\0';
            strncat(base, "_cdf", sizeof base - strlen(base) - 1);
        }
        json_t *run = json_object_get(doc, "results"); /* a sweep's point file holds one */
        if (!is_search && !json_array_size(json_object_get(run ? run : doc, "tenants")))
            rc = colo_error_set(&err, COLO_EINVAL, path, 0, NULL,
                                "not a run's results (no tenants): plot cdf draws a file from "
                                "colosim run -o, or a sweep's points/NNNNNN.json%s",
                                json_object_get(doc, "points") ? "; this is a study's file: plot "
                                                                 "sweep or plot search"
                                                               : "");
        else
            rc = is_search ? colo_plot_search(doc, base, &err)
                           : colo_plot_cdf(run ? run : doc, base, &err);
        if (!rc) printf("plot written to %s.svg and %s.png\n", base, base);
    }
    json_decref(doc);
    if (rc) {
        colo_cli_print_error(&err);
        return rc == COLO_EINVAL ? EXIT_INPUT : 1;
    }
    return 0;
}

const colo_cli_command_t colo_cli_plot = {"plot", usage_plot, cmd_plot, false};
