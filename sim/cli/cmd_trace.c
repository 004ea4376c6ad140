/* cmd_trace.c: colosim trace: summarise a kernel trace, place it on other GPUs, or check it against
 * another. */
#include "cli.h"
#include "alloc.h"
#include "cmd_trace_kernels.h"
#include "errors.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "layout.h"
#include "scenario.h"
#include "serving.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_trace[] =
    "usage: colosim trace FILE [--classes] [--on GPU[,GPU...] [--partitions] [--batch N]\n"
    "                          [--fp32-math pytorch|fp32|tf32] [--cuda-graphs]\n"
    "                          [--framework F] [--precision fp16|bf16|int8|fp8]]\n"
    "                          [--against REAL.json [--fp32-math P] [--kernels[=csv]]]\n"
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
    "  --cuda-graphs  a request is one CUDA graph launch (--framework cuda_graphs)\n"
    "  --framework F  what issues the kernels: trace (its own host gaps, the default),\n"
    "                 pytorch_eager, cuda_graphs or tensorrt (docs/model.md, \"The host\")\n"
    "  --precision P  its GEMMs and convolutions at fp16, bf16, int8 or fp8 (docs/model.md,\n"
    "                 \"Precision\"); refused on a GPU without that unit\n"
    "  --against REAL a trace of the same model measured elsewhere (another GPU, another batch):\n"
    "                 predicts it from FILE and prints predicted against measured kernel time,\n"
    "                 by math class, with the error\n"
    "  --kernels      with --against: also per kernel, each of REAL's kernels beside the one of\n"
    "                 FILE it is predicted from (the i-th with the i-th when both have as many,\n"
    "                 else paired by aligning names: docs/traces.md), then the error's median\n"
    "                 and p90 and the 10 kernels that miss by the most, and the unpaired ones\n"
    "  --kernels=csv  that table alone, as CSV on standard output\n";

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
                    colo_fp32_math_t fp32, colo_framework_t fw, colo_math_t prec, colo_error_t *err)
{
    colo_gpu_t *src = NULL, *g = NULL;
    int rc = colo_gpu_open(t->gpu, NULL, NULL, &src, t->path, t->gpu_line, "gpu", err);
    if (!rc) rc = colo_gpu_open(gpu_name, NULL, NULL, &g, "--on", 0, NULL, err);
    if (!rc && prec != COLO_MATH_AUTO && g->sm.math_per_clock[prec] <= 0)
        rc = colo_error_set(err, COLO_EINVAL, "--precision", 0, NULL, "%s (%s) has no %s unit",
                            g->name, g->arch, colo_math_name(prec));
    colo_variant_t v;
    colo_tenant_cfg_t c;
    bool graphs = fw == COLO_FW_CUDA_GRAPHS;
    colo_tenant_cfg_of_trace_as(&c, &v, t, src, batch, fp32, fw, prec, rc ? NULL : g);
    int b = batch ? batch : t->batch;
    if (!rc) {
        printf("  on %s (%s%s%s), batch %d, one request alone:\n", g->name,
               prec != COLO_MATH_AUTO ? colo_math_name(prec) : colo_fp32_math_name(fp32),
               fw != COLO_FW_TRACE ? ", " : "",
               graphs                ? "CUDA graphs"
               : fw != COLO_FW_TRACE ? colo_framework_name(fw)
                                     : "",
               b);
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
            printf("    As fast without a graph at the CUDA launch rate (%.2f us a launch: "
                   "--framework tensorrt); eager PyTorch's %.1f us would not be "
                   "(--framework pytorch_eager).\n",
                   g->launch.host_us,
                   COLO_TO_MS(colo_framework_launch(COLO_FW_PYTORCH_EAGER, g, 1.0)) * 1e3);
    }
    colo_gpu_free(src);
    colo_gpu_free(g);
    return rc;
}

/* Predicts trace real (its GPU, its batch) from trace t and prints predicted against measured
 * kernel time by math class (of t's kernels) and in all; with pairing p, per kernel too (csv:
 * only that, as CSV). */
static int trace_against(colo_trace_t *t, colo_trace_t *real, const char *real_path,
                         colo_fp32_math_t fp32, const colo_cli_pairing_t *p, bool csv,
                         colo_error_t *err)
{
    colo_gpu_t *src = NULL, *dst = NULL;
    size_t nk = t->n_kernels ? t->n_kernels : 1;
    double *k_pred = colo_calloc(nk, sizeof *k_pred); /* per kernel of t */
    colo_math_t *k_math = colo_calloc(nk, sizeof *k_math);
    int rc = k_pred && k_math ? 0 : COLO_ENOMEM;
    if (!rc) rc = colo_gpu_open(t->gpu, NULL, NULL, &src, t->path, t->gpu_line, "gpu", err);
    if (!rc)
        rc = colo_gpu_open(real->gpu, NULL, NULL, &dst, real->path, real->gpu_line, "gpu", err);
    if (rc) goto out;
    double pred[COLO_MATH_CLASSES] = {0}, meas[COLO_MATH_CLASSES] = {0}, p_all = 0;
    double f = (double)real->batch / (double)t->batch;
    colo_place_rates_t whole = colo_place_rates_of(dst, NULL, 0);
    for (size_t i = 0, k = 0; i < t->n_ops && !rc; i++) {
        if (t->ops[i].type != COLO_OP_KERNEL) continue;
        colo_kernel_work_t w, wb;
        if ((rc = colo_kernel_work(&t->ops[i], src, dst, fp32, &w, t->path, i, err))) break;
        colo_kernel_at_batch(&w, f, &wb);
        double d =
            colo_kernel_alone_at(&wb, whole.sms, whole.dram_rate, whole.l2_rate) - wb.dispatch_ns;
        pred[wb.math] += d; /* the class it runs as on REAL's GPU */
        p_all += d;
        k_pred[k] = d;
        k_math[k++] = wb.math;
    }
    for (size_t i = 0; i < real->n_ops; i++)
        if (real->ops[i].type == COLO_OP_KERNEL)
            meas[colo_gpu_math_runs_as(dst, real->ops[i].cls.math)] +=
                (double)real->ops[i].duration;
    if (rc) goto out;
    double m_all = (double)real->kernel_time;
    if (!csv) {
        printf("  %s predicted from it (%s on %s at batch %d, fp32_math %s):\n", real_path,
               t->model, dst->name, real->batch, colo_fp32_math_name(fp32));
        if (strcmp(t->model, real->model) != 0)
            printf("    note: %s is a trace of %s, not %s: this compares two models\n", real_path,
                   real->model, t->model);
        printf("    %-8s %12s %12s %8s\n", "class", "predicted ms", "measured ms", "error");
        for (int m = COLO_MATH_MEMORY; m < COLO_MATH_CLASSES; m++)
            if (pred[m] > 0 || meas[m] > 0)
                printf("    %-8s %12.3f %12.3f %7.1f%%\n", colo_math_name((colo_math_t)m),
                       pred[m] / 1e6, meas[m] / 1e6,
                       meas[m] > 0 ? 100 * (pred[m] - meas[m]) / meas[m] : 0.0);
        printf("    %-8s %12.3f %12.3f %7.1f%%\n", "all", p_all / 1e6, m_all / 1e6,
               100 * (p_all - m_all) / m_all);
        printf("    (by the class each kernel runs as on %s: FILE's as moved there, REAL's as "
               "traced)\n",
               dst->name);
    }
    if (p) rc = colo_cli_trace_kernels_print(t, real, p, k_pred, k_math, dst, csv);
out:
    colo_free(k_pred);
    colo_free(k_math);
    colo_gpu_free(src);
    colo_gpu_free(dst);
    return rc;
}

static int cmd_trace(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"classes", no_argument, NULL, 'c'},
        {"on", required_argument, NULL, 'g'},
        {"partitions", no_argument, NULL, 'p'},
        {"batch", required_argument, NULL, 'b'},
        {"fp32-math", required_argument, NULL, 'f'},
        {"cuda-graphs", no_argument, NULL, 'G'},
        {"framework", required_argument, NULL, 'F'},
        {"precision", required_argument, NULL, 'P'},
        {"against", required_argument, NULL, 'a'},
        {"kernels", optional_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *against = NULL;
    bool classes = false, partitions = false, graphs = false, kernels = false, csv = false;
    const char *on = NULL;
    long batch = 0;
    colo_fp32_math_t fp32 = COLO_FP32_PYTORCH;
    colo_framework_t fw = COLO_FW_TRACE;
    colo_math_t prec = COLO_MATH_AUTO;
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
        case 'F':
            if (strcmp(optarg, "torch_compile") == 0)
                return colo_cli_usage_error(usage_trace, "%s",
                                            "--framework torch_compile: TorchInductor fuses "
                                            "kernels, which changes the trace itself; capture the "
                                            "compiled model (colosim-capture) and pass its trace");
            if ((fw = colo_framework_parse(optarg)) == COLO_FRAMEWORKS)
                return colo_cli_usage_error(usage_trace,
                                            "--framework is trace, pytorch_eager, cuda_graphs or "
                                            "tensorrt, not '%s'",
                                            optarg);
            break;
        case 'P':
            if ((prec = colo_precision_parse(optarg)) == COLO_MATH_CLASSES)
                return colo_cli_usage_error(
                    usage_trace, "--precision is fp16, bf16, int8 or fp8, not '%s'", optarg);
            break;
        case 'a':
            against = optarg;
            break;
        case 'k':
            if (optarg && strcmp(optarg, "csv") != 0)
                return colo_cli_usage_error(usage_trace,
                                            "--kernels takes =csv or nothing, not '=%s'", optarg);
            kernels = true;
            csv = optarg != NULL;
            break;
        case 'b':
            batch = strtol(optarg, &end, 10);
            if (*end || batch < 1 || batch > COLO_MAX_BATCH)
                return colo_cli_usage_error(usage_trace, "--batch takes 1 to %d, not '%s'",
                                            COLO_MAX_BATCH, optarg);
            break;
        case 'f':
            if ((fp32 = colo_fp32_math_parse(optarg)) == COLO_FP32_POLICIES)
                return colo_cli_usage_error(
                    usage_trace, "--fp32-math is pytorch, fp32 or tf32, not '%s'", optarg);
            break;
        case 'h':
            fputs(usage_trace, stdout);
            return 0;
        default:
            return colo_cli_usage_error(usage_trace, "unknown or incomplete option '%s'",
                                        argv[optind - 1]);
        }
    }
    if (kernels && !csv && argc - optind == 2 &&
        (strcmp(argv[optind], "csv") == 0 || strcmp(argv[optind + 1], "csv") == 0))
        return colo_cli_usage_error(usage_trace, "%s",
                                    "--kernels=csv takes its '=': 'csv' alone reads as a FILE");
    if (argc - optind != 1)
        return colo_cli_usage_error(usage_trace, "%s", "exactly one trace FILE, please");
    if (graphs && fw != COLO_FW_TRACE && fw != COLO_FW_CUDA_GRAPHS)
        return colo_cli_usage_error(usage_trace, "--cuda-graphs with --framework %s: one of them",
                                    colo_framework_name(fw));
    if (graphs) fw = COLO_FW_CUDA_GRAPHS;
    if (!on && (fw != COLO_FW_TRACE || prec != COLO_MATH_AUTO))
        return colo_cli_usage_error(usage_trace, "%s goes with --on GPU",
                                    fw != COLO_FW_TRACE ? "--framework" : "--precision");
    if (!on && (partitions || batch || graphs || fw != COLO_FW_TRACE || prec != COLO_MATH_AUTO))
        return colo_cli_usage_error(usage_trace,
                                    "%s goes with --on (--against predicts REAL at its own batch)",
                                    partitions            ? "--partitions"
                                    : batch               ? "--batch"
                                    : graphs              ? "--cuda-graphs"
                                    : fw != COLO_FW_TRACE ? "--framework"
                                                          : "--precision");
    if (!on && !against && fp32 != COLO_FP32_PYTORCH)
        return colo_cli_usage_error(usage_trace, "%s", "--fp32-math goes with --on or --against");
    if (kernels && !against)
        return colo_cli_usage_error(usage_trace, "%s", "--kernels goes with --against REAL");
    if (csv && (on || classes))
        return colo_cli_usage_error(usage_trace, "--kernels=csv writes the table alone: without %s",
                                    on ? "--on" : "--classes");
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    const char *file = argv[optind];
    int rc = colo_trace_load(file, &t, &err);
    if (rc) {
        colo_cli_print_error(&err);
        return colo_cli_exit_for(rc);
    }
    /* every GPU named, and the other trace, before anything is printed */
    char list[1024];
    snprintf(list, sizeof list, "%s", on ? on : "");
    if (on && (!*on || on[strlen(on) - 1] == ',' || strstr(on, ",,") || *on == ',')) {
        colo_trace_free(t);
        return colo_cli_usage_error(usage_trace, "--on '%s' names an empty GPU", on);
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
    colo_cli_pairing_t pairing = {0};
    if (!rc && against) rc = colo_trace_load(against, &real, &err);
    if (!rc && kernels) rc = colo_cli_trace_pair(t, real, &pairing, &err);
    if (rc) {
        colo_cli_print_error(&err);
        colo_trace_free(real);
        colo_trace_free(t);
        return colo_cli_exit_for(rc);
    }
    if (csv) { /* the table alone */
        rc = trace_against(t, real, against, fp32, &pairing, true, &err);
        goto out;
    }
    printf("%s: %s, batch %d, measured on %s\n", file, t->model, t->batch, t->gpu);
    printf("  %zu kernels, %.3f ms of kernel time; %zu copies (%lld bytes H2D, %lld bytes D2H)\n",
           t->n_kernels, COLO_TO_MS(t->kernel_time), t->n_copies, t->copy_bytes[COLO_COPY_H2D],
           t->copy_bytes[COLO_COPY_D2H]);
    /* host gaps: time the host spent between launches, which a request replays as it is */
    colo_time_t gaps = 0, largest = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        gaps += t->ops[i].gap;
        if (t->ops[i].gap > largest) largest = t->ops[i].gap;
    }
    if (gaps > 0)
        printf("  host gaps    %.3f ms in all between launches, the largest %.3f ms%s\n",
               COLO_TO_MS(gaps), COLO_TO_MS(largest),
               gaps > t->kernel_time ? ": more than the kernels' time (one inference?)" : "");
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
        rc = trace_on(t, g, partitions, (int)batch, fp32, fw, prec, &err);
    if (!rc && against)
        rc = trace_against(t, real, against, fp32, kernels ? &pairing : NULL, false, &err);
out:
    if (rc && !err.code) colo_error_set(&err, rc, file, 0, NULL, "%s", colo_strerror(rc));
    if (rc) colo_cli_print_error(&err);
    colo_cli_pairing_free(&pairing);
    colo_trace_free(real);
    colo_trace_free(t);
    return rc ? colo_cli_exit_for(rc) : 0;
}

const colo_cli_command_t colo_cli_trace = {"trace", usage_trace, cmd_trace, false};
