/* test_llm_tp.c: LLM replicas that span GPUs with tensor parallelism (docs/llm.md, "Tensor
 * parallelism"): one rank's kernels and the all-reduces between ranks, properties that could be
 * false: tensor parallelism 1 leaves the iteration as it was, a rank's GEMMs do 1/k of the work,
 * two ranks beat one but not by half, the all-reduce grows with tokens and (k - 1) / k and is
 * slower over PCIe, a rank's KV cache holds k times the tokens, and the scenario's refusals. */
#include "allreduce.h"
#include "helpers.h"
#include "kernel_model.h"
#include "llm_model.h"
#include "llm_profile.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(llm_tp, .init = test_init);

struct kernels {
    size_t n;
    colo_op_t ops[64];
    colo_kernel_work_t w[64];
};

static void build(const colo_llm_profile_t *p, const colo_gpu_t *src, const colo_gpu_t *dst,
                  const colo_llm_iter_t *it, struct kernels *k)
{
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, src, dst, 1);
    cr_assert_leq(colo_llm_model_max_kernels(&m), 64);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_llm_model_kernels(&m, it, k->ops, k->w, NULL, &k->n, &err), 0, "%s",
                 err.text);
}

static double total_ms(const struct kernels *k, const colo_gpu_t *g)
{
    double ms = 0;
    for (size_t i = 0; i < k->n; i++)
        ms += (double)colo_kernel_duration(&k->w[i], g) / 1e6;
    return ms;
}

static const colo_op_t *find(const struct kernels *k, const char *name)
{
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->ops[i].name, name) == 0) return &k->ops[i];
    return NULL;
}

/* A prefill of 512 tokens and 32 decodes of 1,000-token contexts. */
static colo_llm_iter_t mixed(const colo_llm_profile_t *p)
{
    colo_llm_iter_t it;
    memset(&it, 0, sizeof it);
    colo_llm_iter_prefill(&it, p, 512, 0, true);
    for (int j = 0; j < 32; j++)
        colo_llm_iter_decode(&it, 1000);
    return it;
}

Test(llm_tp, one_rank_keeps_the_iteration_as_it_was)
{
    /* a profile that says tensor_parallel = 1 and one that does not say it are the same model;
     * the kernel list has no all-reduce, and each GEMM does the whole model's work */
    colo_llm_profile_t *p = load_llm_profile("traces/llm/codellama-34b_h100.json");
    colo_gpu_t *g = open_gpu("h100-sxm");
    cr_assert_eq(p->tensor_parallel, 1);
    colo_llm_iter_t it = mixed(p);
    struct kernels k;
    build(p, g, g, &it, &k);
    cr_expect_eq(k.n, COLO_LLM_KERNELS_PER_GROUP + 1);
    cr_expect_null(find(&k, "llm_allreduce_attn"));
    double t = it.tokens, h = p->hidden, hd = p->head_dim;
    cr_expect_float_eq(find(&k, "llm_qkv_proj")->flops,
                       2 * t * h * (p->q_heads + 2.0 * p->kv_heads) * hd, 1e-9);
    cr_expect_float_eq(find(&k, "llm_mlp_up_proj")->flops, 2 * t * h * 2.0 * p->mlp_hidden, 1e-9);
    cr_expect_float_eq(find(&k, "llm_lm_head")->flops, 2 * 33.0 * h * p->vocab, 1e-9);
    /* weights and cache of the whole model: 2 x 48 layers x 8 heads x 128 x 2 B a token */
    cr_expect_float_eq(colo_llm_kv_bytes_per_token(p), 196608.0, 1e-12);
    colo_llm_profile_free(p);
    colo_gpu_free(g);
}

Test(llm_tp, a_rank_does_its_share_and_two_all_reduces_a_layer)
{
    /* the same times at tensor parallelism 2: every sharded GEMM does half the work, the norms
     * all of it, and each layer group gains the two all-reduces of t x hidden x 2 bytes */
    colo_llm_profile_t *one = load_llm_profile("traces/llm/codellama-34b_h100.json");
    colo_llm_profile_t *two = load_llm_profile("traces/llm/codellama-34b_h100.json");
    two->tensor_parallel = 2;
    colo_gpu_t *g = open_gpu("h100-sxm");
    colo_llm_iter_t it = mixed(one);
    struct kernels a, b;
    build(one, g, g, &it, &a);
    build(two, g, g, &it, &b);
    cr_expect_eq(b.n, a.n + COLO_LLM_ALLREDUCES_PER_GROUP);
    static const char *const sharded[] = {"llm_qkv_proj", "llm_o_proj", "llm_mlp_up_proj",
                                          "llm_mlp_down_proj", "llm_lm_head"};
    for (size_t i = 0; i < 5; i++)
        cr_expect_float_eq(find(&b, sharded[i])->flops, find(&a, sharded[i])->flops / 2, 1e-6, "%s",
                           sharded[i]);
    cr_expect_float_eq(find(&b, "llm_input_layernorm")->dram_bytes,
                       find(&a, "llm_input_layernorm")->dram_bytes, 1e-9);
    /* attention over half the heads: half the cache read */
    cr_expect_float_eq(find(&b, "llm_attention_decode")->dram_bytes,
                       find(&a, "llm_attention_decode")->dram_bytes / 2, 1e-6);
    /* the all-reduces come right after the output projection and the MLP's down projection */
    for (size_t i = 0; i + 1 < b.n; i++) {
        if (strcmp(b.ops[i].name, "llm_o_proj") == 0)
            cr_expect_str_eq(b.ops[i + 1].name, "llm_allreduce_attn");
        if (strcmp(b.ops[i].name, "llm_mlp_down_proj") == 0)
            cr_expect_str_eq(b.ops[i + 1].name, "llm_allreduce_mlp");
    }
    colo_allreduce_t ar;
    colo_allreduce(g, 2, it.tokens * (double)one->hidden * 2, &ar);
    const colo_op_t *r = find(&b, "llm_allreduce_mlp");
    cr_expect_eq(r->grid[0], COLO_ALLREDUCE_CTAS);
    cr_expect(fabs((double)r->duration - ar.ns) <= 1, "%lld ns against %g", (long long)r->duration,
              ar.ns);
    colo_llm_profile_free(one);
    colo_llm_profile_free(two);
    colo_gpu_free(g);
}

Test(llm_tp, two_ranks_are_faster_than_one_but_not_twice_as_fast_on_decodes)
{
    /* Vidur's CodeLlama-34B profiles on the H100 at tensor parallelism 1 and 2: a decode-heavy
     * iteration (64 sequences at 1,000 tokens of context) on a rank of two, all-reduces
     * included, against the whole model on one GPU */
    colo_llm_profile_t *one = load_llm_profile("traces/llm/codellama-34b_h100.json");
    colo_llm_profile_t *two = load_llm_profile("traces/llm/codellama-34b_h100_tp2.json");
    cr_assert_eq(two->tensor_parallel, 2);
    colo_gpu_t *g = open_gpu("h100-sxm");
    colo_llm_iter_t it;
    memset(&it, 0, sizeof it);
    for (int j = 0; j < 64; j++)
        colo_llm_iter_decode(&it, 1000);
    struct kernels a, b;
    build(one, g, g, &it, &a);
    build(two, g, g, &it, &b);
    double t1 = total_ms(&a, g), t2 = total_ms(&b, g);
    cr_expect(t2 < t1 && t2 > t1 / 2, "TP 1 %.3f ms, TP 2 %.3f ms", t1, t2);
    colo_llm_profile_free(one);
    colo_llm_profile_free(two);
    colo_gpu_free(g);
}

Test(llm_tp, the_all_reduce_grows_with_tokens_and_ranks_and_is_slower_over_pcie)
{
    colo_gpu_t *sxm = open_gpu("h100-sxm"), *pcie = open_gpu("h100-pcie");
    double token = 8192 * 2.0; /* one token of a hidden size of 8192, FP16 */
    colo_allreduce_t a, b, c;
    colo_allreduce(sxm, 2, 64 * token, &a);
    colo_allreduce(sxm, 2, 512 * token, &b);
    cr_expect(b.ns > a.ns && a.link == COLO_LINK_NVLINK);
    /* the bandwidth term in proportion to (k - 1) / k: 1/2, 3/4, 7/8 */
    colo_allreduce(sxm, 4, 512 * token, &c);
    cr_expect_float_eq((c.ns - c.latency_ns) / (b.ns - b.latency_ns), 1.5, 1e-9);
    colo_allreduce(sxm, 8, 512 * token, &a);
    cr_expect_float_eq((a.ns - a.latency_ns) / (b.ns - b.latency_ns), 1.75, 1e-9);
    cr_expect(a.ns > c.ns && c.ns > b.ns);
    /* an H100 PCIe card has no NVLink: the ring crosses PCIe, slower at every size */
    for (double t = 1; t <= 4096; t *= 4) {
        colo_allreduce(sxm, 2, t * token, &a);
        colo_allreduce(pcie, 2, t * token, &b);
        cr_expect(b.link == COLO_LINK_PCIE && b.ns > a.ns, "%g tokens: %g ns vs %g", t, b.ns, a.ns);
    }
    /* GPUs bridged in pairs (no NVSwitch): a pair over NVLink, four over PCIe */
    sxm->nvlink.nvswitch = false;
    cr_expect_eq(colo_allreduce_link(sxm, 2), COLO_LINK_NVLINK);
    cr_expect_eq(colo_allreduce_link(sxm, 4), COLO_LINK_PCIE);
    colo_gpu_free(sxm);
    colo_gpu_free(pcie);
}

Test(llm_tp, a_rank_cache_holds_k_times_the_tokens)
{
    colo_llm_profile_t *one = load_llm_profile("traces/llm/codellama-34b_h100.json");
    colo_llm_profile_t *four = load_llm_profile("traces/llm/codellama-34b_h100_tp4.json");
    cr_expect_float_eq(colo_llm_kv_bytes_per_token(one), 4 * colo_llm_kv_bytes_per_token(four),
                       1e-9);
    /* weights: a quarter of the projections and the vocabulary, whole norms */
    double w1 = colo_llm_weight_bytes(one), w4 = colo_llm_weight_bytes(four);
    cr_expect(w4 > w1 / 4 && w4 < w1 / 4 * 1.001, "%g of %g", w4, w1);
    colo_llm_profile_free(one);
    colo_llm_profile_free(four);
    /* the same cache size in a scenario: the TP-2 replica's rank holds twice the blocks */
    const char *sets1[] = {"tenants.[0].llm.profile=../traces/llm/codellama-34b_h100.json",
                           "tenants.[0].llm.tensor_parallel=1", "tenants.[0].llm.kv_cache_gib=8",
                           "duration_s=12", "warmup_s=2"};
    const char *sets2[] = {sets1[2], sets1[3], sets1[4]};
    test_run_t a = run_scenario(src_path("scenarios/llm_tp2_codellama_h100.cfg"), sets1, 5);
    test_run_t b = run_scenario(src_path("scenarios/llm_tp2_codellama_h100.cfg"), sets2, 3);
    json_t *ka = json_object_get(json_object_get(result_tenant(&a, 0), "llm"), "kv_cache");
    json_t *kb = json_object_get(json_object_get(result_tenant(&b, 0), "llm"), "kv_cache");
    cr_expect_float_eq(result_num(kb, "blocks"), 2 * result_num(ka, "blocks"), 1);
    /* and its iterations are shorter: TPOT p50 below the single GPU's */
    json_t *la = json_object_get(result_tenant(&a, 0), "llm");
    json_t *lb = json_object_get(result_tenant(&b, 0), "llm");
    double pa = result_num(json_object_get(la, "tpot_ms"), "p50");
    double pb = result_num(json_object_get(lb, "tpot_ms"), "p50");
    cr_expect(pb > 0 && pb < pa, "TPOT p50 at TP 2 %.2f ms, at TP 1 %.2f ms", pb, pa);
    run_free(&a);
    run_free(&b);
}

Test(llm_tp, refusals_name_the_key)
{
    const char *three[] = {"tenants.[0].llm.tensor_parallel=3"};
    const char *e = scenario_load_error(src_path("scenarios/llm_tp2_codellama_h100.cfg"), three, 1);
    cr_expect(strstr(e, "llm.tensor_parallel: 3: 1, 2, 4 or 8"), "%s", e);
    const char *other[] = {"tenants.[0].llm.tensor_parallel=4"};
    e = scenario_load_error(src_path("scenarios/llm_tp2_codellama_h100.cfg"), other, 1);
    cr_expect(strstr(e, "measured at 2: use ") && strstr(e, "codellama-34b_h100_tp4.json"), "%s",
              e);
}
