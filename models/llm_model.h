/* llm_model.h: one iteration of an LLM (a batch of prefill chunks and decode steps) as kernels
 * with grid, work and bytes, for the hardware model: the profile's per-operator times at the
 * iteration's token count, and attention and the output projection by rule from the model's
 * dimensions. Equations and sources: docs/llm.md, "Cost of an iteration". */
#ifndef COLO_LLM_MODEL_H
#define COLO_LLM_MODEL_H

#include "errors.h"
#include "gpu.h"
#include "kernel_model.h"
#include "llm_profile.h"
#include "trace.h"

#include <stdbool.h>
#include <stddef.h>

/* Kernels of one layer group: the profile's nine operators, prefill and decode attention, and
 * with tensor parallelism two all-reduces; and the output projection once per iteration. */
#define COLO_LLM_KERNELS_PER_GROUP 11
#define COLO_LLM_ALLREDUCES_PER_GROUP 2

/* The tile of query rows one attention block and one GEMM block computes (FlashAttention's and
 * cuBLAS's 128-row tiles). */
#define COLO_LLM_TILE 128

/* What an iteration holds, summed over its sequences. */
typedef struct colo_llm_iter {
    int tokens;           /* new tokens: prefill chunk tokens + one per decode */
    int prefills;         /* sequences with a prefill chunk */
    double prefill_q;     /* sum of chunk lengths q_i */
    double prefill_pairs; /* sum of q_i (kv_i + (q_i + 1) / 2): causal query-key pairs */
    double prefill_keys;  /* sum of kv_i + q_i: keys (and values) read */
    double prefill_tiles; /* sum of ceil(q_i x query heads per KV head / 128) */
    int decodes;          /* sequences decoding one token */
    double decode_ctx;    /* sum of their contexts (keys and values read) */
    int samples;          /* sequences whose next token is sampled (the output projection) */
} colo_llm_iter_t;

/* Adds a prefill chunk of q tokens after kv tokens already in the cache; last: it ends the
 * prompt, so a token is sampled. */
void colo_llm_iter_prefill(colo_llm_iter_t *it, const colo_llm_profile_t *p, int q, long long kv,
                           bool last);
/* Adds a decode step of a sequence whose cache holds ctx tokens. */
void colo_llm_iter_decode(colo_llm_iter_t *it, long long ctx);

/* A model placed on a GPU: the profile (measured on src) run on dst. With the profile's
 * tensor_parallel k > 1 it is rank 0 of a replica sharded over k GPUs of dst's kind in one node
 * (Megatron-LM's split): each kernel is that rank's shard, and two all-reduces per layer join
 * the ranks (docs/llm.md, "Tensor parallelism"). */
typedef struct colo_llm_model {
    const colo_llm_profile_t *prof; /* borrowed */
    const colo_gpu_t *src, *dst;    /* borrowed */
    int groups;                     /* layer groups: kernels per operator per iteration */
    double tensor_rate; /* FLOP/ns that the profile's largest GEMM reached on src: the rate of
                         * the attention and output-projection kernels' math on src */
    int tp;             /* ranks: the profile's tensor_parallel */
    int q_heads, kv_heads; /* one rank's heads */
    double mlp_hidden, vocab; /* one rank's MLP width and vocabulary (1/tp of the model's) */
    colo_math_t precision;    /* its matmuls and attention at this class and element size
                               * (FP8: weights and KV cache); COLO_MATH_AUTO (init): the
                               * profile's */
} colo_llm_model_t;

/* Sets m up. groups from 1 to the profile's layers. */
void colo_llm_model_init(colo_llm_model_t *m, const colo_llm_profile_t *p, const colo_gpu_t *src,
                         const colo_gpu_t *dst, int groups);

/* Most kernels an iteration has. */
size_t colo_llm_model_max_kernels(const colo_llm_model_t *m);

/* The iteration's kernels in launch order into ops (names static, gaps 0) and their works on dst
 * into w (either may be NULL), at most colo_llm_model_max_kernels; their number into *n. When
 * profiled (may be NULL) is given, each kernel's flag says whether it is one of the profile's
 * operators (not attention, the output projection or an all-reduce). Errors: COLO_ERANGE when
 * the iteration has more tokens than the profile holds. */
int colo_llm_model_kernels(const colo_llm_model_t *m, const colo_llm_iter_t *it, colo_op_t *ops,
                           colo_kernel_work_t *w, bool *profiled, size_t *n, colo_error_t *err);

#endif
