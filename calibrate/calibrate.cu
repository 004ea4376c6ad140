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
 * 1 other error (nothing written). */
#include "device_json.h"
#include "driver_entry.h"

#include <cuda.h>
#include <cuda_fp16.h>
#include <mma.h>

extern "C" {
#include "alloc.h"
#include "atomic_file.h"
#include "gpu.h"
}

#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include <algorithm>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

extern char **environ;

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "colosim-calibrate: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    cudaGetErrorString(e_));                                                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
/* Driver API functions (Green Contexts) through the runtime's entry-point query, so that the
 * binary does not link libcuda and starts (and says "no GPU") on machines without a driver. */
#define DRIVER_FUNCS(X)                                                                            \
    X(cuGetErrorString, 6000)                                                                      \
    X(cuDeviceGet, 2000)                                                                           \
    X(cuDeviceGetDevResource, 12040)                                                               \
    X(cuDevSmResourceSplitByCount, 12040)                                                          \
    X(cuDevResourceGenerateDesc, 12040)                                                            \
    X(cuGreenCtxCreate, 12040)                                                                     \
    X(cuGreenCtxDestroy, 12040)                                                                    \
    X(cuGreenCtxStreamCreate, 12050)                                                               \
    X(cuCtxFromGreenCtx, 12040)                                                                    \
    X(cuCtxPushCurrent, 4000)                                                                      \
    X(cuCtxPopCurrent, 4000)                                                                       \
    X(cuStreamDestroy, 4000)
DRIVER_FUNCS(COLO_DRIVER_DECLARE)

/* NULL, or the name of the first function the driver lacks. */
static const char *load_driver(void) { COLO_DRIVER_LOADER(DRIVER_FUNCS) }

#define CKD(call)                                                                                  \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            if (p_cuGetErrorString) p_cuGetErrorString(r_, &s_);                                   \
            fprintf(stderr, "colosim-calibrate: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- options and output ---- */

struct opts {
    const char *gpu = NULL;
    const char *out = NULL;
    int repeats = 7;
    bool quick = false;
    const char *only = NULL; /* comma-separated measurement names */
    int device = 0;
};
static opts O;
static json_t *g_params, *g_checks, *g_meas;
static const colo_gpu_t *g_gpu; /* datasheet values */
static cudaDeviceProp g_prop;
static int g_failed;

static double now_s(void)
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

struct summary {
    double median, min, max;
};

static summary summarise(std::vector<double> v)
{
    summary s = {NAN, NAN, NAN};
    if (v.empty()) return s;
    gsl_sort(v.data(), 1, v.size());
    s.median = gsl_stats_median_from_sorted_data(v.data(), 1, v.size());
    s.min = v.front();
    s.max = v.back();
    return s;
}

static json_t *samples_json(const std::vector<double> &v)
{
    json_t *a = json_array();
    for (double x : v)
        json_array_append_new(a, json_real(x));
    return a;
}

static void check(const char *name, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check(const char *name, bool ok, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    json_array_append_new(g_checks, json_pack("{s:s,s:b,s:s}", "name", name, "passed", ok,
                                              "detail", text));
    fprintf(stderr, "  check %-28s %s  %s\n", name, ok ? "ok  " : "FAIL", text);
    if (!ok) g_failed = 1;
}

/* Records a parameter: its median over the repeats, the spread, the datasheet value. */
static void param(const char *key, const char *unit, const std::vector<double> &v,
                  double datasheet, const char *method)
{
    summary s = summarise(v);
    json_t *p = json_pack("{s:s,s:f,s:s,s:f,s:f,s:f,s:f,s:i,s:o,s:s}", "key", key, "value",
                          s.median, "unit", unit, "median", s.median, "min", s.min, "max", s.max,
                          "spread", s.median > 0 ? (s.max - s.min) / s.median : 0.0, "repeats",
                          (int)v.size(), "samples", samples_json(v), "method", method);
    json_object_set_new(p, "datasheet", datasheet > 0 ? json_real(datasheet) : json_null());
    json_array_append_new(g_params, p);
    fprintf(stderr, "  %-30s %12.4g %-8s (min %.4g, max %.4g, n=%zu; datasheet %.4g)\n", key,
            s.median, unit, s.min, s.max, v.size(), datasheet);
}

/* ---- kernels ---- */

__device__ __forceinline__ uint64_t globaltimer(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned smid(void)
{
    unsigned s;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
    return s;
}

/* 8 independent FMA chains per thread; the result is stored only if impossible, so the compiler
 * keeps the work. FLOPs = 2 * 8 * iters * threads. */
__global__ void fma_kernel(float *out, int iters, float seed, unsigned *sms)
{
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        a[k] = seed + (float)(threadIdx.x + k);
    const float m = 0.9999f, c = 0.0001f;
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            a[k] = fmaf(a[k], m, c);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; k++)
        s += a[k];
    if (s == 12345.678f) out[blockIdx.x] = s;
    if (sms && threadIdx.x == 0) sms[blockIdx.x] = smid();
}

/* Tensor cores through WMMA (mma.sync, HMMA in SASS): fp16 inputs, fp32 accumulation, the
 * fragments kept in registers. FLOPs = 2 * 16^3 * iters * warps. */
__global__ void hmma_kernel(float *out, int iters)
{
#if __CUDA_ARCH__ >= 700
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[4];
    wmma::fill_fragment(fa, __float2half(0.01f));
    wmma::fill_fragment(fb, __float2half(0.01f));
#pragma unroll
    for (int k = 0; k < 4; k++)
        wmma::fill_fragment(acc[k], 0.0f);
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            wmma::mma_sync(acc[k], fa, fb, acc[k]);
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
        s += acc[k].x[0];
    if (s == 12345.678f) out[blockIdx.x] = s;
#endif
}

enum mem_op { MEM_READ, MEM_WRITE, MEM_COPY };

/* Grid-stride streaming over n float4s, four loads in flight per thread. */
__global__ void stream_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n,
                              int passes, int op, float *sink, unsigned *sms)
{
    extern __shared__ char pad[]; /* sized by the host to force one block per SM */
    size_t stride = (size_t)gridDim.x * blockDim.x;
    float4 acc = make_float4(0, 0, 0, 0);
    for (int p = 0; p < passes; p++) {
        size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
        for (; i + 3 * stride < n; i += 4 * stride) {
            if (op == MEM_WRITE) {
                float4 v = make_float4((float)p, 1, 2, 3);
                dst[i] = v;
                dst[i + stride] = v;
                dst[i + 2 * stride] = v;
                dst[i + 3 * stride] = v;
                continue;
            }
            float4 v0 = src[i], v1 = src[i + stride], v2 = src[i + 2 * stride],
                   v3 = src[i + 3 * stride];
            if (op == MEM_COPY) {
                dst[i] = v0;
                dst[i + stride] = v1;
                dst[i + 2 * stride] = v2;
                dst[i + 3 * stride] = v3;
            } else {
                acc.x += v0.x + v1.x + v2.x + v3.x;
                acc.y += v0.y + v1.y + v2.y + v3.y;
            }
        }
        for (; i < n; i += stride) {
            if (op == MEM_WRITE)
                dst[i] = make_float4((float)p, 1, 2, 3);
            else if (op == MEM_COPY)
                dst[i] = src[i];
            else
                acc.x += src[i].x;
        }
    }
    if (acc.x == 12345.678f && acc.y == 1.0f) sink[0] = acc.x + pad[0];
    if (sms && threadIdx.x == 0) sms[blockIdx.x] = smid();
}

/* The L2 sweep's reader: loads that bypass L1 (ld.global.cg, __ldcg), and each pass of each block
 * starts at another part of the working set, so that no SM re-reads a slice its L1 could hold
 * (issue 23: plain __restrict__ loads compile to ld.global.nc and cached in L1). */
__global__ void l2_read_kernel(const float4 *__restrict__ src, size_t n, int passes, float *sink,
                               unsigned *sms)
{
    extern __shared__ char pad[]; /* one block per SM */
    size_t stride = (size_t)gridDim.x * blockDim.x;
    float acc = 0;
    for (int p = 0; p < passes; p++) {
        /* rotate by one block's span per pass: block b reads what block b+p read at pass 0 */
        size_t shift = ((size_t)p * blockDim.x) % (n ? n : 1);
        for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
            size_t j = i + shift; /* both below n: one subtraction, no division per load */
            if (j >= n) j -= n;
            float4 v = __ldcg(&src[j]);
            acc += v.x + v.y + v.z + v.w;
        }
    }
    if (acc == 12345.678f) sink[0] = acc + pad[0];
    if (sms && threadIdx.x == 0) sms[blockIdx.x] = smid();
}

__global__ void empty_kernel(void) {}

/* Writes 1 to a host-mapped flag as soon as it starts. */
__global__ void flag_kernel(volatile int *flag)
{
    *flag = 1;
    __threadfence_system();
}

/* One thread reading the global timer for ns nanoseconds; every jump longer than threshold is a
 * time the context was off the GPU: records (last before, first after) in gaps. */
__global__ void spin_kernel(uint64_t ns, uint64_t threshold, unsigned long long *gaps, int max_gaps,
                            int *n_gaps, unsigned long long *span)
{
    uint64_t start = globaltimer(), prev = start, t = start;
    int n = 0;
    while (t - start < ns) {
        t = globaltimer();
        if (t - prev > threshold && n < max_gaps) {
            gaps[2 * n] = prev;
            gaps[2 * n + 1] = t;
            n++;
        }
        prev = t;
    }
    *n_gaps = n;
    span[0] = start;
    span[1] = t;
}

/* ---- helpers ---- */

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
    void start(cudaStream_t s = 0) { CK(cudaEventRecord(a, s)); }
    double stop_ms(cudaStream_t s = 0)
    {
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

static int distinct(const std::vector<unsigned> &v)
{
    std::vector<unsigned> s(v);
    std::sort(s.begin(), s.end());
    return (int)(std::unique(s.begin(), s.end()) - s.begin());
}

/* Shared memory that lets only one block of `threads` fit on an SM. */
static size_t one_block_smem(void)
{
    return g_prop.sharedMemPerMultiprocessor / 2 + 1024 > g_prop.sharedMemPerBlockOptin
               ? g_prop.sharedMemPerBlockOptin
               : g_prop.sharedMemPerMultiprocessor / 2 + 1024;
}

/* ---- measurements ---- */

static void measure_fp32(void)
{
    int sms = g_prop.multiProcessorCount, threads = 256;
    int blocks = sms * (g_prop.maxThreadsPerMultiProcessor / threads);
    int iters = O.quick ? 1 << 14 : 1 << 16;
    float *out;
    CK(cudaMalloc(&out, (size_t)blocks * sizeof(float)));
    fma_kernel<<<blocks, threads>>>(out, 256, 1.0f, NULL); /* warm-up, clocks up */
    CK(cudaDeviceSynchronize());
    std::vector<double> v;
    timer t;
    for (int r = 0; r < O.repeats; r++) {
        t.start();
        fma_kernel<<<blocks, threads>>>(out, iters, 1.0f + (float)r, NULL);
        double ms = t.stop_ms();
        CK(cudaGetLastError());
        v.push_back(2.0 * 8 * iters * (double)blocks * threads / (ms * 1e6) / sms);
    }
    CK(cudaFree(out));
    double ds = colo_gpu_sm_fp32_rate(g_gpu);
    param("sm.fp32_gflops_per_sm", "GFLOP/s", v, ds,
          "fma_kernel: 8 independent FMA chains per thread, full occupancy on every SM, events");
    summary s = summarise(v);
    check("fp32_within_datasheet", s.median <= 1.05 * ds && s.median >= 0.4 * ds,
          "%.1f GFLOP/s per SM vs %.1f at the datasheet's max clock", s.median, ds);
}

static void measure_tensor(void)
{
    int sms = g_prop.multiProcessorCount, threads = 128;
    int blocks = sms * 8;
    int iters = O.quick ? 1 << 12 : 1 << 14;
    float *out;
    CK(cudaMalloc(&out, (size_t)blocks * sizeof(float)));
    hmma_kernel<<<blocks, threads>>>(out, 64);
    CK(cudaDeviceSynchronize());
    std::vector<double> v;
    timer t;
    for (int r = 0; r < O.repeats; r++) {
        t.start();
        hmma_kernel<<<blocks, threads>>>(out, iters);
        double ms = t.stop_ms();
        CK(cudaGetLastError());
        double warps = (double)blocks * threads / 32;
        v.push_back(2.0 * 16 * 16 * 16 * 4 * iters * warps / (ms * 1e6) / sms);
    }
    CK(cudaFree(out));
    double ds = colo_gpu_sm_tensor_rate(g_gpu);
    param("sm.tensor_fp16_gflops_per_sm", "GFLOP/s", v, ds,
          "hmma_kernel: WMMA 16x16x16 fp16->fp32 (mma.sync; not wgmma), 4 accumulators per warp");
    summary s = summarise(v);
    check("tensor_within_datasheet", s.median <= 1.05 * ds,
          "%.0f GFLOP/s per SM vs %.0f dense at the datasheet's max clock (mma.sync reaches "
          "less than wgmma on Hopper)",
          s.median, ds);
}

struct stream_result {
    double gbps;
    int sms_used;
};

/* Bandwidth of op over n float4s with k blocks of 1024 threads, one per SM. */
static stream_result stream_once(const float4 *src, float4 *dst, size_t n, int k, int passes,
                                 int op, unsigned *sms_d, float *sink)
{
    size_t smem = one_block_smem();
    timer t;
    t.start();
    stream_kernel<<<k, 1024, smem>>>(src, dst, n, passes, op, sink, sms_d);
    double ms = t.stop_ms();
    CK(cudaGetLastError());
    std::vector<unsigned> sms(k);
    CK(cudaMemcpy(sms.data(), sms_d, (size_t)k * sizeof(unsigned), cudaMemcpyDeviceToHost));
    double bytes = (double)n * 16 * passes * (op == MEM_COPY ? 2 : 1);
    return {bytes / (ms * 1e6), distinct(sms)};
}

/* L2 bandwidth over n float4s with k blocks of 1024 threads, one per SM, through l2_read_kernel. */
static stream_result l2_once(const float4 *src, size_t n, int k, int passes, unsigned *sms_d,
                             float *sink)
{
    size_t smem = one_block_smem();
    timer t;
    t.start();
    l2_read_kernel<<<k, 1024, smem>>>(src, n, passes, sink, sms_d);
    double ms = t.stop_ms();
    CK(cudaGetLastError());
    std::vector<unsigned> sms(k);
    CK(cudaMemcpy(sms.data(), sms_d, (size_t)k * sizeof(unsigned), cudaMemcpyDeviceToHost));
    return {(double)n * 16 * passes / (ms * 1e6), distinct(sms)};
}

/* A zeroed buffer for stream_kernel, the per-block SM ids and the sink, with one block per SM. */
struct stream_bufs {
    float4 *buf;
    unsigned *sms;
    float *sink;
};

static stream_bufs stream_alloc(size_t bytes)
{
    stream_bufs b;
    CK(cudaMalloc(&b.buf, bytes));
    CK(cudaMalloc(&b.sms, (size_t)g_prop.multiProcessorCount * sizeof(unsigned)));
    CK(cudaMalloc(&b.sink, sizeof(float)));
    CK(cudaMemset(b.buf, 0, bytes));
    CK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)one_block_smem()));
    CK(cudaFuncSetAttribute(l2_read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            (int)one_block_smem()));
    return b;
}

static void stream_free(stream_bufs *b)
{
    CK(cudaFree(b->buf));
    CK(cudaFree(b->sms));
    CK(cudaFree(b->sink));
}

static void measure_dram(void)
{
    int sms = g_prop.multiProcessorCount;
    size_t bytes = (size_t)g_prop.l2CacheSize * 16; /* far past L2 */
    if (bytes < ((size_t)1 << 30)) bytes = (size_t)1 << 30;
    size_t n = bytes / 16 / 2; /* two halves: source and destination */
    stream_bufs b = stream_alloc(bytes);
    float4 *buf = b.buf;
    unsigned *sms_d = b.sms;
    float *sink = b.sink;
    static const char *const names[] = {"read", "write", "copy"};
    std::vector<int> ks = {1, 2, 4, 8, 16, 32, 64};
    while (!ks.empty() && ks.back() >= sms)
        ks.pop_back();
    ks.push_back(sms);
    json_t *curves = json_object();
    std::vector<double> per_sm, all_copy;
    double best_read = 0;
    for (int op = MEM_READ; op <= MEM_COPY; op++) {
        json_t *curve = json_array();
        double prev = 0;
        bool grows = true;
        for (int k : ks) {
            stream_once(buf, buf + n, n, k, 1, op, sms_d, sink); /* warm-up */
            std::vector<double> v;
            int used = k;
            for (int r = 0; r < O.repeats; r++) {
                stream_result s = stream_once(buf, buf + n, n, k, 1, op, sms_d, sink);
                v.push_back(s.gbps);
                used = s.sms_used;
            }
            summary s = summarise(v);
            json_array_append_new(curve,
                                  json_pack("{s:i,s:i,s:f,s:f,s:f,s:o}", "sms", k, "sms_seen",
                                            used, "gbps", s.median, "min", s.min, "max", s.max,
                                            "samples", samples_json(v)));
            fprintf(stderr, "  dram %-5s %3d SMs: %8.1f GB/s (SMs seen %d)\n", names[op], k,
                    s.median, used);
            if (used != k)
                check("dram_one_block_per_sm", false, "%s on %d blocks ran on %d SMs", names[op],
                      k, used);
            if (s.median < 0.9 * prev) grows = false;
            prev = s.median;
            if (op == MEM_READ && k <= 4)
                for (double x : v)
                    per_sm.push_back(x / k);
            if (op == MEM_READ && s.median > best_read) best_read = s.median;
            if (op == MEM_COPY && k == sms) all_copy = v;
        }
        json_object_set_new(curves, names[op], curve);
        check(op == MEM_READ ? "dram_read_grows_with_sms"
                             : op == MEM_WRITE ? "dram_write_grows_with_sms"
                                               : "dram_copy_grows_with_sms",
              grows, "bandwidth never drops by more than 10 %% as SMs are added");
    }
    json_object_set_new(g_meas, "dram_vs_sms", json_pack("{s:I,s:o}", "buffer_bytes",
                                                         (json_int_t)bytes, "curves", curves));
    param("memory.achievable_gbps", "GB/s", all_copy, colo_gpu_dram_rate(g_gpu),
          "stream_kernel copy (read + write counted) on every SM, one 1024-thread block each, "
          "buffer 16 x L2");
    param("memory.per_sm_gbps", "GB/s", per_sm, g_gpu->memory.per_sm_gbps,
          "stream_kernel read on 1, 2 and 4 SMs, bandwidth / SMs");
    summary s = summarise(all_copy);
    check("dram_below_peak", s.median <= g_gpu->memory.peak_gbps && best_read <= g_gpu->memory.peak_gbps,
          "copy %.0f, best read %.0f GB/s; datasheet peak %.0f", s.median, best_read,
          g_gpu->memory.peak_gbps);
    stream_free(&b);
}

static void measure_l2(void)
{
    int sms = g_prop.multiProcessorCount;
    size_t l2 = (size_t)g_prop.l2CacheSize;
    size_t cap = l2 * 4;
    stream_bufs b = stream_alloc(cap);
    float4 *buf = b.buf;
    unsigned *sms_d = b.sms;
    float *sink = b.sink;
    static const double fracs[] = {1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 3.0 / 8, 1.0 / 2,
                                   5.0 / 8,  3.0 / 4,  7.0 / 8, 1.0,     1.5,     2.0, 4.0};
    json_t *ws = json_array();
    std::vector<double> plateau;
    double plateau_med = 0, beyond = 0;
    for (double f : fracs) {
        size_t n = (size_t)((double)l2 * f) / 16;
        int passes = (int)fmin(200, fmax(4, (double)(l2 * 8) / (double)(n * 16)));
        if (O.quick) passes = passes / 4 + 1;
        l2_once(buf, n, sms, 1, sms_d, sink);
        std::vector<double> v;
        for (int r = 0; r < O.repeats; r++)
            v.push_back(l2_once(buf, n, sms, passes, sms_d, sink).gbps);
        summary s = summarise(v);
        json_array_append_new(ws, json_pack("{s:f,s:I,s:i,s:f,s:f,s:f,s:o}", "l2_fraction", f,
                                            "bytes", (json_int_t)(n * 16), "passes", passes,
                                            "gbps", s.median, "min", s.min, "max", s.max,
                                            "samples", samples_json(v)));
        fprintf(stderr, "  l2 working set %6.1f MB: %8.1f GB/s\n", (double)n * 16 / 1e6, s.median);
        if (f <= 0.25 && s.median > plateau_med) {
            plateau = v;
            plateau_med = s.median;
        }
        if (f == 4.0) beyond = s.median;
    }
    /* Against SMs at a working set of L2/8. */
    json_t *vs = json_array();
    size_t n8 = l2 / 8 / 16;
    for (int k : {1, 4, 16, 32, 64, sms}) {
        if (k > sms) continue;
        std::vector<double> v;
        for (int r = 0; r < O.repeats; r++)
            v.push_back(l2_once(buf, n8, k, O.quick ? 8 : 32, sms_d, sink).gbps);
        summary s = summarise(v);
        json_array_append_new(vs, json_pack("{s:i,s:f,s:o}", "sms", k, "gbps", s.median,
                                            "samples", samples_json(v)));
        fprintf(stderr, "  l2 %3d SMs: %8.1f GB/s\n", k, s.median);
    }
    json_object_set_new(g_meas, "l2", json_pack("{s:I,s:o,s:o}", "l2_bytes", (json_int_t)l2,
                                                "vs_working_set", ws, "vs_sms_at_l2_over_8", vs));
    param("l2.bandwidth_gbps", "GB/s", plateau, g_gpu->l2.bandwidth_gbps,
          "l2_read_kernel (__ldcg: L1 bypassed), every SM, best working set of at most L2/4 read many times");
    check("l2_faster_than_dram", plateau_med > 1.3 * beyond,
          "L2-resident %.0f GB/s vs %.0f GB/s at 4 x L2", plateau_med, beyond);
    /* L1 hits would read several times the L2's rate (the loader refuses above 2x) */
    check("l2_not_l1", plateau_med <= 2.0 * g_gpu->l2.bandwidth_gbps,
          "%.0f GB/s is more than twice the GPU file's L2 bandwidth (%.0f GB/s): L1 hits?",
          plateau_med, g_gpu->l2.bandwidth_gbps);
    stream_free(&b);
}

static void measure_launch(void)
{
    empty_kernel<<<1, 32>>>();
    CK(cudaDeviceSynchronize());
    int n = O.quick ? 200 : 1000;
    std::vector<double> host, gpu;
    for (int r = 0; r < O.repeats; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++)
            empty_kernel<<<1, 32>>>();
        double t1 = now_s();
        CK(cudaDeviceSynchronize());
        double t2 = now_s();
        host.push_back((t1 - t0) / n * 1e6);
        gpu.push_back((t2 - t0) / n * 1e6);
    }
    int *flag_h, *flag_d;
    CK(cudaHostAlloc(&flag_h, sizeof(int), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&flag_d, flag_h, 0));
    std::vector<double> start;
    for (int r = 0; r < (O.quick ? 50 : 300); r++) {
        *(volatile int *)flag_h = 0;
        CK(cudaDeviceSynchronize());
        double t0 = now_s();
        flag_kernel<<<1, 1>>>(flag_d);
        while (*(volatile int *)flag_h == 0) {
        }
        start.push_back((now_s() - t0) * 1e6);
        CK(cudaDeviceSynchronize());
    }
    CK(cudaFreeHost(flag_h));
    json_object_set_new(g_meas, "launch",
                        json_pack("{s:i,s:o,s:o}", "launches_per_repeat", n,
                                  "back_to_back_us_per_launch", samples_json(gpu),
                                  "launch_to_start_us", samples_json(start)));
    param("launch.host_us", "us", host, g_gpu->launch.host_us,
          "host time of cudaLaunchKernel for an empty kernel, back to back, per launch");
    param("launch.start_us", "us", start, g_gpu->launch.start_us,
          "launch call to the kernel's write of a host-mapped flag seen by the host, idle GPU");
    summary s = summarise(start), h = summarise(host);
    check("launch_plausible", s.median > 0.3 && s.median < 100 && h.median < 100,
          "start %.2f us, host %.2f us per launch", s.median, h.median);
}

/* Synchronous pinned copies of each size, host-timed; time = latency + bytes / rate fitted with
 * relative weights (GSL), so that small and large copies count alike. */
static void measure_pcie(void)
{
    size_t max = O.quick ? ((size_t)16 << 20) : ((size_t)256 << 20);
    char *h, *d, *h2, *d2;
    CK(cudaMallocHost(&h, max));
    CK(cudaMallocHost(&h2, max));
    CK(cudaMalloc(&d, max));
    CK(cudaMalloc(&d2, max));
    memset(h, 1, max);
    memset(h2, 2, max);
    json_t *dirs = json_object();
    for (int dir = 0; dir < 2; dir++) {
        const char *name = dir == 0 ? "h2d" : "d2h";
        std::vector<double> xs, ts, ws, rates;
        json_t *pts = json_array();
        for (size_t b = 4096; b <= max; b *= 4) {
            for (int w = 0; w < 2; w++)
                CK(dir == 0 ? cudaMemcpy(d, h, b, cudaMemcpyHostToDevice)
                            : cudaMemcpy(h, d, b, cudaMemcpyDeviceToHost));
            std::vector<double> v;
            for (int r = 0; r < O.repeats; r++) {
                double t0 = now_s();
                CK(dir == 0 ? cudaMemcpy(d, h, b, cudaMemcpyHostToDevice)
                            : cudaMemcpy(h, d, b, cudaMemcpyDeviceToHost));
                v.push_back((now_s() - t0) * 1e6);
            }
            summary s = summarise(v);
            xs.push_back((double)b);
            ts.push_back(s.median);
            ws.push_back(1.0 / (s.median * s.median));
            json_array_append_new(pts, json_pack("{s:I,s:f,s:f,s:f,s:o}", "bytes", (json_int_t)b,
                                                 "us", s.median, "min", s.min, "max", s.max,
                                                 "samples", samples_json(v)));
            fprintf(stderr, "  %s %10zu B: %10.2f us (%.2f GB/s)\n", name, b, s.median,
                    (double)b / (s.median * 1e3));
        }
        double c0, c1, cov00, cov01, cov11, chisq;
        gsl_fit_wlinear(xs.data(), 1, ws.data(), 1, ts.data(), 1, xs.size(), &c0, &c1, &cov00,
                        &cov01, &cov11, &chisq);
        /* Rate and latency per repeat of the largest and smallest sizes, for the spread. */
        json_object_set_new(dirs, name, json_pack("{s:o,s:f,s:f}", "points", pts, "fit_latency_us",
                                                  c0, "fit_gbps", 1e-3 / c1));
        std::vector<double> rate = {1e-3 / c1}, lat = {c0 > 0 ? c0 : 0};
        param(dir == 0 ? "pcie.h2d_gbps" : "pcie.d2h_gbps", "GB/s", rate,
              dir == 0 ? g_gpu->pcie.h2d_gbps : g_gpu->pcie.d2h_gbps,
              "synchronous cudaMemcpy from pinned memory, 4 KiB to 256 MiB, host-timed; "
              "weighted fit time = latency + bytes / rate");
        if (dir == 0)
            param("pcie.latency_us", "us", lat, g_gpu->pcie.latency_us,
                  "intercept of the H2D fit (host-observed per-transfer cost)");
        check(dir == 0 ? "h2d_fit" : "d2h_fit", c1 > 0 && 1e-3 / c1 < 200,
              "%.2f GB/s, %.2f us latency", 1e-3 / c1, c0);
    }
    /* Two copies at once: opposite directions, then the same direction on two streams. */
    cudaStream_t s1, s2;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    size_t b = max / 2;
    json_t *two = json_object();
    for (int same = 0; same < 2; same++) {
        std::vector<double> v;
        for (int r = 0; r < O.repeats; r++) {
            CK(cudaDeviceSynchronize());
            double t0 = now_s();
            CK(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, s1));
            if (same)
                CK(cudaMemcpyAsync(d2, h2, b, cudaMemcpyHostToDevice, s2));
            else
                CK(cudaMemcpyAsync(h2, d2, b, cudaMemcpyDeviceToHost, s2));
            CK(cudaDeviceSynchronize());
            v.push_back(2.0 * (double)b / ((now_s() - t0) * 1e9));
        }
        summary s = summarise(v);
        json_object_set_new(two, same ? "two_h2d_total_gbps" : "h2d_plus_d2h_total_gbps",
                            json_pack("{s:f,s:o}", "median", s.median, "samples", samples_json(v)));
        fprintf(stderr, "  two copies %s: %.2f GB/s together\n", same ? "H2D+H2D" : "H2D+D2H",
                s.median);
    }
    json_object_set_new(dirs, "two_at_once", two);
    json_object_set_new(g_meas, "pcie", dirs);
    cudaStreamDestroy(s1);
    cudaStreamDestroy(s2);
    CK(cudaFreeHost(h));
    CK(cudaFreeHost(h2));
    CK(cudaFree(d));
    CK(cudaFree(d2));
}

/* Slowdown of a compute-bound and a DRAM-bound kernel run together in one context. */
static void measure_corun(void)
{
    int sms = g_prop.multiProcessorCount;
    size_t bytes = (size_t)g_prop.l2CacheSize * 16;
    size_t n = bytes / 32;
    float4 *buf;
    float *out, *sink;
    CK(cudaMalloc(&buf, bytes));
    CK(cudaMalloc(&out, (size_t)sms * 64 * sizeof(float)));
    CK(cudaMalloc(&sink, sizeof(float)));
    CK(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0));
    cudaStream_t sa, sb;
    CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
    int fblocks = sms * 4, fiters = O.quick ? 1 << 13 : 1 << 15;
    int passes = O.quick ? 2 : 6;
    timer ta, tb;
    auto run = [&](bool a, bool b, double *ma, double *mb) {
        CK(cudaDeviceSynchronize());
        if (a) {
            ta.start(sa);
            fma_kernel<<<fblocks, 256, 0, sa>>>(out, fiters, 1.0f, NULL);
            CK(cudaEventRecord(ta.b, sa));
        }
        if (b) {
            tb.start(sb);
            stream_kernel<<<sms * 2, 1024, 0, sb>>>(buf, buf + n, n, passes, MEM_COPY, sink, NULL);
            CK(cudaEventRecord(tb.b, sb));
        }
        CK(cudaDeviceSynchronize());
        float x = 0;
        if (a) {
            CK(cudaEventElapsedTime(&x, ta.a, ta.b));
            *ma = x;
        }
        if (b) {
            CK(cudaEventElapsedTime(&x, tb.a, tb.b));
            *mb = x;
        }
    };
    double d0, d1;
    run(true, true, &d0, &d1);
    std::vector<double> ca, cb, ja, jb;
    for (int r = 0; r < O.repeats; r++) {
        double x, y;
        run(true, false, &x, &y);
        ca.push_back(x);
        run(false, true, &x, &y);
        cb.push_back(y);
        run(true, true, &x, &y);
        ja.push_back(x);
        jb.push_back(y);
    }
    summary a = summarise(ca), b = summarise(cb), a2 = summarise(ja), b2 = summarise(jb);
    json_object_set_new(g_meas, "corun",
                        json_pack("{s:s,s:o,s:o,s:o,s:o,s:f,s:f}", "what",
                                  "fma_kernel (compute) and stream_kernel copy (DRAM) on every SM, "
                                  "alone and in two streams of one context, ms",
                                  "compute_alone_ms", samples_json(ca), "memory_alone_ms",
                                  samples_json(cb), "compute_together_ms", samples_json(ja),
                                  "memory_together_ms", samples_json(jb), "compute_slowdown",
                                  a2.median / a.median, "memory_slowdown", b2.median / b.median));
    fprintf(stderr, "  co-run: compute %.3f -> %.3f ms (x%.2f), memory %.3f -> %.3f ms (x%.2f)\n",
            a.median, a2.median, a2.median / a.median, b.median, b2.median, b2.median / b.median);
    check("corun_no_speedup", a2.median >= 0.95 * a.median && b2.median >= 0.95 * b.median,
          "neither kernel runs faster beside the other");
    cudaStreamDestroy(sa);
    cudaStreamDestroy(sb);
    CK(cudaFree(buf));
    CK(cudaFree(out));
    CK(cudaFree(sink));
}

/* Green Contexts: the FMA kernel confined to k SMs; its rate should be k/all of the whole GPU's
 * and its blocks should run on at most k distinct SMs. */
static void measure_green(void)
{
    const char *missing = load_driver();
    if (missing) {
        check("green_contexts", false, "the driver has no %s: no Green Context support", missing);
        return;
    }
    CUdevice dev;
    CKD(p_cuDeviceGet(&dev, O.device));
    CUdevResource all;
    if (p_cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) {
        check("green_contexts", false, "cuDeviceGetDevResource failed: no Green Context support");
        return;
    }
    int sms = (int)all.sm.smCount;
    int threads = 256, blocks = sms * 8, iters = O.quick ? 1 << 13 : 1 << 15;
    json_t *pts = json_array();
    double full_rate = 0;
    std::vector<int> ks = {8, 16, 32, 64, sms};
    for (int k : ks) {
        if (k > sms) continue;
        CUdevResource part, rest;
        unsigned groups = 1;
        CUgreenCtx gctx = NULL;
        CUstream gs = NULL;
        if (k < sms) {
            if (p_cuDevSmResourceSplitByCount(&part, &groups, &all, &rest, 0, (unsigned)k) !=
                    CUDA_SUCCESS ||
                groups < 1) {
                check("green_split", false, "cannot split %d SMs off", k);
                continue;
            }
        } else {
            part = all;
        }
        CUdevResourceDesc desc;
        CKD(p_cuDevResourceGenerateDesc(&desc, &part, 1));
        CKD(p_cuGreenCtxCreate(&gctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM));
        CKD(p_cuGreenCtxStreamCreate(&gs, gctx, CU_STREAM_NON_BLOCKING, 0));
        CUcontext ctx;
        CKD(p_cuCtxFromGreenCtx(&ctx, gctx));
        CKD(p_cuCtxPushCurrent(ctx));
        float *out;
        unsigned *sms_d;
        CK(cudaMalloc(&out, (size_t)blocks * sizeof(float)));
        CK(cudaMalloc(&sms_d, (size_t)blocks * sizeof(unsigned)));
        cudaStream_t s = (cudaStream_t)gs;
        fma_kernel<<<blocks, threads, 0, s>>>(out, 256, 1.0f, sms_d);
        CK(cudaStreamSynchronize(s));
        std::vector<double> v;
        {
            /* the timer's events belong to the Green Context: destroyed before it is */
            timer t;
            for (int r = 0; r < O.repeats; r++) {
                t.start(s);
                fma_kernel<<<blocks, threads, 0, s>>>(out, iters, 1.0f, sms_d);
                double ms = t.stop_ms(s);
                CK(cudaGetLastError());
                v.push_back(2.0 * 8 * iters * (double)blocks * threads / (ms * 1e6));
            }
        }
        std::vector<unsigned> seen(blocks);
        CK(cudaMemcpy(seen.data(), sms_d, seen.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
        int used = distinct(seen);
        CK(cudaFree(out));
        CK(cudaFree(sms_d));
        CUcontext popped;
        CKD(p_cuCtxPopCurrent(&popped));
        CKD(p_cuStreamDestroy(gs));
        CKD(p_cuGreenCtxDestroy(gctx));
        summary sm = summarise(v);
        if (k == sms) full_rate = sm.median;
        json_array_append_new(pts, json_pack("{s:i,s:i,s:i,s:f,s:o}", "sms_asked", k,
                                             "sms_given", (int)part.sm.smCount, "sms_seen", used,
                                             "gflops", sm.median, "samples", samples_json(v)));
        fprintf(stderr, "  green %3d SMs (given %u): %9.0f GFLOP/s on %d SMs seen\n", k,
                part.sm.smCount, sm.median, used);
        if (k < sms) {
            char name[64];
            snprintf(name, sizeof name, "green_%d_sms_enforced", k);
            check(name, used <= (int)part.sm.smCount, "blocks seen on %d SMs of %u given", used,
                  part.sm.smCount);
        }
    }
    /* Rate proportional to SMs: compare each partition with the whole GPU. */
    size_t i;
    json_t *p;
    json_array_foreach(pts, i, p)
    {
        double given = (double)json_integer_value(json_object_get(p, "sms_given"));
        double rate = json_number_value(json_object_get(p, "gflops"));
        json_object_set_new(p, "rate_over_share",
                            json_real(full_rate > 0 ? rate / (full_rate * given / sms) : 0));
    }
    json_object_set_new(g_meas, "green_contexts", pts);
}

/* Two processes (this program again, with --slice-child) spin on the global timer; the gaps in
 * each one's timeline are the other's turns. */
static int slice_child(const char *path, double seconds)
{
    CK(cudaSetDevice(O.device));
    unsigned long long *gaps, *span;
    int *n_gaps;
    const int max_gaps = 1 << 16;
    CK(cudaMalloc(&gaps, (size_t)max_gaps * 2 * sizeof *gaps));
    CK(cudaMalloc(&span, 2 * sizeof *span));
    CK(cudaMalloc(&n_gaps, sizeof *n_gaps));
    spin_kernel<<<1, 1>>>(1000000, 1000, gaps, max_gaps, n_gaps, span); /* context warm */
    CK(cudaDeviceSynchronize());
    /* Start together: the parent releases both children by closing stdin. */
    char c;
    if (read(0, &c, 1) < 0) return 1;
    spin_kernel<<<1, 1>>>((uint64_t)(seconds * 1e9), 2000, gaps, max_gaps, n_gaps, span);
    CK(cudaDeviceSynchronize());
    int n;
    unsigned long long sp[2];
    CK(cudaMemcpy(&n, n_gaps, sizeof n, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(sp, span, sizeof sp, cudaMemcpyDeviceToHost));
    std::vector<unsigned long long> g((size_t)n * 2);
    if (n) CK(cudaMemcpy(g.data(), gaps, g.size() * sizeof *gaps, cudaMemcpyDeviceToHost));
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "%llu %llu %d\n", sp[0], sp[1], n);
    for (int i = 0; i < n; i++)
        fprintf(f, "%llu %llu\n", g[2 * i], g[2 * i + 1]);
    return fclose(f) ? 1 : 0;
}

struct run_iv {
    unsigned long long a, b;
    int who;
};

static void measure_timeslice(const char *self)
{
    char dir[] = "/tmp/colosim-slice-XXXXXX";
    if (!mkdtemp(dir)) {
        check("timeslice", false, "cannot make a temporary folder");
        return;
    }
    double seconds = O.quick ? 0.3 : 1.0;
    int fds[2];
    if (pipe(fds)) return;
    pid_t pids[2];
    char files[2][256], secs[32];
    snprintf(secs, sizeof secs, "%g", seconds);
    for (int i = 0; i < 2; i++) {
        snprintf(files[i], sizeof files[i], "%s/child%d.txt", dir, i);
        char dev[16];
        snprintf(dev, sizeof dev, "%d", O.device);
        const char *argv[] = {self, "--slice-child", files[i], secs, "--device", dev, NULL};
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[0], 0);
        posix_spawn_file_actions_addclose(&fa, fds[1]);
        if (posix_spawn(&pids[i], self, &fa, NULL, (char *const *)argv, environ)) pids[i] = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fds[0]);
    sleep(3); /* both contexts created and warm */
    close(fds[1]);
    int ok = 1;
    for (int i = 0; i < 2; i++) {
        int st = 0;
        if (pids[i] < 0 || waitpid(pids[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
            ok = 0;
    }
    if (!ok) {
        check("timeslice_children", false, "a child process failed");
        return;
    }
    /* Each child's running intervals: its span minus its gaps. */
    std::vector<run_iv> runs;
    json_t *raw = json_array();
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "r");
        unsigned long long s0, s1, a, b;
        int n = 0;
        if (!f || fscanf(f, "%llu %llu %d", &s0, &s1, &n) != 3) {
            if (f) fclose(f);
            check("timeslice_children", false, "unreadable child output");
            return;
        }
        json_t *gaps = json_array();
        unsigned long long from = s0;
        for (int k = 0; k < n && fscanf(f, "%llu %llu", &a, &b) == 2; k++) {
            runs.push_back({from, a, i});
            from = b;
            json_array_append_new(gaps, json_pack("[I,I]", (json_int_t)(a - s0), (json_int_t)(b - s0)));
        }
        runs.push_back({from, s1, i});
        fclose(f);
        remove(files[i]);
        json_array_append_new(raw, json_pack("{s:I,s:I,s:o}", "start_ns", (json_int_t)s0,
                                             "end_ns", (json_int_t)s1, "gaps_ns", gaps));
    }
    rmdir(dir);
    std::sort(runs.begin(), runs.end(), [](const run_iv &x, const run_iv &y) { return x.a < y.a; });
    /* Slices: runs of one process while the other was also running its spin (overlap window);
     * switches: from one process's last timestamp to the other's first. */
    unsigned long long lo = 0, hi = ~0ull;
    for (int i = 0; i < 2; i++) {
        unsigned long long s = ~0ull, e = 0;
        for (auto &r : runs)
            if (r.who == i) {
                if (r.a < s) s = r.a;
                if (r.b > e) e = r.b;
            }
        if (s > lo) lo = s;
        if (e < hi) hi = e;
    }
    std::vector<double> slices, switches;
    for (size_t k = 0; k + 1 < runs.size(); k++) {
        const run_iv &r = runs[k], &nx = runs[k + 1];
        if (r.a <= lo || r.b >= hi) continue; /* first and last runs are cut */
        slices.push_back((double)(r.b - r.a) / 1e3);
        if (nx.who != r.who && nx.a > r.b) switches.push_back((double)(nx.a - r.b) / 1e3);
    }
    json_object_set_new(g_meas, "timeslice",
                        json_pack("{s:f,s:o,s:o,s:o}", "seconds", seconds, "children", raw,
                                  "slices_us", samples_json(slices), "switches_us",
                                  samples_json(switches)));
    if (slices.size() < 4 || switches.empty()) {
        check("timeslice_observed", false,
              "%zu slices and %zu switches seen: the two processes did not alternate "
              "(MPS running? exclusive compute mode?)",
              slices.size(), switches.size());
        return;
    }
    param("timeslice.default_us", "us", slices, (double)g_gpu->timeslice.default_ns / 1e3,
          "two processes, one spinning thread each reading %globaltimer; a slice is a run "
          "between two gaps over 2 us");
    param("timeslice.switch_us", "us", switches, (double)g_gpu->timeslice.switch_ns / 1e3,
          "from one process's last timestamp to the other's first");
    summary s = summarise(slices);
    check("timeslice_plausible", s.median > 100 && s.median < 100000, "median slice %.0f us",
          s.median);
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
        return slice_child(argv[2], atof(argv[3]));
    }
    colo_atomic_remove_on_signal(); /* killed while writing its output: no temporary file left */
    static const struct option longs[] = {
        {"gpu", required_argument, NULL, 'g'},   {"output", required_argument, NULL, 'o'},
        {"repeats", required_argument, NULL, 'r'}, {"quick", no_argument, NULL, 'q'},
        {"only", required_argument, NULL, 'n'},  {"device", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},        {"guess-gpu", no_argument, NULL, 'G'},
        {NULL, 0, NULL, 0}};
    bool guess_only = false;
    int c;
    while ((c = getopt_long(argc, argv, "o:h", longs, NULL)) != -1) {
        switch (c) {
        case 'g': O.gpu = optarg; break;
        case 'o': O.out = optarg; break;
        case 'r': O.repeats = atoi(optarg); break;
        case 'q': O.quick = true; break;
        case 'n': O.only = optarg; break;
        case 'd': O.device = atoi(optarg); break;
        case 'h': fputs(usage, stdout); return 0;
        case 'G': guess_only = true; break;
        default: fputs(usage, stderr); return 2;
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
    const char *gname = O.gpu ? O.gpu
                              : colo_gpu_guess(g_prop.name, (double)g_prop.totalGlobalMem / 1073741824.0,
                                               g_prop.multiProcessorCount);
    if (!gname) {
        fprintf(stderr, "colosim-calibrate: no GPU description for '%s' (%d SMs): give --gpu NAME "
                        "(colosim gpus lists them)\n", g_prop.name, g_prop.multiProcessorCount);
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
        fprintf(stderr, "colosim-calibrate: the device '%s' has %d SMs and the GPU description "
                        "%s has %d: give the --gpu of this device (colosim gpus lists them)\n",
                g_prop.name, g_prop.multiProcessorCount, gname, gpu->sm.count);
        colo_gpu_free(gpu);
        return 2;
    }
    g_gpu = gpu;
    if (gpu->sm.count != g_prop.multiProcessorCount) {
        fprintf(stderr, "colosim-calibrate: %s has %d SMs but '%s' has %d: give --gpu for the "
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
    double t0 = now_s();
    fprintf(stderr, "colosim-calibrate: %s (%d SMs) as %s, %d repeats%s\n", g_prop.name,
            g_prop.multiProcessorCount, gname, O.repeats, O.quick ? ", quick" : "");
    /* Two processes first, before this one holds GPU memory and clocks. */
    if (wanted("timeslice")) fprintf(stderr, "timeslice\n"), measure_timeslice(self);
    if (wanted("fp32")) fprintf(stderr, "fp32\n"), measure_fp32();
    if (wanted("tensor")) fprintf(stderr, "tensor\n"), measure_tensor();
    if (wanted("dram")) fprintf(stderr, "dram\n"), measure_dram();
    if (wanted("l2")) fprintf(stderr, "l2\n"), measure_l2();
    if (wanted("launch")) fprintf(stderr, "launch\n"), measure_launch();
    if (wanted("pcie")) fprintf(stderr, "pcie\n"), measure_pcie();
    if (wanted("corun")) fprintf(stderr, "corun\n"), measure_corun();
    if (wanted("green")) fprintf(stderr, "green\n"), measure_green();

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
    json_object_set_new(dev, "cuda_driver", json_sprintf("%d.%d", driver / 1000, (driver % 1000) / 10));
    json_object_set_new(dev, "cuda_runtime", json_sprintf("%d.%d", runtime / 1000, (runtime % 1000) / 10));
    json_object_set_new(root, "colosim_calibration", json_integer(1));
    json_object_set_new(root, "gpu", json_string(gname));
    json_object_set_new(root, "device", dev);
    json_object_set_new(root, "date", json_string(date));
    json_object_set_new(root, "command", json_string(cmd));
    json_object_set_new(root, "tool", json_sprintf("colosim-calibrate, %.0f s", now_s() - t0));
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
