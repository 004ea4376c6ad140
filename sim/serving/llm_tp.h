/* llm_tp.h: an LLM tenant's tensor parallelism (llm.tensor_parallel; docs/llm.md, "Tensor
 * parallelism"): the key, read and checked against the tenant's profile. */
#ifndef COLO_LLM_TP_H
#define COLO_LLM_TP_H

#include "cfg.h"
#include "llm_profile.h"

/* Reads llm.tensor_parallel of the llm group g (1, 2, 4 or 8 GPUs of one node; absent: 1) into
 * *out and checks it against the tenant's profile p (borrowed): no more ranks than the model's
 * KV heads, which they must share evenly, and the degree p was measured at (its own
 * "tensor_parallel"). A mismatch names the profiles of p's folder measured at the degree asked,
 * of the same model and GPU, when there are any (each read: O(files)). Errors: FILE:LINE: key:
 * what, at llm.tensor_parallel, or at llm.profile when the key is absent. */
int colo_llm_tp_read(const colo_cfg_reader_t *r, const config_setting_t *g,
                     const colo_llm_profile_t *p, int *out);

#endif
