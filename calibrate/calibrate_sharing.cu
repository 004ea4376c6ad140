/* calibrate_sharing.cu: measurements of the GPU shared: co-run, Green Contexts, time slices. */
#include "calibrate.cuh"
#include "calibrate_kernels.cuh"
#include "driver_entry.h"

extern "C" {
#include "gpu.h"
}

#include <cuda.h>
#include <jansson.h>

#include <algorithm>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

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
static const char *load_driver(void)
{
    COLO_DRIVER_LOADER(DRIVER_FUNCS)
}

#define CKD(call)                                                                                  \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *s_ = "?";                                                                  \
            if (p_cuGetErrorString) p_cuGetErrorString(r_, &s_);                                   \
            fprintf(stderr, "colosim-calibrate: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- measurements ---- */

/* Slowdown of a compute-bound and a DRAM-bound kernel run together in one context. */
void colo_calib_measure_corun(void)
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
    summary a = colo_calib_summarise(ca), b = colo_calib_summarise(cb),
            a2 = colo_calib_summarise(ja), b2 = colo_calib_summarise(jb);
    json_object_set_new(
        g_meas, "corun",
        json_pack("{s:s,s:o,s:o,s:o,s:o,s:f,s:f}", "what",
                  "fma_kernel (compute) and stream_kernel copy (DRAM) on every SM, "
                  "alone and in two streams of one context, ms",
                  "compute_alone_ms", colo_calib_samples_json(ca), "memory_alone_ms",
                  colo_calib_samples_json(cb), "compute_together_ms", colo_calib_samples_json(ja),
                  "memory_together_ms", colo_calib_samples_json(jb), "compute_slowdown",
                  a2.median / a.median, "memory_slowdown", b2.median / b.median));
    fprintf(stderr, "  co-run: compute %.3f -> %.3f ms (x%.2f), memory %.3f -> %.3f ms (x%.2f)\n",
            a.median, a2.median, a2.median / a.median, b.median, b2.median, b2.median / b.median);
    colo_calib_check("corun_no_speedup",
                     a2.median >= 0.95 * a.median && b2.median >= 0.95 * b.median,
                     "neither kernel runs faster beside the other");
    cudaStreamDestroy(sa);
    cudaStreamDestroy(sb);
    CK(cudaFree(buf));
    CK(cudaFree(out));
    CK(cudaFree(sink));
}

/* Green Contexts: the FMA kernel confined to k SMs; its rate should be k/all of the whole GPU's
 * and its blocks should run on at most k distinct SMs. */
void colo_calib_measure_green(void)
{
    const char *missing = load_driver();
    if (missing) {
        colo_calib_check("green_contexts", false, "the driver has no %s: no Green Context support",
                         missing);
        return;
    }
    CUdevice dev;
    CKD(p_cuDeviceGet(&dev, O.device));
    CUdevResource all;
    if (p_cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS) {
        colo_calib_check("green_contexts", false,
                         "cuDeviceGetDevResource failed: no Green Context support");
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
                colo_calib_check("green_split", false, "cannot split %d SMs off", k);
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
        int used = colo_calib_distinct(seen);
        CK(cudaFree(out));
        CK(cudaFree(sms_d));
        CUcontext popped;
        CKD(p_cuCtxPopCurrent(&popped));
        CKD(p_cuStreamDestroy(gs));
        CKD(p_cuGreenCtxDestroy(gctx));
        summary sm = colo_calib_summarise(v);
        if (k == sms) full_rate = sm.median;
        json_array_append_new(pts, json_pack("{s:i,s:i,s:i,s:f,s:o}", "sms_asked", k, "sms_given",
                                             (int)part.sm.smCount, "sms_seen", used, "gflops",
                                             sm.median, "samples", colo_calib_samples_json(v)));
        fprintf(stderr, "  green %3d SMs (given %u): %9.0f GFLOP/s on %d SMs seen\n", k,
                part.sm.smCount, sm.median, used);
        if (k < sms) {
            char name[64];
            snprintf(name, sizeof name, "green_%d_sms_enforced", k);
            colo_calib_check(name, used <= (int)part.sm.smCount,
                             "blocks seen on %d SMs of %u given", used, part.sm.smCount);
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
int colo_calib_slice_child(const char *path, double seconds)
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

void colo_calib_measure_timeslice(const char *self)
{
    char dir[] = "/tmp/colosim-slice-XXXXXX";
    if (!mkdtemp(dir)) {
        colo_calib_check("timeslice", false, "cannot make a temporary folder");
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
        colo_calib_check("timeslice_children", false, "a child process failed");
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
            colo_calib_check("timeslice_children", false, "unreadable child output");
            return;
        }
        json_t *gaps = json_array();
        unsigned long long from = s0;
        for (int k = 0; k < n && fscanf(f, "%llu %llu", &a, &b) == 2; k++) {
            runs.push_back({from, a, i});
            from = b;
            json_array_append_new(gaps,
                                  json_pack("[I,I]", (json_int_t)(a - s0), (json_int_t)(b - s0)));
        }
        runs.push_back({from, s1, i});
        fclose(f);
        remove(files[i]);
        json_array_append_new(raw, json_pack("{s:I,s:I,s:o}", "start_ns", (json_int_t)s0, "end_ns",
                                             (json_int_t)s1, "gaps_ns", gaps));
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
                                  "slices_us", colo_calib_samples_json(slices), "switches_us",
                                  colo_calib_samples_json(switches)));
    if (slices.size() < 4 || switches.empty()) {
        colo_calib_check("timeslice_observed", false,
                         "%zu slices and %zu switches seen: the two processes did not alternate "
                         "(MPS running? exclusive compute mode?)",
                         slices.size(), switches.size());
        return;
    }
    colo_calib_param(
        "timeslice.default_us", "us", slices, (double)g_gpu->timeslice.default_ns / 1e3,
        "two processes, one spinning thread each reading %globaltimer; a slice is a run "
        "between two gaps over 2 us");
    colo_calib_param("timeslice.switch_us", "us", switches,
                     (double)g_gpu->timeslice.switch_ns / 1e3,
                     "from one process's last timestamp to the other's first");
    summary s = colo_calib_summarise(slices);
    colo_calib_check("timeslice_plausible", s.median > 100 && s.median < 100000,
                     "median slice %.0f us", s.median);
}
