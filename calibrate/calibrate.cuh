/* calibrate.cuh: what colosim-calibrate's host files share: options, records, measurements. */
#ifndef COLO_CALIBRATE_H
#define COLO_CALIBRATE_H

extern "C" {
#include "gpu.h"
}

#include <cuda_runtime.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "colosim-calibrate: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- options and output (calibrate.cu) ---- */

struct opts {
    const char *gpu = NULL;
    const char *out = NULL;
    int repeats = 7;
    bool quick = false;
    const char *only = NULL; /* comma-separated measurement names */
    int device = 0;
};
extern opts O;                  /* the command line */
extern json_t *g_meas;          /* measurements: what no parameter holds, raw */
extern const colo_gpu_t *g_gpu; /* datasheet values */
extern cudaDeviceProp g_prop;   /* the device measured */

struct summary {
    double median, min, max;
};

/* Seconds on the monotonic clock. */
double colo_calib_now_s(void);
/* Median, min and max of v (NAN each when v is empty). O(n log n). */
summary colo_calib_summarise(std::vector<double> v);
/* v as a new JSON array of reals. */
json_t *colo_calib_samples_json(const std::vector<double> &v);
/* Records a check under "checks" and prints it; a failed one makes the exit status 3. */
void colo_calib_check(const char *name, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records a parameter: its median over the repeats, the spread, the datasheet value. */
void colo_calib_param(const char *key, const char *unit, const std::vector<double> &v,
                      double datasheet, const char *method);

/* ---- helpers ---- */

/* CUDA events around work on a stream: start, then stop_ms waits for it and gives its time. */
struct timer {
    cudaEvent_t a, b;
    timer()
    {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    ~timer()
    {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    void start(cudaStream_t s = 0)
    {
        CK(cudaEventRecord(a, s));
    }
    double stop_ms(cudaStream_t s = 0)
    {
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

/* The number of distinct values in v (SM ids the blocks of a kernel ran on). O(n log n). */
int colo_calib_distinct(const std::vector<unsigned> &v);

/* ---- measurements: each records its parameters, measurements and checks ---- */

/* calibrate_rates.cu: the GPU by itself. */
/* FP32 rate per SM: fma_kernel at full occupancy on every SM. */
void colo_calib_measure_fp32(void);
/* Tensor (fp16 -> fp32) rate per SM: hmma_kernel on every SM. */
void colo_calib_measure_tensor(void);
/* DRAM bandwidth of read, write and copy against the SMs used (one block per SM); achievable
 * and per-SM bandwidth. */
void colo_calib_measure_dram(void);
/* L2 bandwidth against the working set and against the SMs used (l2_read_kernel). */
void colo_calib_measure_l2(void);
/* Host cost of a launch and the time from a launch to the kernel's start. */
void colo_calib_measure_launch(void);
/* Synchronous pinned copies of each size, host-timed; time = latency + bytes / rate fitted with
 * relative weights (GSL), so that small and large copies count alike. */
void colo_calib_measure_pcie(void);

/* calibrate_sharing.cu: the GPU shared. */
/* Slowdown of a compute-bound and a DRAM-bound kernel run together in one context. */
void colo_calib_measure_corun(void);
/* Green Contexts: the FMA kernel confined to k SMs; its rate should be k/all of the whole GPU's
 * and its blocks should run on at most k distinct SMs. */
void colo_calib_measure_green(void);
/* Two processes (self again, with --slice-child) spin on the global timer; the gaps in each
 * one's timeline are the other's turns: the time slice and the switch between them. */
void colo_calib_measure_timeslice(const char *self);
/* The child of colo_calib_measure_timeslice: spins for seconds once its stdin closes and writes
 * its span and gaps to path. 0, or 1 when it cannot. */
int colo_calib_slice_child(const char *path, double seconds);

#endif
