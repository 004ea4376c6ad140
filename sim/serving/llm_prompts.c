/* llm_prompts.c: the shared-prefix workloads and a log's hash_ids as hashed units
 * (llm_prompts.h). */
#include "llm_prompts.h"
#include "alloc.h"
#include "errors.h"

#include <string.h>

#define MAX_TOKENS 10000000LL /* as llm_cfg.c: beyond any context */

static int count_key(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                     long long lo, long long hi, long long *out)
{
    int rc = colo_cfg_int(r, g, key, lo > 0 ? COLO_CFG_REQUIRED : 0, out);
    if (rc < 0) return rc;
    if (*out < lo || *out > hi)
        return colo_cfg_error(r, config_setting_get_member(g, key), COLO_ERANGE,
                              "%lld: from %lld to %lld", *out, lo, hi);
    return 0;
}

int colo_prompts_read(const colo_cfg_reader_t *r, const config_setting_t *tok,
                      colo_prompts_cfg_t *g, long long output_max, long long output_typical,
                      long long *lo, long long *hi, long long *typical)
{
    const config_setting_t *sp, *ss;
    int rc;
    memset(g, 0, sizeof *g);
    if ((rc = colo_cfg_aggregate(r, tok, "shared_prefix", 0, CONFIG_TYPE_GROUP, &sp)) < 0 ||
        (rc = colo_cfg_aggregate(r, tok, "sessions", 0, CONFIG_TYPE_GROUP, &ss)) < 0)
        return rc;
    if (!sp && !ss) return 0;
    const config_setting_t *at = sp ? sp : ss;
    if ((sp && ss) || config_setting_get_member(tok, "prompt"))
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "the prompt is made by one of tokens.prompt, "
                              "tokens.shared_prefix or tokens.sessions: give one");
    if (sp) {
        static const char *const keys[] = {"groups", "users", "prefix", "question", NULL};
        g->kind = COLO_PROMPTS_GROUPS;
        if ((rc = colo_cfg_check_keys(r, sp, keys)) ||
            (rc = count_key(r, sp, "groups", 1, 1000000, &g->groups)) ||
            (rc = count_key(r, sp, "users", 1, 1000000, &g->users)) ||
            (rc = count_key(r, sp, "prefix", 1, MAX_TOKENS, &g->prefix)) ||
            (rc = count_key(r, sp, "question", 1, MAX_TOKENS, &g->question)))
            return rc;
        *lo = *hi = *typical = g->prefix + g->question;
        return 0;
    }
    static const char *const keys[] = {"sessions", "turns", "system", "message", NULL};
    g->kind = COLO_PROMPTS_SESSIONS;
    if ((rc = colo_cfg_check_keys(r, ss, keys)) ||
        (rc = count_key(r, ss, "sessions", 1, 1000000, &g->sessions)) ||
        (rc = count_key(r, ss, "turns", 1, 10000, &g->turns)) ||
        (rc = count_key(r, ss, "system", 0, MAX_TOKENS, &g->system)) ||
        (rc = count_key(r, ss, "message", 1, MAX_TOKENS, &g->message)))
        return rc;
    /* turn k (from 0): system + (k + 1) messages + k outputs */
    long long k = (g->turns - 1) / 2, last = g->turns - 1;
    *lo = g->system + g->message;
    *hi = g->system + (last + 1) * g->message + last * output_max;
    *typical = g->system + (k + 1) * g->message + k * output_typical;
    if (*hi > MAX_TOKENS)
        return colo_cfg_error(r, config_setting_get_member(ss, "turns"), COLO_ERANGE,
                              "a last turn of %lld prompt tokens: at most %lld", *hi, MAX_TOKENS);
    return 0;
}

int colo_prompts_run_init(colo_prompts_run_t *run, const colo_prompts_cfg_t *g)
{
    memset(run, 0, sizeof *run);
    if (g->kind != COLO_PROMPTS_SESSIONS) return 0;
    if (!(run->s = colo_calloc((size_t)g->sessions, sizeof *run->s))) return COLO_ENOMEM;
    for (long long i = 0; i < g->sessions; i++)
        run->s[i].key = run->next_key++;
    return 0;
}

void colo_prompts_run_fini(colo_prompts_run_t *run)
{
    colo_free(run->s);
    memset(run, 0, sizeof *run);
}

/* Units [from, to) of pre: those wholly within the first `shared` tokens are (tag_shared, a)'s,
 * the others (tag_own, a, b)'s; units are block_tokens long. */
static int units(colo_prefix_t *pre, long long to, int block_tokens, long long shared,
                 int tag_shared, uint64_t a, int tag_own, uint64_t b)
{
    for (long long k = (long long)pre->n; k < to; k++) {
        bool in_shared = (k + 1) * block_tokens <= shared;
        uint64_t id = in_shared ? colo_prefix_id(tag_shared, a, 0, (uint64_t)k)
                                : colo_prefix_id(tag_own, a, b, (uint64_t)k);
        if (colo_prefix_push(pre, id)) return COLO_ENOMEM;
    }
    return 0;
}

int colo_prompts_draw(const colo_prompts_cfg_t *g, colo_prompts_run_t *run, gsl_rng *rng,
                      long long output, int block_tokens, long long *prompt, long long *session,
                      colo_prefix_t *pre)
{
    if (pre) colo_prefix_reset(pre, block_tokens);
    if (g->kind == COLO_PROMPTS_GROUPS) {
        uint64_t grp = gsl_rng_uniform_int(rng, (unsigned long)g->groups);
        uint64_t user = gsl_rng_uniform_int(rng, (unsigned long)g->users);
        *prompt = g->prefix + g->question;
        *session = (long long)(grp * (uint64_t)g->users + user);
        /* the user's prompt is the same every time: the group's prefix, then its question */
        return pre ? units(pre, *prompt / block_tokens, block_tokens, g->prefix, COLO_PREFIX_GROUP,
                           grp, COLO_PREFIX_USER, user)
                   : 0;
    }
    struct colo_session *s = &run->s[gsl_rng_uniform_int(rng, (unsigned long)g->sessions)];
    if (s->turn == g->turns) /* done: a new session takes its place */
        *s = (struct colo_session){.key = run->next_key++};
    s->len += (s->turn == 0 ? g->system : 0) + g->message;
    *prompt = s->len;
    *session = s->key;
    s->len += output;
    s->turn++;
    /* the session's stream: the system prompt, then its own messages and outputs */
    return pre ? units(pre, s->len / block_tokens, block_tokens, g->system, COLO_PREFIX_SYSTEM, 0,
                       COLO_PREFIX_SESSION, (uint64_t)s->key)
               : 0;
}

int colo_prompts_from_ids(colo_prefix_t *pre, const long long *ids, size_t n, long long prompt)
{
    colo_prefix_reset(pre, COLO_PROMPTS_LOG_UNIT);
    size_t full = (size_t)(prompt / COLO_PROMPTS_LOG_UNIT);
    for (size_t k = 0; k < n && k < full; k++)
        if (colo_prefix_push(pre, colo_prefix_id(COLO_PREFIX_LOG, (uint64_t)ids[k], 0, 0)))
            return COLO_ENOMEM;
    return 0;
}
