/* kernel_model.c: compute/memory decomposition of traced kernels and their placement on GPUs. */
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
    return ceiling < dram_rate ? ceiling : dram_rate;
}

double colo_kernel_alone_ns(const colo_kernel_work_t *w, int sms, double dram_rate,
                            double dram_bytes)
{
    double c = colo_kernel_compute_ns(w, sms);
    double m = dram_bytes / colo_kernel_memory_rate(w, sms, dram_rate);
    return c > m ? c : m;
}

colo_time_t colo_kernel_duration(const colo_kernel_work_t *w, const colo_gpu_t *dst)
{
    double t = colo_kernel_alone_ns(w, dst->sm.count, colo_gpu_dram_rate(dst), w->dram_bytes);
    double t_l2 = w->l2_bytes / colo_gpu_l2_rate(dst); /* the L2's bandwidth bounds it too */
    colo_time_t d = colo_time_from_ns(t > t_l2 ? t : t_l2);
    return d < 1 ? 1 : d;
}

static int place(const colo_op_t *k, const colo_gpu_t *g, colo_occupancy_t *occ,
                 const char *trace_path, size_t i, colo_error_t *err)
{
    *occ =
        colo_occupancy(g, k->block[0] * k->block[1] * k->block[2], k->registers, k->shared_bytes);
    if (occ->blocks_per_sm > 0) return 0;
    char key[64];
    snprintf(key, sizeof key, "ops[%zu]", i);
    return colo_error_set(err, COLO_ERANGE, trace_path, k->line, key,
                          "kernel '%s' cannot run on %s: its block exceeds the SM's %s", k->name,
                          g->name, colo_limiter_name(occ->limiter));
}

int colo_kernel_work(const colo_op_t *k, const colo_gpu_t *src, const colo_gpu_t *dst,
                     colo_kernel_work_t *w, const char *trace_path, size_t i, colo_error_t *err)
{
    colo_occupancy_t occ_src;
    int rc = place(k, src, &occ_src, trace_path, i, err);
    if (!rc) rc = place(k, dst, &w->occ, trace_path, i, err);
    if (rc) return rc;
    w->blocks = (unsigned long long)k->grid[0] * k->grid[1] * k->grid[2];
    w->per_sm_rate = colo_gpu_per_sm_rate(dst);

    /* On the traced GPU, alone: duration T = max(compute, memory). */
    double T = (double)k->duration;
    colo_kernel_work_t s = *w;
    s.occ = occ_src;
    s.per_sm_rate = colo_gpu_per_sm_rate(src);
    double mem_rate_src = colo_kernel_memory_rate(&s, src->sm.count, colo_gpu_dram_rate(src));
    double share = k->kclass == COLO_KCLASS_MEMORY    ? COLO_DRAM_SHARE_MEMORY
                   : k->kclass == COLO_KCLASS_COMPUTE ? COLO_DRAM_SHARE_COMPUTE
                                                      : COLO_DRAM_SHARE_UNKNOWN;
    double D = k->dram_bytes >= 0 ? k->dram_bytes : share * T * mem_rate_src;
    if (D > T * mem_rate_src) D = T * mem_rate_src; /* cannot have moved more than that */
    double t_mem = D / mem_rate_src;
    /* The compute part is the whole duration unless memory alone explains it. */
    double t_comp = (k->kclass == COLO_KCLASS_MEMORY && t_mem >= T * (1 - 1e-9))
                        ? COLO_COMPUTE_SHARE_MEMORY * T
                        : T;
    double waves_src = (double)colo_kernel_waves(&s, src->sm.count);
    /* A wave's time scales with the blocks each SM holds and inversely with its FP32 rate. */
    w->wave_ns = t_comp / waves_src * (colo_gpu_sm_fp32_rate(src) / colo_gpu_sm_fp32_rate(dst)) *
                 ((double)w->occ.blocks_per_sm / (double)occ_src.blocks_per_sm);
    w->dram_bytes = D;
    double L = k->l2_bytes >= 0 ? k->l2_bytes : D / (1 - COLO_L2_HIT_DEFAULT);
    if (L > T * colo_gpu_l2_rate(src)) L = T * colo_gpu_l2_rate(src); /* as for DRAM */
    w->l2_bytes = L > D ? L : D;
    /* What the L2 must hold for the kernel's hits: the operands a compute-bound kernel reuses
     * (about what it reads from DRAM); a streaming, memory-bound kernel hits on lines it has
     * just touched, which no neighbour can take away. */
    w->working_set = k->kclass == COLO_KCLASS_MEMORY ? 0 : D;
    return 0;
}
