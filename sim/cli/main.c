/* cli.c: the colosim command: run, check, compare, gpus, trace, import, version, help. */
#include "alloc.h"
#include "atomic_file.h"
#include "calibration.h"
#include "compare.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_benches.h"
#include "import_capture.h"
#include "import_kineto.h"
#include "import_nsys.h"
#include "import_orion.h"
#include "layout.h"
#include "live_plan.h"
#include "live_run.h"
#include "plot.h"
#include "cluster.h"
#include "study.h"
#include "study_mpi.h"
#include "validate.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"
#include "stop.h"
#include "version.h"

#include <errno.h>
#include <getopt.h>
#include <gsl/gsl_errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exit statuses: 0 success, 1 failure while running (out of memory, cannot write output),
 * 2 bad input or usage (nothing written), 128 + signal when stopped (stop.h). */
enum { EXIT_INPUT = 2 };

static const char usage_main[] =
    "usage: colosim COMMAND [ARGS]\n"
    "\n"
    "Simulates DNN inference services sharing one NVIDIA GPU.\n"
    "\n"
    "commands:\n"
    "  run FILE      simulate a scenario, print a summary table, optionally write results JSON\n"
    "  check FILE    validate a scenario and print the set-up it resolves to\n"
    "  plan FILE     print what a live run on a real GPU would execute (no GPU needed)\n"
    "  live FILE     run the scenario's live harness with the CPU stand-in (colosim-live runs it\n"
    "                on a GPU)\n"
    "  sweep STUDY   run every point of a study (axes of scenario keys) on all cores, resumable\n"
    "  search STUDY  per study point, the highest load at which every tenant meets its SLO\n"
    "  plot KIND IN  SVG and PNG figures: sweep, search or cdf (gnuplot)\n"
    "  compare A.json B.json [...]\n"
    "                compare results side by side, with differences to the first\n"
    "  gpus [NAME]   list the GPU descriptions, or print one with its MIG profiles\n"
    "  trace FILE    validate a kernel trace and summarise it; its time on other GPUs, MIG\n"
    "                profiles and MPS percentages (--on), or against a real trace (--against)\n"
    "  import KIND FILE -o TRACE.json\n"
    "                convert a profile (orion CSV, kineto PyTorch trace, nsys SQLite, capture\n"
    "                records) to a trace\n"
    "  calibrate import gpu-benches DIR --gpu NAME\n"
    "                a calibration file from published gpu-benches micro-benchmark results\n"
    "  validate [DIR]\n"
    "                predictions against published measurements, case by case, with errors\n"
    "  version       print the version\n"
    "  help [COMMAND]\n"
    "\n"
    "Exit status: 0 success, 1 failure while running, 2 bad input or usage; 130 or 143 when\n"
    "run, sweep or search was stopped by SIGINT or SIGTERM (outputs whole or not written).\n"
    "Ended by SIGHUP or SIGPIPE, or by SIGINT or SIGTERM in another command, colosim removes\n"
    "the outputs it had not finished and dies of the signal.\n"
    "GPU descriptions are searched in $COLOSIM_GPU_PATH, then " COLO_SOURCE_GPU_DIR ",\n"
    "then " COLO_INSTALL_GPU_DIR ".\n";

static const char usage_run[] =
    "usage: colosim run FILE [-o OUT.json] [--csv OUT.csv] [--timeline OUT.json\n"
    "                    [--timeline-window START:END]] [--seed N] [--set KEY=VALUE ...] [-q]\n"
    "                    [--compare-modes]\n"
    "\n"
    "Simulates the scenario in FILE (libconfig; see docs/scenarios.md) and prints a per-tenant\n"
    "latency table. A scenario with a cluster section (docs/cluster.md) describes several GPUs:\n"
    "its tenants are placed on them by the cluster's policy, every GPU is simulated, and the\n"
    "placement, a per-service table and the number of GPUs needed are printed.\n"
    "\n"
    "  -o, --output OUT.json  write the results (docs/results.md) to OUT.json, atomically;\n"
    "                         '-' writes them to standard output and implies --quiet\n"
    "      --csv OUT.csv      write one row per tenant (docs/results.md), atomically\n"
    "      --timeline OUT.json\n"
    "                         write a timeline (Chrome Trace Event JSON; open it in\n"
    "                         ui.perfetto.dev): a track per tenant (batches, kernels), per SM\n"
    "                         partition and per copy-engine direction, kernels running and queue\n"
    "                         lengths; only events in the window are written\n"
    "      --timeline-window START:END\n"
    "                         the timeline's window in seconds of simulated time (default: the\n"
    "                         first second after warmup_s)\n"
    "      --seed N           use seed N instead of the scenario's seed\n"
    "      --set KEY=VALUE    override any single value of the scenario, e.g.\n"
    "                         --set sharing.timeslice=short  --set duration_s=60\n"
    "                         --set tenants.resnet50.arrival.rate=300  (a tenant by name or [N])\n"
    "  -q, --quiet            do not print the table\n"
    "      --compare-modes    run the same tenants under timeslice, mps, mig and green and print\n"
    "                         them side by side (-o writes all four results); where the scenario\n"
    "                         gives no MIG instances or Green Context SMs, colosim chooses an "
    "even\n"
    "                         layout (docs/sharing.md)\n";

static const char usage_check[] =
    "usage: colosim check FILE [--seed N] [--set KEY=VALUE ...]\n"
    "\n"
    "Validates the scenario in FILE, with the same overrides as run, and prints the set-up it\n"
    "resolves to: GPU, sharing, each tenant's trace, its time alone on the GPU and the load it\n"
    "offers; for a cluster, its GPUs, placement policy and services (nothing is placed or\n"
    "simulated). Prints FILE:LINE: KEY: PROBLEM and exits 2 when something is wrong.\n";

static const char usage_plan[] =
    "usage: colosim plan FILE [--seed N] [--set KEY=VALUE ...]\n"
    "\n"
    "Prints what colosim-live would execute for the scenario on a real GPU, without one: the\n"
    "processes and contexts (one process per tenant for time-slicing and MPS, one Green\n"
    "Context per tenant in one process, existing MIG instances), the private MPS daemon and\n"
    "each client's active-thread percentage, and every tenant's arrivals, drawn from the same\n"
    "generators and seeds as the simulator's (docs/live.md). colosim-live --dry-run prints the\n"
    "same.\n";


static const char usage_sweep[] =
    "usage: colosim sweep STUDY.cfg [-j N] [-o DIR] [--plot] [-q]\n"
    "\n"
    "Runs every point of the study (docs/studies.md): the base scenario with each combination of\n"
    "the grid's axes (or each point of its list). Points run in parallel, N at a time (default:\n"
    "all cores), each written to DIR/points/ as it finishes; a study interrupted and run again\n"
    "skips the points already done. Results: DIR/sweep.json and DIR/sweep.csv, the same bytes\n"
    "whatever N. DIR is the study's output, else STUDY.out beside it. A progress bar (rate, ETA)\n"
    "is shown on a terminal.\n"
    "  --plot   also draw the study's plot (its plot = { x; by; y; } section) as SVG and PNG\n"
    "\n"
    "On a cluster: mpirun -np R colosim sweep STUDY.cfg (colosim built with MPI) hands points to\n"
    "the R ranks as they ask, N at a time per rank (default 1), and rank 0 writes the same\n"
    "results as a local run. Every rank must see the study and its files at the same path.\n";

static const char usage_search[] =
    "usage: colosim search STUDY.cfg [-j N] [-o DIR] [--plot] [-q]\n"
    "\n"
    "For each point of the study, bisects the search key (default load_scale) between lo and hi\n"
    "for the highest value at which every tenant with an SLO meets it for at least `attainment`\n"
    "of its requests, judged on a one-sided Student-t lower confidence bound over `replications`\n"
    "runs with seeds 1, 2, ... Prints a table of capacity per point; writes DIR/search.json and\n"
    "DIR/search.csv. Interrupted, it resumes like sweep; runs under mpirun like sweep.\n";

static const char usage_plot[] =
    "usage: colosim plot sweep DIR|sweep.json [--x KEY] [--by KEY] [--y METRIC] [-o BASE]\n"
    "       colosim plot search DIR|search.json [-o BASE]\n"
    "       colosim plot cdf RESULTS.json [-o BASE]\n"
    "\n"
    "Writes BASE.svg and BASE.png with gnuplot (apt-get install gnuplot-nox).\n"
    "  sweep   METRIC (p50, p90, p99, p999, mean, throughput, slo_attainment; default p99)\n"
    "          against axis KEY, one line per value of the --by axis, one panel per tenant,\n"
    "          with its SLO; defaults from the study's plot section. BASE: DIR/sweep_METRIC\n"
    "          For a sweep of a cluster scenario, METRIC gpus: the GPUs each point needs.\n"
    "  search  capacity per point as bars. BASE: DIR/search\n"
    "  cdf     each tenant's latency distribution from the run's percentiles. BASE: RESULTS\n"
    "          without .json, plus _cdf\n";

static const char usage_compare[] =
    "usage: colosim compare A.json B.json [...] [-o OUT.json]\n"
    "\n"
    "Prints the runs in results files (colosim run -o) side by side: per tenant (matched by\n"
    "name) the latency percentiles, queueing time, throughput, goodput, SLO attainment and\n"
    "drops, and the GPU's busy time, each with its difference to the first run (relative in %,\n"
    "or in percentage points for fractions). A file written by run --compare-modes adds one\n"
    "column per mechanism. -o writes the same table as JSON, atomically.\n";

static const char usage_gpus[] =
    "usage: colosim gpus [NAME [--calibration FILE|none]]\n"
    "\n"
    "Without NAME, lists the GPU descriptions found. With NAME (or a path to a .cfg file),\n"
    "prints that GPU's parameters and its MIG profiles with their placements. Values measured by\n"
    "its calibration file (models/calibrated/NAME.json, or --calibration FILE) replace the\n"
    "datasheet's and are listed with the values they replace; --calibration none shows the\n"
    "datasheet's alone (docs/calibration.md).\n";

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

static const char usage_validate[] =
    "usage: colosim validate [DIR] [-o FILE.json] [--markdown FILE.md] [--check RECORDED.json]\n"
    "                        [-q]\n"
    "\n"
    "Runs the validation suite in DIR (default: ./validation, else the source tree's): each case\n"
    "simulates the set-up of a published measurement and compares colosim's prediction with the\n"
    "published figure. Prints one table (case, published, predicted, error) with the median\n"
    "absolute error of the validation cases; cases whose source also set a model parameter are\n"
    "listed apart and not counted (docs/validation.md).\n"
    "  -o FILE.json         write the table as JSON (the record --check compares with)\n"
    "  --markdown FILE.md   write the tables into FILE.md between its colosim validate marks\n"
    "  --check RECORDED     exit 1 when a case's |error| grew more than one percentage point past\n"
    "                       the recorded one, a case is not recorded, or one is above 50 %\n"
    "                       without a stated cause\n"
    "  -q                   print only the summary line\n";

static const char usage_trace[] =
    "usage: colosim trace FILE [--classes] [--on GPU[,GPU...] [--partitions] [--batch N]\n"
    "                          [--fp32-math pytorch|fp32|tf32] [--cuda-graphs]]\n"
    "                          [--against REAL.json [--fp32-math P]]\n"
    "\n"
    "Validates a kernel trace (docs/traces.md) and prints what it holds: model, batch, the GPU\n"
    "it was measured on, kernels and copies, total kernel time, its provenance, and its mix of\n"
    "math classes (docs/model.md, \"Math classes\").\n"
    "  --classes      every kernel name with its class and the rule of the table that gave it\n"
    "  --on GPUS      the trace on other GPUs, one request alone: the sum of its kernels'\n"
    "                 durations (what a profiler reports) and the request's time from start to\n"
    "                 end (with launches and dispatch gaps)\n"
    "  --partitions   with --on: also on each MIG profile (one instance alone) and under MPS\n"
    "                 active-thread percentages 10 to 100, with throughput at saturation\n"
    "  --batch N      run it at batch N (the kernel model scales each kernel: docs/model.md)\n"
    "  --fp32-math P  how FP32 convolutions and matmuls run on TF32 GPUs (default pytorch)\n"
    "  --cuda-graphs  a request is one CUDA graph launch\n"
    "  --against REAL a trace of the same model measured elsewhere (another GPU, another batch):\n"
    "                 predicts it from FILE and prints predicted against measured kernel time,\n"
    "                 by math class, with the error\n";

static const char usage_import[] =
    "usage: colosim import KIND FILE -o TRACE.json [--model NAME] [--batch N] [--gpu NAME]\n"
    "                      [--annotation TEXT [--occurrence N | --all]] [--ncu NCU.csv]\n"
    "                      [--rows FIRST-LAST | --rows ROW]\n"
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
    "          name contains TEXT, e.g. one forward pass.\n"
    "  nsys    Nsight Systems SQLite export (nsys export --type sqlite): kernels, copies, host\n"
    "          gaps, the GPU from TARGET_INFO_GPU; --annotation selects an NVTX range.\n"
    "  capture colosim-capture's CUPTI record file (docs/capture.md): kernels with launch\n"
    "          shapes, registers and shared memory, copies, host gaps, NVTX ranges. With\n"
    "          --annotation TEXT --all, one trace per range whose name contains TEXT, written\n"
    "          into the folder -o names as MODEL_001.json, MODEL_002.json, ...\n"
    "--ncu NCU.csv merges per-kernel DRAM and L2 bytes from Nsight Compute (ncu --csv --metrics\n"
    "dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum --print-kernel-base mangled)\n"
    "of the same kernels, in order.\n";

static void print_error(const colo_error_t *e)
{
    char buf[2048];
    colo_error_format(e, buf, sizeof buf);
    fprintf(stderr, "%s\n", buf);
}

static int usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "colosim: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n%s", usage);
    va_end(ap);
    return EXIT_INPUT;
}

static int exit_for(int rc)
{
    if (rc == COLO_EINTR) return colo_stop_status();
    return (rc == COLO_ENOMEM || rc == COLO_EIO) ? 1 : EXIT_INPUT;
}

/* After a command's outputs: a stop signal that came while they were being written did not cut
 * them short; says so, and exits as stopped. */
static int stopped_after_writing(int status)
{
    if (!colo_stop_requested() || status) return status; /* status: it said what happened */
    fprintf(stderr, "colosim: %s received after the run had finished; its outputs are whole\n",
            colo_stop_name());
    return colo_stop_status();
}

/* True when path names the same existing file as other: writing it would destroy an input. */
static int same_file(const char *path, const char *other)
{
    struct stat a, b;
    return strcmp(path, "-") != 0 && stat(path, &a) == 0 && stat(other, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Options shared by run and check. */
struct scenario_opts {
    const char *file;
    const char *output;
    const char **sets;
    size_t n_sets;
    char seed_set[64];
    int quiet;
    int compare;
    const char *timeline, *csv;
    colo_time_t tl_start, tl_end; /* tl_end 0: from warmup_s, 1 s long */
};

/* --timeline-window START:END in seconds, START < END. */
static int parse_window(const char *arg, struct scenario_opts *o)
{
    char *end;
    errno = 0;
    double a = strtod(arg, &end);
    if (errno || end == arg || *end != ':') return -1;
    const char *b_s = end + 1;
    double b = strtod(b_s, &end);
    if (errno || end == b_s || *end || !(a >= 0) || !(b > a) || b > 1e6) return -1;
    o->tl_start = colo_time_from_ns(a * 1e9);
    o->tl_end = colo_time_from_ns(b * 1e9);
    return 0;
}

static int parse_scenario_opts(int argc, char **argv, const char *usage, int allow_output,
                               struct scenario_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 'S'},
        {"set", required_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"compare-modes", no_argument, NULL, 'C'},
        {"timeline", required_argument, NULL, 'T'},
        {"timeline-window", required_argument, NULL, 'W'},
        {"csv", required_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->sets = colo_calloc((size_t)argc + 1, sizeof *o->sets);
    if (!o->sets) return 1;
    const char *seed = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, allow_output ? "o:qh" : "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'S':
            seed = optarg;
            break;
        case 'C':
            o->compare = 1;
            break;
        case 'T':
            o->timeline = optarg;
            break;
        case 'V':
            o->csv = optarg;
            break;
        case 'W':
            if (parse_window(optarg, o))
                return usage_error(usage,
                                   "--timeline-window takes START:END in seconds with START < "
                                   "END, not '%s'",
                                   optarg);
            break;
        case 's':
            o->sets[o->n_sets++] = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            return usage_error(usage, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (!allow_output && (o->output || o->quiet || o->compare || o->timeline || o->csv ||
                          o->tl_end))
        return usage_error(usage, "%s", "check takes no output options");
    if (optind != argc - 1)
        return usage_error(usage, "%s",
                           optind >= argc ? "a scenario FILE is required"
                                          : "exactly one scenario FILE, please");
    o->file = argv[optind];
    if (seed) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(seed, &end, 10);
        if (errno || end == seed || *end || seed[0] == '-')
            return usage_error(usage, "--seed takes a non-negative integer, not '%s'", seed);
        snprintf(o->seed_set, sizeof o->seed_set, "seed=%llu", v);
        o->sets[o->n_sets++] = o->seed_set;
    }
    const char *outs[] = {o->output, o->timeline, o->csv};
    for (size_t k = 0; k < 3; k++)
        if (outs[k] && same_file(outs[k], o->file))
            return usage_error(usage, "%s would overwrite the scenario itself", outs[k]);
    if (o->tl_end && !o->timeline)
        return usage_error(usage, "%s", "--timeline-window needs --timeline FILE");
    if (o->timeline && o->compare)
        return usage_error(usage, "%s",
                           "--timeline records one run: use it without --compare-modes, with "
                           "--set sharing.mode=MODE");
    if (o->output && strcmp(o->output, "-") == 0) o->quiet = 1;
    return 0;
}

/* Parses run/check arguments and loads the scenario. Returns -1 when the command should go on
 * (o and *sc set; the caller frees both), otherwise the exit status to return at once. */
/* Loads the scenario of parsed options: -1 when loaded, else the exit status. */
static int load_scenario(struct scenario_opts *o, colo_scenario_t **sc)
{
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_scenario_load(o->file, o->sets, o->n_sets, sc, &err);
    if (rc) {
        print_error(&err);
        colo_free(o->sets);
        return exit_for(rc);
    }
    return -1;
}

/* parse_scenario_opts for a command: -1 to go on, or the exit status (--help: 0). */
static int scenario_opts(int argc, char **argv, const char *usage, int allow_output,
                         struct scenario_opts *o)
{
    int rc = parse_scenario_opts(argc, argv, usage, allow_output, o);
    if (!rc) return -1;
    colo_free(o->sets);
    return rc < 0 ? 0 : rc;
}

static int open_scenario(int argc, char **argv, const char *usage, int allow_output,
                         struct scenario_opts *o, colo_scenario_t **sc)
{
    *sc = NULL;
    int rc = scenario_opts(argc, argv, usage, allow_output, o);
    return rc >= 0 ? rc : load_scenario(o, sc);
}

/* Whether the file (with the overrides) has a cluster section; one that cannot be read is left
 * to the scenario reader, which says why. */
static bool is_cluster(const struct scenario_opts *o)
{
    colo_error_t err;
    colo_error_clear(&err);
    return colo_cluster_detect(o->file, o->sets, o->n_sets, &err) == 1;
}

/* run on a scenario with a cluster section: placement, every GPU, the summary. */
static int run_cluster(struct scenario_opts *o)
{
    colo_error_t err;
    colo_error_clear(&err);
    json_t *res = NULL;
    int rc = 0;
    if (o->timeline || o->csv)
        rc = colo_error_set(&err, COLO_EINVAL, o->timeline ? "--timeline" : "--csv", 0, NULL,
                            "not for a cluster yet: run one GPU's scenario for that");
    if (!rc) rc = colo_cluster_run(o->file, o->sets, o->n_sets, &res, &err);
    if (!rc && o->output) rc = colo_results_write(res, o->output, &err);
    int status = 0;
    if (rc) {
        print_error(&err);
        status = exit_for(rc);
    } else if (!o->quiet) {
        colo_cluster_print(res, stdout);
        if (o->output) printf("results written to %s\n", o->output);
    }
    json_decref(res);
    colo_free(o->sets);
    return status;
}

/* run --compare-modes: the same tenants under each mechanism, one table. */
static int compare_modes(struct scenario_opts *o)
{
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    json_t *all = json_object(), *by_mode[4] = {NULL};
    const char **sets = colo_calloc(o->n_sets + 1, sizeof *sets);
    if (!all || !sets) {
        json_decref(all);
        colo_free(sets);
        fprintf(stderr, "colosim: out of memory\n");
        return 1;
    }
    if (o->n_sets) memcpy(sets, o->sets, o->n_sets * sizeof *sets);
    int status = 0, ran = 0;
    for (int m = 0; m < 4; m++) {
        char set[64];
        snprintf(set, sizeof set, "sharing.mode=%s", modes[m]);
        sets[o->n_sets] = set;
        colo_error_t err;
        colo_error_clear(&err);
        colo_scenario_t *sc = NULL;
        int rc = colo_scenario_load(o->file, sets, o->n_sets + 1, &sc, &err);
        if (!rc) rc = colo_simulate_scenario(sc, sets, o->n_sets + 1, &by_mode[m], &err);
        colo_scenario_free(sc);
        if (rc == COLO_EINTR) break;
        if (rc) {
            char msg[2048];
            colo_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "%s: %s\n", modes[m], msg);
            if (rc == COLO_ENOMEM || rc == COLO_EIO) status = 1;
            json_object_set_new(all, modes[m], json_pack("{s:s}", "error", msg));
            continue;
        }
        ran++;
        json_object_set(all, modes[m], by_mode[m]);
    }
    colo_free(sets);
    if (colo_stop_requested()) { /* before any output: all or none */
        fprintf(stderr, "colosim: stopped by %s before every mechanism had run; nothing was "
                        "written\n",
                colo_stop_name());
        json_decref(all);
        for (int m = 0; m < 4; m++)
            json_decref(by_mode[m]);
        return colo_stop_status();
    }
    if (!ran && !status) status = EXIT_INPUT;
    if (ran && !o->quiet) colo_results_print_compare(by_mode, modes, 4, stdout);
    if (ran && o->csv) {
        colo_error_t err;
        colo_error_clear(&err);
        if (colo_results_write_csv(by_mode, 4, o->csv, &err)) {
            print_error(&err);
            status = 1;
        } else if (!o->quiet) {
            printf("CSV written to %s\n", o->csv);
        }
    }
    if (ran && o->output) {
        colo_error_t err;
        colo_error_clear(&err);
        json_t *doc = json_pack("{s:s,s:o}", "compare", "sharing modes", "modes", all);
        all = NULL;
        if (!doc || colo_results_write(doc, o->output, &err)) {
            if (doc) print_error(&err);
            status = 1;
        } else if (!o->quiet) {
            printf("results written to %s\n", o->output);
        }
        json_decref(doc);
    }
    json_decref(all);
    for (int m = 0; m < 4; m++)
        json_decref(by_mode[m]);
    return status;
}

static int cmd_run(int argc, char **argv)
{
    struct scenario_opts o;
    colo_scenario_t *sc;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--compare-modes") == 0) { /* loads the scenario once per mode */
            int rc = parse_scenario_opts(argc, argv, usage_run, 1, &o);
            if (!rc) rc = compare_modes(&o);
            colo_free(o.sets);
            return rc < 0 ? 0 : rc;
        }
    int status = scenario_opts(argc, argv, usage_run, 1, &o);
    if (status >= 0) return status;
    if (is_cluster(&o)) return run_cluster(&o);
    colo_error_t err;
    colo_error_clear(&err);
    sc = NULL;
    if ((status = load_scenario(&o, &sc)) >= 0) return status;
    colo_sim_t *sim = NULL;
    json_t *res = NULL;
    colo_timeline_t tl;
    bool tl_open = false;
    int rc = colo_sim_new(sc, &sim, &err);
    if (!rc && o.timeline) {
        colo_time_t a = o.tl_end ? o.tl_start : sc->warmup;
        colo_time_t b = o.tl_end ? o.tl_end : sc->warmup + COLO_S(1);
        rc = colo_timeline_open(&tl, o.timeline, a, b, &err);
        tl_open = !rc;
        if (tl_open && colo_sim_set_timeline(sim, &tl))
            rc = colo_error_set(&err, COLO_ENOMEM, o.file, 0, NULL, "out of memory");
    }
    if (!rc) rc = colo_sim_run(sim, &err);
    if (!rc && !(res = colo_results_json(sim, o.sets, o.n_sets)))
        rc = colo_error_set(&err, COLO_ENOMEM, o.file, 0, NULL, "out of memory");
    if (!rc && o.output) rc = colo_results_write(res, o.output, &err);
    if (!rc && o.csv) rc = colo_results_write_csv(&res, 1, o.csv, &err);
    if (tl_open) {
        colo_error_t terr;
        int trc = colo_timeline_close(&tl, rc == 0, &terr);
        if (!rc && trc) {
            rc = trc;
            err = terr;
        }
    }
    status = 0;
    if (rc == COLO_EINTR) {
        fprintf(stderr, "colosim: stopped by %s before the run finished; nothing was written\n",
                colo_stop_name());
        status = exit_for(rc);
    } else if (rc) {
        print_error(&err);
        status = exit_for(rc);
    } else if (!o.quiet) {
        colo_results_print(res, stdout);
        if (o.output) printf("results written to %s\n", o.output);
        if (o.csv) printf("CSV written to %s\n", o.csv);
        if (o.timeline)
            printf("timeline written to %s (%.3f s to %.3f s; open it in ui.perfetto.dev)\n",
                   o.timeline, COLO_TO_S(tl.t0), COLO_TO_S(tl.t1));
    }
    json_decref(res);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    colo_free(o.sets);
    return stopped_after_writing(status);
}

/* The sharing set-up in words, for check. */
static void print_sharing(const colo_scenario_t *sc)
{
    const char *mode = colo_share_mode_name(sc->sharing.mode);
    const char *autol = sc->sharing.auto_layout ? " (layout chosen by colosim)" : "";
    switch (sc->sharing.mode) {
    case COLO_SHARE_TIMESLICE:
        printf("sharing   timeslice: %s time slice %.0f us, context switch %.0f us\n",
               sc->sharing.timeslice_name, (double)sc->sharing.timeslice / 1e3,
               (double)sc->sharing.switch_cost / 1e3);
        break;
    case COLO_SHARE_MPS:
        printf("sharing   mps: one server, at most %d clients (CUDA %s)%s\n",
               sc->sharing.mps_clients, sc->sharing.cuda_13_1 ? "13.1" : "13.0",
               sc->sharing.static_partitions ? ", static SM partitions" : "");
        break;
    case COLO_SHARE_GREEN:
        printf("sharing   green: one process, one Green Context per tenant%s%s\n",
               sc->sharing.overlap ? ", overlap allowed" : "", autol);
        break;
    case COLO_SHARE_MIG:
        printf("sharing   mig: %zu instance%s%s\n", sc->sharing.n_instances,
               sc->sharing.n_instances == 1 ? "" : "s", autol);
        for (size_t k = 0; k < sc->sharing.n_instances; k++) {
            const colo_mig_instance_t *in = &sc->sharing.instances[k];
            printf("            %-8s %-11s at slots %d-%d, %d SMs, %.2f GiB, %s inside\n", in->name,
                   in->profile->name, in->placement, in->placement + in->profile->memory_slices - 1,
                   in->profile->sms, in->profile->memory_gib, colo_share_mode_name(in->share));
        }
        break;
    }
    (void)mode;
    if (sc->scheduler.ops) {
        const colo_sched_ops_t *ops = sc->scheduler.ops;
        printf("scheduler %s: %s", ops->name, ops->summary);
        for (size_t k = 0; k < COLO_SCHED_MAX_PARAMS && ops->params[k]; k++)
            printf("%s%s = %g", k ? ", " : "; ", ops->params[k], sc->scheduler.param[k]);
        printf("\n");
    }
    if (sc->n_faults)
        printf("faults    %zu; a crashed process or MPS server is back after %.3g s\n",
               sc->n_faults, COLO_TO_S(sc->sharing.recovery));
}

static int cmd_plan(int argc, char **argv)
{
    struct scenario_opts o;
    colo_scenario_t *sc;
    int status = open_scenario(argc, argv, usage_plan, 0, &o, &sc);
    if (status >= 0) return status;
    colo_free(o.sets);
    colo_live_plan_t plan;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_live_plan(sc, &plan, &err);
    if (!rc) colo_live_plan_print(sc, &plan, stdout);
    else print_error(&err);
    colo_live_plan_free(&plan);
    colo_scenario_free(sc);
    return rc ? exit_for(rc) : 0;
}

static int cmd_check(int argc, char **argv)
{
    struct scenario_opts o;
    colo_scenario_t *sc;
    int status = scenario_opts(argc, argv, usage_check, 0, &o);
    if (status >= 0) return status;
    if (is_cluster(&o)) {
        colo_error_t cerr;
        colo_error_clear(&cerr);
        int rc = colo_cluster_check(o.file, o.sets, o.n_sets, stdout, &cerr);
        if (rc) print_error(&cerr);
        colo_free(o.sets);
        return rc ? exit_for(rc) : 0;
    }
    if ((status = load_scenario(&o, &sc)) >= 0) return status;
    colo_free(o.sets);
    const colo_gpu_t *g = sc->gpu;
    /* a description is a line, not a document: the first 200 bytes (a whole character) */
    int dlen = sc->description ? (int)strlen(sc->description) : 0;
    bool cut = dlen > 200;
    if (cut)
        for (dlen = 200; dlen > 0 && ((unsigned char)sc->description[dlen] & 0xC0) == 0x80; dlen--)
            ;
    printf("scenario  %s%s%.*s%s\n", sc->path, sc->description ? ": " : "", dlen,
           sc->description ? sc->description : "", cut ? " ..." : "");
    printf("gpu       %s (%s), from %s\n", g->name, g->full_name, g->path);
    if (g->calibration.path)
        printf("          calibrated: %s (%s, %s)\n", g->calibration.path, g->calibration.device,
               g->calibration.date);
    else if (sc->calibration && strcmp(sc->calibration, "none") == 0)
        printf("          datasheet values: calibration = \"none\"\n");
    else
        printf("          datasheet values: no calibration file\n");
    printf("run       seed %llu; arrivals for %.3g s, measured after %.3g s warm-up; up to %.3g s "
           "drain\n",
           (unsigned long long)sc->seed, COLO_TO_S(sc->duration), COLO_TO_S(sc->warmup),
           COLO_TO_S(sc->drain));
    print_sharing(sc);
    printf("tenants   %zu\n", sc->n_tenants);
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *t = &sc->tenants[i];
        const colo_trace_t *tr = t->trace;
        colo_time_t alone;
        colo_error_t err;
        colo_error_clear(&err);
        colo_place_rates_t pr = colo_tenant_place_rates(sc, i);
        if (colo_tenant_isolated(sc, i, &alone, &err)) {
            print_error(&err);
            colo_scenario_free(sc);
            return EXIT_INPUT;
        }
        /* the GPU time one request takes: a full batch's time shared by its requests */
        colo_time_t per_request = alone;
        if (t->max_batch > 1) {
            colo_time_t full;
            if (colo_tenant_request_time(sc, i, pr, t->max_batch, &full, &err)) {
                print_error(&err);
                colo_scenario_free(sc);
                return EXIT_INPUT;
            }
            per_request = full / t->max_batch;
            alone = full; /* printed below as the full batch's time */
        }
        double load = colo_arrival_rate(&t->arrival) * COLO_TO_S(per_request);
        char arr[600];
        colo_arrival_describe(&t->arrival, arr, sizeof arr);
        for (size_t v = 0; v < t->n_variants; v++) {
            tr = t->variants[v].trace;
            printf("  %-14s %s %s\n", v ? "" : t->name, v ? "      " : "trace",
                   t->variants[v].path);
            printf("  %-14s   %s, batch %d: %zu kernels, %zu copies, measured on %s\n", "",
                   tr->model, tr->batch, tr->n_kernels, tr->n_copies, tr->gpu);
        }
        tr = t->trace;
        if (t->max_batch > 0)
            printf("  %-14s   dynamic batching: up to %d requests, waiting at most %g ms\n", "",
                   t->max_batch, COLO_TO_MS(t->max_delay));
        if (t->queue_limit > 0 || t->deadline > 0)
            printf("  %-14s   queue limit %lld, deadline %g ms\n", "", t->queue_limit,
                   COLO_TO_MS(t->deadline));
        char where[160] = "";
        if (sc->sharing.mode == COLO_SHARE_MIG)
            snprintf(where, sizeof where, "instance %s, ", sc->sharing.instances[t->instance].name);
        else if (t->sm_count > 0)
            snprintf(where, sizeof where, "SMs %d-%d, ", t->sm_first,
                     t->sm_first + t->sm_count - 1);
        else if (t->sm_cap > 0)
            snprintf(where, sizeof where, "at most %d SMs (%d %% of threads), ", t->sm_cap,
                     t->active_thread_percentage);
        printf("  %-14s   runs on %s%d SMs, %.0f GB/s DRAM, %.0f GB/s L2%s\n", "", where, pr.sms,
               pr.dram_rate, pr.l2_rate, t->priority ? ", below-normal priority" : "");
        printf("  %-14s   %d instance%s (requests in flight at once), %s, fp32_math %s\n", "",
               t->instances, t->instances == 1 ? "" : "s",
               t->cuda_graphs ? "each request one CUDA graph" : "kernels launched one by one",
               colo_fp32_math_name(t->fp32_math));
        if (t->max_batch > 1)
            printf("  %-14s   alone there: %.3f ms per full batch of %d (kernels on %s: %.3f ms at "
                   "batch %d)\n",
                   "", COLO_TO_MS(alone), t->max_batch, tr->gpu, COLO_TO_MS(tr->kernel_time),
                   tr->batch);
        else
            printf("  %-14s   alone there: %.3f ms per request (kernels on %s: %.3f ms)\n", "",
                   COLO_TO_MS(alone), tr->gpu, COLO_TO_MS(tr->kernel_time));
        char slo[32] = "none";
        if (t->slo > 0) snprintf(slo, sizeof slo, "%.6g ms", t->slo_ms);
        printf("  %-14s   arrivals: %s; SLO %s\n", "", arr, slo);
        if (load > 0)
            printf("  %-14s   busy %.1f %% of the time alone%s%s\n", "", 100 * load,
                   t->max_batch > 1 ? " in full batches" : "",
                   load >= t->instances ? " (its queue grows without bound)"
                   : load >= 1 ? " (more than one request at a time: its instances must overlap)"
                               : "");
        if (t->memory_gib > 0) printf("  %-14s   device memory %.2f GiB\n", "", t->memory_gib);
    }
    printf("ok\n");
    colo_scenario_free(sc);
    return 0;
}

/* The calibration file's measurements that are no model parameter: name and numbers. */
static void print_measurements(const char *path)
{
    json_t *doc = json_load_file(path, 0, NULL);
    json_t *m = json_object_get(doc, "measurements");
    if (json_is_object(m) && json_object_size(m)) {
        printf("    measured, not model parameters:\n");
        const char *k, *kk;
        json_t *v, *vv;
        json_object_foreach(m, k, v)
        {
            if (!json_is_object(v)) continue;
            printf("      %-22s", k);
            json_object_foreach(v, kk, vv) if (json_is_number(vv))
                printf(" %s %.4g", kk, json_number_value(vv));
            const char *src = json_string_value(json_object_get(json_object_get(v, "source"), "path"));
            if (src) printf("  (%s)", src);
            printf("\n");
        }
    }
    json_decref(doc);
}

static void print_gpu(const colo_gpu_t *g)
{
    printf("%s: %s (%s, compute capability %s)\n", g->name, g->full_name, g->arch,
           g->compute_capability);
    printf("  file        %s\n", g->path);
    if (g->calibration.path) {
        printf("  calibrated  %s (%s, %s); measured values below replace:\n",
               g->calibration.path, g->calibration.device, g->calibration.date);
        for (int i = 0; i < COLO_CAL_N; i++) {
            const colo_cal_param_t p = (colo_cal_param_t)i;
            if (g->calibration.applied & (1u << i)) {
                printf("    %-24s %10.5g -> %-10.5g %-6s", colo_cal_key(p),
                       g->calibration.datasheet[i], colo_cal_get(g, p), colo_cal_unit(p));
                if (g->calibration.source[i]) printf(" %s", g->calibration.source[i]);
                printf("\n");
            }
        }
        print_measurements(g->calibration.path);
    } else {
        printf("  calibrated  no: datasheet values\n");
    }
    printf("  SMs         %d at %.0f MHz", g->sm.count, g->sm.clock_mhz);
    if (g->sm.tensor_clock_mhz > 0 && g->sm.tensor_clock_mhz != g->sm.clock_mhz)
        printf(" (tensor peaks at %.0f MHz)", g->sm.tensor_clock_mhz);
    printf("; per SM %d threads, %d warps, %d blocks, %d registers, %d KB shared\n",
           g->sm.max_threads, g->sm.max_warps, g->sm.max_blocks, g->sm.registers,
           g->sm.shared_bytes / 1024);
    printf("  compute     %-5s %8s %8s %9s\n", "class", "TFLOPS", "per SM", "sustained");
    printf("              (dense peak of the GPU; GFLOP/s per SM; share of the peak a kernel of\n"
           "              inference size sustains; TOPS for int8)\n");
    for (int m = COLO_MATH_FP32; m < COLO_MATH_CLASSES; m++) {
        colo_math_t as = colo_gpu_math_runs_as(g, (colo_math_t)m);
        if (as != (colo_math_t)m)
            printf("              %-5s runs as %s\n", colo_math_name((colo_math_t)m),
                   colo_math_name(as));
        else
            printf("              %-5s %8.1f %8.0f %9.3f\n", colo_math_name((colo_math_t)m),
                   colo_gpu_math_rate(g, (colo_math_t)m) * g->sm.count / 1e3,
                   colo_gpu_math_rate(g, (colo_math_t)m), g->sm.sustained[m]);
    }
    printf("  L2          %.1f MB in %d slices, %d partition%s, ", (double)g->l2.bytes / 1048576.0,
           g->l2.slices, g->l2.partitions, g->l2.partitions == 1 ? "" : "s");
    if (g->l2.bandwidth_gbps > 0)
        printf("%.0f GB/s\n", g->l2.bandwidth_gbps);
    else
        printf("bandwidth unknown\n");
    printf("  memory      %.0f GiB %s, %d channels, %.1f GB/s peak, %.0f %% achievable "
           "(%.0f GB/s)\n",
           g->memory.size_gib, g->memory.type, g->memory.channels, g->memory.peak_gbps,
           100 * g->memory.achievable_fraction, colo_gpu_dram_rate(g));
    if (g->pcie.generation > 0)
        printf("  host link   PCIe gen %d x%d: ", g->pcie.generation, g->pcie.lanes);
    else
        printf("  host link   integrated (unified memory), copies ");
    printf("H2D %.1f GB/s, D2H %.1f GB/s, %.0f us per transfer, %d copy engines\n",
           g->pcie.h2d_gbps, g->pcie.d2h_gbps, g->pcie.latency_us, g->pcie.copy_engines);
    printf("  launch      %.2f us host per launch (%.2f in a CUDA graph), %.2f us to start, "
           "%.2f us between kernels of a stream; kernel floor %.3f us\n",
           g->launch.host_us, g->launch.graph_us, g->launch.start_us, g->launch.dispatch_us,
           g->launch.floor_us);
    printf("  time slice  default %.0f us, short %.0f, medium %.0f, long %.0f; switch %.0f us\n",
           (double)g->timeslice.default_ns / 1e3, (double)g->timeslice.short_ns / 1e3,
           (double)g->timeslice.medium_ns / 1e3, (double)g->timeslice.long_ns / 1e3,
           (double)g->timeslice.switch_ns / 1e3);
    printf("  MPS         %d clients (%d from CUDA 13.1), SM granularity %d\n", g->mps.max_clients,
           g->mps.max_clients_cuda_13_1, g->mps.sm_granularity);
    printf("  green ctx   at least %d SMs, in multiples of %d\n", g->green.min_sms,
           g->green.alignment);
    if (!g->mig.supported) {
        printf("  MIG         not supported\n");
        return;
    }
    printf("  MIG         %d compute slices, %d memory slices; placements are start slots on the "
           "memory-slice axis\n",
           g->mig.compute_slices, g->mig.memory_slices);
    printf("    %-11s %3s %4s %8s %7s %5s %3s %5s %4s  %s\n", "profile", "id", "SMs", "mem GiB",
           "mem/8", "L2/8", "CE", "media", "max", "placements (start:size)");
    for (size_t i = 0; i < g->mig.n_profiles; i++) {
        const colo_mig_profile_t *p = &g->mig.profiles[i];
        printf("    %-11s %3d %4d %8.2f %7d %5d %3d %5s %4d  ", p->name, p->id, p->sms,
               p->memory_gib, p->memory_slices, p->l2_eighths, p->copy_engines,
               p->media ? "yes" : "no", p->max_count);
        for (int k = 0; k < p->n_placements; k++)
            printf("%s%d:%d", k ? " " : "", p->placements[k], p->memory_slices);
        printf("\n");
    }
}

static int cmd_gpus(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        fputs(usage_gpus, stdout);
        return 0;
    }
    const char *cal = NULL;
    if (argc == 4 && strcmp(argv[2], "--calibration") == 0)
        cal = argv[3];
    else if (argc > 2)
        return usage_error(usage_gpus, "%s", "at most one GPU name, then --calibration FILE|none");
    colo_error_t err;
    colo_error_clear(&err);
    if (argc >= 2) {
        colo_gpu_t *g;
        int rc = colo_gpu_open(argv[1], NULL, cal, &g, "colosim gpus", 0, NULL, &err);
        if (rc) {
            print_error(&err);
            return exit_for(rc);
        }
        print_gpu(g);
        colo_gpu_free(g);
        return 0;
    }
    char **names;
    size_t n;
    if (colo_gpu_names(&names, &n)) {
        fprintf(stderr, "colosim: out of memory\n");
        return 1;
    }
    printf("%-11s %-30s %4s %9s %-6s %9s %6s  %-11s %s\n", "name", "GPU", "SMs", "memory", "",
           "DRAM GB/s", "L2 MB", "MIG", "calibrated");
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        colo_gpu_t *g;
        colo_error_clear(&err);
        if (colo_gpu_open(names[i], NULL, NULL, &g, "colosim gpus", 0, NULL, &err)) {
            print_error(&err);
            status = EXIT_INPUT;
            continue;
        }
        char mig[32] = "no";
        if (g->mig.supported) snprintf(mig, sizeof mig, "%zu profiles", g->mig.n_profiles);
        printf("%-11s %-30s %4d %5.0f GiB %-6s %9.0f %6.1f  %-11s %s\n", g->name, g->full_name,
               g->sm.count, g->memory.size_gib, g->memory.type, g->memory.peak_gbps,
               (double)g->l2.bytes / 1048576.0, mig, g->calibration.path ? "yes" : "no");
        colo_gpu_free(g);
    }
    colo_gpu_names_free(names, n);
    if (n)
        printf("\ncolosim gpus NAME prints one in full, with its MIG profiles and what its\n"
               "calibration file measured.\n");
    return status;
}

/* Per math class: kernels and their time in trace t. */
static void print_class_mix(const colo_trace_t *t)
{
    size_t n[COLO_MATH_CLASSES] = {0}, cudnn[COLO_MATH_CLASSES] = {0},
           cublas[COLO_MATH_CLASSES] = {0};
    colo_time_t time[COLO_MATH_CLASSES] = {0};
    for (size_t i = 0; i < t->n_ops; i++) {
        const colo_op_t *op = &t->ops[i];
        if (op->type != COLO_OP_KERNEL) continue;
        n[op->cls.math]++;
        time[op->cls.math] += op->duration;
        cudnn[op->cls.math] += op->cls.kind == COLO_KIND_CUDNN;
        cublas[op->cls.math] += op->cls.kind == COLO_KIND_CUBLAS;
    }
    printf("  math classes (--classes lists each kernel's rule):\n");
    for (int m = COLO_MATH_MEMORY; m < COLO_MATH_CLASSES; m++) {
        if (!n[m]) continue;
        printf("    %-7s %5zu kernels %9.3f ms %5.1f %%", colo_math_name((colo_math_t)m), n[m],
               COLO_TO_MS(time[m]), 100.0 * (double)time[m] / (double)t->kernel_time);
        if (cudnn[m] || cublas[m])
            printf("  (cuDNN convolutions and RNNs %zu, cuBLAS matmuls %zu)", cudnn[m], cublas[m]);
        printf("\n");
    }
}

/* Each distinct kernel name once: its class, kind, the rule that gave it, count and time. */
static void print_classes(const colo_trace_t *t)
{
    static const char *const kinds[] = {"other", "cuDNN", "cuBLAS"};
    printf("  %-7s %-6s %6s %10s  %-28s %s\n", "class", "kind", "count", "ms", "rule", "kernel");
    for (size_t i = 0; i < t->n_ops; i++) {
        const colo_op_t *op = &t->ops[i];
        if (op->type != COLO_OP_KERNEL) continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->ops[j].type == COLO_OP_KERNEL && strcmp(t->ops[j].name, op->name) == 0;
        if (seen) continue;
        size_t count = 0;
        colo_time_t time = 0;
        for (size_t j = i; j < t->n_ops; j++)
            if (t->ops[j].type == COLO_OP_KERNEL && strcmp(t->ops[j].name, op->name) == 0) {
                count++;
                time += t->ops[j].duration;
            }
        printf("  %-7s %-6s %6zu %10.3f  %-28.28s %s\n", colo_math_name(op->cls.math),
               kinds[op->cls.kind], count, COLO_TO_MS(time), op->cls.rule, op->name);
    }
}

/* One place of gpu: a row of the --on table. */
static int print_place(const colo_tenant_cfg_t *c, const colo_gpu_t *g, const char *label,
                       colo_place_rates_t pr, int batch, double whole, colo_error_t *err)
{
    colo_time_t req, ker;
    int rc = colo_request_time(c, g, pr, batch, &req, &ker, err);
    if (rc) return rc;
    printf("    %-16s %4d %11.3f %11.3f %13.1f %9.2f\n", label, pr.sms, COLO_TO_MS(ker),
           COLO_TO_MS(req), batch / COLO_TO_S(req), whole > 0 ? COLO_TO_MS(req) / whole : 1.0);
    return 0;
}

/* The trace on gpu_name: whole GPU, and with partitions each MIG profile and MPS percentage. */
static int trace_on(colo_trace_t *t, const char *gpu_name, bool partitions, int batch,
                    colo_fp32_math_t fp32, bool graphs, colo_error_t *err)
{
    colo_gpu_t *src = NULL, *g = NULL;
    int rc = colo_gpu_open(t->gpu, NULL, NULL, &src, t->path, t->gpu_line, "gpu", err);
    if (!rc) rc = colo_gpu_open(gpu_name, NULL, NULL, &g, "--on", 0, NULL, err);
    colo_variant_t v;
    colo_tenant_cfg_t c;
    colo_tenant_cfg_of_trace(&c, &v, t, src, batch, fp32, graphs);
    int b = batch ? batch : t->batch;
    if (!rc) {
        printf("  on %s (%s%s), batch %d, one request alone:\n", g->name,
               colo_fp32_math_name(fp32), graphs ? ", CUDA graphs" : "", b);
        printf("    %-16s %4s %11s %11s %13s %9s\n", "place", "SMs", "kernels ms", "request ms",
               "samples/s", "x whole");
        colo_place_rates_t whole = colo_place_rates_of(g, NULL, 0);
        colo_time_t req, plain = 0;
        rc = colo_request_time(&c, g, whole, batch, &req, NULL, err);
        c.cuda_graphs = false;
        if (!rc && graphs) rc = colo_request_time(&c, g, whole, batch, &plain, NULL, err);
        c.cuda_graphs = graphs;
        if (!rc) rc = print_place(&c, g, "whole GPU", whole, b, 0, err);
        for (size_t i = 0; partitions && !rc && i < g->mig.n_profiles; i++) {
            const colo_mig_profile_t *p = &g->mig.profiles[i];
            if (strstr(p->name, "+me")) continue; /* the same as the profile without +me */
            char label[64];
            snprintf(label, sizeof label, "MIG %s", p->name);
            rc = print_place(&c, g, label, colo_place_rates_of(g, p, 0), b, COLO_TO_MS(req), err);
        }
        for (int pct = 10; partitions && !rc && pct <= 100; pct += 10) {
            char label[64];
            snprintf(label, sizeof label, "MPS %d %%", pct);
            int cap = colo_layout_mps_cap(g, g->sm.count, pct);
            rc = print_place(&c, g, label, colo_place_rates_of(g, NULL, cap), b, COLO_TO_MS(req),
                             err);
        }
        if (!rc && graphs && plain == req)
            printf("    As fast without a graph: the host launches each kernel before the one "
                   "before it ends.\n");
    }
    colo_gpu_free(src);
    colo_gpu_free(g);
    return rc;
}

/* Predicts trace real (its GPU, its batch) from trace t and prints predicted against measured
 * kernel time by math class (of t's kernels) and in all. */
static int trace_against(colo_trace_t *t, const char *real_path, colo_fp32_math_t fp32,
                         colo_error_t *err)
{
    colo_trace_t *real = NULL;
    colo_gpu_t *src = NULL, *dst = NULL;
    int rc = colo_trace_load(real_path, &real, err);
    if (!rc) rc = colo_gpu_open(t->gpu, NULL, NULL, &src, t->path, t->gpu_line, "gpu", err);
    if (!rc) rc = colo_gpu_open(real->gpu, NULL, NULL, &dst, real->path, real->gpu_line, "gpu", err);
    if (rc) goto out;
    double pred[COLO_MATH_CLASSES] = {0}, meas[COLO_MATH_CLASSES] = {0}, p_all = 0;
    double f = (double)real->batch / (double)t->batch;
    colo_place_rates_t whole = colo_place_rates_of(dst, NULL, 0);
    for (size_t i = 0; i < t->n_ops && !rc; i++) {
        if (t->ops[i].type != COLO_OP_KERNEL) continue;
        colo_kernel_work_t w, wb;
        if ((rc = colo_kernel_work(&t->ops[i], src, dst, fp32, &w, t->path, i, err))) break;
        colo_kernel_at_batch(&w, f, &wb);
        double d = colo_kernel_alone_at(&wb, whole.sms, whole.dram_rate, whole.l2_rate) -
                   wb.dispatch_ns;
        pred[wb.math] += d; /* the class it runs as on REAL's GPU */
        p_all += d;
    }
    for (size_t i = 0; i < real->n_ops; i++)
        if (real->ops[i].type == COLO_OP_KERNEL)
            meas[colo_gpu_math_runs_as(dst, real->ops[i].cls.math)] +=
                (double)real->ops[i].duration;
    if (rc) goto out;
    double m_all = (double)real->kernel_time;
    printf("  %s predicted from it (%s on %s at batch %d, fp32_math %s):\n", real_path, t->model,
           dst->name, real->batch, colo_fp32_math_name(fp32));
    if (strcmp(t->model, real->model) != 0)
        printf("    note: %s is a trace of %s, not %s: this compares two models\n", real_path,
               real->model, t->model);
    printf("    %-8s %12s %12s %8s\n", "class", "predicted ms", "measured ms", "error");
    for (int m = COLO_MATH_MEMORY; m < COLO_MATH_CLASSES; m++)
        if (pred[m] > 0 || meas[m] > 0)
            printf("    %-8s %12.3f %12.3f %7.1f%%\n", colo_math_name((colo_math_t)m), pred[m] / 1e6,
                   meas[m] / 1e6, meas[m] > 0 ? 100 * (pred[m] - meas[m]) / meas[m] : 0.0);
    printf("    %-8s %12.3f %12.3f %7.1f%%\n", "all", p_all / 1e6, m_all / 1e6,
           100 * (p_all - m_all) / m_all);
    printf("    (by the class each kernel runs as on %s: FILE's as moved there, REAL's as traced)\n",
           dst->name);
out:
    colo_trace_free(real);
    colo_gpu_free(src);
    colo_gpu_free(dst);
    return rc;
}

static int cmd_trace(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"classes", no_argument, NULL, 'c'},     {"on", required_argument, NULL, 'g'},
        {"partitions", no_argument, NULL, 'p'},  {"batch", required_argument, NULL, 'b'},
        {"fp32-math", required_argument, NULL, 'f'}, {"cuda-graphs", no_argument, NULL, 'G'},
        {"against", required_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *against = NULL;
    bool classes = false, partitions = false, graphs = false;
    const char *on = NULL;
    long batch = 0;
    colo_fp32_math_t fp32 = COLO_FP32_PYTORCH;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 'c':
            classes = true;
            break;
        case 'g':
            on = optarg;
            break;
        case 'p':
            partitions = true;
            break;
        case 'G':
            graphs = true;
            break;
        case 'a':
            against = optarg;
            break;
        case 'b':
            batch = strtol(optarg, &end, 10);
            if (*end || batch < 1 || batch > COLO_MAX_BATCH)
                return usage_error(usage_trace, "--batch takes 1 to %d, not '%s'", COLO_MAX_BATCH,
                                   optarg);
            break;
        case 'f':
            if ((fp32 = colo_fp32_math_parse(optarg)) == COLO_FP32_POLICIES)
                return usage_error(usage_trace, "--fp32-math is pytorch, fp32 or tf32, not '%s'",
                                   optarg);
            break;
        case 'h':
            fputs(usage_trace, stdout);
            return 0;
        default:
            return usage_error(usage_trace, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 1) return usage_error(usage_trace, "%s", "exactly one trace FILE, please");
    if (!on && (partitions || batch || graphs))
        return usage_error(usage_trace, "%s goes with --on (--against predicts REAL at its own batch)",
                           partitions ? "--partitions" : batch ? "--batch" : "--cuda-graphs");
    if (!on && !against && fp32 != COLO_FP32_PYTORCH)
        return usage_error(usage_trace, "%s", "--fp32-math goes with --on or --against");
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    const char *file = argv[optind];
    int rc = colo_trace_load(file, &t, &err);
    if (rc) {
        print_error(&err);
        return exit_for(rc);
    }
    /* every GPU named, and the other trace, before anything is printed */
    char list[1024];
    snprintf(list, sizeof list, "%s", on ? on : "");
    if (on && (!*on || on[strlen(on) - 1] == ',' || strstr(on, ",,") || *on == ',')) {
        colo_trace_free(t);
        return usage_error(usage_trace, "--on '%s' names an empty GPU", on);
    }
    char probe[1024];
    snprintf(probe, sizeof probe, "%s", list);
    char *psave = NULL;
    for (char *g = strtok_r(probe, ",", &psave); g && !rc; g = strtok_r(NULL, ",", &psave)) {
        colo_gpu_t *gpu = NULL;
        rc = colo_gpu_open(g, NULL, NULL, &gpu, "--on", 0, NULL, &err);
        colo_gpu_free(gpu);
    }
    colo_trace_t *real = NULL;
    if (!rc && against) rc = colo_trace_load(against, &real, &err);
    colo_trace_free(real);
    if (rc) {
        print_error(&err);
        colo_trace_free(t);
        return exit_for(rc);
    }
    printf("%s: %s, batch %d, measured on %s\n", file, t->model, t->batch, t->gpu);
    printf("  %zu kernels, %.3f ms of kernel time; %zu copies (%lld bytes H2D, %lld bytes D2H)\n",
           t->n_kernels, COLO_TO_MS(t->kernel_time), t->n_copies, t->copy_bytes[COLO_COPY_H2D],
           t->copy_bytes[COLO_COPY_D2H]);
    const char *k;
    json_t *v;
    json_object_foreach(t->provenance, k, v)
    {
        char *s = json_dumps(v, JSON_ENCODE_ANY);
        printf("  %-12s %s\n", k, json_is_string(v) ? json_string_value(v) : s ? s : "?");
        colo_free(s);
    }
    print_class_mix(t);
    if (classes) print_classes(t);
    char *save = NULL;
    for (char *g = strtok_r(list, ",", &save); g && !rc; g = strtok_r(NULL, ",", &save))
        rc = trace_on(t, g, partitions, (int)batch, fp32, graphs, &err);
    if (!rc && against) rc = trace_against(t, against, fp32, &err);
    if (rc) print_error(&err);
    colo_trace_free(t);
    return rc ? exit_for(rc) : 0;
}

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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *model = NULL, *gpu = NULL, *annotation = NULL, *ncu = NULL;
    colo_orion_rows_t rows = {0, 0};
    long batch = 0, occurrence = 1;
    int all = 0;
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
        case 'N':
            ncu = optarg;
            break;
        case 'r':
            rows.first = strtol(optarg, &end, 10);
            rows.last = *end == '-' ? strtol(end + 1, &end, 10) : *end ? -1 : rows.first;
            if (*end || end == optarg || rows.first < 1 || rows.last < rows.first)
                return usage_error(usage_import, "--rows takes FIRST-LAST or ROW (from 1), not '%s'",
                                   optarg);
            break;
        case 'b':
        case 'n': {
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 1000000)
                return usage_error(usage_import, "--%s takes a positive integer, not '%s'",
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
            return usage_error(usage_import, "unknown or incomplete option '%s'", argv[optind - 1]);
        }
    }
    if (argc - optind != 2)
        return usage_error(usage_import, "%s", "expected: import KIND FILE -o TRACE.json");
    const char *kind = argv[optind], *in = argv[optind + 1];
    if (strcmp(kind, "orion") && strcmp(kind, "kineto") && strcmp(kind, "nsys") &&
        strcmp(kind, "capture"))
        return usage_error(usage_import, "unknown kind '%s' (orion, kineto, nsys or capture)",
                           kind);
    if (!out) return usage_error(usage_import, "%s", "-o TRACE.json is required");
    if (same_file(out, in))
        return usage_error(usage_import, "-o %s would overwrite the input itself", out);
    if (all && (strcmp(kind, "capture") || !annotation))
        return usage_error(usage_import, "%s", "--all is for capture files with --annotation");
    if (all && ncu)
        return usage_error(usage_import, "%s", "--ncu merges into one trace: not with --all");
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t **ts = NULL;
    size_t nt = 0;
    int rc;
    if (access(in, R_OK) != 0) { /* before anything is guessed from its name */
        colo_error_set(&err, COLO_EIO, in, 0, NULL, "cannot open: %s", strerror(errno));
        print_error(&err);
        return exit_for(COLO_EIO);
    }
    if (!strcmp(kind, "orion")) {
        char guessed[256];
        int gb = colo_orion_guess_name(in, guessed, sizeof guessed);
        if (!model && gb) model = guessed;
        if (!batch) batch = gb;
        if (!gpu) gpu = "v100-sxm2";
        if (!model || !batch)
            return usage_error(usage_import,
                               "cannot tell model and batch from '%s': give --model and --batch",
                               in);
        colo_gpu_t *g = NULL;
        rc = colo_gpu_open(gpu, NULL, "none", &g, "--gpu", 0, NULL, &err);
        if (!rc && !(ts = colo_calloc(1, sizeof *ts))) rc = COLO_ENOMEM;
        if (!rc && !(rc = colo_import_orion(in, model, (int)batch, g, &rows, &ts[0], &err))) nt = 1;
        colo_gpu_free(g);
    } else {
        if (rows.first) return usage_error(usage_import, "%s", "--rows is for orion profiles");
        colo_kineto_opts_t ko = {model, (int)batch, gpu, annotation, all ? 0 : (int)occurrence};
        if (!strcmp(kind, "capture")) {
            rc = colo_import_capture(in, &ko, &ts, &nt, &err);
        } else {
            if (!(ts = colo_calloc(1, sizeof *ts))) rc = COLO_ENOMEM;
            else rc = strcmp(kind, "nsys") ? colo_import_kineto(in, &ko, &ts[0], &err)
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
    }
    if (rc) print_error(&err);
    colo_capture_free(ts, nt);
    return rc ? exit_for(rc) : 0;
}

/* colosim calibrate import gpu-benches DIR --gpu NAME ... */
static int cmd_calibrate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},   {"gpu", required_argument, NULL, 'g'},
        {"stem", required_argument, NULL, 's'},     {"commit", required_argument, NULL, 'c'},
        {"repository", required_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
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
                return usage_error(usage_calibrate, "--stem takes a file name stem, not '%s'",
                                   optarg);
            o.stem = optarg;
            break;
        case 'r':
            o.repository = optarg;
            break;
        case 'c':
            if (!*optarg || optarg[strlen(optarg) - 1] == '=')
                return usage_error(usage_calibrate, "--commit takes REV or PATH=REV, not '%s'",
                                   optarg);
            if (!strchr(optarg, '='))
                o.commit = optarg;
            else if (n_fc == sizeof file_commits / sizeof file_commits[0])
                return usage_error(usage_calibrate, "%s", "at most 32 --commit PATH=REV");
            else
                file_commits[n_fc++] = optarg;
            break;
        case 'h':
            fputs(usage_calibrate, stdout);
            return 0;
        default:
            return usage_error(usage_calibrate, "unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (argc - optind != 3 || strcmp(argv[optind], "import") != 0)
        return usage_error(usage_calibrate, "%s", "expected: calibrate import gpu-benches DIR");
    if (strcmp(argv[optind + 1], "gpu-benches") != 0)
        return usage_error(usage_calibrate, "unknown source '%s' (known: gpu-benches)",
                           argv[optind + 1]);
    o.dir = argv[optind + 2];
    if (!gpu_name) return usage_error(usage_calibrate, "%s", "--gpu NAME is required");
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
        print_error(&err);
        return EXIT_INPUT;
    }
    colo_gpu_t *g = NULL, *check = NULL;
    json_t *doc = NULL;
    colo_atomic_file_t af = {0};
    int rc = colo_gpu_open(gpu_name, NULL, "none", &g, "--gpu", 0, NULL, &err);
    if (!rc) rc = colo_gb_import(&o, g, &doc, &err);
    /* Written beside its destination, checked as the simulator will load it, then renamed. */
    if (!rc) rc = colo_atomic_open(&af, out, &err);
    if (!rc && (json_dumpf(doc, af.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) ||
                fputc('\n', af.f) == EOF || fflush(af.f)))
        rc = colo_error_set(&err, COLO_EIO, out, 0, NULL, "write error");
    if (!rc && af.tmp) {
        rc = colo_gpu_open(gpu_name, NULL, "none", &check, "--gpu", 0, NULL, &err);
        if (!rc) rc = colo_calibration_apply(check, af.tmp, &err);
    }
    const int to_file = af.tmp != NULL;
    if (!rc) rc = colo_atomic_commit(&af, &err);
    else colo_atomic_abort(&af);
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
    if (rc) print_error(&err);
    json_decref(doc);
    colo_gpu_free(g);
    colo_gpu_free(check);
    return rc ? exit_for(rc) : 0;
}

/* colosim validate [DIR] ... */
static int cmd_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"markdown", required_argument, NULL, 'm'},
        {"check", required_argument, NULL, 'c'},  {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *md = NULL, *check = NULL, *dir = "validation";
    bool quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'm':
            md = optarg;
            break;
        case 'c':
            check = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            fputs(usage_validate, stdout);
            return 0;
        default:
            return usage_error(usage_validate, "unknown or incomplete option '%s'",
                               argv[optind - 1]);
        }
    }
    if (argc - optind > 1) return usage_error(usage_validate, "%s", "at most one folder");
    struct stat st;
    if (argc - optind == 1)
        dir = argv[optind];
    else if (stat(dir, &st) != 0) /* not run from the source tree: the suite it was built from */
        dir = COLO_SOURCE_VALIDATION_DIR;
    colo_error_t err;
    colo_error_clear(&err);
    colo_vsuite_t *s = NULL;
    json_t *doc = NULL;
    int rc = colo_vsuite_load(dir, &s, &err);
    if (!rc) rc = colo_vsuite_run(s, &err);
    if (!rc && out && !(doc = colo_vsuite_json(s)))
        rc = colo_error_set(&err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    int failed = 0;
    if (!rc && check) { /* before anything is written over the record */
        failed = colo_vsuite_check(s, check, 0.01, stderr, &err);
        if (failed < 0) rc = failed;
    }
    if (!rc && failed && (out || md)) /* a table that failed its check does not replace one */
        fprintf(stderr, "colosim validate: the check failed: %s not written\n",
                out && md ? "-o and --markdown" : out ? "-o" : "--markdown");
    if (!rc && out && !failed) {
        colo_atomic_file_t af;
        rc = colo_atomic_open(&af, out, &err);
        if (!rc) {
            if (json_dumpf(doc, af.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) ||
                fputc('\n', af.f) == EOF) {
                colo_atomic_abort(&af);
                rc = colo_error_set(&err, COLO_EIO, out, 0, NULL, "write error");
            } else {
                rc = colo_atomic_commit(&af, &err);
            }
        }
    }
    if (!rc && md && !failed) rc = colo_vsuite_markdown(s, md, &err);
    if (rc) {
        print_error(&err);
    } else if (quiet) {
        size_t n;
        double med = colo_vsuite_median(s, false, &n);
        if (n)
            printf("%zu validation cases: median |error| %.1f %%\n", n, 100 * med);
        else
            printf("no validation cases (only calibration cases)\n");
    } else {
        colo_vsuite_print(s, stdout);
    }
    if (!rc && check)
        fprintf(failed ? stderr : stdout, "check against %s: %s\n", check,
                failed ? "FAILED" : "no case got worse");
    json_decref(doc);
    colo_vsuite_free(s);
    return rc ? (rc == COLO_ENOMEM ? 1 : EXIT_INPUT) : failed ? 1 : 0;
}

static int cmd_compare(int argc, char **argv)
{
    const char *out = NULL;
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0}};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        if (ch == 'h') {
            fputs(usage_compare, stdout);
            return 0;
        }
        if (ch == 'o') {
            out = optarg;
            continue;
        }
        return usage_error(usage_compare, "%s '%s'",
                           ch == ':' ? "missing value for option" : "unknown option",
                           argv[optind - 1]);
    }
    if (argc - optind < 1) return usage_error(usage_compare, "no results files given");
    colo_compare_t c = {0};
    colo_error_t err;
    colo_error_clear(&err);
    int rc = 0;
    for (int i = optind; i < argc && !rc; i++) {
        if (out && same_file(out, argv[i]))
            rc = colo_error_set(&err, COLO_EINVAL, out, 0, NULL,
                                "is one of the results files: refusing to overwrite it");
        else
            rc = colo_compare_load(&c, argv[i], &err);
    }
    json_t *doc = NULL;
    if (!rc && out) {
        if (!(doc = colo_compare_json(&c)))
            rc = colo_error_set(&err, COLO_ENOMEM, out, 0, NULL, "out of memory");
        else
            rc = colo_results_write(doc, out, &err);
    }
    int status = 0;
    if (rc) {
        print_error(&err);
        status = exit_for(rc);
    } else {
        colo_compare_print(&c, stdout);
    }
    json_decref(doc);
    colo_compare_fini(&c);
    return status;
}


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
                return usage_error(usage, "-j: '%s' is not a number of jobs (1 to 4096)", optarg);
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
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            fputs(usage, stderr);
            return EXIT_INPUT;
        }
    }
    if (optind != argc - 1) return usage_error(usage, "%s", "expected one study file");
    o->file = argv[optind];
    o->so.progress = !o->so.quiet && isatty(2);
    return 0;
}

/* Draws the sweep's plot from the study's plot section, or sensible defaults. */
static int plot_sweep_of(const colo_study_t *s, const char *dir, const char *x, const char *by,
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
    if (!x) rc = colo_error_set(err, COLO_EINVAL, path, 0, NULL, "the study has no axis to plot against");
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
            print_error(&err);
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
        print_error(&err);
        colo_study_free(s);
#ifdef COLOSIM_HAVE_MPI
        if (mpi) colo_mpi_end();
#endif
        return exit_for(rc);
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
            rc = plot_sweep_of(s, dir, NULL, NULL, NULL, &err);
        }
    }
    colo_study_free(s);
#ifdef COLOSIM_HAVE_MPI
    if (mpi) colo_mpi_end();
#endif
    if (rc) {
        print_error(&err);
        return exit_for(rc);
    }
    return stopped_after_writing(0);
}

static int cmd_plot(int argc, char **argv)
{
    static const struct option longs[] = {{"x", required_argument, NULL, 'x'},
                                          {"by", required_argument, NULL, 'b'},
                                          {"y", required_argument, NULL, 'y'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *x = NULL, *by = NULL, *y = NULL, *out = NULL;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'x': x = optarg; break;
        case 'b': by = optarg; break;
        case 'y': y = optarg; break;
        case 'o': out = optarg; break;
        case 'h': fputs(usage_plot, stdout); return 0;
        default: fputs(usage_plot, stderr); return EXIT_INPUT;
        }
    }
    if (optind != argc - 2) return usage_error(usage_plot, "%s", "expected KIND and an input");
    const char *kind = argv[optind], *in = argv[optind + 1];
    bool is_sweep = strcmp(kind, "sweep") == 0, is_search = strcmp(kind, "search") == 0;
    if (!is_sweep && !is_search && strcmp(kind, "cdf") != 0)
        return usage_error(usage_plot, "unknown plot '%s' (sweep, search or cdf)", kind);
    /* a study's output folder, or the JSON file itself */
    char path[4096], base[4200];
    struct stat st;
    bool is_dir = stat(in, &st) == 0 && S_ISDIR(st.st_mode);
    if (is_dir) snprintf(path, sizeof path, "%s/%s.json", in, kind);
    else snprintf(path, sizeof path, "%s", in);
    colo_error_t err;
    colo_error_clear(&err);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    int rc = 0;
    if (!doc) {
        colo_error_set(&err, COLO_EIO, path, je.line, NULL, "%s", je.text);
        print_error(&err);
        return EXIT_INPUT;
    }
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, sizeof dir, ".");
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
            rc = plot_sweep_of(NULL, dir, x, by, y, &err);
        }
    } else {
        if (out) snprintf(base, sizeof base, "%s", out);
        else if (is_search) snprintf(base, sizeof base, "%s/search", dir);
        else {
            snprintf(base, sizeof base, "%s", path);
            size_t n = strlen(base);
            if (n > 5 && strcmp(base + n - 5, ".json") == 0) base[n - 5] = '\0';
            strncat(base, "_cdf", sizeof base - strlen(base) - 1);
        }
        json_t *run = json_object_get(doc, "results"); /* a sweep's point file holds one */
        rc = is_search ? colo_plot_search(doc, base, &err)
                       : colo_plot_cdf(run ? run : doc, base, &err);
        if (!rc) printf("plot written to %s.svg and %s.png\n", base, base);
    }
    json_decref(doc);
    if (rc) {
        print_error(&err);
        return rc == COLO_EINVAL ? EXIT_INPUT : 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    json_set_alloc_funcs(colo_malloc, colo_free);
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_INPUT;
    }
    const char *cmd = argv[1];
    colo_atomic_remove_on_signal(); /* a killed command leaves no temporary file behind */
    if (strcmp(cmd, "run") == 0 || strcmp(cmd, "sweep") == 0 || strcmp(cmd, "search") == 0)
        colo_stop_install(); /* a stopped run writes all its outputs whole, or none */
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "plan") == 0) return cmd_plan(argc - 1, argv + 1);
    if (strcmp(cmd, "live") == 0) {
        /* The GPU backend lives in colosim-live (CUDA); this binary has the CPU stand-in. */
        static const colo_live_backend_t *const backends[] = {&colo_live_cpu_backend};
        static const char *const self[] = {"/proc/self/exe", "live"};
        return colo_live_main(argc - 1, argv + 1, "colosim live", self, 2, backends, 1);
    }
    if (strcmp(cmd, "compare") == 0) return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0) return cmd_study(argc - 1, argv + 1, false);
    if (strcmp(cmd, "search") == 0) return cmd_study(argc - 1, argv + 1, true);
    if (strcmp(cmd, "plot") == 0) return cmd_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "gpus") == 0) return cmd_gpus(argc - 1, argv + 1);
    if (strcmp(cmd, "import") == 0) return cmd_import(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0) return cmd_calibrate(argc - 1, argv + 1);
    if (strcmp(cmd, "validate") == 0) return cmd_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "trace") == 0) return cmd_trace(argc - 1, argv + 1);
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("colosim %s\n", COLO_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        const char *topic = argc > 2 ? argv[2] : "";
        fputs(strcmp(topic, "run") == 0      ? usage_run
              : strcmp(topic, "check") == 0  ? usage_check
              : strcmp(topic, "plan") == 0   ? usage_plan
              : strcmp(topic, "live") == 0   ? "usage: colosim live FILE [options]: see colosim live --help\n"
              : strcmp(topic, "compare") == 0 ? usage_compare
              : strcmp(topic, "sweep") == 0  ? usage_sweep
              : strcmp(topic, "search") == 0 ? usage_search
              : strcmp(topic, "plot") == 0   ? usage_plot
              : strcmp(topic, "gpus") == 0   ? usage_gpus
              : strcmp(topic, "import") == 0 ? usage_import
              : strcmp(topic, "calibrate") == 0 ? usage_calibrate
              : strcmp(topic, "validate") == 0 ? usage_validate
              : strcmp(topic, "trace") == 0  ? usage_trace
                                             : usage_main,
              stdout);
        return 0;
    }
    fprintf(stderr, "colosim: unknown command '%s'\n\n%s", cmd, usage_main);
    return EXIT_INPUT;
}
