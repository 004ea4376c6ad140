/* calibrate.cu: colosim-calibrate measures the parameters docs/model.md takes from calibration
 * on the GPU it runs on and writes a calibration file (docs/calibration.md) with every raw
 * sample beside the summaries.
 *
 * Each measurement is repeated; a parameter is the median of its repeats, with min and max. Each
 * checks itself against the GPU description's datasheet values and against physics (no rate
 * above its peak, bandwidth that grows with SMs); failures are listed under "checks" and make the
 * exit status 3, but the file is still written so that the raw samples can be looked at.
 *
 * Exit status: 0 written; 2 bad arguments; 3 written, some checks failed; 77 no usable GPU;
 * 1 other error (nothing written).
 *
 * This file holds the options, the recording of parameters and checks, and the writing of the
 * file; the kernels are in calibrate_kernels.cu, the measurements in calibrate_rates.cu (the GPU
 * by itself) and calibrate_sharing.cu (the GPU shared). */
#include "calibrate.cuh"
#include "device_json.h"

extern "C" {
#include "atomic_file.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"
}

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <jansson.h>

#include <algorithm>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <vector>

/* ---- options and output ---- */

opts O;
static json_t *g_params, *g_checks;
json_t *g_meas;
const colo_gpu_t *g_gpu; /* datasheet values */
cudaDeviceProp g_prop;
static int g_failed;

double colo_calib_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool wanted(const char *name)
{
    if (!O.only) return true;
    size_t n = strlen(name);
    for (const char *p = O.only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0) return true;
        p += len + (p[len] == ',');
    }
    return false;
}

summary colo_calib_summarise(std::vector<double> v)
{
    summary s = {NAN, NAN, NAN};
    if (v.empty()) return s;
    gsl_sort(v.data(), 1, v.size());
    s.median = gsl_stats_median_from_sorted_data(v.data(), 1, v.size());
    s.min = v.front();
    s.max = v.back();
    return s;
}

json_t *colo_calib_samples_json(const std::vector<double> &v)
{
    json_t *a = json_array();
    for (double x : v)
        json_array_append_new(a, json_real(x));
    return a;
}

void colo_calib_check(const char *name, bool ok, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    json_array_append_new(g_checks,
                          json_pack("{s:s,s:b,s:s}", "name", name, "passed", ok, "detail", text));
    fprintf(stderr, "  check %-28s %s  %s\n", name, ok ? "ok  " : "FAIL", text);
    if (!ok) g_failed = 1;
}

/* Records a parameter: its median over the repeats, the spread, the datasheet value. */
void colo_calib_param(const char *key, const char *unit, const std::vector<double> &v,
                      double datasheet, const char *method)
{
    summary s = colo_calib_summarise(v);
    json_t *p = json_pack("{s:s,s:f,s:s,s:f,s:f,s:f,s:f,s:i,s:o,s:s}", "key", key, "value",
                          s.median, "unit", unit, "median", s.median, "min", s.min, "max", s.max,
                          "spread", s.median > 0 ? (s.max - s.min) / s.median : 0.0, "repeats",
                          (int)v.size(), "samples", colo_calib_samples_json(v), "method", method);
    json_object_set_new(p, "datasheet", datasheet > 0 ? json_real(datasheet) : json_null());
    json_array_append_new(g_params, p);
    fprintf(stderr, "  %-30s %12.4g %-8s (min %.4g, max %.4g, n=%zu; datasheet %.4g)\n", key,
            s.median, unit, s.min, s.max, v.size(), datasheet);
}

/* ---- helpers ---- */

int colo_calib_distinct(const std::vector<unsigned> &v)
{
    std::vector<unsigned> s(v);
    std::sort(s.begin(), s.end());
    return (int)(std::unique(s.begin(), s.end()) - s.begin());
}

/* ---- main ---- */

static const char usage[] =
    "usage: colosim-calibrate [--gpu NAME] [-o FILE] [--repeats N] [--quick] [--only LIST]\n"
    "                         [--device N]\n"
    "       colosim-calibrate --guess-gpu [--device N]\n"
    "Measures the GPU's rates and latencies and writes a colosim calibration file\n"
    "(docs/calibration.md): by default calibrated-NAME.json, where NAME is the GPU description\n"
    "it calibrates (guessed from the device's name; --gpu names it).\n"
    "  --repeats N   repeats per measurement (default 7); each parameter is their median\n"
    "  --quick       smaller sizes and fewer iterations: a smoke run of a minute\n"
    "  --only LIST   some of: fp32,tensor,dram,l2,launch,pcie,corun,green,timeslice\n"
    "  --guess-gpu   print the GPU description of the device (from its name, memory and SMs)\n"
    "                and exit: 0, or 2 when colosim has none\n"
    "Exit status: 0 written; 3 written but some checks failed; 77 no usable GPU; 2 usage.\n";

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--slice-child") == 0) {
        for (int i = 4; i + 1 < argc; i++)
            if (strcmp(argv[i], "--device") == 0) O.device = atoi(argv[i + 1]);
        return colo_calib_slice_child(argv[2], atof(argv[3]));
    }
    colo_atomic_remove_on_signal(); /* killed while writing its output: no temporary file left */
    static const struct option longs[] = {{"gpu", required_argument, NULL, 'g'},
                                          {"output", required_argument, NULL, 'o'},
                                          {"repeats", required_argument, NULL, 'r'},
                                          {"quick", no_argument, NULL, 'q'},
                                          {"only", required_argument, NULL, 'n'},
                                          {"device", required_argument, NULL, 'd'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"guess-gpu", no_argument, NULL, 'G'},
                                          {NULL, 0, NULL, 0}};
    bool guess_only = false;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g':
            O.gpu = optarg;
            break;
        case 'o':
            O.out = optarg;
            break;
        case 'r':
            O.repeats = atoi(optarg);
            break;
        case 'q':
            O.quick = true;
            break;
        case 'n':
            O.only = optarg;
            break;
        case 'd':
            O.device = atoi(optarg);
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        case 'G':
            guess_only = true;
            break;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    if (optind != argc || O.repeats < 3 || O.repeats > 1000) {
        fprintf(stderr, "colosim-calibrate: %s\n%s",
                optind != argc ? "unexpected argument" : "--repeats must be 3 to 1000", usage);
        return 2;
    }
    if (O.quick && O.repeats > 5) O.repeats = 5;
    int driver = 0, runtime = 0, count = 0;
    cudaError_t e = cudaDriverGetVersion(&driver);
    if (e == cudaSuccess) e = cudaRuntimeGetVersion(&runtime);
    if (e == cudaSuccess) e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= O.device) {
        fprintf(stderr, "colosim-calibrate: no usable GPU: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no such device");
        return 77;
    }
    CK(cudaSetDevice(O.device));
    CK(cudaGetDeviceProperties(&g_prop, O.device));
    const char *gname =
        O.gpu ? O.gpu
              : colo_gpu_guess(g_prop.name, (double)g_prop.totalGlobalMem / 1073741824.0,
                               g_prop.multiProcessorCount);
    if (!gname) {
        fprintf(stderr,
                "colosim-calibrate: no GPU description for '%s' (%d SMs): give --gpu NAME "
                "(colosim gpus lists them)\n",
                g_prop.name, g_prop.multiProcessorCount);
        return 2;
    }
    if (guess_only) {
        printf("%s\n", gname);
        return 0;
    }
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *gpu;
    if (colo_gpu_open(gname, NULL, "none", &gpu, "--gpu", 0, NULL, &err)) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "colosim-calibrate: %s\n", msg);
        return 2;
    }
    if (gpu->sm.count != g_prop.multiProcessorCount) {
        fprintf(stderr,
                "colosim-calibrate: the device '%s' has %d SMs and the GPU description "
                "%s has %d: give the --gpu of this device (colosim gpus lists them)\n",
                g_prop.name, g_prop.multiProcessorCount, gname, gpu->sm.count);
        colo_gpu_free(gpu);
        return 2;
    }
    g_gpu = gpu;
    if (gpu->sm.count != g_prop.multiProcessorCount) {
        fprintf(stderr,
                "colosim-calibrate: %s has %d SMs but '%s' has %d: give --gpu for the "
                "description of this GPU\n",
                gname, gpu->sm.count, g_prop.name, g_prop.multiProcessorCount);
        return 2;
    }
    char out[512];
    if (O.out)
        snprintf(out, sizeof out, "%s", O.out);
    else
        snprintf(out, sizeof out, "calibrated-%s.json", gname);

    g_params = json_array();
    g_checks = json_array();
    g_meas = json_object();
    char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    self[sl > 0 ? sl : 0] = '\0';
    double t0 = colo_calib_now_s();
    fprintf(stderr, "colosim-calibrate: %s (%d SMs) as %s, %d repeats%s\n", g_prop.name,
            g_prop.multiProcessorCount, gname, O.repeats, O.quick ? ", quick" : "");
    /* Two processes first, before this one holds GPU memory and clocks. */
    if (wanted("timeslice")) fprintf(stderr, "timeslice\n"), colo_calib_measure_timeslice(self);
    if (wanted("fp32")) fprintf(stderr, "fp32\n"), colo_calib_measure_fp32();
    if (wanted("tensor")) fprintf(stderr, "tensor\n"), colo_calib_measure_tensor();
    if (wanted("dram")) fprintf(stderr, "dram\n"), colo_calib_measure_dram();
    if (wanted("l2")) fprintf(stderr, "l2\n"), colo_calib_measure_l2();
    if (wanted("launch")) fprintf(stderr, "launch\n"), colo_calib_measure_launch();
    if (wanted("pcie")) fprintf(stderr, "pcie\n"), colo_calib_measure_pcie();
    if (wanted("corun")) fprintf(stderr, "corun\n"), colo_calib_measure_corun();
    if (wanted("green")) fprintf(stderr, "green\n"), colo_calib_measure_green();

    json_t *root = json_object();
    char date[32], kdrv[64], cmd[2048] = "";
    time_t now = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    kernel_driver_version(kdrv, sizeof kdrv);
    size_t used = 0;
    for (int i = 0; i < argc && used < sizeof cmd; i++)
        used += (size_t)snprintf(cmd + used, sizeof cmd - used, "%s%s", i ? " " : "", argv[i]);
    json_t *dev = device_json(O.device);
    json_object_set_new(dev, "sm_count", json_integer(g_prop.multiProcessorCount));
    json_object_set_new(dev, "driver", json_string(kdrv));
    json_object_set_new(dev, "cuda_driver",
                        json_sprintf("%d.%d", driver / 1000, (driver % 1000) / 10));
    json_object_set_new(dev, "cuda_runtime",
                        json_sprintf("%d.%d", runtime / 1000, (runtime % 1000) / 10));
    json_object_set_new(root, "colosim_calibration", json_integer(1));
    json_object_set_new(root, "gpu", json_string(gname));
    json_object_set_new(root, "device", dev);
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "command", json_string(cmd));
    json_object_set_new(root, "tool",
                        json_sprintf("colosim-calibrate, %.0f s", colo_calib_now_s() - t0));
    json_object_set_new(root, "parameters", g_params);
    json_object_set_new(root, "checks", g_checks);
    json_object_set_new(root, "measurements", g_meas);
    colo_atomic_file_t af;
    int rc = colo_atomic_open(&af, out, &err);
    if (!rc) {
        if (json_dumpf(root, af.f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8)) ||
            fputc('\n', af.f) == EOF)
            colo_atomic_abort(&af), rc = -1;
        else
            rc = colo_atomic_commit(&af, &err);
    }
    json_decref(root);
    colo_gpu_free(gpu);
    if (rc) {
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "colosim-calibrate: %s\n", msg);
        return 1;
    }
    fprintf(stderr, "colosim-calibrate: wrote %s%s\n", out,
            g_failed ? " (some checks FAILED: see \"checks\")" : "");
    return g_failed ? 3 : 0;
}
