/* test_llm.c: LLM tenants (docs/llm.md): the profile reader, one iteration against the profile
 * it comes from, and properties of continuous batching, the KV cache and sharing that could be
 * false: TPOT rises with the decode batch, TTFT with the prompt, a full cache preempts and a
 * larger one does not, MIG isolates a neighbour's load where MPS does not, tokens are
 * conserved. */
#include "helpers.h"
#include "llm_cfg.h"
#include "llm_model.h"
#include "llm_profile.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

TestSuite(llm, .init = test_init);

Test(llm, profile_reads_dimensions_and_interpolates_between_token_counts)
{
    colo_llm_profile_t *p = load_llm_profile("traces/llm/llama-3-8b_a100.json");
    cr_expect_eq(p->layers, 32);
    cr_expect_eq(p->kv_heads, 8);
    cr_expect_eq(p->head_dim, 128);
    cr_expect(p->gated_mlp && p->post_attention_norm);
    cr_expect_eq(colo_llm_profile_max_tokens(p), 32768);
    /* at a profiled count the median itself; between two, on the line joining them */
    size_t k = 10;
    int a = p->tokens[k], b = p->tokens[k + 1];
    double ma = p->ms[COLO_LLM_MLP_UP][k], mb = p->ms[COLO_LLM_MLP_UP][k + 1];
    cr_expect_float_eq(colo_llm_profile_ms(p, COLO_LLM_MLP_UP, a), ma, 1e-12);
    if (b - a >= 2)
        cr_expect_float_eq(colo_llm_profile_ms(p, COLO_LLM_MLP_UP, a + (b - a) / 2),
                           ma + (mb - ma) * ((b - a) / 2) / (double)(b - a), 1e-12);
    /* KV bytes per token: 2 x 32 layers x 8 heads x 128 x 2 B = 128 KiB; 8.03 B parameters */
    cr_expect_float_eq(colo_llm_kv_bytes_per_token(p), 131072.0, 1e-9);
    cr_expect(fabs(colo_llm_weight_bytes(p) / 2 - 8.03e9) < 0.01e9, "%g",
              colo_llm_weight_bytes(p) / 2);
    colo_llm_profile_free(p);
}

Test(llm, profile_errors_name_the_file_line_and_key)
{
    char path[] = "/tmp/colosim_llm_profile_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *doc = "{\n \"format\": \"colosim-llm-profile\",\n \"version\": 1,\n"
                      " \"model\": \"m\",\n \"gpu\": \"a100-80gb\",\n"
                      " \"dims\": {\"layers\": 2, \"q_heads\": 4, \"kv_heads\": 3, \"hidden\": 8,"
                      " \"head_dim\": 2, \"mlp_hidden\": 8, \"vocab\": 10, \"gated_mlp\": true,"
                      " \"post_attention_norm\": true},\n \"ops\": {},\n"
                      " \"provenance\": {\"source\": \"test\"}\n}\n";
    cr_assert_eq(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
    close(fd);
    colo_error_t err;
    colo_error_clear(&err);
    colo_llm_profile_t *p;
    cr_expect_neq(colo_llm_profile_load(path, &p, &err), 0);
    cr_expect_eq(err.line, 6);
    cr_expect_str_eq(err.key, "dims.kv_heads");
    unlink(path);
}

/* Sum of the profile's operators over all layers at t tokens, and the same operators' kernels
 * alone on the profiled GPU, ms. */
static void iteration_vs_profile(const colo_llm_profile_t *p, const colo_gpu_t *g, int groups,
                                 int t, double *profile_ms, double *model_ms)
{
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, g, g, groups);
    colo_llm_iter_t it;
    memset(&it, 0, sizeof it);
    colo_llm_iter_prefill(&it, p, t, 0, true);
    size_t cap = colo_llm_model_max_kernels(&m), n;
    colo_kernel_work_t *w = calloc(cap, sizeof *w);
    bool *prof = calloc(cap, sizeof *prof);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_llm_model_kernels(&m, &it, NULL, w, prof, &n, &err), 0, "%s", err.text);
    *model_ms = 0;
    for (size_t k = 0; k < n; k++)
        if (prof[k]) *model_ms += (double)colo_kernel_duration(&w[k], g) / 1e6;
    *profile_ms = 0;
    for (int op = 0; op < COLO_LLM_OPS; op++)
        *profile_ms += colo_llm_profile_ms(p, (colo_llm_op_t)op, t) * p->layers;
    free(w);
    free(prof);
}

Test(llm, one_iteration_alone_on_the_profiled_gpu_gives_the_profiles_summed_op_times)
{
    static const struct {
        const char *profile, *gpu;
    } cases[] = {{"traces/llm/phi-2_h100.json", "h100-sxm"},
                 {"traces/llm/llama-3-8b_a100.json", "a100-80gb"},
                 {"traces/llm/codellama-34b_a100.json", "a100-80gb"}};
    static const int tokens[] = {1, 7, 64, 500, 2048, 4096};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        colo_llm_profile_t *p = load_llm_profile(cases[c].profile);
        colo_gpu_t *g = open_gpu(cases[c].gpu);
        for (size_t k = 0; k < sizeof tokens / sizeof *tokens; k++)
            for (int groups = 1; groups <= p->layers; groups += p->layers - 1) {
                double want, got;
                iteration_vs_profile(p, g, groups, tokens[k], &want, &got);
                /* each kernel's time is the profile's less the dispatch gap, which the
                 * profile's CUDA times leave out */
                cr_expect(fabs(got - want) <= 0.05 * want, "%s at %d tokens, %d groups: %.4f ms, "
                          "profile %.4f ms", cases[c].profile, tokens[k], groups, got, want);
            }
        colo_gpu_free(g);
        colo_llm_profile_free(p);
    }
}

static json_t *llm_of(const test_run_t *r)
{
    json_t *l = json_object_get(result_tenant(r, 0), "llm");
    cr_assert(l, "no llm object");
    return l;
}

static double p50(json_t *l, const char *what)
{
    return result_num(json_object_get(l, what), "p50");
}

Test(llm, tpot_rises_with_the_decode_batch)
{
    /* a burst of 1 and of 48 requests at t = 0: one sequence decoding alone, then 48 together */
    const char *one[] = {"tenants.[0].arrival.process=mlperf",
                         "tenants.[0].arrival.scenario=Offline",
                         "tenants.[0].arrival.samples=1", "tenants.[1].arrival.rate=0.001",
                         "warmup_s=0"};
    const char *many[] = {one[0], one[1], "tenants.[0].arrival.samples=48", one[3], one[4]};
    test_run_t a = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), one, 5);
    test_run_t b = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), many, 5);
    double ta = p50(llm_of(&a), "tpot_ms"), tb = p50(llm_of(&b), "tpot_ms");
    cr_expect(ta > 0 && tb > ta * 1.05, "TPOT alone %.3f ms, in a batch of 48 %.3f ms", ta, tb);
    run_free(&a);
    run_free(&b);
}

Test(llm, ttft_grows_with_the_prompt)
{
    double last = 0;
    static const char *const prompts[] = {"tenants.[0].tokens.prompt.value=64",
                                          "tenants.[0].tokens.prompt.value=512",
                                          "tenants.[0].tokens.prompt.value=2000"};
    for (size_t k = 0; k < 3; k++) {
        const char *sets[] = {prompts[k], "tenants.[0].arrival.rate=0.2"};
        test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 2);
        double t = p50(llm_of(&r), "ttft_ms");
        cr_expect(t > last, "%s: TTFT p50 %.3f ms, shorter prompt %.3f ms", prompts[k], t, last);
        last = t;
        run_free(&r);
    }
}

Test(llm, a_full_kv_cache_preempts_and_a_larger_one_does_not)
{
    const char *small[] = {"tenants.[0].llm.kv_cache_gib=0.6", "tenants.[0].arrival.rate=20.0",
                           "tenants.[0].tokens.output.max=400",
                           "tenants.[0].tokens.output.min=400"};
    const char *large[] = {"tenants.[0].llm.kv_cache_gib=20.0", small[1], small[2], small[3]};
    test_run_t a = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), small, 4);
    test_run_t b = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), large, 4);
    json_t *la = llm_of(&a), *lb = llm_of(&b);
    cr_expect_gt(result_num(la, "preemptions"), 0);
    cr_expect_gt(result_num(json_object_get(la, "kv_cache"), "utilisation_max"), 0.9);
    cr_expect_eq(result_num(lb, "preemptions"), 0);
    run_free(&a);
    run_free(&b);
}

/* One request that took its only KV block before the window and decodes through it: the cache
 * never changes inside the window. Its peak there is that block, not 0 below a mean of 5.9 %. */
Test(llm, a_kv_level_held_through_the_window_is_its_peak)
{
    const char *sets[] = {"tenants.[0].arrival.process=mlperf",
                          "tenants.[0].arrival.scenario=Offline",
                          "tenants.[0].arrival.samples=1",
                          "tenants.[1].arrival.rate=0.001",
                          "warmup_s=0.5",
                          "duration_s=3",
                          "tenants.[0].tokens.output.min=2000",
                          "tenants.[0].tokens.output.max=2000",
                          "tenants.[0].llm.block_tokens=4096"};
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 9);
    json_t *kv = json_object_get(llm_of(&r), "kv_cache");
    double mean = result_num(kv, "utilisation_mean"), max = result_num(kv, "utilisation_max");
    cr_expect_gt(mean, 0);
    cr_expect_geq(max, mean, "max %.4f below mean %.4f", max, mean);
    run_free(&r);
}

/* queue_ms_mean is the wait before a request joins an iteration (docs/results.md), not its TTFT:
 * one request alone never waits, though its first token takes a prefill. */
Test(llm, the_queue_is_the_wait_not_the_time_to_first_token)
{
    const char *sets[] = {"tenants.[0].arrival.process=mlperf",
                          "tenants.[0].arrival.scenario=Offline",
                          "tenants.[0].arrival.samples=1", "tenants.[1].arrival.rate=0.001",
                          "warmup_s=0"};
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 5);
    json_t *t = result_tenant(&r, 0);
    double q = result_num(t, "queue_ms_mean"), x = result_num(t, "execution_ms_mean");
    double ttft = result_num(json_object_get(llm_of(&r), "ttft_ms"), "mean");
    double e2e = result_num(json_object_get(t, "latency_ms"), "mean");
    cr_expect_lt(q, 0.01, "one request alone waited %.3f ms", q);
    cr_expect_gt(ttft, 1.0);
    cr_expect_float_eq(q + x, e2e, 1e-6 * e2e);
    run_free(&r);
}

/* A lognormal median below half a token gave a typical request of 0 tokens and 0 ms while
 * every real one, drawn at 1 token or more, took milliseconds. */
Test(llm, a_typical_request_has_at_least_one_token)
{
    const char *sets[] = {"tenants.[0].tokens.prompt={ dist = \"lognormal\"; median = 0.3; "
                          "sigma = 0.5; max = 8; }",
                          "tenants.[0].tokens.output={ dist = \"lognormal\"; median = 0.3; "
                          "sigma = 0.5; max = 8; }",
                          "tenants.[1].arrival.rate=0.001", "duration_s=4"};
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 4);
    double alone = result_num(result_tenant(&r, 0), "isolated_ms");
    cr_expect_gt(alone, 0.5, "a typical request alone: %.3f ms", alone);
    run_free(&r);
}

/* The LLM's TPOT p50 beside a vision neighbour at rate, under mode. */
static double tpot_beside(const char *mode, const char *rate)
{
    const char *sets[] = {mode, rate, "tenants.[0].arrival.rate=4.0", "tenants.[0].memory_gib=30"};
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 4);
    double v = p50(llm_of(&r), "tpot_ms");
    run_free(&r);
    return v;
}

Test(llm, mig_isolates_a_neighbours_load_and_mps_does_not)
{
    double mig_idle = tpot_beside("sharing.mode=mig", "tenants.[1].arrival.rate=0.001");
    double mig_busy = tpot_beside("sharing.mode=mig", "tenants.[1].arrival.rate=400.0");
    double mps_idle = tpot_beside("sharing.mode=mps", "tenants.[1].arrival.rate=0.001");
    double mps_busy = tpot_beside("sharing.mode=mps", "tenants.[1].arrival.rate=400.0");
    cr_expect(fabs(mig_busy - mig_idle) <= 0.01 * mig_idle, "MIG: %.4f ms idle neighbour, %.4f busy",
              mig_idle, mig_busy);
    /* under MPS the decode kernels' few blocks mostly find free slots beside the neighbour's;
     * what slows them is the neighbour's blocks queued before theirs and shared bandwidth */
    cr_expect(mps_busy > 1.03 * mps_idle, "MPS: %.4f ms idle neighbour, %.4f busy", mps_idle,
              mps_busy);
}

Test(llm, every_generated_token_of_a_completed_request_is_counted_once)
{
    /* outputs of 1 to 800 tokens, preemptions, and a drain long enough for every request */
    const char *sets[] = {"tenants.[0].tokens.output.min=1", "tenants.[0].tokens.output.max=800",
                          "tenants.[0].llm.kv_cache_gib=1.0", "tenants.[0].arrival.rate=6.0"};
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 4);
    colo_llm_stats_t st;
    cr_assert_eq(colo_tenant_llm_stats(r.sim, 0, &st), 0);
    cr_expect_gt(st.preemptions, 0);
    cr_expect_gt(st.tokens_generated, 0);
    cr_expect_eq(st.tokens_generated, st.tokens_of_completed, "%llu generated, %llu in completed",
                 (unsigned long long)st.tokens_generated,
                 (unsigned long long)st.tokens_of_completed);
    json_t *t = result_tenant(&r, 0);
    cr_expect_eq(result_num(t, "in_flight"), 0);
    run_free(&r);
}

Test(llm, an_azure_log_gives_each_request_its_tokens)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc;
    cr_assert_eq(colo_scenario_load(src_path("scenarios/llm_azure_conv_h100.cfg"), NULL, 0, &sc,
                                    &err),
                 0, "%s", err.text);
    const colo_llm_cfg_t *c = sc->tenants[0].llm;
    cr_assert(c);
    cr_expect_eq(c->prompt.kind, COLO_TOKENS_LOG);
    cr_expect_gt(c->log_records, 100);
    cr_expect_gt(c->typical_prompt, 1);
    colo_scenario_free(sc);
}

/* The tenant's llm.max_num_batched_tokens once loaded with sets (tenant i). */
static int batched_tokens(const char *rel, const char *const *sets, size_t n, size_t i)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc;
    cr_assert_eq(colo_scenario_load(src_path(rel), sets, n, &sc, &err), 0, "%s", err.text);
    int v = sc->tenants[i].llm->max_num_batched_tokens;
    colo_scenario_free(sc);
    return v;
}

/* Without chunking a preempted request is prefilled again whole (prompt and generated tokens)
 * in one iteration: not given, the budget is the longest request, at least 2048, as vLLM's is
 * max_model_len; with chunking it stays 2048; given, it is kept, and refused below the longest
 * request. */
Test(llm, without_chunking_the_default_iteration_holds_the_longest_request)
{
    const char *cfg = "tests/fixtures/llm/one_llm.cfg";
    cr_expect_eq(batched_tokens(cfg, NULL, 0, 0), 2048); /* 256 + 64 tokens */
    const char *longer[] = {
        "tenants.[0].tokens.prompt.value=3000", "tenants.[0].tokens.output.min=100",
        "tenants.[0].tokens.output.max=500", "tenants.[0].llm.chunk_tokens=512"};
    cr_expect_eq(batched_tokens(cfg, longer, 3, 0), 3500);
    cr_expect_eq(batched_tokens(cfg, longer, 4, 0), 2048);
    const char *given[] = {longer[0], longer[1], longer[2],
                           "tenants.[0].llm.max_num_batched_tokens=4096"};
    cr_expect_eq(batched_tokens(cfg, given, 4, 0), 4096);
    /* the shipped scenario's lognormal draws are cut at 2048 and 1024 tokens */
    cr_expect_eq(batched_tokens("scenarios/llm_two_llama_h100.cfg", NULL, 0, 1), 3072);
    /* a replayed log: its longest record, line 4's 7833 + 374 tokens */
    cr_expect_eq(batched_tokens("tests/fixtures/llm/mooncake.cfg", NULL, 0, 0), 8207);
    const char *below[] = {longer[0], longer[1], longer[2],
                           "tenants.[0].llm.max_num_batched_tokens=3499"};
    const char *msg = scenario_load_error(src_path(cfg), below, 4);
    cr_expect(strstr(msg, "tenants.[0].llm.max_num_batched_tokens: requests of up to 3000 "
                          "prompt and 500 output tokens never fit one iteration of 3499 tokens "
                          "once preempted: a preempted request is prefilled again whole") &&
                  strstr(msg, "raise it to 3500, or chunk prefills (llm.chunk_tokens)"),
              "%s", msg);
    below[3] = "tenants.[0].llm.max_num_batched_tokens=3500";
    cr_expect_eq(batched_tokens(cfg, below, 4, 0), 3500);
}

/* Two to eight requests of 100 prompt and 2400 output tokens at once, in a KV cache of 286
 * blocks: the latest-arrived is preempted once the cache is full, some after generating more
 * than 1948 tokens, and waits at the head of the queue to be prefilled again whole. Under an
 * iteration of 2048 tokens (the default before) such a request never fit one: the tenant
 * completed the first request and none after it, with the rest in flight forever. */
Test(llm, a_request_preempted_past_the_old_budget_is_prefilled_again_and_the_queue_moves_on)
{
    static const char *const samples[] = {"tenants.[0].arrival.samples=2",
                                          "tenants.[0].arrival.samples=8"};
    for (size_t k = 0; k < 2; k++) {
        const char *sets[] = {"tenants.[0].arrival.process=mlperf",
                              "tenants.[0].arrival.scenario=Offline",
                              samples[k],
                              "tenants.[0].tokens.prompt.value=100",
                              "tenants.[0].tokens.output.min=2400",
                              "tenants.[0].tokens.output.max=2400",
                              "tenants.[0].llm.kv_cache_gib=1.4",
                              "tenants.[1].arrival.rate=0.001",
                              "warmup_s=0",
                              "duration_s=60",
                              "drain_s=120"};
        test_run_t r = run_scenario(src_path("tests/fixtures/llm/one_llm.cfg"), sets, 11);
        json_t *t = result_tenant(&r, 0);
        double arrived = result_num(t, "arrived"), done = result_num(t, "completed");
        cr_expect_eq(r.sc->tenants[0].llm->max_num_batched_tokens, 2500);
        cr_expect_gt(result_num(llm_of(&r), "preemptions"), 0, "%s", samples[k]);
        cr_expect(arrived >= 2 && done == arrived, "%s: %.0f of %.0f requests completed",
                  samples[k], done, arrived);
        cr_expect_eq(result_num(t, "in_flight"), 0, "%s", samples[k]);
        run_free(&r);
    }
}
