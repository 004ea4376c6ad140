/* gpu.h: GPU descriptions (models/gpus/NAME.cfg): datasheet facts the hardware model draws on. */
#ifndef COLO_GPU_H
#define COLO_GPU_H

#include "errors.h"
#include "kernel_class.h"
#include "simtime.h"

#include <stdbool.h>
#include <stddef.h>

#define COLO_MIG_MAX_SLOTS 8
#define COLO_MIG_MAX_PROFILES 64 /* a GPU file lists at most this many (h100-sxm.cfg: 7) */

/* One MIG GPU-instance profile, as nvidia-smi mig -lgip/-lgipp lists it. */
typedef struct colo_mig_profile {
    char *name; /* "3g.40gb" */
    int id;     /* GPU-instance profile ID */
    int sms;
    int compute_slices; /* of gpu->mig.compute_slices */
    int memory_slices;  /* of gpu->mig.memory_slices; also the placement size */
    int l2_eighths;     /* share of L2 in eighths */
    double memory_gib;
    int copy_engines;
    bool media; /* has the media extensions (+me, or 7g) */
    int max_count;
    int n_placements;
    int placements[COLO_MIG_MAX_SLOTS]; /* start slots on the memory-slice axis */
} colo_mig_profile_t;

typedef struct colo_gpu {
    char *name; /* file stem, e.g. "h100-sxm" */
    char *full_name;
    char *arch;
    char *compute_capability;
    char *path;      /* file it was loaded from */
    bool integrated; /* shares memory with the CPU (Jetson) */
    struct {
        int count, max_threads, max_warps, max_blocks, registers, max_registers_per_thread;
        int register_alloc_unit, shared_bytes, max_shared_per_block, reserved_shared_per_block;
        double clock_mhz;
        double tensor_clock_mhz; /* the clock tensor peaks are quoted at; 0: clock_mhz */
        int fp32_lanes;
        int tensor_fp16_flops_per_clock;   /* FP16 rate, dense; 0: no FP16 unit worth using
                                            * (GP104's 1:64 FP16): FP16 kernels run as FP32 */
        double fp32_gflops, tensor_gflops; /* measured per-SM rates; 0: from clock and lanes */
        /* dense peak operations per SM and clock by math class (the file's math group, FP32
         * from fp32_lanes, FP16 from tensor_fp16_flops_per_clock); 0: no such unit */
        double math_per_clock[COLO_MATH_CLASSES];
        /* the share of that peak a kernel of inference size sustains (a GEMM of 2 GFLOP, as
         * measured by published benchmarks); 1 where the file does not say */
        double sustained[COLO_MATH_CLASSES];
    } sm;
    struct {
        long long bytes;
        int slices, partitions;
        double bandwidth_gbps; /* 0 when unknown */
        double effective_bytes; /* what one working set can keep (measured, calibration.h);
                                 * 0: bytes */
    } l2;
    struct {
        double size_gib;
        char *type;
        int stacks, controllers, channels, bus_bits;
        double peak_gbps, achievable_fraction;
        double per_sm_gbps; /* DRAM rate one SM can sustain: a few SMs cannot saturate DRAM */
    } memory;
    struct {
        int generation, lanes;
        double h2d_gbps, d2h_gbps, latency_us;
        int copy_engines;
    } pcie;
    struct { /* optional group nvlink (docs/gpus.md); absent: the GPU has no NVLink */
        double gbps;      /* NVLink bandwidth of one GPU, one direction, GB/s; 0: none */
        bool nvswitch;    /* the node's GPUs meet in NVSwitches: any k of them form a ring at
                           * gbps; false: GPUs linked in pairs (a bridge), rings of more than 2
                           * cross PCIe */
        double sustained; /* the share of gbps a ring all-reduce sustains (0 < share <= 1) */
    } nvlink;
    struct {
        double host_us;     /* host time per kernel launch: one stream launches no faster */
        double graph_us;    /* the same for the kernels of a CUDA graph; 0: no limit */
        double start_us;    /* launch call to the kernel's start on an idle GPU */
        double dispatch_us; /* end of a kernel to the start of the next, already launched one on
                             * the same stream */
        double floor_us;    /* the part of a kernel's duration, as profilers measure it alone,
                             * that neither more SMs nor more bandwidth shortens */
    } launch;
    struct {
        int cores; /* CPU cores per GPU of the usual host (a DGX's cores over its GPUs, a Jetson's
                    * CPU); 0: not known, as many as the tenants need */
    } host;
    struct {
        colo_time_t default_ns, short_ns, medium_ns, long_ns, switch_ns;
    } timeslice;
    struct {
        int max_clients, max_clients_cuda_13_1, sm_granularity;
        bool volta; /* Volta MPS (CC 7.0+): per-client SM limits (active thread percentage,
                     * static SM partitions); false: pre-Volta MPS, which has none (file key
                     * mps.volta, default true) */
    } mps;
    struct {
        int min_sms, alignment;
        bool supported; /* the driver offers Green Contexts (green.supported, default true) */
    } green;
    struct {
        bool supported;
        int compute_slices, memory_slices;
        size_t n_profiles;
        colo_mig_profile_t *profiles;
    } mig;
    struct {
        char *path;           /* calibration file applied (calibration.h); NULL: datasheet values */
        char *device, *date;  /* what it was measured on, and when */
        unsigned applied;     /* bit p: parameter p (colo_cal_param_t) came from the file */
        double datasheet[16]; /* value of each applied parameter before */
        char *source[16];     /* where each applied parameter came from, when the file says */
    } calibration;
} colo_gpu_t;

/* Loads and validates a GPU description. On success *out is a new object (colo_gpu_free).
 * Errors name the file, line and key. */
int colo_gpu_load(const char *path, colo_gpu_t **out, colo_error_t *err);
void colo_gpu_free(colo_gpu_t *gpu);

/* Peak FP32 rate of one SM in FLOP per nanosecond (clock x lanes x 2). */
double colo_gpu_sm_fp32_rate(const colo_gpu_t *gpu);
/* Dense FP16 tensor-core rate of one SM in FLOP per nanosecond. */
double colo_gpu_sm_tensor_rate(const colo_gpu_t *gpu);

/* The class a kernel of class m runs as on gpu: m itself, or where gpu has no such unit the
 * class frameworks fall back to (TF32 -> FP32, BF16 -> FP32, FP16 -> FP32, INT8 -> FP16,
 * FP8 -> FP16; docs/model.md, "Math classes"). */
colo_math_t colo_gpu_math_runs_as(const colo_gpu_t *gpu, colo_math_t m);
/* The rate a kernel of class m sustains on one SM of gpu (after the fall-back): the peak rate
 * (colo_gpu_math_rate) x the file's sustained share of it for that class. Operations per ns. */
double colo_gpu_math_sustained_rate(const colo_gpu_t *gpu, colo_math_t m);

/* Dense peak rate of one SM for class m (after the fall-back) in operations per nanosecond:
 * per-clock operations x clock (tensor classes at the tensor clock); measured FP32 and FP16
 * tensor rates (calibration) replace the datasheet ones, and scale the other tensor classes
 * by the same factor. */
double colo_gpu_math_rate(const colo_gpu_t *gpu, colo_math_t m);
/* Achievable DRAM bandwidth in bytes per nanosecond (= GB/s). */
double colo_gpu_dram_rate(const colo_gpu_t *gpu);

/* L2 bandwidth in bytes per nanosecond; 3 x DRAM when the file does not know it (docs/model.md). */
double colo_gpu_l2_rate(const colo_gpu_t *gpu);
/* The bytes of L2 the working sets of a whole GPU can keep: the measured effective capacity
 * (calibration) or the datasheet size. A MIG instance keeps its eighths of it. */
double colo_gpu_l2_capacity(const colo_gpu_t *gpu);

const colo_mig_profile_t *colo_gpu_mig_profile(const colo_gpu_t *gpu, const char *name);

#endif
