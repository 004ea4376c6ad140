/* cmd_import.c: colosim import: profiles (Orion, Kineto, Nsight Systems, capture) to traces,
 * and Vidur's per-operator LLM profiles to colosim LLM profiles. */
#include "cli.h"
#include "alloc.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "import_capture.h"
#include "import_kineto.h"
#include "import_nsys.h"
#include "import_orion.h"
#include "import_vidur.h"
#include "json_lines.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage_import[] =
    "usage: colosim import KIND FILE -o TRACE.json [--model NAME] [--batch N] [--gpu NAME]\n"
    "                      [--annotation TEXT [--occurrence N | --all]] [--ncu NCU.csv]\n"
    "                      [--rows FIRST-LAST | --rows ROW] [--gaps keep|drop|cap:US]\n"
    "       colosim import kineto FILE --list-annotations\n"
    "\n"
    "Converts a profile into a colosim trace (docs/traces.md). KIND:\n"
    "  orion   Orion (EuroSys'24) per-kernel CSV, with or without Block,Grid columns. Model\n"
    "          and batch default to what the file name says (resnet50_4_fwd.csv: resnet50, 4);\n"
    "          the GPU it was measured on to v100-sxm2 (give --gpu h100-sxm for Orion's H100\n"
    "          profiles): SM_usage is the SMs a kernel needs on that GPU. --rows keeps only\n"
    "          those data rows (1 is the row after the header), e.g. one forward pass.\n"
    "  kineto  PyTorch profiler Chrome trace (.json or .json.gz): kernels with launch shapes,\n"
    "          copies, host gaps. The GPU comes from deviceProperties; --annotation keeps only\n"
    "          the GPU work launched inside the N-th user annotation (record_function) whose\n"
    "          name contains TEXT, e.g. one forward pass; --list-annotations lists them (name,\n"
    "          count, kernels, total and mean ms) and writes nothing. A trace that may not be\n"
    "          one inference is written with a warning on standard error (exit status 0): no\n"
    "          --annotation in a profile that has them, a chosen range that encloses one of\n"
    "          its own name or one name twice, or host gaps longer than the kernels' time.\n"
    "          --gaps keeps the host gaps between launches as measured (keep, the default),\n"
    "          removes them (drop: the ops run back to back, in order) or caps each at US\n"
    "          microseconds (cap:US); the provenance records it as host_gaps.\n"
    "  nsys    Nsight Systems SQLite export (nsys export --type sqlite): kernels, copies, host\n"
    "          gaps, the GPU from TARGET_INFO_GPU; --annotation selects an NVTX range.\n"
    "  capture colosim-capture's CUPTI record file (docs/capture.md): kernels with launch\n"
    "          shapes, registers and shared memory, copies, host gaps, NVTX ranges. With\n"
    "          --annotation TEXT --all, one trace per range whose name contains TEXT, written\n"
    "          into the folder -o names as MODEL_001.json, MODEL_002.json, ...\n"
    "  vidur   Vidur's per-operator profile of an LLM (microsoft/vidur, data/profiling/compute/\n"
    "          GPU/MODEL/mlp.csv) to a colosim LLM profile (docs/llm_profiles.md), not a trace:\n"
    "            colosim import vidur mlp.csv --gpu NAME -o PROFILE.json [--attention\n"
    "              attention.csv] [--model NAME --layers N] [--tp N] [--commit REV]\n"
    "              [--source PATH] [--repository OWNER/NAME]\n"
    "          --gpu is the GPU it was measured on (Vidur's a100: a100-80gb, h100: h100-sxm);\n"
    "          the model and its layer count come from its dimensions for the models Vidur\n"
    "          profiled; --tp keeps the rows of that tensor parallelism (default 1).\n"
    "--ncu NCU.csv merges per-kernel DRAM and L2 bytes from Nsight Compute (ncu --csv --metrics\n"
    "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum --print-kernel-base mangled)\n"
    "of the same kernels, in order.\n";

/* Where import writes its i-th trace: OUT, or with --all OUT/MODEL_00N.json. */
static const char *import_path(char *buf, size_t n, const char *out, bool all,
                               const colo_trace_t *t, size_t i)
{
    if (all)
        snprintf(buf, n, "%s/%s_%03zu.json", out, t->model, i + 1);
    else
        snprintf(buf, n, "%s", out);
    return buf;
}

/* import vidur: the profile checked whole, then written atomically, and summarised. */
static int import_vidur(const char *in, const char *attention, const colo_vidur_opts_t *vo,
                        const char *out)
{
    colo_error_t err;
    colo_error_clear(&err);
    json_t *doc = NULL;
    colo_gpu_t *g = NULL; /* opened only to check the name, as the other kinds do */
    int rc = colo_gpu_open(vo->gpu, NULL, "none", &g, "--gpu", 0, NULL, &err);
    colo_gpu_free(g);
    if (!rc) rc = colo_import_vidur(in, attention, vo, &doc, &err);
    size_t flags = JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6);
    if (!rc) rc = colo_json_write_file(doc, flags, out, "cannot write the profile", &err);
    if (rc) {
        colo_cli_print_error(&err);
        json_decref(doc);
        return colo_cli_exit_for(rc);
    }
    json_t *dims = json_object_get(doc, "dims"), *ops = json_object_get(doc, "ops");
    json_t *tok = json_object_get(ops, "tokens"), *att = json_object_get(doc, "attention");
    printf("%s: %s, %lld layers, on %s: %zu token counts from %lld to %lld", in,
           json_string_value(json_object_get(doc, "model")),
           (long long)json_integer_value(json_object_get(dims, "layers")), vo->gpu,
           json_array_size(tok), (long long)json_integer_value(json_array_get(tok, 0)),
           (long long)json_integer_value(json_array_get(tok, json_array_size(tok) - 1)));
    if (att)
        printf(", attention: %zu prefill and %zu decode points",
               json_array_size(json_object_get(json_object_get(att, "prefill"), "rows")),
               json_array_size(json_object_get(json_object_get(att, "decode"), "rows")));
    printf(" -> %s\n", out);
    json_decref(doc);
    return 0;
}

/* import kineto --list-annotations: the profile's record_function ranges by name, on standard
 * output; nothing is written. */
static int list_annotations(const char *in)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_kineto_report_t r;
    int rc = colo_kineto_annotations(in, &r, &err);
    if (rc) {
        colo_cli_print_error(&err);
        colo_kineto_report_fini(&r);
        return colo_cli_exit_for(rc);
    }
    if (r.n_names == 0)
        printf("%s: no record_function ranges (user_annotation events): import takes the whole "
               "profile as one request\n",
               in);
    else
        printf("%s: %zu record_function range%s (user_annotation), %zu name%s, by first start\n"
               "  %6s %8s %12s %12s  %s\n",
               in, r.n_ranges, r.n_ranges == 1 ? "" : "s", r.n_names, r.n_names == 1 ? "" : "s",
               "count", "kernels", "total ms", "mean ms", "name");
    for (size_t i = 0; i < r.n_names; i++) {
        const colo_kineto_range_t *x = &r.names[i];
        printf("  %6zu %8zu %12.3f %12.3f  %s\n", x->count, x->kernels, x->total_us / 1e3,
               x->total_us / 1e3 / (double)x->count, x->name);
    }
    if (r.n_names)
        printf(
            "--annotation TEXT [--occurrence N] keeps the GPU work launched inside the N-th range "
            "whose name contains TEXT\n");
    colo_kineto_report_fini(&r);
    return 0;
}

/* Says on standard error why an imported Kineto trace may not be one inference (r->why), what
 * it holds and how to choose; the exit status stays 0. */
static void kineto_warning(const char *in, const char *annotation, int occurrence,
                           const colo_trace_t *t, const colo_kineto_report_t *r)
{
    if (!r->why) return;
    fflush(stdout); /* after the line that says what was written, where both go to one place */
    fprintf(stderr, "%s: warning: the trace written may not be one inference\n", in);
    fprintf(stderr,
            "  it holds %zu kernel%s (%.3f ms of kernel time) and %zu cop%s (%lld bytes host to "
            "device, %lld device to host)\n  over %.3f ms from the first op's start to the last "
            "one's end, with %.3f ms of host gaps, the largest %.3f ms\n",
            t->n_kernels, t->n_kernels == 1 ? "" : "s", COLO_TO_MS(t->kernel_time), t->n_copies,
            t->n_copies == 1 ? "y" : "ies", t->copy_bytes[COLO_COPY_H2D],
            t->copy_bytes[COLO_COPY_D2H], r->span_us / 1e3, COLO_TO_MS(r->gaps),
            COLO_TO_MS(r->largest));
    if (r->why & COLO_KINETO_WHOLE)
        fprintf(stderr,
                "  - no --annotation: the whole profile is one request, though it marks %zu "
                "record_function range%s\n",
                r->n_ranges, r->n_ranges == 1 ? "" : "s");
    if (r->why & COLO_KINETO_NESTED) {
        fprintf(stderr,
                "  - the range chosen (number %d of those whose name contains '%s') encloses",
                occurrence, annotation);
        for (size_t i = 0; i < r->n_enclosed; i++)
            fprintf(stderr, "%s %zu x '%s'", i ? "," : "", r->enclosed[i].count,
                    r->enclosed[i].name);
        fprintf(stderr, ": one of its own name, or one name twice, as a step around others\n");
    }
    if (r->why & COLO_KINETO_GAPS)
        fprintf(stderr,
                "  - its host gaps, %.3f ms, are more than its kernels' time, %.3f ms: host work "
                "a served request may not repeat (data loading, Python, the profiler), or a "
                "launch-bound model\n",
                COLO_TO_MS(r->gaps), COLO_TO_MS(t->kernel_time));
    if (r->why & (COLO_KINETO_WHOLE | COLO_KINETO_NESTED)) {
        fprintf(stderr, "  record_function ranges (count, kernels launched inside, name):\n");
        for (size_t i = 0; i < r->n_names && i < 10; i++)
            fprintf(stderr, "    %6zu %8zu  %s\n", r->names[i].count, r->names[i].kernels,
                    r->names[i].name);
        if (r->n_names > 10) fprintf(stderr, "    and %zu more\n", r->n_names - 10);
        fprintf(stderr, "  keep one inference with --annotation TEXT [--occurrence N]; "
                        "--list-annotations lists the ranges\n");
    }
    if (r->why & COLO_KINETO_GAPS)
        fprintf(stderr, "  --gaps drop runs the ops back to back; --gaps cap:US keeps each gap up "
                        "to US microseconds\n");
}

static int cmd_import(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"model", required_argument, NULL, 'm'},
        {"batch", required_argument, NULL, 'b'},
        {"gpu", required_argument, NULL, 'g'},
        {"annotation", required_argument, NULL, 'a'},
        {"occurrence", required_argument, NULL, 'n'},
        {"all", no_argument, NULL, 'A'},
        {"ncu", required_argument, NULL, 'N'},
        {"rows", required_argument, NULL, 'r'},
        {"attention", required_argument, NULL, 'T'},
        {"layers", required_argument, NULL, 'L'},
        {"tp", required_argument, NULL, 'P'},
        {"commit", required_argument, NULL, 'C'},
        {"source", required_argument, NULL, 'S'},
        {"repository", required_argument, NULL, 'R'},
        {"gaps", required_argument, NULL, 'G'},
        {"list-annotations", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *model = NULL, *gpu = NULL, *annotation = NULL, *ncu = NULL;
    colo_vidur_opts_t vo = {0};
    const char *attention = NULL;
    const char *vidur_only = NULL; /* an option only vidur takes, as given */
    colo_orion_rows_t rows = {0, 0};
    long batch = 0, occurrence = 1;
    int all = 0, list = 0;
    const char *gaps_text = NULL; /* kineto's --gaps, as given */
    colo_gap_policy_t gaps = {COLO_GAPS_KEEP, 0};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'm':
            model = optarg;
            break;
        case 'g':
            gpu = optarg;
            break;
        case 'a':
            annotation = optarg;
            break;
        case 'A':
            all = 1;
            break;
        case 'l':
            list = 1;
            break;
        case 'G':
            gaps_text = optarg;
            if (colo_gap_policy_parse(optarg, &gaps))
                return colo_cli_usage_error(usage_import,
                                            "--gaps takes keep, drop or cap:US (US: microseconds "
                                            "from 0, e.g. cap:50), not '%s'",
                                            optarg);
            break;
        case 'N':
            ncu = optarg;
            break;
        case 'r':
            rows.first = strtol(optarg, &end, 10);
            rows.last = *end == '-' ? strtol(end + 1, &end, 10) : *end ? -1 : rows.first;
            if (*end || end == optarg || rows.first < 1 || rows.last < rows.first)
                return colo_cli_usage_error(
                    usage_import, "--rows takes FIRST-LAST or ROW (from 1), not '%s'", optarg);
            break;
        case 'T':
            attention = optarg;
            vidur_only = "--attention";
            break;
        case 'C':
        case 'S':
        case 'R':
            *(c == 'C' ? &vo.commit : c == 'S' ? &vo.source : &vo.repository) = optarg;
            vidur_only = c == 'C' ? "--commit" : c == 'S' ? "--source" : "--repository";
            break;
        case 'L':
        case 'P': {
            long v = strtol(optarg, &end, 10);
            long most = c == 'L' ? COLO_LLM_MAX_DIM : COLO_LLM_MAX_TP; /* as profiles allow */
            if (*end || end == optarg || v < 1 || v > most)
                return colo_cli_usage_error(usage_import,
                                            "--%s takes a whole number from 1 to %ld, not '%s'",
                                            c == 'L' ? "layers" : "tp", most, optarg);
            *(c == 'L' ? &vo.layers : &vo.tensor_parallel) = (int)v;
            vidur_only = c == 'L' ? "--layers" : "--tp";
            break;
        }
        case 'b':
        case 'n': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000)
                return colo_cli_usage_error(usage_import, "--%s takes a positive integer, not '%s'",
                                            c == 'b' ? "batch" : "occurrence", optarg);
            if (c == 'b')
                batch = v;
            else
                occurrence = v;
            break;
        }
        case 'h':
            fputs(usage_import, stdout);
            return 0;
        default:
            return colo_cli_usage_error(usage_import, "unknown or incomplete option '%s'",
                                        argv[optind - 1]);
        }
    }
    /* what goes into the trace's JSON as text must be UTF-8 (it said "out of memory") */
    const char *const texts[] = {model, annotation, vo.commit, vo.source, vo.repository};
    const char *const names[] = {"--model", "--annotation", "--commit", "--source", "--repository"};
    for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
        colo_error_t u;
        colo_error_clear(&u);
        if (texts[k] && colo_text_utf8_error(names[k], texts[k], strlen(texts[k]), &u))
            return colo_cli_usage_error(usage_import, "%s: %s", names[k], u.text);
    }
    if (argc - optind != 2)
        return colo_cli_usage_error(usage_import, "%s", "expected: import KIND FILE -o TRACE.json");
    const char *kind = argv[optind], *in = argv[optind + 1];
    if (strcmp(kind, "orion") && strcmp(kind, "kineto") && strcmp(kind, "nsys") &&
        strcmp(kind, "capture") && strcmp(kind, "vidur"))
        return colo_cli_usage_error(
            usage_import, "unknown kind '%s' (orion, kineto, nsys, capture or vidur)", kind);
    if ((gaps_text || list) && strcmp(kind, "kineto"))
        return colo_cli_usage_error(usage_import, "%s is for kineto profiles",
                                    list ? "--list-annotations" : "--gaps");
    if (list && (out || annotation || occurrence != 1 || gaps_text || model || batch || gpu || ncu))
        return colo_cli_usage_error(
            usage_import, "%s", "--list-annotations takes the profile alone: it writes nothing");
    if ((occurrence != 1 || all) && !annotation && !list && strcmp(kind, "vidur"))
        return colo_cli_usage_error(usage_import,
                                    "--%s counts the ranges --annotation TEXT names: "
                                    "give --annotation",
                                    all ? "all" : "occurrence");
    if (!out && !list)
        return colo_cli_usage_error(usage_import, "-o %s is required",
                                    strcmp(kind, "vidur") ? "TRACE.json" : "PROFILE.json");
    if ((out && colo_cli_same_file(out, in)) || (attention && colo_cli_same_file(out, attention)))
        return colo_cli_usage_error(usage_import, "-o %s would overwrite an input itself", out);
    if (!strcmp(kind, "vidur")) {
        if (batch || annotation || all || ncu || rows.first || occurrence != 1)
            return colo_cli_usage_error(usage_import, "%s",
                                        "vidur takes --gpu, --attention, --model, --layers, --tp, "
                                        "--commit, --source and --repository");
        if (!gpu)
            return colo_cli_usage_error(
                usage_import, "%s", "vidur needs --gpu NAME: the GPU the profile was measured on");
        vo.gpu = gpu;
        vo.model = model;
        return import_vidur(in, attention, &vo, out);
    }
    if (vidur_only)
        return colo_cli_usage_error(usage_import, "%s is for vidur profiles", vidur_only);
    if (all && (strcmp(kind, "capture") || !annotation))
        return colo_cli_usage_error(usage_import, "%s",
                                    "--all is for capture files with --annotation");
    if (all && ncu)
        return colo_cli_usage_error(usage_import, "%s",
                                    "--ncu merges into one trace: not with --all");
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t **ts = NULL;
    size_t nt = 0;
    int rc;
    if (access(in, R_OK) != 0) { /* before anything is guessed from its name */
        colo_error_set(&err, COLO_EIO, in, 0, NULL, "cannot open: %s", strerror(errno));
        colo_cli_print_error(&err);
        return colo_cli_exit_for(COLO_EIO);
    }
    if (list) return list_annotations(in);
    colo_kineto_report_t kr;
    memset(&kr, 0, sizeof kr);
    if (!strcmp(kind, "orion")) {
        char guessed[256];
        int gb = colo_orion_guess_name(in, guessed, sizeof guessed);
        if (!model && gb) model = guessed;
        if (!batch) batch = gb;
        if (!gpu) gpu = "v100-sxm2";
        if (!model || !batch)
            return colo_cli_usage_error(
                usage_import, "cannot tell model and batch from '%s': give --model and --batch",
                in);
        colo_gpu_t *g = NULL;
        rc = colo_gpu_open(gpu, NULL, "none", &g, "--gpu", 0, NULL, &err);
        if (!rc && !(ts = colo_calloc(1, sizeof *ts))) rc = COLO_ENOMEM;
        if (!rc && !(rc = colo_import_orion(in, model, (int)batch, g, &rows, &ts[0], &err))) nt = 1;
        colo_gpu_free(g);
    } else {
        if (rows.first)
            return colo_cli_usage_error(usage_import, "%s", "--rows is for orion profiles");
        colo_kineto_opts_t ko = {model, (int)batch, gpu, annotation, all ? 0 : (int)occurrence};
        if (!strcmp(kind, "capture")) {
            rc = colo_import_capture(in, &ko, &ts, &nt, &err);
        } else {
            if (!(ts = colo_calloc(1, sizeof *ts)))
                rc = COLO_ENOMEM;
            else
                rc = strcmp(kind, "nsys") ? colo_kineto_convert(in, &ko, &gaps, &ts[0], &kr, &err)
                                          : colo_import_nsys(in, &ko, &ts[0], &err);
            if (!rc) nt = 1;
        }
        colo_gpu_t *g = NULL;
        if (!rc) rc = colo_gpu_open(ts[0]->gpu, NULL, NULL, &g, in, 0, "gpu", &err);
        colo_gpu_free(g);
    }
    if (!rc && ncu) rc = colo_trace_merge_ncu(ts[0], ncu, &err);
    char path[4096];
    for (size_t i = 0; i < nt && !rc; i++) /* every trace checked before any is written */
        rc = colo_trace_savable(ts[i], import_path(path, sizeof path, out, all, ts[i], i), &err);
    if (!rc && all && mkdir(out, 0777) && errno != EEXIST)
        rc = colo_error_set(&err, COLO_EIO, out, 0, NULL, "cannot make the folder: %s",
                            strerror(errno));
    for (size_t i = 0; i < nt && !rc; i++) {
        colo_trace_t *t = ts[i];
        if ((rc = colo_trace_save(t, import_path(path, sizeof path, out, all, t, i), &err))) break;
        json_t *m = json_object_get(t->provenance, "measured_ns");
        printf("%s: %s batch %d, %zu kernels, %zu copies, %.3f ms of kernels", in, t->model,
               t->batch, t->n_kernels, t->n_copies, COLO_TO_MS(t->kernel_time));
        if (m) printf(", %.3f ms measured", (double)json_integer_value(m) / 1e6);
        printf(" on %s -> %s\n", t->gpu, path);
        if (!strcmp(kind, "kineto")) kineto_warning(in, annotation, (int)occurrence, t, &kr);
    }
    if (rc) colo_cli_print_error(&err);
    colo_kineto_report_fini(&kr);
    colo_capture_free(ts, nt);
    return rc ? colo_cli_exit_for(rc) : 0;
}

const colo_cli_command_t colo_cli_import = {"import", usage_import, cmd_import, false};
