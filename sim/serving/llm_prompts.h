/* llm_prompts.h: the prompts of an LLM tenant's requests as prefix caching sees them
 * (docs/llm.md, "Prefix caching"): the synthetic shared-prefix workloads of the tokens group
 * (groups of users sharing a system prompt; multi-turn sessions whose prompt is their own
 * history) and a replayed Mooncake log's hash_ids, each turned into the hashed units of
 * prefix_cache.h, with the session key a session-affinity router reads. */
#ifndef COLO_LLM_PROMPTS_H
#define COLO_LLM_PROMPTS_H

#include "cfg.h"
#include "prefix_cache.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>

typedef enum {
    COLO_PROMPTS_DRAWN,    /* tokens.prompt, or a log's counts: no shared structure */
    COLO_PROMPTS_GROUPS,   /* tokens.shared_prefix */
    COLO_PROMPTS_SESSIONS, /* tokens.sessions */
} colo_prompts_kind_t;

typedef struct colo_prompts_cfg {
    colo_prompts_kind_t kind;
    /* shared_prefix: groups x users; a user's prompt is its group's prefix and its question */
    long long groups, users, prefix, question;
    /* sessions: sessions open at once, turns each; turn k's prompt: the system prompt (shared
     * by all), then k + 1 messages and the k outputs before it */
    long long sessions, turns, system, message;
} colo_prompts_cfg_t;

/* Reads tokens.shared_prefix or tokens.sessions of group tok into g (kind stays DRAWN when it
 * has neither); output_max and output_typical: of the tokens.output distribution. The prompts'
 * fewest, most and typical tokens into *lo, *hi, *typical. Refuses a group beside
 * tokens.prompt or beside the other. 0, or a negative code with the error at the key. */
int colo_prompts_read(const colo_cfg_reader_t *r, const config_setting_t *tok,
                      colo_prompts_cfg_t *g, long long output_max, long long output_typical,
                      long long *lo, long long *hi, long long *typical);

/* A run's sessions (tokens.sessions): each one's tokens so far, turn and key. */
typedef struct colo_prompts_run {
    struct colo_session {
        long long len, turn, key;
    } * s;
    long long next_key;
} colo_prompts_run_t;

int colo_prompts_run_init(colo_prompts_run_t *run, const colo_prompts_cfg_t *g);
void colo_prompts_run_fini(colo_prompts_run_t *run);

/* One request of a synthetic workload, its output of `output` tokens drawn already: picks its
 * group and user (or session) from rng, and gives its prompt's tokens and session key; with
 * pre (NULL: no prefix caching), its units of block_tokens tokens: a group's prefix, then the
 * user's question (the prompt's full units); a session's system prompt, then its history
 * including this turn's output (vLLM caches generated tokens' blocks too, and the next turn's
 * prompt holds them). A session that has had its turns starts anew. 0 or COLO_ENOMEM. O(units). */
int colo_prompts_draw(const colo_prompts_cfg_t *g, colo_prompts_run_t *run, gsl_rng *rng,
                      long long output, int block_tokens, long long *prompt, long long *session,
                      colo_prefix_t *pre);

/* A replayed log record's hash_ids (one per 512 tokens, Mooncake's unit) as units of pre: the
 * ids of the prompt's full 512-token units (vLLM caches full blocks only: a last, partial unit
 * is not cached). 0 or COLO_ENOMEM. */
#define COLO_PROMPTS_LOG_UNIT 512
int colo_prompts_from_ids(colo_prefix_t *pre, const long long *ids, size_t n, long long prompt);

#endif
