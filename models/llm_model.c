/* llm_model.c: an LLM iteration as kernels (llm_model.h; docs/llm.md, "Cost of an
 * iteration"). */
#include "llm_model.h"
#include "allreduce.h"

#include <math.h>
#include <string.h>

void colo_llm_iter_prefill(colo_llm_iter_t *it, const colo_llm_profile_t *p, int q, long long kv,
                           bool last)
{
    int group = p->q_heads / p->kv_heads;
    it->tokens += q;
    it->prefills++;
    it->prefill_q += q;
    it->prefill_pairs += (double)q * ((double)kv + (q + 1) / 2.0);
    it->prefill_keys += (double)kv + q;
    it->prefill_tiles += ceil((double)q * group / COLO_LLM_TILE);
    if (last) it->samples++;
}

void colo_llm_iter_decode(colo_llm_iter_t *it, long long ctx)
{
    it->tokens++;
    it->decodes++;
    it->decode_ctx += (double)ctx;
    it->samples++;
}

/* FLOPs and DRAM bytes of a GEMM of t rows, k inputs and n outputs: weights read once, inputs
 * read and outputs written. */
static void gemm(double t, double k, double n, double b, double *flops, double *bytes)
{
    *flops = 2 * t * k * n;
    *bytes = (k * n + t * k + t * n) * b;
}

/* The profile's up projection (one rank's shard) at its largest token count: its FLOP rate on
 * the profiled GPU. */
static double profile_tensor_rate(const colo_llm_model_t *m)
{
    const colo_llm_profile_t *p = m->prof;
    int t = colo_llm_profile_max_tokens(p);
    double ms = colo_llm_profile_ms(p, COLO_LLM_MLP_UP, t), f, b;
    gemm(t, p->hidden, m->mlp_hidden * (p->gated_mlp ? 2 : 1), p->dtype_bytes, &f, &b);
    return ms > 0 ? f / (ms * 1e6) : 0;
}

void colo_llm_model_init(colo_llm_model_t *m, const colo_llm_profile_t *p, const colo_gpu_t *src,
                         const colo_gpu_t *dst, int groups)
{
    m->prof = p;
    m->src = src;
    m->dst = dst;
    m->groups = groups < 1 ? 1 : groups > p->layers ? p->layers : groups;
    /* Megatron-LM's split (Shoeybi et al. 2019, section 3): QKV and MLP-up column-parallel
     * (each rank its heads and its slice of the MLP), output and MLP-down row-parallel; the
     * vocabulary split as vLLM's ParallelLMHead does. The profile's dims are the whole model's
     * (Vidur's mlp.csv gives them on every row) and its times one rank's. */
    m->tp = p->tensor_parallel > 1 ? p->tensor_parallel : 1;
    m->q_heads = p->q_heads / m->tp;
    m->kv_heads = p->kv_heads / m->tp;
    m->mlp_hidden = (double)p->mlp_hidden / m->tp;
    m->vocab = (double)p->vocab / m->tp;
    m->tensor_rate = profile_tensor_rate(m);
    m->precision = COLO_MATH_AUTO;
}

size_t colo_llm_model_max_kernels(const colo_llm_model_t *m)
{
    int per_group = COLO_LLM_KERNELS_PER_GROUP + (m->tp > 1 ? COLO_LLM_ALLREDUCES_PER_GROUP : 0);
    return (size_t)m->groups * (size_t)per_group + 1;
}

static const char *const kernel_names[COLO_LLM_OPS] = {
    "llm_input_layernorm", "llm_qkv_proj",    "llm_rope",          "llm_o_proj",
    "llm_post_attention_layernorm", "llm_mlp_up_proj", "llm_mlp_act", "llm_mlp_down_proj",
    "llm_residual_add"};

struct build {
    const colo_llm_model_t *m;
    colo_op_t *ops;
    colo_kernel_work_t *w;
    bool *profiled;
    size_t n;
    colo_error_t *err;
};

/* Time on src of a kernel by rule: floor + max(compute on the SMs its blocks occupy at the
 * profile's tensor rate, bytes at the DRAM rate those SMs can draw). ns. */
static double rule_ns(const colo_llm_model_t *m, double blocks, double flops, double bytes)
{
    const colo_gpu_t *g = m->src;
    double sms = blocks < g->sm.count ? blocks : g->sm.count;
    if (sms < 1) sms = 1;
    double comp = m->tensor_rate > 0 ? flops / (m->tensor_rate * sms / g->sm.count) : 0;
    double rate = sms * colo_gpu_per_sm_rate(g);
    if (rate > colo_gpu_dram_rate(g)) rate = colo_gpu_dram_rate(g);
    double mem = bytes / rate;
    return g->launch.floor_us * 1e3 + (comp > mem ? comp : mem);
}

/* Appends a kernel of one layer (time ns on src, grid blocks of threads threads) run layers
 * times back to back. */
static int add(struct build *b, const char *name, double ns, double blocks, int threads,
               double flops, double bytes, bool matmul, int layers, bool profiled)
{
    const colo_llm_model_t *m = b->m;
    colo_op_t k;
    memset(&k, 0, sizeof k);
    k.type = COLO_OP_KERNEL;
    k.name = (char *)name;
    k.grid[0] = blocks < 1 ? 1u : blocks > 4e9 ? 4000000000u : (unsigned)blocks;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = (unsigned)threads;
    k.block[1] = k.block[2] = 1;
    k.registers = -1;
    k.shared_bytes = -1;
    k.duration = ns < 1 ? 1 : colo_time_from_ns(ns);
    k.math = matmul ? COLO_MATH_FP16 : COLO_MATH_MEMORY;
    /* compute-bound when its FLOPs per byte pass the GPU's ridge (sustained math / DRAM rate) */
    double ridge = colo_gpu_math_sustained_rate(m->src, k.math) / colo_gpu_dram_rate(m->src);
    k.kclass = matmul && bytes > 0 && flops / bytes > ridge ? COLO_KCLASS_COMPUTE
                                                            : COLO_KCLASS_MEMORY;
    k.cls.math = k.math;
    k.cls.kind = matmul ? COLO_KIND_CUBLAS : COLO_KIND_OTHER;
    k.cls.rule = "llm";
    k.cls.why = "an LLM operator of the iteration (llm_model.c)";
    k.dram_bytes = bytes;
    k.l2_bytes = -1;
    k.flops = flops;
    size_t i = b->n++;
    if (b->ops) b->ops[i] = k;
    if (b->profiled) b->profiled[i] = profiled;
    if (!b->w) return 0;
    colo_kernel_work_t one;
    colo_precision_t prec = {m->precision, m->prof->dtype_bytes};
    int rc = colo_kernel_work_at(&k, m->src, m->dst, COLO_FP32_PYTORCH, &prec, &one, m->prof->path,
                                 i, b->err);
    if (!rc) colo_kernel_repeat(&one, layers, &b->w[i]);
    return rc;
}

/* One of the profile's operators at t tokens (one rank's shard), for layers layers. */
static int profile_op(struct build *b, colo_llm_op_t op, int t, int layers)
{
    const colo_llm_model_t *m = b->m;
    const colo_llm_profile_t *p = m->prof;
    if (!p->ms[op]) return 0;
    double h = p->hidden, by = p->dtype_bytes;
    double qd = (double)m->q_heads * p->head_dim, kvd = (double)m->kv_heads * p->head_dim;
    double mlp = m->mlp_hidden * (p->gated_mlp ? 2 : 1);
    double flops = 0, bytes = 0, n = 0;
    bool matmul = false;
    switch (op) {
    case COLO_LLM_QKV: n = qd + 2 * kvd; gemm(t, h, n, by, &flops, &bytes); matmul = true; break;
    case COLO_LLM_O_PROJ: n = h; gemm(t, qd, h, by, &flops, &bytes); matmul = true; break;
    case COLO_LLM_MLP_UP: n = mlp; gemm(t, h, mlp, by, &flops, &bytes); matmul = true; break;
    case COLO_LLM_MLP_DOWN:
        n = h;
        gemm(t, m->mlp_hidden, h, by, &flops, &bytes);
        matmul = true;
        break;
    case COLO_LLM_ROPE: bytes = 2.0 * t * (qd + kvd) * by; break;
    case COLO_LLM_MLP_ACT: bytes = (double)t * (mlp + m->mlp_hidden) * by; break;
    case COLO_LLM_ADD: bytes = 3.0 * t * h * by; break;
    default: bytes = 2.0 * t * h * by; break; /* the two norms */
    }
    /* GEMMs: one block per 128 x 128 output tile; token-wise kernels: one block per token */
    double blocks = matmul ? ceil((double)t / COLO_LLM_TILE) * ceil(n / COLO_LLM_TILE) : t;
    double ns = colo_llm_profile_ms(p, op, t) * 1e6;
    return add(b, kernel_names[op], ns, blocks, 256, flops, bytes, matmul, layers, true);
}

/* Prefill attention (FlashAttention-style, causal) of the iteration's chunks, one layer, over
 * one rank's heads. */
static int prefill_attention(struct build *b, const colo_llm_iter_t *it, int layers)
{
    const colo_llm_model_t *m = b->m;
    const colo_llm_profile_t *p = m->prof;
    double by = p->dtype_bytes, qd = (double)m->q_heads * p->head_dim,
           kvd = (double)m->kv_heads * p->head_dim;
    double flops = 4.0 * it->prefill_pairs * qd;
    /* Q read and O written; keys and values read; the chunk's keys and values written */
    double bytes = (2 * it->prefill_q * qd + 2 * it->prefill_keys * kvd + 2 * it->prefill_q * kvd) *
                   by;
    double blocks = it->prefill_tiles * m->kv_heads;
    return add(b, "llm_attention_prefill", rule_ns(b->m, blocks, flops, bytes), blocks, 128, flops,
               bytes, true, layers, false);
}

/* Decode attention: each sequence's query against its cache, one layer, one rank's heads. */
static int decode_attention(struct build *b, const colo_llm_iter_t *it, int layers)
{
    const colo_llm_model_t *m = b->m;
    const colo_llm_profile_t *p = m->prof;
    double by = p->dtype_bytes, qd = (double)m->q_heads * p->head_dim,
           kvd = (double)m->kv_heads * p->head_dim;
    double flops = 4.0 * it->decode_ctx * qd;
    /* the cache read, Q read and O written, the new token's key and value written */
    double bytes = (2 * it->decode_ctx * kvd + it->decodes * (2 * qd + 2 * kvd)) * by;
    double blocks = (double)it->decodes * m->kv_heads; /* one block per sequence and KV head */
    return add(b, "llm_attention_decode", rule_ns(b->m, blocks, flops, bytes), blocks, 128, flops,
               bytes, true, layers, false);
}

/* The all-reduce that sums the row-parallel partial outputs of the t tokens (t x hidden in FP16)
 * over the ranks, one per layer: an NCCL kernel of COLO_ALLREDUCE_CTAS CTAs that holds their
 * block slots for the ring's time on dst's links (allreduce.h) and draws neither SM issue nor
 * DRAM bandwidth from neighbours. Nothing without tensor parallelism. */
static int allreduce(struct build *b, const char *name, int t, int layers)
{
    const colo_llm_model_t *m = b->m;
    if (m->tp < 2) return 0;
    double bytes = (double)t * m->prof->hidden * m->prof->dtype_bytes;
    colo_allreduce_t on_src, on_dst;
    colo_allreduce(m->src, m->tp, bytes, &on_src);
    colo_allreduce(m->dst, m->tp, bytes, &on_dst);
    colo_op_t k;
    memset(&k, 0, sizeof k);
    k.type = COLO_OP_KERNEL;
    k.name = (char *)name;
    k.grid[0] = COLO_ALLREDUCE_CTAS;
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = COLO_ALLREDUCE_THREADS;
    k.block[1] = k.block[2] = 1;
    k.registers = -1;
    k.shared_bytes = -1;
    k.duration = colo_time_from_ns(on_src.ns);
    k.math = COLO_MATH_MEMORY;
    k.kclass = COLO_KCLASS_MEMORY;
    k.cls.math = k.math;
    k.cls.kind = COLO_KIND_OTHER;
    k.cls.rule = "llm";
    k.cls.why = "a tensor-parallel all-reduce (llm_model.c)";
    k.dram_bytes = 0;
    k.l2_bytes = 0;
    size_t i = b->n++;
    if (b->ops) b->ops[i] = k;
    if (b->profiled) b->profiled[i] = false;
    if (!b->w) return 0;
    colo_kernel_work_t one;
    k.duration = colo_time_from_ns(on_dst.ns); /* its residency on dst; its time set below */
    int rc = colo_kernel_work(&k, m->dst, m->dst, COLO_FP32_PYTORCH, &one, m->prof->path, i,
                              b->err);
    if (rc) return rc;
    one.wave_ns = 0;
    one.dram_bytes = one.l2_bytes = one.working_set = 0;
    one.mem_eff = one.mem_cap = 0;
    one.weight_bound = false;
    one.fixed_ns = one.dispatch_ns + on_dst.ns;
    colo_kernel_repeat(&one, layers, &b->w[i]);
    return 0;
}

int colo_llm_model_kernels(const colo_llm_model_t *m, const colo_llm_iter_t *it, colo_op_t *ops,
                           colo_kernel_work_t *w, bool *profiled, size_t *n, colo_error_t *err)
{
    const colo_llm_profile_t *p = m->prof;
    struct build b = {m, ops, w, profiled, 0, err};
    *n = 0;
    int t = it->tokens;
    if (t < 1) return 0;
    if (t > colo_llm_profile_max_tokens(p))
        return colo_error_set(err, COLO_ERANGE, p->path, 0, "ops.tokens",
                              "an iteration of %d tokens: the profile goes to %d", t,
                              colo_llm_profile_max_tokens(p));
    int rc = 0;
    for (int g = 0; g < m->groups && !rc; g++) {
        int layers = p->layers / m->groups + (g < p->layers % m->groups);
        if ((rc = profile_op(&b, COLO_LLM_INPUT_NORM, t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_QKV, t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_ROPE, t, layers)) ||
            (it->prefills && (rc = prefill_attention(&b, it, layers))) ||
            (it->decodes && (rc = decode_attention(&b, it, layers))) ||
            (rc = profile_op(&b, COLO_LLM_O_PROJ, t, layers)) ||
            (rc = allreduce(&b, "llm_allreduce_attn", t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_POST_NORM, t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_MLP_UP, t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_MLP_ACT, t, layers)) ||
            (rc = profile_op(&b, COLO_LLM_MLP_DOWN, t, layers)) ||
            (rc = allreduce(&b, "llm_allreduce_mlp", t, layers)))
            break;
        rc = profile_op(&b, COLO_LLM_ADD, t, layers);
    }
    if (!rc && it->samples > 0) { /* logits of the sampled sequences: the rank's vocabulary x hidden */
        double flops, bytes;
        gemm(it->samples, p->hidden, m->vocab, p->dtype_bytes, &flops, &bytes);
        double blocks = ceil((double)it->samples / COLO_LLM_TILE) * ceil(m->vocab /
                                                                          COLO_LLM_TILE);
        rc = add(&b, "llm_lm_head", rule_ns(m, blocks, flops, bytes), blocks, 256, flops, bytes,
                 true, 1, false);
    }
    *n = b.n;
    return rc;
}
