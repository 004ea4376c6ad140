/* calibrate_kernels.cu: the device kernels colosim-calibrate times. */
#include "calibrate_kernels.cuh"

#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

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
