/* test_prefix.c: prefix caching of LLM tenants (docs/llm.md, "Prefix caching"; prefix_cache.h,
 * llm_prompts.h): what hits and when, LRU eviction that spares blocks in use, prefill shortened
 * by the hit, the synthetic workloads' hit rates against a count by hand, a Mooncake log's
 * hash_ids, and LLM copies routed as one service. */
#include "arrival.h"
#include "helpers.h"
#include "llm_cfg.h"
#include "prefix_cache.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

TestSuite(prefix, .init = test_init);

#define PREFIX "tests/fixtures/llm/prefix.cfg"

static colo_llm_stats_t stats(const test_run_t *r, size_t i)
{
    colo_llm_stats_t st;
    cr_assert_eq(colo_tenant_llm_stats(r->sim, i, &st), 0);
    return st;
}

/* prefix.cfg: one user of one group, so every request has the same 1,200-token prompt, one at a
 * time. The first finds nothing; each later one finds every block but the one holding the
 * prompt's last token, which must be computed again for the next token: (1200 - 1) / 16 = 74
 * of its 75 blocks. */
Test(prefix, a_fully_repeated_prompt_hits_after_its_first_request_and_never_before)
{
    test_run_t r = run_scenario(src_path(PREFIX), NULL, 0);
    colo_llm_stats_t st = stats(&r, 0);
    cr_assert(st.prefix_caching);
    cr_assert_geq(st.prefix_requests, 5);
    cr_assert_eq(st.prefix_prompt_blocks, st.prefix_requests * 75);
    cr_assert_eq(st.prefix_hit_blocks, (st.prefix_requests - 1) * 74, "%llu hit blocks in %llu",
                 (unsigned long long)st.prefix_hit_blocks, (unsigned long long)st.prefix_requests);
    cr_assert_eq(st.prefix_hit_tokens, st.prefix_hit_blocks * 16);
    cr_assert_eq(st.prefix_evicted_blocks, 0);
    json_t *pc = json_object_get(json_object_get(result_tenant(&r, 0), "llm"), "prefix_cache");
    cr_assert_not_null(pc);
    cr_assert_float_eq(result_num(pc, "hit_rate_blocks"),
                       (double)st.prefix_hit_blocks / (double)st.prefix_prompt_blocks, 1e-9);
    run_free(&r);
    /* switched off: nothing found, and no prefix_cache in the results */
    const char *off[] = {"tenants.[0].llm.prefix_caching=false"};
    test_run_t o = run_scenario(src_path(PREFIX), off, 1);
    cr_assert_not(stats(&o, 0).prefix_caching);
    cr_assert_null(json_object_get(json_object_get(result_tenant(&o, 0), "llm"), "prefix_cache"));
    run_free(&o);
}

/* The hit is prefill not done: the tokens prefilled in the window are the prompts' tokens less
 * those found cached, and a request's time to first token is shorter. */
Test(prefix, a_cached_prefix_shortens_prefill_by_its_tokens)
{
    const char *off[] = {"tenants.[0].llm.prefix_caching=false"};
    test_run_t on = run_scenario(src_path(PREFIX), NULL, 0),
               no = run_scenario(src_path(PREFIX), off, 1);
    colo_llm_stats_t a = stats(&on, 0), b = stats(&no, 0);
    double window = 20.0; /* prefix.cfg: no warm-up */
    double prefilled_on = a.prompt_tokens_per_s * window,
           prefilled_off = b.prompt_tokens_per_s * window;
    cr_assert_gt(a.prefix_hit_tokens, 0);
    cr_assert_float_eq(prefilled_on, (double)(a.prefix_prompt_tokens - a.prefix_hit_tokens), 1e-6,
                       "%g tokens prefilled, %llu prompt tokens of which %llu cached", prefilled_on,
                       (unsigned long long)a.prefix_prompt_tokens,
                       (unsigned long long)a.prefix_hit_tokens);
    cr_assert_float_eq(prefilled_off, (double)a.prefix_prompt_tokens, 1e-6);
    double ttft_on = result_num(
               json_object_get(json_object_get(result_tenant(&on, 0), "llm"), "ttft_ms"), "p50"),
           ttft_off = result_num(
               json_object_get(json_object_get(result_tenant(&no, 0), "llm"), "ttft_ms"), "p50");
    cr_assert_lt(ttft_on, 0.5 * ttft_off, "TTFT p50 %g ms cached, %g ms not", ttft_on, ttft_off);
    run_free(&on);
    run_free(&no);
}

/* Units of one token in blocks of one token: block k of a prompt is unit k. */
static void prompt_of(colo_prefix_t *p, uint64_t who, int n)
{
    colo_prefix_reset(p, 1);
    for (int k = 0; k < n; k++)
        cr_assert_eq(colo_prefix_push(p, colo_prefix_id(COLO_PREFIX_USER, who, 0, (uint64_t)k)), 0);
}

/* A cache of 8 blocks: A's and then B's 3 blocks are cached and released (A's the least
 * recently used); C holds B's first 2 and needs 5 more: the 2 empty blocks, then A's 3 are
 * evicted, not B's, and never the 2 that C holds, even when every free block is taken. */
Test(prefix, lru_eviction_keeps_blocks_in_use_and_evicts_the_least_recently_used)
{
    colo_prefix_cache_t pc;
    cr_assert_eq(colo_prefix_cache_init(&pc, 8), 0);
    colo_prefix_t a = {0}, b = {0};
    colo_prefix_hold_t ha = {0}, hb = {0}, hc = {0};
    prompt_of(&a, 1, 3);
    prompt_of(&b, 2, 3);
    colo_prefix_cache_alloc(&pc, 3);
    cr_assert_eq(colo_prefix_cache_commit(&pc, &ha, &a, 1, 3), 0);
    colo_prefix_cache_alloc(&pc, 3);
    cr_assert_eq(colo_prefix_cache_commit(&pc, &hb, &b, 1, 3), 0);
    cr_assert_eq(pc.in_use, 6);
    colo_prefix_cache_release(&pc, &ha, 0);
    colo_prefix_cache_release(&pc, &hb, 0);
    cr_assert_eq(pc.idle, 6);
    cr_assert_eq(colo_prefix_cache_free(&pc), 8);
    long long idle;
    cr_assert_eq(colo_prefix_cache_match(&pc, &b, 1, 3, &idle), 3);
    cr_assert_eq(idle, 3);
    cr_assert_eq(colo_prefix_cache_take(&pc, &hc, &b, 1, 2), 0); /* C: B's first two */
    cr_assert_eq(pc.in_use, 2);
    colo_prefix_cache_alloc(&pc, 5);
    cr_assert_eq(pc.evicted, 3);
    cr_assert_eq(colo_prefix_cache_match(&pc, &a, 1, 3, NULL), 0, "A's blocks were the oldest");
    cr_assert_eq(colo_prefix_cache_match(&pc, &b, 1, 3, NULL), 3, "B's are younger");
    colo_prefix_cache_alloc(&pc, 1); /* the last free block: B's third, idle */
    cr_assert_eq(colo_prefix_cache_free(&pc), 0);
    cr_assert_eq(colo_prefix_cache_match(&pc, &b, 1, 3, NULL), 2, "C's blocks are never evicted");
    cr_assert_eq(pc.empty + pc.idle + pc.in_use + 6, 8); /* 6 private: C's 5 + 1 */
    colo_prefix_cache_release(&pc, &hc, 6);
    cr_assert_eq(colo_prefix_cache_free(&pc), 8);
    colo_prefix_fini(&a);
    colo_prefix_fini(&b);
    colo_prefix_hold_fini(&ha);
    colo_prefix_hold_fini(&hb);
    colo_prefix_hold_fini(&hc);
    colo_prefix_cache_fini(&pc);
}

/* One group of two users, requests one at a time: the very first request finds nothing; the
 * first of the other user finds the group's prefix, 1000 / 16 = 62 whole blocks; every other
 * finds its own prompt but its last block, 74. */
Test(prefix, the_group_workload_hits_what_is_counted_by_hand)
{
    const char *sets[] = {"tenants.[0].tokens.shared_prefix.users=2"};
    test_run_t r = run_scenario(src_path(PREFIX), sets, 1);
    colo_llm_stats_t st = stats(&r, 0);
    cr_assert_geq(st.prefix_requests, 5);
    cr_assert_eq(st.prefix_hit_blocks, (st.prefix_requests - 2) * 74 + 62);
    run_free(&r);
}

/* One session at a time of 3 turns, 100-token messages, 50-token outputs: turn 0 (100 tokens)
 * finds nothing and leaves its 149 computed tokens' 9 whole blocks; turn 1 (250 tokens) finds
 * them and leaves (250 + 49) / 16 = 18; turn 2 (400) finds 18; then a new session starts. */
Test(prefix, a_session_finds_its_own_history)
{
    const char *sets[] = {"tenants.[0].tokens={ sessions = { sessions = 1; turns = 3; message = "
                          "100; }; output = { dist = \"fixed\"; value = 50; }; }"};
    test_run_t r = run_scenario(src_path(PREFIX), sets, 1);
    colo_llm_stats_t st = stats(&r, 0);
    static const long long per_turn[] = {0, 9, 18};
    unsigned long long want = 0;
    for (uint64_t k = 0; k < st.prefix_requests; k++)
        want += (unsigned long long)per_turn[k % 3];
    cr_assert_geq(st.prefix_requests, 6);
    cr_assert_eq(st.prefix_hit_blocks, want, "%llu blocks hit, %llu by hand",
                 (unsigned long long)st.prefix_hit_blocks, want);
    run_free(&r);
}

/* mooncake_few.jsonl: lines 1-3 and 138 of Mooncake's conversation log. Each record's hash_ids
 * are read; replayed, the records after the first find its first 512-token unit (32 blocks)
 * once it is prefilled, and line 138 finds the 14 full units it shares with line 2 (448
 * blocks; line 2's 15th id covers a partial unit, not cached). */
Test(prefix, a_mooncake_log_gives_each_request_its_hash_ids)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc;
    cr_assert_eq(
        colo_scenario_load(src_path("tests/fixtures/llm/mooncake.cfg"), NULL, 0, &sc, &err), 0,
        "%s", err.text);
    colo_arrival_state_t st;
    cr_assert_eq(colo_arrival_start(&sc->tenants[0].arrival, &st, &err), 0);
    static const size_t n[] = {14, 15, 15, 16};
    static const long long second[] = {1, 14, 28, 14};
    colo_time_t now = 0, at;
    int count;
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(colo_arrival_next(&sc->tenants[0].arrival, &st, NULL, now, &at, &count, &err),
                     0);
        cr_assert_not(st.hash_bad);
        cr_assert_eq(st.n_hash, n[k], "record %d: %zu ids", k + 1, st.n_hash);
        cr_assert_eq(st.hash_ids[0], 0);
        cr_assert_eq(st.hash_ids[1], second[k]);
        now = at;
    }
    colo_arrival_stop(&st);
    colo_scenario_free(sc);
    test_run_t r = run_scenario(src_path("tests/fixtures/llm/mooncake.cfg"), NULL, 0);
    colo_llm_stats_t s = stats(&r, 0);
    cr_assert_eq(s.prefix_requests, 4);
    cr_assert_eq(s.prefix_prompt_blocks, 423 + 458 + 453 + 490);
    cr_assert_eq(s.prefix_hit_blocks, 32 + 32 + 448);
    run_free(&r);
}

/* Two copies of an LLM service with one router: round robin deals the requests in turn, every
 * request of the service's one stream is served, and a seed gives the same run twice. */
Test(prefix, routed_llm_copies_share_one_stream_and_repeat_for_a_seed)
{
    const char *sets[] = {"duration_s=30"};
    test_run_t a = run_scenario(src_path("scenarios/llm_prefix_groups_h100.cfg"), sets, 1),
               b = run_scenario(src_path("scenarios/llm_prefix_groups_h100.cfg"), sets, 1);
    json_int_t n[2];
    for (size_t i = 0; i < 2; i++) {
        json_t *t = result_tenant(&a, i);
        n[i] = json_integer_value(json_object_get(t, "arrived"));
        cr_assert_str_eq(json_string_value(json_object_get(t, "service")), "chat");
        cr_assert_gt(result_num(t, "completed"), 0);
        cr_assert_gt(stats(&a, i).prefix_hit_blocks, 0);
        char *x = json_dumps(t, JSON_SORT_KEYS),
             *y = json_dumps(result_tenant(&b, i), JSON_SORT_KEYS);
        cr_assert_str_eq(x, y, "copy %zu differs between two runs of one seed", i + 1);
        free(x);
        free(y);
    }
    cr_assert_leq(n[0] - n[1], 1);
    cr_assert_geq(n[0] - n[1], -1);
    cr_assert_gt(n[0] + n[1], 10);
    run_free(&a);
    run_free(&b);
}
