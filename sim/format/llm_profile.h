/* llm_profile.h: LLM operator profiles ("colosim-llm-profile" JSON, docs/llm_profiles.md): a
 * model's dimensions and what each operator of one transformer layer cost on the GPU it was
 * measured on, as a function of the tokens in the iteration. Made by `colosim import vidur`. */
#ifndef COLO_LLM_PROFILE_H
#define COLO_LLM_PROFILE_H

#include "errors.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define COLO_LLM_PROFILE_VERSION 1

/* The largest model dimension and tensor-parallel degree a profile may give (and an importer
 * may write): dimensions to 10^7, tensor parallelism to 64 GPUs. */
#define COLO_LLM_MAX_DIM 10000000
#define COLO_LLM_MAX_TP 64

/* The operators of one layer that a profile times, in the order a layer runs them. */
typedef enum {
    COLO_LLM_INPUT_NORM, /* input_layernorm */
    COLO_LLM_QKV,        /* attn_pre_proj: the fused Q, K and V projection (a GEMM) */
    COLO_LLM_ROPE,       /* attn_rope */
    COLO_LLM_O_PROJ,     /* attn_post_proj: the output projection (a GEMM) */
    COLO_LLM_POST_NORM,  /* post_attention_layernorm (absent: parallel attention and MLP) */
    COLO_LLM_MLP_UP,     /* mlp_up_proj: gate and up, fused (a GEMM) */
    COLO_LLM_MLP_ACT,    /* mlp_act */
    COLO_LLM_MLP_DOWN,   /* mlp_down_proj (a GEMM) */
    COLO_LLM_ADD,        /* add: the residual add after the MLP */
    COLO_LLM_OPS
} colo_llm_op_t;

/* The profile's key of op ("mlp_up_proj"). */
const char *colo_llm_op_key(colo_llm_op_t op);

typedef struct colo_llm_profile {
    char *path;
    char *model; /* "meta-llama/Meta-Llama-3-8B" */
    char *gpu;   /* the colosim GPU it was measured on ("a100-80gb") */
    int gpu_line;
    int tensor_parallel;
    int dtype_bytes; /* 2: fp16 */
    /* dims */
    int layers, q_heads, kv_heads, hidden, head_dim, mlp_hidden, vocab;
    bool gated_mlp, post_attention_norm;
    /* ops: per token count (ascending), ms of one layer; ms[op] NULL when the profile has none */
    size_t n_tokens;
    int *tokens;
    double *ms[COLO_LLM_OPS];
    /* attention timings, when the profile has them (validation of the attention rule):
     * prefill rows {kv_cache_tokens, chunk_tokens, ms}, decode rows {batch, kv_cache_tokens, ms} */
    size_t n_prefill, n_decode;
    double (*prefill)[3];
    double (*decode)[3];
    json_t *provenance;
} colo_llm_profile_t;

/* Reads and validates a profile. Errors carry the file, the line of the key and the key
 * ("llama.json:18: ops.mlp_up_proj: ..."). *out is new (colo_llm_profile_free). */
int colo_llm_profile_load(const char *path, colo_llm_profile_t **out, colo_error_t *err);

/* Checks a profile document as colo_llm_profile_load would read it (an importer's, before it is
 * written); errors name source and the key, without a line. 0 or a negative code. */
int colo_llm_profile_check(json_t *doc, const char *source, colo_error_t *err);
void colo_llm_profile_free(colo_llm_profile_t *p);

/* The most tokens one iteration may have: the profile's largest token count. */
int colo_llm_profile_max_tokens(const colo_llm_profile_t *p);

/* ms of one layer's op at tokens (1 <= tokens <= max): linear between the two profiled counts
 * around it; 0 when the profile lacks the op. O(log n). */
double colo_llm_profile_ms(const colo_llm_profile_t *p, colo_llm_op_t op, int tokens);

/* KV-cache bytes one token holds over all layers on one GPU: 2 (K and V) x layers x KV heads
 * per rank (KV heads / tensor_parallel) x head size x dtype bytes. */
double colo_llm_kv_bytes_per_token(const colo_llm_profile_t *p);

/* The model's weights in bytes on one GPU: its layers' projections, the embedding and the
 * output projection over tensor_parallel ranks, and whole norms, at dtype_bytes a parameter. */
double colo_llm_weight_bytes(const colo_llm_profile_t *p);

#endif
