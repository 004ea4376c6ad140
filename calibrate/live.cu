/* live.cu: colosim-live, live runs on a real GPU (docs/live.md). The executor (processes, start
 * barrier, MPS daemon, faults, results) is the core's, in sim/live/; this file is its CUDA
 * backend: each traced kernel is replayed by a synthetic kernel with the traced grid, block and
 * shared memory that reads the kernel's DRAM bytes and then does FMA iterations, the iterations
 * fitted one kernel at a time so that alone it takes the time the simulator gives it alone on
 * this GPU; copies of the traced sizes go from and to pinned memory; host gaps are waits on the
 * host between launches. Green Contexts come from the driver through the runtime's entry-point
 * query, so the binary starts (and says so) on a machine without a GPU. */
#include "driver_entry.h"

extern "C" {
#include "alloc.h"
#include "gpu.h"
#include "kernel_model.h"
#include "layout.h"
#include "live_run.h"
#include "serving.h"
}

#include <gsl/gsl_errno.h>

#include <algorithm>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define DRIVER_FUNCS(X)                                                                            \
    X(cuDeviceGet, 2000)                                                                           \
    X(cuDeviceGetDevResource, 12040)                                                               \
    X(cuDevSmResourceSplitByCount, 12040)                                                          \
    X(cuDevResourceGenerateDesc, 12040)                                                            \
    X(cuGreenCtxCreate, 12040)                                                                     \
    X(cuGreenCtxStreamCreate, 12050)                                                               \
    X(cuCtxFromGreenCtx, 12040)                                                                    \
    X(cuCtxSetCurrent, 4000)                                                                       \
    X(cuCtxGetCurrent, 4000)
DRIVER_FUNCS(COLO_DRIVER_DECLARE)

/* NULL, or the name of the first function the driver lacks. */
static const char *load_driver(void){COLO_DRIVER_LOADER(DRIVER_FUNCS)}

/* The synthetic kernel: reads n4 float4 from buf starting at first (DRAM traffic), then does
 * iters rounds of 8 dependent FMAs per thread, touching smem_words of shared memory. */
__global__ void synth_kernel(const float4 *__restrict__ buf, unsigned long long first,
                             unsigned long long n4, long long iters, int smem_words, float *sink)
{
    extern __shared__ float smem[];
    unsigned long long block =
        blockIdx.x +
        (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
    unsigned long long threads = (unsigned long long)gridDim.x * gridDim.y * gridDim.z *
                                 blockDim.x * blockDim.y * blockDim.z;
    unsigned tib = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned long long tid = block * blockDim.x * blockDim.y * blockDim.z + tib;
    float acc = 0.0f;
    for (unsigned long long i = tid; i < n4; i += threads) {
        float4 v = buf[first + i];
        acc += v.x + v.y + v.z + v.w;
    }
    float x = acc + (float)tib, y = 1.0f, a = 0.999f;
    for (long long k = 0; k < iters; k++) {
#pragma unroll
        for (int u = 0; u < 4; u++) {
            x = fmaf(x, a, y);
            y = fmaf(y, a, x);
        }
    }
    if (smem_words > 0) {
        smem[tib % smem_words] = x;
        __syncthreads();
        x += smem[(tib + 1) % smem_words];
    }
    if (x == 1234.5678f) sink[0] = x + y;
}

struct op_run {
    bool kernel;
    dim3 grid, block;
    int smem;
    unsigned long long n4;
    long long iters;
    double target_ns, fitted_ns;
    long long bytes;
    bool h2d;
    long long gap;
};

struct tenant_rt {
    bool used;
    std::vector<op_run> ops;
    cudaStream_t stream;
    CUcontext ctx; /* Green Context's, or NULL */
    float4 *buf;
    unsigned long long buf4, cursor;
    void *host, *dev;
    float *sink;
};

static std::vector<tenant_rt> T;
static int max_smem_optin;
static __thread CUcontext current_ctx;
static bool mps_client; /* this process was planned as a client of the run's MPS daemon */

/* A failed CUDA call's error: what was called, CUDA's words and name, and why it may have
 * failed (colo_live_cuda_hint). */
static int cuda_error(colo_error_t *err, const char *what, cudaError_t e)
{
    const char *hint = colo_live_cuda_hint(cudaGetErrorName(e), mps_client);
    return colo_error_set(err, COLO_EIO, NULL, 0, NULL, "%s: %s (%s)%s%s", what,
                          cudaGetErrorString(e), cudaGetErrorName(e), hint ? ": " : "",
                          hint ? hint : "");
}

#define CK(call, what)                                                                             \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return cuda_error(err, what, e_);                                   \
    } while (0)

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static unsigned clampu(unsigned v, unsigned lo, unsigned hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The tenant's ops as the backend replays them, with the targets the simulator gives them alone
 * where they are fitted (colo_live_fit_place: the whole GPU, or the MIG instance). */
static int build_ops(const colo_scenario_t *sc, const colo_live_plan_t *plan, size_t i,
                     std::vector<op_run> &ops, colo_error_t *err)
{
    const colo_tenant_cfg_t *c = &sc->tenants[i];
    const colo_trace_t *tr = c->trace;
    const colo_gpu_t *g = sc->gpu;
    colo_place_rates_t at;
    colo_live_fit_place(sc, plan, i, &at, NULL, 0);
    std::vector<colo_time_t> t(tr->n_ops);
    colo_time_t total;
    int rc = colo_variant_times(c, 0, g, at, t.data(), &total, err);
    if (rc) return rc;
    colo_precision_t prec = colo_precision_of(tr, c->precision);
    for (size_t k = 0; k < tr->n_ops; k++) {
        const colo_op_t *op = &tr->ops[k];
        op_run r = {};
        r.gap = op->gap;
        r.target_ns = (double)t[k];
        if (op->type == COLO_OP_COPY) {
            r.bytes = op->bytes;
            r.h2d = op->dir == COLO_COPY_H2D;
        } else {
            colo_kernel_work_t w;
            if ((rc = colo_kernel_work_at(op, c->trace_gpu, g, c->fp32_math, &prec, &w, tr->path,
                                          k, err)))
                return rc;
            r.kernel = true;
            r.grid = dim3(std::max(op->grid[0], 1u), std::max(op->grid[1], 1u),
                          std::max(op->grid[2], 1u));
            /* the trace reader refused blocks beyond CUDA's limits (x*y*z <= 1024, z <= 64) */
            if (op->block[0] == 0)
                r.block = dim3(256, 1, 1);
            else
                r.block = dim3(clampu(op->block[0], 1, 1024), clampu(op->block[1], 1, 1024),
                               clampu(op->block[2], 1, 64));
            if (r.block.x * r.block.y * r.block.z > 1024) r.block = dim3(1024, 1, 1);
            r.smem = op->shared_bytes > 0 ? std::min(op->shared_bytes, max_smem_optin) : 0;
            r.n4 = (unsigned long long)(std::max(w.dram_bytes, 0.0) / 16.0);
        }
        ops.push_back(r);
    }
    return 0;
}

static void launch(tenant_rt &tr, const op_run &r, long long iters)
{
    unsigned long long n4 = std::min(r.n4, tr.buf4);
    if (tr.cursor + n4 > tr.buf4) tr.cursor = 0; /* start again at the front: still beyond L2 */
    int words = r.smem / 4;
    synth_kernel<<<r.grid, r.block, (size_t)r.smem, tr.stream>>>(tr.buf, tr.cursor, n4, iters,
                                                                 words, tr.sink);
    tr.cursor += n4;
}

/* Holds the stream busy for about ns, so that launches queued behind it start back to back. */
__global__ void busy_kernel(long long ns)
{
    long long t0 = clock64(), cycles = ns * 2; /* at least ns at clocks up to 2 GHz */
    while (clock64() - t0 < cycles) {
    }
}

/* Time of one launch, in ns: the median over 3 rounds of n launches queued behind a 50 us busy
 * kernel (so that the host's launch latency is not timed), divided by n. n grows until a round
 * takes at least 200 us. */
static double time_kernel(tenant_rt &tr, const op_run &r, long long iters)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    launch(tr, r, iters); /* warm */
    std::vector<double> v;
    int n = 1;
    for (int k = 0; k < 3; k++) {
        busy_kernel<<<1, 1, 0, tr.stream>>>(50000);
        cudaEventRecord(a, tr.stream);
        for (int j = 0; j < n; j++)
            launch(tr, r, iters);
        cudaEventRecord(b, tr.stream);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        double per = ms * 1e6 / n;
        if (ms * 1e6 < 200000 && n < 64) { /* too short to time well: more launches */
            n = std::min(64, n * 4);
            k--;
            continue;
        }
        v.push_back(per);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(v.begin(), v.end());
    return v[1];
}

/* Iterations so that the kernel alone takes its target: memory alone first, then a line through
 * two points, refined once. Identical kernels (same shape, bytes and target) are fitted once. */
static void fit(tenant_rt &tr, std::vector<op_run> &ops)
{
    for (size_t k = 0; k < ops.size(); k++) {
        op_run &r = ops[k];
        if (!r.kernel) continue;
        bool done = false;
        for (size_t j = 0; j < k && !done; j++) {
            const op_run &q = ops[j];
            if (q.kernel && q.grid.x == r.grid.x && q.grid.y == r.grid.y && q.grid.z == r.grid.z &&
                q.block.x == r.block.x && q.block.y == r.block.y && q.block.z == r.block.z &&
                q.smem == r.smem && q.n4 == r.n4 && q.target_ns == r.target_ns) {
                r.iters = q.iters;
                r.fitted_ns = q.fitted_ns;
                done = true;
            }
        }
        if (done) continue;
        double t0 = time_kernel(tr, r, 0);
        r.iters = 0;
        r.fitted_ns = t0;
        if (t0 >= r.target_ns) continue;
        long long i1 = 16;
        double t1 = time_kernel(tr, r, i1);
        while (t1 < t0 + 0.25 * (r.target_ns - t0) && i1 < (1LL << 26)) {
            i1 *= 4;
            t1 = time_kernel(tr, r, i1);
        }
        double slope = (t1 - t0) / (double)i1;
        if (!(slope > 0)) continue;
        long long it = (long long)llround((r.target_ns - t0) / slope);
        for (int round = 0; round < 2 && it > 0; round++) {
            double t2 = time_kernel(tr, r, it);
            if (t2 <= t0) break;
            it = (long long)llround((double)it * (r.target_ns - t0) / (t2 - t0));
        }
        r.iters = std::max(it, 0LL);
        r.fitted_ns = time_kernel(tr, r, r.iters);
    }
}

static int alloc_buffers(tenant_rt &tr, const std::vector<op_run> &ops, const colo_gpu_t *g,
                         colo_error_t *err)
{
    long long copy = 1;
    for (const op_run &r : ops)
        if (!r.kernel) copy = std::max(copy, r.bytes);
    /* room for the biggest kernel's reads, at least 4 x L2 so that they miss it */
    unsigned long long want = 4ull * (unsigned long long)g->l2.bytes / 16;
    for (const op_run &r : ops)
        want = std::max(want, r.n4);
    want = std::min(want, (1ull << 30) / 16); /* at most 1 GiB; bigger reads are capped */
    tr.buf4 = want;
    CK(cudaMalloc(&tr.buf, tr.buf4 * 16), "cudaMalloc (kernel buffer)");
    CK(cudaMemset(tr.buf, 0, tr.buf4 * 16), "cudaMemset");
    CK(cudaMalloc(&tr.sink, 64), "cudaMalloc");
    CK(cudaMalloc(&tr.dev, (size_t)copy), "cudaMalloc (copies)");
    CK(cudaHostAlloc(&tr.host, (size_t)copy, cudaHostAllocDefault), "cudaHostAlloc (copies)");
    return 0;
}

/* Opens the device; its description into device. With sc's GPU description, checks the SMs the
 * process sees: the GPU's (or, under MIG, its instance's) must be the simulator's. */
static int open_device(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                       char *device, size_t device_len, colo_error_t *err)
{
    for (size_t i = 0; i < plan->n; i++)
        if (plan->t[i].process == proc && plan->t[i].ctx == COLO_LIVE_MPS) mps_client = true;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
        return cuda_error(err, "no CUDA device (--backend cpu checks the harness without one)", e);
    if (n < 1)
        return colo_error_set(err, COLO_EIO, NULL, 0, NULL,
                              "no CUDA device visible (--backend cpu checks the harness without "
                              "one): check nvidia-smi and CUDA_VISIBLE_DEVICES");
    CK(cudaSetDevice(0), "cudaSetDevice");
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
    int drv = 0;
    cudaDriverGetVersion(&drv);
    snprintf(device, device_len, "%s, %d SMs, driver CUDA %d.%d, uuid GPU-%02x%02x%02x%02x", p.name,
             p.multiProcessorCount, drv / 1000, drv % 1000 / 10, (unsigned char)p.uuid.bytes[0],
             (unsigned char)p.uuid.bytes[1], (unsigned char)p.uuid.bytes[2],
             (unsigned char)p.uuid.bytes[3]);
    int want = sc->gpu->sm.count;
    const char *what = "GPU";
    for (size_t i = 0; i < plan->n; i++)
        if (plan->t[i].process == proc && plan->t[i].ctx == COLO_LIVE_MIG) {
            want = plan->t[i].sms;
            what = "MIG instance";
        }
    /* an MPS client under an active-thread percentage sees its cap's SMs, rounded down to whole
     * TPCs (seen on an H200: 20 % -> 26 SMs, 30 % -> 38, 70 % -> 92 of 132) */
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (pct && *pct && mps_client && atoi(pct) > 0 && atoi(pct) < 100) {
        int cap = colo_layout_mps_cap(sc->gpu, want, atoi(pct));
        if (cap > 0) want = cap;
        what = "capped MPS client";
    }
    if (p.multiProcessorCount != want)
        return colo_error_set(err, COLO_EINVAL, sc->path, 0, "gpu",
                              "this %s has %d SMs (%s) and the scenario's %s has %d: give the "
                              "GPU file of this device (--set gpu=...; colosim gpus lists them)",
                              what, p.multiProcessorCount, p.name, sc->gpu->name, want);
    max_smem_optin = p.sharedMemPerBlockOptin;
    CK(cudaFuncSetAttribute(synth_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                            max_smem_optin),
       "cudaFuncSetAttribute");
    T.assign(sc->n_tenants, tenant_rt());
    return 0;
}

/* Fitting child: each of the process's tenants alone, in turn, where colo_live_fit_place says
 * (the whole GPU, or its MIG instance); no MPS daemon runs yet. */
static int cuda_fit(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                    colo_live_fit_t *out, char *device, size_t device_len, colo_error_t *err)
{
    int rc = open_device(sc, plan, proc, device, device_len, err);
    if (rc) return rc;
    for (size_t i = 0; i < plan->n; i++) {
        if (plan->t[i].process != proc || sc->tenants[i].command) continue;
        tenant_rt &tr = T[i];
        tr.used = true;
        if ((rc = build_ops(sc, plan, i, tr.ops, err))) return rc;
        CK(cudaStreamCreateWithFlags(&tr.stream, cudaStreamNonBlocking), "cudaStreamCreate");
        if ((rc = alloc_buffers(tr, tr.ops, sc->gpu, err))) return rc;
        fit(tr, tr.ops);
        CK(cudaGetLastError(), "fitting the synthetic kernels");
        for (size_t k = 0; k < tr.ops.size(); k++)
            if (tr.ops[k].kernel &&
                colo_live_fit_add(out, i, k, tr.ops[k].iters, tr.ops[k].target_ns,
                                  tr.ops[k].fitted_ns))
                return colo_error_set(err, COLO_ENOMEM, NULL, 0, NULL, "out of memory");
        /* free before the next tenant's fit: each is fitted alone */
        cudaStreamDestroy(tr.stream);
        cudaFree(tr.buf);
        cudaFree(tr.sink);
        cudaFree(tr.dev);
        cudaFreeHost(tr.host);
    }
    return 0;
}

/* Green Contexts: the device's SMs split once into the plan's groups; each tenant's context is
 * made of its own groups of that one split (disjoint, unless the scenario lets them overlap),
 * and the SMs granted are checked against the simulator's. */
static int make_green(const colo_scenario_t *sc, const colo_live_plan_t *plan, CUdevice dev,
                      CUdevResource *all, colo_error_t *err)
{
    std::vector<CUdevResource> groups((size_t)std::max(plan->green_groups, 1));
    unsigned n = (unsigned)plan->green_groups;
    CUdevResource rest;
    if (plan->green_groups < 1 ||
        p_cuDevSmResourceSplitByCount(groups.data(), &n, all, &rest, 0,
                                      (unsigned)plan->green_unit) != CUDA_SUCCESS)
        return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, NULL,
                              "cannot split the device's %u SMs into %d groups of %d SMs",
                              all->sm.smCount, plan->green_groups, plan->green_unit);
    std::vector<unsigned> got(n);
    for (unsigned k = 0; k < n; k++)
        got[k] = groups[k].sm.smCount;
    std::vector<int> granted(plan->n);
    int rc = colo_live_green_check(sc, plan, got.data(), (int)n, granted.data(), err);
    if (rc) return rc;
    for (size_t i = 0; i < plan->n; i++) {
        const colo_live_tenant_t *pt = &plan->t[i];
        if (pt->ctx != COLO_LIVE_GREEN || !T[i].used) continue;
        CUdevResourceDesc desc;
        CUgreenCtx gctx;
        CUstream gs;
        if (p_cuDevResourceGenerateDesc(&desc, &groups[(size_t)pt->group_first],
                                        (unsigned)pt->group_count) != CUDA_SUCCESS ||
            p_cuGreenCtxCreate(&gctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS ||
            p_cuGreenCtxStreamCreate(&gs, gctx, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS ||
            p_cuCtxFromGreenCtx(&T[i].ctx, gctx) != CUDA_SUCCESS)
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, sc->tenants[i].name,
                                  "cannot make a Green Context of %d SMs", granted[i]);
        T[i].stream = (cudaStream_t)gs;
    }
    return 0;
}

/* Run child: the fit its fitting child made, then each tenant in its placement (MPS limits come
 * from the environment the executor gave this process; Green Contexts are made here). */
static int cuda_prepare(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                        const colo_live_fit_t *fitted, char *device, size_t device_len,
                        colo_error_t *err)
{
    int rc = open_device(sc, plan, proc, device, device_len, err);
    if (rc) return rc;
    bool green = false;
    for (size_t i = 0; i < plan->n; i++)
        green |= plan->t[i].process == proc && plan->t[i].ctx == COLO_LIVE_GREEN;
    const char *missing = green ? load_driver() : NULL;
    if (missing)
        return colo_error_set(err, COLO_EUNSUPPORTED, NULL, 0, NULL,
                              "the driver has no %s: no Green Contexts on this machine", missing);
    for (size_t i = 0; i < plan->n; i++) {
        if (plan->t[i].process != proc || sc->tenants[i].command) continue;
        tenant_rt &tr = T[i];
        tr.used = true;
        if ((rc = build_ops(sc, plan, i, tr.ops, err))) return rc;
        for (size_t k = 0; k < fitted->n; k++) {
            const colo_live_fit_entry_t *e = &fitted->e[k];
            if (e->tenant != i || e->op >= tr.ops.size() || !tr.ops[e->op].kernel) continue;
            tr.ops[e->op].iters = e->iters;
            tr.ops[e->op].fitted_ns = e->fitted_ns;
        }
    }
    CUcontext primary = NULL;
    if (green) {
        CUdevice dev = 0;
        CUdevResource all;
        CK(cudaFree(0), "creating the primary context");
        p_cuCtxGetCurrent(&primary);
        if (p_cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
            p_cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
            return colo_error_set(err, COLO_EUNSUPPORTED, NULL, 0, NULL,
                                  "cannot read the device's SM resource for Green Contexts");
        if ((rc = make_green(sc, plan, dev, &all, err))) return rc;
    }
    for (size_t i = 0; i < plan->n; i++) {
        tenant_rt &tr = T[i];
        if (!tr.used) continue;
        if (tr.ctx)
            p_cuCtxSetCurrent(tr.ctx); /* its buffers live in its Green Context */
        else
            CK(cudaStreamCreateWithFlags(&tr.stream, cudaStreamNonBlocking), "cudaStreamCreate");
        if ((rc = alloc_buffers(tr, tr.ops, sc->gpu, err))) return rc;
    }
    /* no Green Context stays current on this thread: each tenant's thread makes its own current */
    if (primary) p_cuCtxSetCurrent(primary);
    return 0;
}

static int cuda_request(size_t t, colo_error_t *err)
{
    tenant_rt &tr = T[t];
    if (tr.ctx && current_ctx != tr.ctx) {
        p_cuCtxSetCurrent(tr.ctx);
        current_ctx = tr.ctx;
    }
    long long last = now_ns();
    for (const op_run &r : tr.ops) {
        if (r.gap > 0) /* host work between launches: the CPU is busy, so spin */
            while (now_ns() < last + r.gap) {
            }
        last = now_ns();
        if (r.kernel) {
            launch(tr, r, r.iters);
            /* a launch-configuration error is not reported by the stream's synchronisation */
            CK(cudaPeekAtLastError(), "launching a synthetic kernel");
        }
        else if (r.h2d)
            CK(cudaMemcpyAsync(tr.dev, tr.host, (size_t)r.bytes, cudaMemcpyHostToDevice, tr.stream),
               "cudaMemcpyAsync");
        else
            CK(cudaMemcpyAsync(tr.host, tr.dev, (size_t)r.bytes, cudaMemcpyDeviceToHost, tr.stream),
               "cudaMemcpyAsync");
    }
    CK(cudaStreamSynchronize(tr.stream), "a request");
    CK(cudaGetLastError(), "a request");
    return 0;
}

static void cuda_finish(void)
{
    T.clear();
}

/* Each tenant's trace alone on the whole GPU: kernels fitted, then 20 inferences timed. */
static int cuda_self_test(const colo_scenario_t *sc, FILE *f, colo_error_t *err)
{
    colo_live_plan_t plan;
    int rc = colo_live_plan(sc, &plan, err);
    if (rc) return rc;
    for (size_t i = 0; i < plan.n; i++) { /* one process, each tenant alone on the whole GPU */
        plan.t[i].process = 0;
        plan.t[i].ctx = COLO_LIVE_PRIMARY;
        plan.t[i].sms = 0;
    }
    char device[256];
    colo_live_fit_t fitted;
    memset(&fitted, 0, sizeof fitted);
    rc = cuda_fit(sc, &plan, 0, &fitted, device, sizeof device, err);
    if (!rc) rc = cuda_prepare(sc, &plan, 0, &fitted, device, sizeof device, err);
    colo_live_fit_free(&fitted);
    colo_live_plan_free(&plan);
    if (rc) return rc;
    fprintf(f, "self-test on %s: each trace alone, replayed by fitted synthetic kernels\n", device);
    fprintf(f, "%-14s %7s %9s %9s %8s %9s %9s %8s\n", "tenant", "kernels", "k <=5%", "k med%",
            "k max%", "model ms", "replay ms", "error %");
    bool ok = true;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        tenant_rt &tr = T[i];
        if (!tr.used) continue;
        std::vector<double> kerr;
        double model = 0;
        for (const op_run &r : tr.ops) {
            if (r.kernel) kerr.push_back(100.0 * fabs(r.fitted_ns - r.target_ns) / r.target_ns);
        }
        colo_time_t iso;
        colo_place_rates_t whole = {sc->gpu->sm.count, colo_gpu_dram_rate(sc->gpu),
                                    colo_gpu_l2_rate(sc->gpu)};
        if ((rc = colo_variant_times(&sc->tenants[i], 0, sc->gpu, whole, NULL, &iso, err)))
            return rc;
        model = (double)iso / 1e6;
        std::vector<double> v;
        for (int k = 0; k < 23; k++) {
            long long a = now_ns();
            if ((rc = cuda_request(i, err))) return rc;
            if (k >= 3) v.push_back((double)(now_ns() - a) / 1e6);
        }
        std::sort(v.begin(), v.end());
        std::sort(kerr.begin(), kerr.end());
        size_t within = 0;
        for (double e : kerr)
            within += e <= 5.0;
        double med = kerr.empty() ? 0 : kerr[kerr.size() / 2];
        double mx = kerr.empty() ? 0 : kerr.back();
        double e = 100.0 * (v[v.size() / 2] - model) / model;
        ok &= fabs(e) <= 5.0;
        fprintf(f, "%-14.14s %7zu %8.0f%% %8.1f%% %7.0f%% %9.3f %9.3f %+7.1f%s\n",
                sc->tenants[i].name, kerr.size(),
                kerr.empty() ? 100.0 : 100.0 * (double)within / (double)kerr.size(), med, mx, model,
                v[v.size() / 2], e, fabs(e) <= 5.0 ? "" : "  (goal 5 %)");
    }
    fprintf(f, "k <=5%%: kernels whose fitted time alone is within 5 %% of the model's; "
               "replay ms: median of 20 whole inferences (host gaps included)\n");
    cuda_finish();
    return ok ? 0 : 1;
}

static const colo_live_backend_t cuda_backend = {
    "cuda",         "synthetic kernels fitted to each traced kernel, on this machine's GPU",
    true,           cuda_fit,
    cuda_prepare,
    cuda_request,   cuda_finish,
    cuda_self_test,
};

int main(int argc, char **argv)
{
    static const colo_live_backend_t *const backends[] = {&cuda_backend, &colo_live_cpu_backend};
    static const char *const self[] = {"/proc/self/exe"};
    gsl_set_error_handler_off();
    json_set_alloc_funcs(colo_malloc, colo_free);
    return colo_live_main(argc, argv, "colosim-live", self, 1, backends, 2);
}
