/* llm_cfg.h: the settings of an LLM tenant (docs/llm.md): its profile, the serving engine's
 * scheduler limits, its KV cache, and where its requests' token counts come from. */
#ifndef COLO_LLM_CFG_H
#define COLO_LLM_CFG_H

#include "cfg.h"
#include "gpu.h"
#include "llm_profile.h"
#include "llm_prompts.h"
#include "simtime.h"
#include "trace.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>

typedef enum {
    COLO_TOKENS_LOG,       /* the replayed log's record */
    COLO_TOKENS_FIXED,     /* value */
    COLO_TOKENS_UNIFORM,   /* integers in [min, max] */
    COLO_TOKENS_LOGNORMAL, /* exp(N(ln median, sigma)), rounded, in [1, max] */
    COLO_TOKENS_ZIPF,      /* P(k) proportional to k^-s, k in [1, max] */
    COLO_TOKENS_SESSION,   /* a session's history (tokens.sessions): from min to max, typical
                            * value; drawn by colo_prompts_draw */
} colo_tokens_kind_t;

/* How many tokens a request's prompt or output has. */
typedef struct colo_token_dist {
    colo_tokens_kind_t kind;
    long long value, min, max; /* fixed: value; others: at most max; uniform: at least min */
    double median, sigma, s;
    double *cdf; /* zipf: P(K <= k + 1) for k < max */
} colo_token_dist_t;

/* A draw from d (not COLO_TOKENS_LOG). O(1); zipf O(log max). */
long long colo_token_draw(const colo_token_dist_t *d, gsl_rng *rng);

typedef struct colo_llm_cfg {
    char *profile_path;
    colo_llm_profile_t *profile;
    const colo_gpu_t *profile_gpu; /* the GPU it was measured on, from the scenario's trace
                                    * table (borrowed; set when the scenario is resolved) */
    /* the engine (vLLM's names) */
    int max_num_seqs;           /* sequences in one iteration at most */
    int max_num_batched_tokens; /* tokens in one iteration at most, without chunking; not
                                 * given: 2048, raised without chunking to the longest request
                                 * (colo_llm_cfg_resolve) */
    bool max_num_batched_tokens_given; /* llm.max_num_batched_tokens was written */
    int chunk_tokens;           /* > 0: chunked prefill, decodes first, this budget per iteration */
    int block_tokens;           /* tokens per KV-cache block */
    int layer_groups;           /* kernels per operator per iteration */
    int tensor_parallel;        /* GPUs the replica spans (llm_tp.h); the profile's degree */
    double gpu_memory_utilization;
    double watermark; /* share of blocks kept free when admitting */
    bool prefix_caching; /* automatic prefix caching (prefix_cache.h); default false */
    colo_math_t precision; /* the tenant's precision (COLO_MATH_AUTO: the profile's FP16); FP8:
                            * weights and KV cache of one byte an element, as vLLM's
                            * quantization = "fp8" with kv_cache_dtype = "fp8" */
    /* the KV cache (colo_llm_cfg_resolve) */
    double kv_cache_gib_given; /* 0: from the tenant's memory */
    double memory_gib;         /* the memory it was sized from */
    const char *memory_from;   /* the setting that gave it: "memory_limit_gib", "memory_gib",
                                * the MIG instance's or the GPU's memory (static) */
    double weights_gib, activations_gib, kv_cache_gib;
    long long kv_blocks;
    /* SLOs; 0: none */
    double slo_ttft_ms, slo_tpot_ms;
    colo_time_t slo_ttft, slo_tpot;
    /* requests' tokens */
    colo_token_dist_t prompt, output;
    colo_prompts_cfg_t prompts; /* tokens.shared_prefix or tokens.sessions (prompt: their
                                 * range), or neither */
    long long typical_prompt, typical_output; /* for one request alone */
    long long log_records;                    /* replayed: records read at load */
} colo_llm_cfg_t;

/* Reads the tenant's llm group, tokens group and slo_ttft_ms / slo_tpot_ms (group t of the
 * scenario) and its profile (path relative to dir); the scenario opens the profile's GPU
 * (profile_gpu) when it resolves the tenant's place. replay: the tenant's
 * arrivals replay a log (its records give the tokens when there is no tokens group). *out is
 * new. Errors: FILE:LINE: key: what. */
int colo_llm_cfg_read(const colo_cfg_reader_t *r, const config_setting_t *t, const char *dir,
                      bool replay, colo_llm_cfg_t **out);

/* Sizes the KV cache from memory_gib of memory (from: which setting gave it, static) once the
 * tenant's place is known, and checks that requests fit: an iteration within the profile's
 * tokens, a whole request within one iteration (without chunking: a preempted request is
 * prefilled again with the tokens it generated), a request within the cache. Without chunking
 * and without llm.max_num_batched_tokens, that is set to the longest request (prompt and output
 * tokens), at least 2048, as vLLM sets it to max_model_len. Tokens from a replayed log
 * (arrival): every record of it is read here, so that a bad count is reported, at its line,
 * before the run (twice where the default needs the longest record first); the typical
 * request is the log's median. */
struct colo_arrival_cfg;
int colo_llm_cfg_resolve(const colo_cfg_reader_t *r, const config_setting_t *t, colo_llm_cfg_t *c,
                         const struct colo_arrival_cfg *arrival, double memory_gib,
                         const char *from);

/* The prefill of a typical request as a trace (one kernel per layer and operator, measured on
 * the profile's GPU, profile_gpu, which must be set), the tenant's trace for what needs one.
 * *out is new. */
int colo_llm_cfg_trace(const colo_llm_cfg_t *c, colo_trace_t **out, colo_error_t *err);

void colo_llm_cfg_free(colo_llm_cfg_t *c);

#endif
