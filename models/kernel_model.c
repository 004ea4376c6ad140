/* kernel_model.c: the fixed/compute/memory decomposition of traced kernels, their placement on
 * GPUs by math class, and their change with the batch size. */
#include "kernel_model.h"

#include <math.h>

double colo_gpu_per_sm_rate(const colo_gpu_t *gpu)
{
    return gpu->memory.per_sm_gbps;
}

unsigned long long colo_kernel_waves(const colo_kernel_work_t *w, int sms)
{
    unsigned long long per_wave = (unsigned long long)w->occ.blocks_per_sm * (unsigned)sms;
    return (w->blocks + per_wave - 1) / per_wave;
}

int colo_kernel_sms_used(const colo_kernel_work_t *w, int sms)
{
    return w->blocks < (unsigned long long)sms ? (int)w->blocks : sms;
}

double colo_kernel_compute_ns(const colo_kernel_work_t *w, int sms)
{
    return (double)colo_kernel_waves(w, sms) * w->wave_ns;
}

double colo_kernel_memory_rate(const colo_kernel_work_t *w, int sms, double dram_rate)
{
    double ceiling = colo_kernel_sms_used(w, sms) * w->per_sm_rate;
    if (w->mem_eff > 0) { /* its loads in flight: a share of what the SMs and the GPU allow */
        ceiling *= w->mem_eff;
        if (w->mem_cap < dram_rate) dram_rate = w->mem_cap;
    }
    return ceiling < dram_rate ? ceiling : dram_rate;
}

double colo_kernel_alone_ns(const colo_kernel_work_t *w, int sms, double dram_rate,
                            double dram_bytes)
{
    double c = colo_kernel_compute_ns(w, sms);
    double m = dram_bytes > 0 ? dram_bytes / colo_kernel_memory_rate(w, sms, dram_rate) : 0;
    return w->fixed_ns + (c > m ? c : m);
}

double colo_kernel_alone_at(const colo_kernel_work_t *w, int sms, double dram_rate, double l2_rate)
{
    double t = colo_kernel_alone_ns(w, sms, dram_rate, w->dram_bytes);
    double t_l2 = w->l2_bytes / l2_rate; /* the L2's bandwidth bounds it too (as in the solver) */
    return t > t_l2 ? t : t_l2;
}

colo_time_t colo_kernel_duration(const colo_kernel_work_t *w, const colo_gpu_t *dst)
{
    double t =
        colo_kernel_alone_at(w, dst->sm.count, colo_gpu_dram_rate(dst), colo_gpu_l2_rate(dst)) -
        w->dispatch_ns;
    colo_time_t d = colo_time_from_ns(t);
    return d < 1 ? 1 : d;
}

void colo_kernel_at_batch(const colo_kernel_work_t *w, double f, colo_kernel_work_t *out)
{
    *out = *w;
    if (f == 1.0 || w->weight_bound) return;
    double b = ceil((double)w->blocks * f - 1e-9);
    out->blocks = b < 1 ? 1 : (unsigned long long)b;
    out->dram_bytes = w->dram_bytes * f;
    out->l2_bytes = w->l2_bytes * f;
    out->working_set = w->working_set * f;
}

void colo_kernel_repeat(const colo_kernel_work_t *w, int n, colo_kernel_work_t *out)
{
    *out = *w;
    out->wave_ns *= n;
    out->fixed_ns *= n;
    out->dispatch_ns *= n;
    out->dram_bytes *= n;
    out->l2_bytes *= n;
}

static int place(const colo_op_t *k, const colo_gpu_t *g, bool library, colo_occupancy_t *occ,
                 const char *trace_path, size_t i, colo_error_t *err)
{
    *occ =
        colo_occupancy(g, k->block[0] * k->block[1] * k->block[2], k->registers, k->shared_bytes);
    /* what the source knew of its registers and shared memory: at most that many per SM */
    if (k->blocks_per_sm > 0 && occ->blocks_per_sm > k->blocks_per_sm)
        occ->blocks_per_sm = k->blocks_per_sm;
    if (occ->blocks_per_sm > 0) return 0;
    /* A cuDNN or cuBLAS kernel built for a bigger SM (an A100's 164 KB of shared memory on a
     * T4's 64 KB): on this GPU the library runs one of its kernels that fits, taken as one block
     * of this size per SM. */
    if (library &&
        colo_occupancy(g, k->block[0] * k->block[1] * k->block[2], -1, -1).blocks_per_sm > 0) {
        occ->blocks_per_sm = 1; /* and the block fills what it overflowed */
        if (occ->by_shared == 0) occ->by_shared = 1;
        if (occ->by_registers == 0) occ->by_registers = 1;
        return 0;
    }
    char key[64];
    snprintf(key, sizeof key, "ops[%zu]", i);
    return colo_error_set(err, COLO_ERANGE, trace_path, k->line, key,
                          "kernel '%s' cannot run on %s: its block exceeds the SM's %s", k->name,
                          g->name, colo_limiter_name(occ->limiter));
}

/* The class the kernel runs as on g: as its name (or the trace) says, then whatever g falls back
 * to. The trace's own choice stands unless the tenant's setting is "fp32" (every FP32
 * convolution and matmul on CUDA cores); a kernel traced in FP32 where TF32 did not exist, so
 * that the framework had no choice to make, moves to TF32 where the setting allows it (cuDNN's
 * kernels under PyTorch's defaults, every convolution and matmul under "tf32"). */
static colo_math_t math_on(colo_kernel_class_t c, const colo_gpu_t *traced, const colo_gpu_t *g,
                           colo_fp32_math_t p)
{
    colo_math_t m = c.math;
    if (c.kind != COLO_KIND_OTHER) {
        bool tf32 = p == COLO_FP32_TF32 || (p == COLO_FP32_PYTORCH && c.kind == COLO_KIND_CUDNN);
        if (m == COLO_MATH_TF32 && p == COLO_FP32_IEEE)
            m = COLO_MATH_FP32;
        else if (m == COLO_MATH_FP32 && tf32 && traced->sm.math_per_clock[COLO_MATH_TF32] <= 0)
            m = COLO_MATH_TF32;
    }
    return colo_gpu_math_runs_as(g, m);
}

/* The compute a kernel of F FLOPs in B blocks needs on all of g's N SMs at math class m: the
 * ceil(B / N) blocks the busiest SM runs (the block scheduler gives a freed slot the next block,
 * so SMs end up running whole blocks, however many they hold at once), each of F / B FLOPs at the
 * sustained rate of the class. */
static double whole_gpu_compute_ns(const colo_kernel_work_t *w, const colo_gpu_t *g, colo_math_t m,
                                   double F)
{
    double b = (double)w->blocks;
    return ceil(b / g->sm.count) * (F / b) / colo_gpu_math_sustained_rate(g, m);
}

/* A kernel whose trace gives its FLOPs and DRAM bytes (NeuSight's ops, a shape the user knows):
 * its time on the source, less the fixed part, is its roofline there (max of the compute above
 * and D bytes at its memory rate mem_rate_src) times kappa, its own efficiency, and on the
 * target it takes kappa times the target's roofline: the compute part kappa x compute, the
 * memory part its bytes at 1 / kappa of the rate (mem_eff). Alone on the GPU it was traced on it
 * keeps its time exactly; docs/model.md, "Kernels whose work is known". */
static void by_roofline(const colo_op_t *k, const colo_gpu_t *src, const colo_gpu_t *dst,
                        double mem_rate_src, double Tw, double D, colo_kernel_work_t *w)
{
    double F = k->flops > 0 ? k->flops : 0; /* a memory-bound kernel's FLOPs: none worth a term */
    double cs = whole_gpu_compute_ns(w, src, w->math_src, F), ms = D / mem_rate_src;
    double kappa = Tw / (cs > ms ? cs : ms);
    w->wave_ns = kappa * whole_gpu_compute_ns(w, dst, w->math, F) /
                 (double)colo_kernel_waves(w, dst->sm.count);
    /* kappa < 1: its compute was overestimated (a Winograd convolution does fewer FLOPs than
     * the direct formula); that says nothing of its memory, which keeps the full rate */
    w->mem_eff = kappa > 1 ? 1 / kappa : 1;
    w->mem_cap = w->mem_eff * colo_gpu_dram_rate(dst);
}

/* Bytes of an element at class m: what a GEMM or convolution of that class reads and writes. */
static int element_bytes(colo_math_t m)
{
    switch (m) {
    case COLO_MATH_FP16:
    case COLO_MATH_BF16:
        return 2;
    case COLO_MATH_INT8:
    case COLO_MATH_FP8:
        return 1;
    case COLO_MATH_FP64:
        return 8;
    default:
        return 4;
    }
}

static bool library_math(colo_kernel_class_t c)
{
    return (c.kind == COLO_KIND_CUDNN || c.kind == COLO_KIND_CUBLAS) &&
           c.math != COLO_MATH_MEMORY && c.math != COLO_MATH_FP64 && c.math != COLO_MATH_AUTO;
}

colo_math_t colo_precision_parse(const char *name)
{
    colo_math_t m = colo_math_parse(name);
    return m == COLO_MATH_FP16 || m == COLO_MATH_BF16 || m == COLO_MATH_INT8 || m == COLO_MATH_FP8
               ? m
               : COLO_MATH_CLASSES;
}

colo_precision_t colo_precision_of(const colo_trace_t *t, colo_math_t math)
{
    colo_precision_t p = {math, 4};
    for (size_t i = 0; i < t->n_ops && math != COLO_MATH_AUTO; i++) {
        const colo_op_t *k = &t->ops[i];
        if (k->type != COLO_OP_KERNEL) continue;
        colo_kernel_class_t c = k->cls.rule ? k->cls : colo_kernel_classify(k->name, k->math);
        if (library_math(c) && element_bytes(c.math) < 4) {
            p.act_bytes = 2;
            break;
        }
    }
    return p;
}

int colo_kernel_work(const colo_op_t *k, const colo_gpu_t *src, const colo_gpu_t *dst,
                     colo_fp32_math_t fp32_math, colo_kernel_work_t *w, const char *trace_path,
                     size_t i, colo_error_t *err)
{
    return colo_kernel_work_at(k, src, dst, fp32_math, NULL, w, trace_path, i, err);
}

int colo_kernel_work_at(const colo_op_t *k, const colo_gpu_t *src, const colo_gpu_t *dst,
                        colo_fp32_math_t fp32_math, const colo_precision_t *prec,
                        colo_kernel_work_t *w, const char *trace_path, size_t i, colo_error_t *err)
{
    colo_occupancy_t occ_src;
    colo_kernel_class_t cls = k->cls.rule ? k->cls : colo_kernel_classify(k->name, k->math);
    bool library = cls.kind == COLO_KIND_CUDNN || cls.kind == COLO_KIND_CUBLAS;
    int rc = place(k, src, false, &occ_src, trace_path, i, err);
    if (!rc) rc = place(k, dst, library, &w->occ, trace_path, i, err);
    if (rc) return rc;
    w->math_src = colo_gpu_math_runs_as(src, cls.math);
    w->math = math_on(cls, src, dst, fp32_math);
    /* a deployment's precision: its GEMMs and convolutions at that class and element size, the
     * rest on FP16 activations (docs/model.md, "Precision") */
    double bytes_scale = 1.0;
    if (prec && prec->math != COLO_MATH_AUTO) {
        if (library_math(cls)) {
            w->math = colo_gpu_math_runs_as(dst, prec->math);
            bytes_scale = (double)element_bytes(prec->math) / element_bytes(cls.math);
        } else {
            bytes_scale = 2.0 / prec->act_bytes;
        }
    }
    w->blocks = (unsigned long long)k->grid[0] * k->grid[1] * k->grid[2];
    w->per_sm_rate = colo_gpu_per_sm_rate(dst);
    w->weight_bound = cls.kind == COLO_KIND_CUBLAS && k->kclass == COLO_KCLASS_MEMORY;

    /* On the traced GPU, alone: T = floor + max(compute, memory); the floor is the part of the
     * GPU's shortest kernels, and no more than the kernel itself. */
    double T = (double)k->duration;
    double floor_src = src->launch.floor_us * 1e3;
    double fixed = floor_src < T ? floor_src : T;
    double Tw = T - fixed; /* what SMs and bandwidth do */
    w->mem_eff = w->mem_cap = 0;
    colo_kernel_work_t s = *w;
    s.occ = occ_src;
    s.per_sm_rate = colo_gpu_per_sm_rate(src);
    double mem_rate_src = colo_kernel_memory_rate(&s, src->sm.count, colo_gpu_dram_rate(src));
    double share = k->kclass == COLO_KCLASS_MEMORY    ? COLO_DRAM_SHARE_MEMORY
                   : k->kclass == COLO_KCLASS_COMPUTE ? COLO_DRAM_SHARE_COMPUTE
                                                      : COLO_DRAM_SHARE_UNKNOWN;
    double D = k->dram_bytes >= 0 ? k->dram_bytes : share * Tw * mem_rate_src;
    if (D > Tw * mem_rate_src) D = Tw * mem_rate_src; /* cannot have moved more than that */
    double t_mem = D / mem_rate_src;
    /* The compute part is the whole of it unless memory alone explains it. */
    double t_comp = (k->kclass == COLO_KCLASS_MEMORY && Tw > 0 && t_mem >= Tw * (1 - 1e-9))
                        ? COLO_COMPUTE_SHARE_MEMORY * Tw
                        : Tw;
    double waves_src = (double)colo_kernel_waves(&s, src->sm.count);
    /* A wave's time scales with the blocks each SM holds and inversely with the peak rate of
     * the kernel's math class on each GPU. */
    w->wave_ns = t_comp / waves_src *
                 (colo_gpu_math_sustained_rate(src, w->math_src) /
                  colo_gpu_math_sustained_rate(dst, w->math)) *
                 ((double)w->occ.blocks_per_sm / (double)occ_src.blocks_per_sm);
    /* The floor is latency (block launch and retirement, a few memory round trips): it moves
     * with the other GPU's floor, not with its rates. */
    w->dispatch_ns = dst->launch.dispatch_us * 1e3;
    w->fixed_ns =
        (floor_src > 0 ? fixed * (dst->launch.floor_us * 1e3) / floor_src : 0) + w->dispatch_ns;
    w->dram_bytes = D;
    double L = k->l2_bytes >= 0 ? k->l2_bytes : D / (1 - COLO_L2_HIT_DEFAULT);
    if (L > Tw * colo_gpu_l2_rate(src)) L = Tw * colo_gpu_l2_rate(src); /* as for DRAM */
    w->l2_bytes = L > D ? L : D;
    /* What the L2 must hold for the kernel's hits: the operands a compute-bound kernel reuses
     * (about what it reads from DRAM); a streaming, memory-bound kernel hits on lines it has
     * just touched, which no neighbour can take away. */
    w->working_set = k->kclass == COLO_KCLASS_MEMORY ? 0 : D;
    if (k->dram_bytes > 0 && Tw > 0 && (k->flops > 0 || k->kclass == COLO_KCLASS_MEMORY))
        by_roofline(k, src, dst, mem_rate_src, Tw, D, w);
    if (bytes_scale != 1.0) {
        w->dram_bytes *= bytes_scale;
        w->l2_bytes *= bytes_scale;
        w->working_set *= bytes_scale;
    }
    return 0;
}
