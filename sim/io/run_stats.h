/* run_stats.h: a finished run's figures per tenant without JSON, for programs that embed
 * colosim (colosim.h): the same numbers as the results document (results.c), computed the
 * same way. */
#ifndef COLO_RUN_STATS_H
#define COLO_RUN_STATS_H

#include <stddef.h>

typedef struct colo_sim colo_sim_t;

/* The tenants of a run, in the scenario's order; the index of the one called name, or -1. */
size_t colo_sim_tenant_count(const colo_sim_t *sim);
const char *colo_sim_tenant_name(const colo_sim_t *sim, size_t i);
long colo_sim_tenant_find(const colo_sim_t *sim, const char *name);

/* One tenant's figures after a run: these of the numbers the results file gives per tenant
 * (docs/results.md), computed the same way (no SLO: slo_ms 0 and slo_attainment -1 where the
 * file has null). Requests counted are those that arrived in [warmup_s, duration_s). */
typedef struct colo_run_stats {
    unsigned long long arrived, completed, dropped, in_flight;
    double throughput_rps; /* requests completed in the window per second (MLPerf Offline:
                            * all samples over the time from their issue to the last) */
    double goodput_rps;    /* of those, the ones within the SLO, per second; -1 without one */
    double mean_ms, p50_ms, p90_ms, p99_ms, p999_ms, max_ms; /* latency of completed requests */
    double slo_ms;                                           /* 0: the tenant has no SLO */
    double slo_attainment; /* met the SLO / arrived; -1 without an SLO or arrivals */
    double gpu_share;      /* fraction of the window its kernels ran */
    double offered_rps;    /* requests that arrived in the window per second */
    int overloaded; /* 1: offered more than it served, its queue still growing at the window's
                     * end (docs/results.md, "Overload and short logs"); 0 otherwise */
    /* An LLM tenant's (docs/llm.md, "Results"): time to first token and time per output token
     * of the requests that arrived in the window and completed, output tokens per second, and
     * its SLOs (0: none). -1 for a vision tenant, and where no request completed (TPOT: none
     * of more than one token). */
    double ttft_mean_ms, ttft_p50_ms, ttft_p90_ms, ttft_p99_ms, ttft_max_ms;
    double tpot_mean_ms, tpot_p50_ms, tpot_p90_ms, tpot_p99_ms, tpot_max_ms;
    double output_tokens_per_s;
    double slo_ttft_ms, slo_tpot_ms;
    /* An LLM tenant with llm.prefix_caching (docs/llm.md, "Prefix caching"): of the requests
     * first admitted in the window, the share of their prompts' KV blocks and of their prompt
     * tokens found in the prefix cache, and cached blocks evicted over the run. -1 (evicted: 0)
     * without prefix caching, for a vision tenant, or when no request was admitted. */
    double prefix_hit_rate_blocks, prefix_hit_rate_tokens;
    unsigned long long prefix_evicted_blocks;
} colo_run_stats_t;

/* Fills *out for tenant i of a finished run. 0, COLO_EINVAL (no such tenant) or COLO_ENOMEM.
 * Each call summarises the tenant's latencies anew: O(n log n) in its samples when they are
 * exact, O(buckets) from the histogram. */
int colo_sim_tenant_stats(const colo_sim_t *sim, size_t i, colo_run_stats_t *out);

#endif
