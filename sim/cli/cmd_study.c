/* cmd_study.c: colosim sweep and colosim search: the two commands over a study file. */
#include "cli.h"
#include "errors.h"
#include "plot.h"
#include "study.h"
#include "study_mpi.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_sweep[] =
    "usage: colosim sweep STUDY.cfg [-j N] [-o DIR] [--plot] [-q] [--plugin PATH.so ...]\n"
    "\n"
    "Runs every point of the study (docs/studies.md): the base scenario with each combination of\n"
    "the grid's axes (or each point of its list). Points run in parallel, N at a time (default:\n"
    "all cores), each written to DIR/points/ as it finishes; a study interrupted and run again\n"
    "skips the points already done. Results: DIR/sweep.json and DIR/sweep.csv, the same bytes\n"
    "whatever N. DIR is the study's output, else STUDY.out beside it. A progress bar (rate, ETA)\n"
    "is shown on a terminal. Under the summary, the accuracy of predictions of this kind against\n"
    "published measurements (docs/validation.md), also in sweep.json.\n"
    "  --plot            also draw the study's plot (its plot = { x; by; y; } section) as SVG\n"
    "                    and PNG\n"
    "  --plugin PATH.so  load a plug-in first (docs/embedding.md); may be repeated\n"
    "\n"
    "On a cluster: mpirun -np R colosim sweep STUDY.cfg (colosim built with MPI) hands points to\n"
    "the R ranks as they ask, N at a time per rank (default 1), and rank 0 writes the same\n"
    "results as a local run. Every rank must see the study and its files at the same path.\n";

static const char usage_search[] =
    "usage: colosim search STUDY.cfg [-j N] [-o DIR] [--plot] [-q] [--plugin PATH.so ...]\n"
    "\n"
    "For each point of the study, bisects the search key (default load_scale; a count such as\n"
    "tenants.NAME.copies is searched in whole numbers) between lo and hi for the highest value at\n"
    "which every tenant with an SLO meets it for at least `attainment` of its requests, pooled\n"
    "over `replications` runs with seeds 1, 2, ...; each value's Wilson bounds at `confidence`\n"
    "say whether its requests decide it (a capacity they cannot tell from its neighbour is\n"
    "marked ?). Prints a table of capacity per point, in the key's units and in requests per\n"
    "second, and the accuracy of predictions of this kind; writes DIR/search.json (every probe)\n"
    "and DIR/search.csv. Interrupted, it resumes like sweep; runs under mpirun like sweep.\n"
    "  --plugin PATH.so  load a plug-in first (docs/embedding.md); may be repeated\n";

/* sweep and search share their options. */
struct study_opts {
    const char *file;
    colo_sweep_opts_t so;
    bool plot;
};

static int parse_study_opts(int argc, char **argv, const char *usage, struct study_opts *o)
{
    static const struct option longs[] = {{"jobs", required_argument, NULL, 'j'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"plot", no_argument, NULL, 'p'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"plugin", required_argument, NULL, 'P'},
                                          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    optind = 1;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "j:o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'j': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 4096)
                return colo_cli_usage_error(usage, "-j: '%s' is not a number of jobs (1 to 4096)",
                                            optarg);
            o->so.jobs = (int)v;
            break;
        }
        case 'o':
            o->so.out_dir = optarg;
            break;
        case 'p':
            o->plot = true;
            break;
        case 'q':
            o->so.quiet = true;
            break;
        case 'P':
            if (colo_cli_plugin(optarg)) return EXIT_INPUT;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            fputs(usage, stderr);
            return EXIT_INPUT;
        }
    }
    if (optind != argc - 1) return colo_cli_usage_error(usage, "%s", "expected one study file");
    o->file = argv[optind];
    o->so.progress = !o->so.quiet && isatty(2);
    return 0;
}

/* Draws the sweep's plot from the study's plot section, or sensible defaults. */
int colo_cli_plot_sweep(const colo_study_t *s, const char *dir, const char *x, const char *by,
                        const char *y, colo_error_t *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/sweep.json", dir);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc) return colo_error_set(err, COLO_EIO, path, je.line, NULL, "%s", je.text);
    json_t *axes = json_object_get(doc, "axes");
    if (!x) x = s && s->plot.x ? s->plot.x : json_string_value(json_array_get(axes, 0));
    if (!by && s && s->plot.by) by = s->plot.by;
    if (!by && !s && json_array_size(axes) == 2) {
        by = json_string_value(json_array_get(axes, 0));
        x = json_string_value(json_array_get(axes, 1));
    }
    if (!y) y = s && s->plot.y ? s->plot.y : "p99";
    int rc = 0;
    if (!x)
        rc = colo_error_set(err, COLO_EINVAL, path, 0, NULL,
                            "the study has no axis to plot against");
    char base[4200];
    snprintf(base, sizeof base, "%s/sweep_%s", dir, y ? y : "p99");
    if (!rc) rc = colo_plot_sweep(doc, x, by, y, base, err);
    if (!rc) printf("plot written to %s.svg and %s.png\n", base, base);
    json_decref(doc);
    return rc;
}

static int cmd_study(int argc, char **argv, bool search)
{
    const char *usage = search ? usage_search : usage_sweep;
    struct study_opts o;
    int st = parse_study_opts(argc, argv, usage, &o);
    if (st) return st < 0 ? 0 : st;
    colo_error_t err;
    colo_error_clear(&err);
    bool mpi = colo_mpi_launched();
#ifdef COLOSIM_HAVE_MPI
    if (mpi) {
        int rank, size;
        if (colo_mpi_begin(&argc, &argv, &rank, &size, &err)) {
            colo_cli_print_error(&err);
            return 1;
        }
        o.so.runner = colo_mpi_run_points;
        if (rank != 0) { /* rank 0 speaks for the study */
            o.so.quiet = true;
            o.plot = false;
        }
        o.so.progress = o.so.progress && rank == 0;
    }
#else
    if (mpi) {
        fprintf(stderr,
                "colosim: started by mpirun for several ranks, but this colosim was built without "
                "MPI, so every rank would run the whole study; rebuild it with OpenMPI installed "
                "(libopenmpi-dev; COLOSIM_MPI=AUTO or ON), or run it without mpirun\n");
        return 1;
    }
#endif
    colo_study_t *s = NULL;
    int rc = colo_study_load(o.file, &s, &err);
#ifdef COLOSIM_HAVE_MPI
    /* Every rank reads the study; if one cannot, none starts (rank 0 would wait for it). */
    if (mpi && !colo_mpi_all(rc == 0) && !rc)
        rc = colo_error_set(&err, COLO_EIO, o.file, 0, NULL,
                            "another MPI rank could not read the study (see its message)");
#endif
    if (rc) {
        colo_cli_print_error(&err);
        colo_study_free(s);
#ifdef COLOSIM_HAVE_MPI
        if (mpi) colo_mpi_end();
#endif
        return colo_cli_exit_for(rc);
    }
    rc = search ? colo_search_run(s, &o.so, &err) : colo_sweep_run(s, &o.so, &err);
    const char *dir = o.so.out_dir ? o.so.out_dir : s->out_dir;
    if (!rc && o.plot) {
        if (search) {
            char path[4096], base[4200];
            snprintf(path, sizeof path, "%s/search.json", dir);
            snprintf(base, sizeof base, "%s/search", dir);
            json_t *doc = json_load_file(path, 0, NULL);
            rc = doc ? colo_plot_search(doc, base, &err)
                     : colo_error_set(&err, COLO_EIO, path, 0, NULL, "cannot read");
            if (!rc) printf("plot written to %s.svg and %s.png\n", base, base);
            json_decref(doc);
        } else {
            rc = colo_cli_plot_sweep(s, dir, NULL, NULL, NULL, &err);
        }
    }
    colo_study_free(s);
#ifdef COLOSIM_HAVE_MPI
    if (mpi) colo_mpi_end();
#endif
    if (rc) {
        colo_cli_print_error(&err);
        return colo_cli_exit_for(rc);
    }
    return colo_cli_stopped_after_writing(0);
}

static int cmd_sweep(int argc, char **argv)
{
    return cmd_study(argc, argv, false);
}

static int cmd_search(int argc, char **argv)
{
    return cmd_study(argc, argv, true);
}

const colo_cli_command_t colo_cli_sweep = {"sweep", usage_sweep, cmd_sweep, true};

const colo_cli_command_t colo_cli_search = {"search", usage_search, cmd_search, true};
