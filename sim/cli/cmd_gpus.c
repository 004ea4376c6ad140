/* cmd_gpus.c: colosim gpus: the GPU descriptions, or one in full. */
#include "cli.h"
#include "calibration.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

static const char usage_gpus[] =
    "usage: colosim gpus [NAME [--calibration FILE|none]]\n"
    "\n"
    "Without NAME, lists the GPU descriptions found. With NAME (or a path to a .cfg file),\n"
    "prints that GPU's parameters and its MIG profiles with their placements. Values measured by\n"
    "its calibration file (models/calibrated/NAME.json, or --calibration FILE) replace the\n"
    "datasheet's and are listed with the values they replace; --calibration none shows the\n"
    "datasheet's alone (docs/calibration.md).\n";

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
            const char *src =
                json_string_value(json_object_get(json_object_get(v, "source"), "path"));
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
        printf("  calibrated  %s (%s, %s); measured values below replace:\n", g->calibration.path,
               g->calibration.device, g->calibration.date);
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
    if (g->mps.volta)
        printf("  MPS         %d clients (%d from CUDA 13.1), SM granularity %d\n",
               g->mps.max_clients, g->mps.max_clients_cuda_13_1, g->mps.sm_granularity);
    else
        printf("  MPS         pre-Volta: %d clients, no per-client SM limits\n",
               g->mps.max_clients);
    if (g->green.supported)
        printf("  green ctx   at least %d SMs, in multiples of %d\n", g->green.min_sms,
               g->green.alignment);
    else
        printf("  green ctx   not supported\n");
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
        return colo_cli_usage_error(usage_gpus, "%s",
                                    "at most one GPU name, then --calibration FILE|none");
    colo_error_t err;
    colo_error_clear(&err);
    if (argc >= 2) {
        colo_gpu_t *g;
        int rc = colo_gpu_open(argv[1], NULL, cal, &g, "colosim gpus", 0, NULL, &err);
        if (rc) {
            colo_cli_print_error(&err);
            return colo_cli_exit_for(rc);
        }
        print_gpu(g);
        colo_gpu_free(g);
        return 0;
    }
    const char *data = getenv("COLOSIM_DATA_DIR");
    char dgpus[4200];
    struct stat ds;
    snprintf(dgpus, sizeof dgpus, "%s/gpus", data ? data : "");
    if (data && *data && (stat(dgpus, &ds) != 0 || !S_ISDIR(ds.st_mode)))
        fprintf(stderr, "colosim: warning: COLOSIM_DATA_DIR=%s has no gpus/ folder; the GPUs below "
                        "come from elsewhere\n",
                data);
    char **names;
    size_t n;
    if (colo_gpu_names(&names, &n)) {
        fprintf(stderr, "colosim: out of memory\n");
        return 1;
    }
    if (!n) { /* an install without its data must not look like an empty catalogue */
        char where[2048];
        colo_gpu_search_path(where, sizeof where);
        fprintf(stderr,
                "colosim: no GPU descriptions found in %s; set COLOSIM_DATA_DIR to the folder "
                "holding gpus/ (an installed prefix's share/colosim)\n",
                where);
        colo_gpu_names_free(names, n);
        return EXIT_INPUT;
    }
    int w = 11; /* the name column: as wide as the longest name */
    for (size_t i = 0; i < n; i++)
        if ((int)strlen(names[i]) > w) w = (int)strlen(names[i]);
    printf("%-*s %-30s %4s %9s %-7s %9s %6s  %-11s %s\n", w, "name", "GPU", "SMs", "memory", "",
           "DRAM GB/s", "L2 MB", "MIG", "calibrated");
    int status = 0;
    for (size_t i = 0; i < n; i++) {
        colo_gpu_t *g;
        colo_error_clear(&err);
        if (colo_gpu_open(names[i], NULL, NULL, &g, "colosim gpus", 0, NULL, &err)) {
            colo_cli_print_error(&err);
            status = EXIT_INPUT;
            continue;
        }
        char mig[32] = "no";
        if (g->mig.supported) snprintf(mig, sizeof mig, "%zu profiles", g->mig.n_profiles);
        printf("%-*s %-30s %4d %5.0f GiB %-7s %9.0f %6.1f  %-11s %s\n", w, g->name, g->full_name,
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

const colo_cli_command_t colo_cli_gpus = {"gpus", usage_gpus, cmd_gpus, false};
