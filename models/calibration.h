/* calibration.h: measured parameters (models/calibrated/NAME.json, written by colosim-calibrate)
 * applied over a GPU description's datasheet defaults. docs/calibration.md defines the file. */
#ifndef COLO_CALIBRATION_H
#define COLO_CALIBRATION_H

#include "errors.h"
#include "gpu.h"

/* The parameters a calibration may set, in the order files and tables list them. */
#define COLO_CAL_PARAMS(X)                                                                         \
    X(FP32, "sm.fp32_gflops_per_sm", "GFLOP/s")                                                    \
    X(TENSOR, "sm.tensor_fp16_gflops_per_sm", "GFLOP/s")                                           \
    X(DRAM, "memory.achievable_gbps", "GB/s")                                                      \
    X(DRAM_PER_SM, "memory.per_sm_gbps", "GB/s")                                                   \
    X(L2, "l2.bandwidth_gbps", "GB/s")                                                             \
    X(L2_CAPACITY, "l2.effective_mib", "MiB")                                                      \
    X(H2D, "pcie.h2d_gbps", "GB/s")                                                                \
    X(D2H, "pcie.d2h_gbps", "GB/s")                                                                \
    X(PCIE_LATENCY, "pcie.latency_us", "us")                                                       \
    X(LAUNCH_HOST, "launch.host_us", "us")                                                         \
    X(LAUNCH_GRAPH, "launch.graph_us", "us")                                                       \
    X(LAUNCH_START, "launch.start_us", "us")                                                       \
    X(SLICE, "timeslice.default_us", "us")                                                         \
    X(SWITCH, "timeslice.switch_us", "us")

/* clang-format off */
typedef enum colo_cal_param {
#define COLO__X(id, key, unit) COLO_CAL_##id,
    COLO_CAL_PARAMS(COLO__X)
#undef COLO__X
    COLO_CAL_N
} colo_cal_param_t;
/* clang-format on */

const char *colo_cal_key(colo_cal_param_t p);
const char *colo_cal_unit(colo_cal_param_t p);
/* The parameter's current value in gpu, in its unit. */
double colo_cal_get(const colo_gpu_t *gpu, colo_cal_param_t p);

/* Applies the calibration file at path to gpu: checks that it was measured on this GPU (name and
 * SM count), that every parameter is known, finite and within a factor of 10 of the datasheet
 * value, then sets them and records the file in gpu->calibration. Nothing changes on error,
 * which names the file, the line and the key. */
int colo_calibration_apply(colo_gpu_t *gpu, const char *path, colo_error_t *err);

/* The calibration that applies to a GPU loaded from gpu_path when none is named: the file
 * calibrated/NAME.json in the folder above the description's (models/gpus/h200.cfg ->
 * models/calibrated/h200.json). Writes it into buf and returns 1 when it exists, else 0. */
int colo_calibration_default(const colo_gpu_t *gpu, char *buf, size_t n);

#endif
