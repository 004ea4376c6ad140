/* cmd_calibrate.c: colosim calibrate import gpu-benches: a calibration file from published
 * micro-benchmarks. */
#include "cli.h"
#include "atomic_file.h"
#include "calibration.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "gpu_benches.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char usage_calibrate[] =
    "usage: colosim calibrate import gpu-benches DIR --gpu NAME [-o FILE] [--stem STEM]\n"
    "                 [--commit [PATH=]REV ...] [--repository OWNER/NAME]\n"
    "\n"
    "Derives a calibration file (docs/calibration.md) from the result files of the gpu-benches\n"
    "micro-benchmarks (github.com/te42kyfo/gpu-benches) in DIR: achievable DRAM bandwidth and\n"
    "the rate one SM draws (gpu-stream), L2 bandwidth and the footprint where it gives out\n"
    "(gpu-l2-cache, else gpu-cache), the cost of a launch and of a launch in a CUDA graph\n"
    "(gpu-small-kernels); latencies, L1 and FP32 rates are kept as measurements. Each value\n"
    "records its file, lines and commit. It prints each value beside the datasheet's.\n"
    "  --gpu NAME     the GPU description it calibrates (its datasheet values are compared)\n"
    "  -o FILE        where to write it (default calibrated-NAME.json); models/calibrated/\n"
    "                 NAME.json is applied by default to that GPU\n"
    "  --stem STEM    read STEM.txt in every benchmark's folder (default: the files upstream\n"
    "                 publishes for NAME, listed in docs/calibration.md)\n"
    "  --commit REV   the commit the files were taken at; PATH=REV for one file\n"
    "                 (gpu-small-kernels/v100.txt=REV); recorded, not checked\n"
    "  --repository R where the files come from (default te42kyfo/gpu-benches), recorded\n";

/* colosim calibrate import gpu-benches DIR --gpu NAME ... */
static int cmd_calibrate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"gpu", required_argument, NULL, 'g'},
        {"stem", required_argument, NULL, 's'},
        {"commit", required_argument, NULL, 'c'},
        {"repository", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *gpu_name = NULL;
    colo_gb_options_t o = {0};
    char command[2048] = "colosim calibrate";
    for (int i = 1; i < argc; i++) { /* what the file records, before getopt reorders argv */
        size_t used = strlen(command);
        snprintf(command + used, sizeof command - used, " %s", argv[i]);
    }
    const char *file_commits[32];
    size_t n_fc = 0;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'g':
            gpu_name = optarg;
            break;
        case 's':
            if (!*optarg || strchr(optarg, '/'))
                return colo_cli_usage_error(usage_calibrate,
                                            "--stem takes a file name stem, not '%s'", optarg);
            o.stem = optarg;
            break;
        case 'r':
            o.repository = optarg;
            break;
        case 'c':
            if (!*optarg || optarg[strlen(optarg) - 1] == '=')
                return colo_cli_usage_error(usage_calibrate,
                                            "--commit takes REV or PATH=REV, not '%s'", optarg);
            if (!strchr(optarg, '='))
                o.commit = optarg;
            else if (n_fc == sizeof file_commits / sizeof file_commits[0])
                return colo_cli_usage_error(usage_calibrate, "%s", "at most 32 --commit PATH=REV");
            else
                file_commits[n_fc++] = optarg;
            break;
        case 'h':
            fputs(usage_calibrate, stdout);
            return 0;
        default:
            return colo_cli_usage_error(usage_calibrate, "unknown or incomplete option '%s'",
                                        argv[optind - 1]);
        }
    }
    if (argc - optind != 3 || strcmp(argv[optind], "import") != 0)
        return colo_cli_usage_error(usage_calibrate, "%s",
                                    "expected: calibrate import gpu-benches DIR");
    if (strcmp(argv[optind + 1], "gpu-benches") != 0)
        return colo_cli_usage_error(usage_calibrate, "unknown source '%s' (known: gpu-benches)",
                                    argv[optind + 1]);
    o.dir = argv[optind + 2];
    if (!gpu_name) return colo_cli_usage_error(usage_calibrate, "%s", "--gpu NAME is required");
    o.file_commits = file_commits;
    o.n_file_commits = n_fc;
    o.command = command;
    char outbuf[512];
    if (!out) {
        snprintf(outbuf, sizeof outbuf, "calibrated-%s.json", gpu_name);
        out = outbuf;
    }
    colo_error_t err;
    colo_error_clear(&err);
    struct stat st;
    if (stat(o.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (stat(o.dir, &st) != 0)
            colo_error_set(&err, COLO_EIO, o.dir, 0, NULL, "cannot open: %s", strerror(errno));
        else
            colo_error_set(&err, COLO_EINVAL, o.dir, 0, NULL,
                           "not a folder: gpu-benches results are DIR/gpu-stream/STEM.txt, ...");
        colo_cli_print_error(&err);
        return EXIT_INPUT;
    }
    colo_gpu_t *g = NULL, *check = NULL;
    json_t *doc = NULL;
    colo_atomic_file_t af = {0};
    int rc = colo_gpu_open(gpu_name, NULL, "none", &g, "--gpu", 0, NULL, &err);
    if (!rc) rc = colo_gb_import(&o, g, &doc, &err);
    /* Written beside its destination, checked as the simulator will load it, then renamed. */
    if (!rc) rc = colo_atomic_open(&af, out, &err);
    if (!rc &&
        (json_dumpf(doc, af.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) ||
         fputc('\n', af.f) == EOF || fflush(af.f)))
        rc = colo_error_set(&err, COLO_EIO, out, 0, NULL, "write error");
    if (!rc && af.tmp) {
        rc = colo_gpu_open(gpu_name, NULL, "none", &check, "--gpu", 0, NULL, &err);
        if (!rc) rc = colo_calibration_apply(check, af.tmp, &err);
    }
    const int to_file = af.tmp != NULL;
    if (!rc)
        rc = colo_atomic_commit(&af, &err);
    else
        colo_atomic_abort(&af);
    if (!rc && to_file) { /* a file, not standard output: say what it holds */
        printf("%s: %s from gpu-benches results in %s\n", out, g->name, o.dir);
        printf("  %-24s %10s %10s %7s  %s\n", "parameter", "measured", "GPU file", "diff",
               "source");
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(doc, "parameters"), i, p)
        {
            double v = json_number_value(json_object_get(p, "value"));
            double d = json_number_value(json_object_get(p, "datasheet"));
            json_t *s = json_object_get(p, "source");
            printf("  %-24s %10.5g %10.5g %+6.0f%%  %s:%s\n",
                   json_string_value(json_object_get(p, "key")), v, d,
                   d > 0 ? 100 * (v - d) / d : 0.0, json_string_value(json_object_get(s, "path")),
                   json_string_value(json_object_get(s, "lines")));
        }
        const char *k;
        json_t *m;
        printf("  measurements kept (not parameters):");
        json_object_foreach(json_object_get(doc, "measurements"), k, m) printf(" %s", k);
        printf("\n");
        json_t *missing = json_object_get(json_object_get(doc, "device"), "missing");
        if (json_array_size(missing)) {
            printf("  not found, so what they give keeps the GPU file's value:");
            json_array_foreach(missing, i, m) printf(" %s", json_string_value(m));
            printf("\n");
        }
        if (!o.commit && !o.n_file_commits)
            printf("  no --commit: the sources record file and lines but not the commit\n");
    }
    if (rc) colo_cli_print_error(&err);
    json_decref(doc);
    colo_gpu_free(g);
    colo_gpu_free(check);
    return rc ? colo_cli_exit_for(rc) : 0;
}

const colo_cli_command_t colo_cli_calibrate = {"calibrate", usage_calibrate, cmd_calibrate, false};
