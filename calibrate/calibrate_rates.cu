/* calibrate_rates.cu: measurements of the GPU by itself: FP32, tensor, DRAM, L2, launch, PCIe. */
#include "calibrate.cuh"
#include "calibrate_kernels.cuh"

extern "C" {
#include "gpu.h"
}

#include <gsl/gsl_fit.h>
#include <jansson.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <vector>

/* ---- helpers ---- */

/* Shared memory that lets only one block of `threads` fit on an SM. */
static size_t one_block_smem(void)
{
    return g_prop.sharedMemPerMultiprocessor / 2 + 1024 > g_prop.sharedMemPerBlockOptin
               ? g_prop.sharedMemPerBlockOptin
               : g_prop.sharedMemPerMultiprocessor / 2 + 1024;
}

/* ---- measurements ---- */

void colo_calib_measure_fp32(void)
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
    colo_calib_param(
        "sm.fp32_gflops_per_sm", "GFLOP/s", v, ds,
        "fma_kernel: 8 independent FMA chains per thread, full occupancy on every SM, events");
    summary s = colo_calib_summarise(v);
    colo_calib_check("fp32_within_datasheet", s.median <= 1.05 * ds && s.median >= 0.4 * ds,
                     "%.1f GFLOP/s per SM vs %.1f at the datasheet's max clock", s.median, ds);
}

void colo_calib_measure_tensor(void)
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
    colo_calib_param(
        "sm.tensor_fp16_gflops_per_sm", "GFLOP/s", v, ds,
        "hmma_kernel: WMMA 16x16x16 fp16->fp32 (mma.sync; not wgmma), 4 accumulators per warp");
    summary s = colo_calib_summarise(v);
    colo_calib_check(
        "tensor_within_datasheet", s.median <= 1.05 * ds,
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
    return {bytes / (ms * 1e6), colo_calib_distinct(sms)};
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
    return {(double)n * 16 * passes / (ms * 1e6), colo_calib_distinct(sms)};
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

void colo_calib_measure_dram(void)
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
            summary s = colo_calib_summarise(v);
            json_array_append_new(curve,
                                  json_pack("{s:i,s:i,s:f,s:f,s:f,s:o}", "sms", k, "sms_seen", used,
                                            "gbps", s.median, "min", s.min, "max", s.max, "samples",
                                            colo_calib_samples_json(v)));
            fprintf(stderr, "  dram %-5s %3d SMs: %8.1f GB/s (SMs seen %d)\n", names[op], k,
                    s.median, used);
            if (used != k)
                colo_calib_check("dram_one_block_per_sm", false, "%s on %d blocks ran on %d SMs",
                                 names[op], k, used);
            if (s.median < 0.9 * prev) grows = false;
            prev = s.median;
            if (op == MEM_READ && k <= 4)
                for (double x : v)
                    per_sm.push_back(x / k);
            if (op == MEM_READ && s.median > best_read) best_read = s.median;
            if (op == MEM_COPY && k == sms) all_copy = v;
        }
        json_object_set_new(curves, names[op], curve);
        colo_calib_check(op == MEM_READ    ? "dram_read_grows_with_sms"
                         : op == MEM_WRITE ? "dram_write_grows_with_sms"
                                           : "dram_copy_grows_with_sms",
                         grows, "bandwidth never drops by more than 10 %% as SMs are added");
    }
    json_object_set_new(
        g_meas, "dram_vs_sms",
        json_pack("{s:I,s:o}", "buffer_bytes", (json_int_t)bytes, "curves", curves));
    colo_calib_param(
        "memory.achievable_gbps", "GB/s", all_copy, colo_gpu_dram_rate(g_gpu),
        "stream_kernel copy (read + write counted) on every SM, one 1024-thread block each, "
        "buffer 16 x L2");
    colo_calib_param("memory.per_sm_gbps", "GB/s", per_sm, g_gpu->memory.per_sm_gbps,
                     "stream_kernel read on 1, 2 and 4 SMs, bandwidth / SMs");
    summary s = colo_calib_summarise(all_copy);
    colo_calib_check("dram_below_peak",
                     s.median <= g_gpu->memory.peak_gbps && best_read <= g_gpu->memory.peak_gbps,
                     "copy %.0f, best read %.0f GB/s; datasheet peak %.0f", s.median, best_read,
                     g_gpu->memory.peak_gbps);
    stream_free(&b);
}

void colo_calib_measure_l2(void)
{
    int sms = g_prop.multiProcessorCount;
    size_t l2 = (size_t)g_prop.l2CacheSize;
    size_t cap = l2 * 4;
    stream_bufs b = stream_alloc(cap);
    float4 *buf = b.buf;
    unsigned *sms_d = b.sms;
    float *sink = b.sink;
    static const double fracs[] = {1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 3.0 / 8, 1.0 / 2, 5.0 / 8,
                                   3.0 / 4,  7.0 / 8,  1.0,     1.5,     2.0,     4.0};
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
        summary s = colo_calib_summarise(v);
        json_array_append_new(ws, json_pack("{s:f,s:I,s:i,s:f,s:f,s:f,s:o}", "l2_fraction", f,
                                            "bytes", (json_int_t)(n * 16), "passes", passes, "gbps",
                                            s.median, "min", s.min, "max", s.max, "samples",
                                            colo_calib_samples_json(v)));
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
        summary s = colo_calib_summarise(v);
        json_array_append_new(vs, json_pack("{s:i,s:f,s:o}", "sms", k, "gbps", s.median, "samples",
                                            colo_calib_samples_json(v)));
        fprintf(stderr, "  l2 %3d SMs: %8.1f GB/s\n", k, s.median);
    }
    json_object_set_new(g_meas, "l2",
                        json_pack("{s:I,s:o,s:o}", "l2_bytes", (json_int_t)l2, "vs_working_set", ws,
                                  "vs_sms_at_l2_over_8", vs));
    colo_calib_param("l2.bandwidth_gbps", "GB/s", plateau, g_gpu->l2.bandwidth_gbps,
                     "l2_read_kernel (__ldcg: L1 bypassed), every SM, best working set of at most "
                     "L2/4 read many times");
    colo_calib_check("l2_faster_than_dram", plateau_med > 1.3 * beyond,
                     "L2-resident %.0f GB/s vs %.0f GB/s at 4 x L2", plateau_med, beyond);
    /* L1 hits would read several times the L2's rate (the loader refuses above 2x) */
    colo_calib_check(
        "l2_not_l1", plateau_med <= 2.0 * g_gpu->l2.bandwidth_gbps,
        "%.0f GB/s is more than twice the GPU file's L2 bandwidth (%.0f GB/s): L1 hits?",
        plateau_med, g_gpu->l2.bandwidth_gbps);
    stream_free(&b);
}

void colo_calib_measure_launch(void)
{
    empty_kernel<<<1, 32>>>();
    CK(cudaDeviceSynchronize());
    int n = O.quick ? 200 : 1000;
    std::vector<double> host, gpu;
    for (int r = 0; r < O.repeats; r++) {
        double t0 = colo_calib_now_s();
        for (int i = 0; i < n; i++)
            empty_kernel<<<1, 32>>>();
        double t1 = colo_calib_now_s();
        CK(cudaDeviceSynchronize());
        double t2 = colo_calib_now_s();
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
        double t0 = colo_calib_now_s();
        flag_kernel<<<1, 1>>>(flag_d);
        while (*(volatile int *)flag_h == 0) {
        }
        start.push_back((colo_calib_now_s() - t0) * 1e6);
        CK(cudaDeviceSynchronize());
    }
    CK(cudaFreeHost(flag_h));
    json_object_set_new(g_meas, "launch",
                        json_pack("{s:i,s:o,s:o}", "launches_per_repeat", n,
                                  "back_to_back_us_per_launch", colo_calib_samples_json(gpu),
                                  "launch_to_start_us", colo_calib_samples_json(start)));
    colo_calib_param("launch.host_us", "us", host, g_gpu->launch.host_us,
                     "host time of cudaLaunchKernel for an empty kernel, back to back, per launch");
    colo_calib_param(
        "launch.start_us", "us", start, g_gpu->launch.start_us,
        "launch call to the kernel's write of a host-mapped flag seen by the host, idle GPU");
    summary s = colo_calib_summarise(start), h = colo_calib_summarise(host);
    colo_calib_check("launch_plausible", s.median > 0.3 && s.median < 100 && h.median < 100,
                     "start %.2f us, host %.2f us per launch", s.median, h.median);
}

/* Synchronous pinned copies of each size, host-timed; time = latency + bytes / rate fitted with
 * relative weights (GSL), so that small and large copies count alike. */
void colo_calib_measure_pcie(void)
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
                double t0 = colo_calib_now_s();
                CK(dir == 0 ? cudaMemcpy(d, h, b, cudaMemcpyHostToDevice)
                            : cudaMemcpy(h, d, b, cudaMemcpyDeviceToHost));
                v.push_back((colo_calib_now_s() - t0) * 1e6);
            }
            summary s = colo_calib_summarise(v);
            xs.push_back((double)b);
            ts.push_back(s.median);
            ws.push_back(1.0 / (s.median * s.median));
            json_array_append_new(pts, json_pack("{s:I,s:f,s:f,s:f,s:o}", "bytes", (json_int_t)b,
                                                 "us", s.median, "min", s.min, "max", s.max,
                                                 "samples", colo_calib_samples_json(v)));
            fprintf(stderr, "  %s %10zu B: %10.2f us (%.2f GB/s)\n", name, b, s.median,
                    (double)b / (s.median * 1e3));
        }
        double c0, c1, cov00, cov01, cov11, chisq;
        gsl_fit_wlinear(xs.data(), 1, ws.data(), 1, ts.data(), 1, xs.size(), &c0, &c1, &cov00,
                        &cov01, &cov11, &chisq);
        /* Rate and latency per repeat of the largest and smallest sizes, for the spread. */
        json_object_set_new(
            dirs, name,
            json_pack("{s:o,s:f,s:f}", "points", pts, "fit_latency_us", c0, "fit_gbps", 1e-3 / c1));
        std::vector<double> rate = {1e-3 / c1}, lat = {c0 > 0 ? c0 : 0};
        colo_calib_param(dir == 0 ? "pcie.h2d_gbps" : "pcie.d2h_gbps", "GB/s", rate,
                         dir == 0 ? g_gpu->pcie.h2d_gbps : g_gpu->pcie.d2h_gbps,
                         "synchronous cudaMemcpy from pinned memory, 4 KiB to 256 MiB, host-timed; "
                         "weighted fit time = latency + bytes / rate");
        if (dir == 0)
            colo_calib_param("pcie.latency_us", "us", lat, g_gpu->pcie.latency_us,
                             "intercept of the H2D fit (host-observed per-transfer cost)");
        colo_calib_check(dir == 0 ? "h2d_fit" : "d2h_fit", c1 > 0 && 1e-3 / c1 < 200,
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
            double t0 = colo_calib_now_s();
            CK(cudaMemcpyAsync(d, h, b, cudaMemcpyHostToDevice, s1));
            if (same)
                CK(cudaMemcpyAsync(d2, h2, b, cudaMemcpyHostToDevice, s2));
            else
                CK(cudaMemcpyAsync(h2, d2, b, cudaMemcpyDeviceToHost, s2));
            CK(cudaDeviceSynchronize());
            v.push_back(2.0 * (double)b / ((colo_calib_now_s() - t0) * 1e9));
        }
        summary s = colo_calib_summarise(v);
        json_object_set_new(
            two, same ? "two_h2d_total_gbps" : "h2d_plus_d2h_total_gbps",
            json_pack("{s:f,s:o}", "median", s.median, "samples", colo_calib_samples_json(v)));
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
