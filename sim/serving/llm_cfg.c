/* llm_cfg.c: reading an LLM tenant's settings (llm_cfg.h, docs/llm.md). */
#include "llm_cfg.h"
#include "alloc.h"
#include "arrival.h"
#include "llm_model.h"
#include "llm_tp.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MAX_TOKENS 10000000LL /* prompt or output tokens of one request: beyond any context */
#define DEFAULT_BATCHED_TOKENS 2048 /* vLLM's llm.max_num_batched_tokens, at least */
/* why, without chunking, one iteration must hold a whole request (colo_llm_cfg_resolve) */
#define REPREFILL                                                                                  \
    "a preempted request is prefilled again whole, its prompt and the tokens it generated, and "   \
    "vLLM refuses a max_num_batched_tokens below max_model_len"

long long colo_token_draw(const colo_token_dist_t *d, gsl_rng *rng)
{
    switch (d->kind) {
    case COLO_TOKENS_FIXED:
    case COLO_TOKENS_LOG:
    case COLO_TOKENS_SESSION:
        return d->value;
    case COLO_TOKENS_UNIFORM:
        return d->min + (long long)gsl_rng_uniform_int(rng, (unsigned long)(d->max - d->min + 1));
    case COLO_TOKENS_LOGNORMAL: {
        double x = round(d->median * exp(d->sigma * gsl_ran_gaussian_ziggurat(rng, 1.0)));
        return x < 1 ? 1 : x > (double)d->max ? d->max : (long long)x;
    }
    case COLO_TOKENS_ZIPF: {
        double u = gsl_rng_uniform(rng);
        long long lo = 0, hi = d->max - 1; /* the first k with cdf[k] > u */
        while (lo < hi) {
            long long mid = (lo + hi) / 2;
            if (d->cdf[mid] > u)
                hi = mid;
            else
                lo = mid + 1;
        }
        return lo + 1;
    }
    }
    return 1;
}

static int tokens_key(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                      long long lo, long long *out)
{
    int rc = colo_cfg_int(r, g, key, COLO_CFG_REQUIRED, out);
    if (rc) return rc;
    if (*out < lo || *out > MAX_TOKENS)
        return colo_cfg_error(r, config_setting_get_member(g, key), COLO_ERANGE,
                              "%lld tokens: from %lld to %lld", *out, lo, MAX_TOKENS);
    return 0;
}

/* prompt = { dist = "fixed"; value = N; } and the other distributions. min_tokens: 1 */
static int read_dist(const colo_cfg_reader_t *r, const config_setting_t *tok, const char *which,
                     colo_token_dist_t *d)
{
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, tok, which, COLO_CFG_REQUIRED, CONFIG_TYPE_GROUP, &g);
    if (rc) return rc;
    const char *dist;
    if ((rc = colo_cfg_string(r, g, "dist", COLO_CFG_REQUIRED, &dist))) return rc;
    static const char *const fixed[] = {"dist", "value", NULL};
    static const char *const uniform[] = {"dist", "min", "max", NULL};
    static const char *const lognormal[] = {"dist", "median", "sigma", "max", NULL};
    static const char *const zipf[] = {"dist", "s", "max", NULL};
    if (strcmp(dist, "fixed") == 0) {
        d->kind = COLO_TOKENS_FIXED;
        if ((rc = colo_cfg_check_keys(r, g, fixed)) ||
            (rc = tokens_key(r, g, "value", 1, &d->value)))
            return rc;
        d->max = d->min = d->value;
        return 0;
    }
    if (strcmp(dist, "uniform") == 0) {
        d->kind = COLO_TOKENS_UNIFORM;
        if ((rc = colo_cfg_check_keys(r, g, uniform)) ||
            (rc = tokens_key(r, g, "min", 1, &d->min)) ||
            (rc = tokens_key(r, g, "max", d->min, &d->max)))
            return rc;
        return 0;
    }
    if (strcmp(dist, "lognormal") == 0) {
        d->kind = COLO_TOKENS_LOGNORMAL;
        d->min = 1;
        if ((rc = colo_cfg_check_keys(r, g, lognormal)) ||
            (rc = colo_cfg_double(r, g, "median", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE,
                                  &d->median)) ||
            (rc = colo_cfg_double(r, g, "sigma", COLO_CFG_REQUIRED | COLO_CFG_NONNEG, &d->sigma)) ||
            (rc = tokens_key(r, g, "max", 1, &d->max)))
            return rc;
        if (d->median > (double)d->max || d->sigma > 10)
            return colo_cfg_error(
                r, config_setting_get_member(g, d->sigma > 10 ? "sigma" : "median"), COLO_ERANGE,
                "%s", d->sigma > 10 ? "at most 10" : "more than max");
        return 0;
    }
    if (strcmp(dist, "zipf") == 0) {
        d->kind = COLO_TOKENS_ZIPF;
        d->min = 1;
        if ((rc = colo_cfg_check_keys(r, g, zipf)) ||
            (rc = colo_cfg_double(r, g, "s", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE, &d->s)) ||
            (rc = tokens_key(r, g, "max", 1, &d->max)))
            return rc;
        if (d->max > 1000000)
            return colo_cfg_error(r, config_setting_get_member(g, "max"), COLO_ERANGE,
                                  "a Zipf law over at most 1,000,000 counts");
        if (!(d->cdf = colo_malloc((size_t)d->max * sizeof *d->cdf))) return COLO_ENOMEM;
        double sum = 0;
        for (long long k = 0; k < d->max; k++)
            d->cdf[k] = sum += pow((double)(k + 1), -d->s);
        for (long long k = 0; k < d->max; k++)
            d->cdf[k] /= sum;
        d->cdf[d->max - 1] = 1.0;
        return 0;
    }
    return colo_cfg_error(r, config_setting_get_member(g, "dist"), COLO_EINVAL,
                          "'%s': use \"fixed\", \"uniform\", \"lognormal\" or \"zipf\"", dist);
}

/* A typical draw: the distribution's median. */
static long long typical(const colo_token_dist_t *d)
{
    switch (d->kind) {
    case COLO_TOKENS_UNIFORM:
        return (d->min + d->max) / 2;
    case COLO_TOKENS_LOGNORMAL: { /* of the draws as they are clamped: 1 to max tokens */
        long long m = llround(d->median);
        return m < 1 ? 1 : m > d->max ? d->max : m;
    }
    case COLO_TOKENS_ZIPF: {
        long long k = 0;
        while (k < d->max - 1 && d->cdf[k] < 0.5)
            k++;
        return k + 1;
    }
    default:
        return d->value;
    }
}

static int int_key(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                   long long lo, long long hi, int *out)
{
    long long v = *out;
    int rc = colo_cfg_int(r, g, key, 0, &v);
    if (rc < 0) return rc;
    if (v < lo || v > hi)
        return colo_cfg_error(r, config_setting_get_member(g, key), COLO_ERANGE,
                              "%lld: from %lld to %lld", v, lo, hi);
    *out = (int)v;
    return 0;
}

static int read_llm(const colo_cfg_reader_t *r, const config_setting_t *g, const char *dir,
                    colo_llm_cfg_t *c, colo_error_t *err)
{
    static const char *const keys[] = {"profile",
                                       "max_num_seqs",
                                       "max_num_batched_tokens",
                                       "chunk_tokens",
                                       "block_tokens",
                                       "layer_groups",
                                       "tensor_parallel",
                                       "gpu_memory_utilization",
                                       "watermark",
                                       "kv_cache_gib",
                                       "prefix_caching",
                                       NULL};
    int rc = colo_cfg_check_keys(r, g, keys);
    if (rc) return rc;
    const char *file;
    if ((rc = colo_cfg_string(r, g, "profile", COLO_CFG_REQUIRED, &file))) return rc;
    if ((rc = colo_path_join(dir, file, &c->profile_path))) return rc;
    const config_setting_t *ps = config_setting_get_member(g, "profile");
    colo_error_t perr;
    colo_error_clear(&perr);
    if ((rc = colo_llm_profile_load(c->profile_path, &c->profile, &perr))) {
        if (rc == COLO_ENOMEM) return rc;
        if (perr.line > 0 || perr.key[0]) { /* the profile's own fault: its file and line */
            *err = perr;
            return rc;
        }
        return colo_cfg_error(r, ps, rc == COLO_EIO ? COLO_ENOENT : rc,
                              "cannot read the profile '%s': %s", c->profile_path, perr.text);
    }
    /* vLLM's defaults (research notes: vllm/config.py): 256 sequences, 2048 tokens (without
     * chunking at least the longest request: colo_llm_cfg_resolve), 16-token blocks, 90 % of
     * the memory, 1 % of the blocks as watermark */
    c->max_num_seqs = 256;
    c->max_num_batched_tokens = DEFAULT_BATCHED_TOKENS;
    c->max_num_batched_tokens_given =
        config_setting_get_member(g, "max_num_batched_tokens") != NULL;
    c->block_tokens = 16;
    c->layer_groups = 1;
    c->gpu_memory_utilization = 0.9;
    c->watermark = 0.01;
    if ((rc = int_key(r, g, "max_num_seqs", 1, 100000, &c->max_num_seqs)) ||
        (rc = int_key(r, g, "max_num_batched_tokens", 1, 10000000, &c->max_num_batched_tokens)) ||
        (rc = int_key(r, g, "chunk_tokens", 0, 10000000, &c->chunk_tokens)) ||
        (rc = int_key(r, g, "block_tokens", 1, 65536, &c->block_tokens)) ||
        (rc = int_key(r, g, "layer_groups", 1, c->profile->layers, &c->layer_groups)) ||
        (rc = colo_llm_tp_read(r, g, c->profile, &c->tensor_parallel)))
        return rc;
    if ((rc = colo_cfg_double(r, g, "gpu_memory_utilization", COLO_CFG_POSITIVE,
                              &c->gpu_memory_utilization)) < 0 ||
        (rc = colo_cfg_double(r, g, "watermark", COLO_CFG_NONNEG, &c->watermark)) < 0 ||
        (rc = colo_cfg_double(r, g, "kv_cache_gib", COLO_CFG_POSITIVE, &c->kv_cache_gib_given)) < 0 ||
        (rc = colo_cfg_bool(r, g, "prefix_caching", 0, &c->prefix_caching)) < 0)
        return rc;
    if (c->gpu_memory_utilization > 1)
        return colo_cfg_error(r, config_setting_get_member(g, "gpu_memory_utilization"),
                              COLO_ERANGE, "a share of memory: at most 1");
    if (c->watermark >= 1)
        return colo_cfg_error(r, config_setting_get_member(g, "watermark"), COLO_ERANGE,
                              "a share of the blocks: below 1");
    if (c->kv_cache_gib_given > 1e6)
        return colo_cfg_error(r, config_setting_get_member(g, "kv_cache_gib"), COLO_ERANGE,
                              "at most 1,000,000 GiB");
    return 0;
}

int colo_llm_cfg_read(const colo_cfg_reader_t *r, const config_setting_t *t, const char *dir,
                      bool replay, colo_llm_cfg_t **out)
{
    colo_llm_cfg_t *c = colo_calloc(1, sizeof *c);
    if (!c) return COLO_ENOMEM;
    *out = c;
    const config_setting_t *g, *tok;
    int rc = colo_cfg_aggregate(r, t, "llm", COLO_CFG_REQUIRED, CONFIG_TYPE_GROUP, &g);
    if (!rc) rc = read_llm(r, g, dir, c, r->err);
    if (rc) return rc;
    if ((rc = colo_cfg_aggregate(r, t, "tokens", 0, CONFIG_TYPE_GROUP, &tok)) < 0) return rc;
    if (tok && (config_setting_get_member(tok, "shared_prefix") ||
                config_setting_get_member(tok, "sessions"))) {
        /* a synthetic shared-prefix workload makes the prompts (llm_prompts.h) */
        static const char *const keys[] = {"prompt", "output", "shared_prefix", "sessions", NULL};
        long long lo, hi, typ;
        if ((rc = colo_cfg_check_keys(r, tok, keys)) ||
            (rc = read_dist(r, tok, "output", &c->output)))
            return rc;
        c->typical_output = typical(&c->output);
        if ((rc = colo_prompts_read(r, tok, &c->prompts, c->output.max, c->typical_output, &lo,
                                    &hi, &typ)))
            return rc;
        bool groups = c->prompts.kind == COLO_PROMPTS_GROUPS;
        c->prompt = (colo_token_dist_t){.kind = groups ? COLO_TOKENS_FIXED : COLO_TOKENS_SESSION,
                                        .value = typ, .min = lo, .max = hi};
        c->typical_prompt = typ;
    } else if (tok) {
        static const char *const keys[] = {"prompt", "output", NULL};
        if ((rc = colo_cfg_check_keys(r, tok, keys)) ||
            (rc = read_dist(r, tok, "prompt", &c->prompt)) ||
            (rc = read_dist(r, tok, "output", &c->output)))
            return rc;
        c->typical_prompt = typical(&c->prompt);
        c->typical_output = typical(&c->output);
    } else if (replay) {
        c->prompt.kind = c->output.kind = COLO_TOKENS_LOG;
    } else {
        return colo_cfg_error(r, t, COLO_EINVAL,
                              "an LLM tenant needs tokens = { prompt = {...}; output = {...}; }, "
                              "or arrivals that replay a log with token counts");
    }
    static const char *const slos[] = {"slo_ttft_ms", "slo_tpot_ms"};
    double *ms[] = {&c->slo_ttft_ms, &c->slo_tpot_ms};
    colo_time_t *ns[] = {&c->slo_ttft, &c->slo_tpot};
    for (int k = 0; k < 2; k++)
        if ((rc = colo_cfg_ms(r, t, slos[k], COLO_CFG_POSITIVE, 1e9, ms[k], ns[k])) < 0) return rc;
    return 0;
}

/* The longest request of a replayed log (prompt and output tokens), its counts and its line,
 * for the default of llm.max_num_batched_tokens, which sizes the activations and so the KV
 * cache that scan_log then holds each record against. A record scan_log refuses is passed over
 * here, and a fault in the log left to it (at its line, after the checks before it). */
static int log_longest(const colo_arrival_cfg_t *arr, long long *prompt, long long *output,
                       long long *line)
{
    colo_error_t quiet;
    colo_error_clear(&quiet);
    colo_arrival_state_t st;
    memset(&st, 0, sizeof st);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    int rc = rng ? colo_arrival_start(arr, &st, &quiet) : COLO_ENOMEM;
    colo_time_t now = 0, at;
    int count;
    *prompt = *output = *line = 0;
    while (!rc && (rc = colo_arrival_next(arr, &st, rng, now, &at, &count, &quiet)) == 0) {
        now = at;
        long long p = st.prompt_tokens, o = st.output_tokens;
        if (p >= 1 && o >= 1 && p + o > *prompt + *output)
            *prompt = p, *output = o, *line = st.line;
    }
    colo_arrival_stop(&st);
    if (rng) gsl_rng_free(rng);
    return rc == COLO_ENOMEM ? rc : 0;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Reads every record of the replayed log: each must give both counts and fit the cache. */
static int scan_log(colo_llm_cfg_t *c, const colo_arrival_cfg_t *arr, long long cap,
                    colo_error_t *err)
{
    const char *pk = arr->format == COLO_LOG_AZURE ? "ContextTokens" : "input_length";
    const char *ok = arr->format == COLO_LOG_AZURE ? "GeneratedTokens" : "output_length";
    colo_arrival_state_t st;
    memset(&st, 0, sizeof st);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    long long *pr = NULL, *ou = NULL;
    size_t n = 0, ncap = 0;
    int rc = rng ? colo_arrival_start(arr, &st, err) : COLO_ENOMEM;
    colo_time_t now = 0, at;
    int count;
    while (!rc && (rc = colo_arrival_next(arr, &st, rng, now, &at, &count, err)) == 0) {
        now = at;
        long long p = st.prompt_tokens, o = st.output_tokens;
        if (c->prefix_caching && st.hash_bad) {
            rc = colo_error_set(err, COLO_EINVAL, arr->path, (int)st.line, "hash_ids",
                                "a list of prefix block ids (integers from 0), as Mooncake's "
                                "logs give them, for llm.prefix_caching");
            break;
        }
        if (p < 1 || o < 1) {
            rc = colo_error_set(err, COLO_EINVAL, arr->path, (int)st.line, p < 1 ? pk : ok,
                                "an LLM tenant needs a count of at least 1 token (%s)",
                                (p < 0 || o < 0) ? "missing or not a count" : "got 0");
            break;
        }
        if (c->chunk_tokens == 0 && p > c->max_num_batched_tokens) {
            rc = colo_error_set(err, COLO_ERANGE, arr->path, (int)st.line, pk,
                                "a prompt of %lld tokens never fits one iteration of "
                                "llm.max_num_batched_tokens = %d: raise it, or chunk prefills "
                                "(llm.chunk_tokens)",
                                p, c->max_num_batched_tokens);
            break;
        }
        if (c->chunk_tokens == 0 && p + o > c->max_num_batched_tokens) { /* given: see resolve */
            rc = colo_error_set(err, COLO_ERANGE, arr->path, (int)st.line, pk,
                                "%lld prompt and %lld output tokens never fit one iteration of "
                                "llm.max_num_batched_tokens = %d once preempted: " REPREFILL
                                ": raise it, or chunk prefills (llm.chunk_tokens)",
                                p, o, c->max_num_batched_tokens);
            break;
        }
        if (p + o > cap) {
            rc = colo_error_set(err, COLO_ERANGE, arr->path, (int)st.line, pk,
                                "%lld prompt and %lld output tokens need a KV cache of %lld "
                                "tokens; the tenant's holds %lld",
                                p, o, p + o, cap);
            break;
        }
        if (n == ncap) {
            ncap = ncap ? 2 * ncap : 1024;
            long long *a = colo_realloc(pr, ncap * sizeof *a);
            if (a) pr = a;
            long long *b = a ? colo_realloc(ou, ncap * sizeof *b) : NULL;
            if (b) ou = b;
            if (!a || !b) {
                rc = COLO_ENOMEM;
                break;
            }
        }
        pr[n] = p, ou[n] = o, n++;
    }
    if (rc == 1) rc = 0;
    colo_arrival_stop(&st);
    if (rng) gsl_rng_free(rng);
    if (!rc && n) {
        qsort(pr, n, sizeof *pr, cmp_ll);
        qsort(ou, n, sizeof *ou, cmp_ll);
        c->typical_prompt = pr[n / 2];
        c->typical_output = ou[n / 2];
    } else if (!rc) {
        c->typical_prompt = c->typical_output = 1;
    }
    c->log_records = (long long)n;
    colo_free(pr);
    colo_free(ou);
    return rc;
}

/* The setting of a synthetic tenant's longest prompt (prompt: true) or output. */
static const config_setting_t *max_at(const config_setting_t *t, const colo_llm_cfg_t *c,
                                      bool prompt)
{
    const config_setting_t *tok = config_setting_get_member(t, "tokens");
    const config_setting_t *d = config_setting_get_member(tok, prompt ? "prompt" : "output");
    if (!d)
        return config_setting_get_member(
            tok, c->prompts.kind == COLO_PROMPTS_GROUPS ? "shared_prefix" : "sessions");
    colo_tokens_kind_t kind = prompt ? c->prompt.kind : c->output.kind;
    return config_setting_get_member(d, kind == COLO_TOKENS_FIXED ? "value" : "max");
}

/* ... of its longest request: the output's where it is longer than the prompt */
static const config_setting_t *longest_at(const config_setting_t *t, const colo_llm_cfg_t *c)
{
    return max_at(t, c, c->output.max <= c->prompt.max);
}

/* the default that the profile cannot time */
#define DEFAULTS_TO                                                                                \
    "without chunking llm.max_num_batched_tokens defaults to the longest request, %lld tokens, "   \
    "as vLLM's to max_model_len (a preempted request is prefilled again whole, its prompt and "    \
    "the tokens it generated), and the profile %s goes to %d tokens"

/* Without chunking a preempted request is prefilled again whole, its prompt and the tokens it
 * generated, in one iteration: one that never fits would wait at the head of the queue forever
 * (llm.c, admit). So vLLM's scheduler, without chunked prefill, takes max_num_batched_tokens =
 * max(max_model_len, 2048) by default and refuses a smaller one given (vllm-project/vllm
 * @ 0004438383ee, vllm/config.py, SchedulerConfig.__post_init__ and _verify_args:
 * "max_num_batched_tokens (X) is smaller than max_model_len (Y)"). The tenant's longest request
 * stands for max_model_len: here the default; a value given is checked where the tokens are
 * (colo_llm_cfg_resolve, scan_log). */
static int default_batched_tokens(const colo_cfg_reader_t *r, const config_setting_t *t,
                                  colo_llm_cfg_t *c, const struct colo_arrival_cfg *arrival)
{
    if (c->max_num_batched_tokens_given) return 0;
    c->max_num_batched_tokens = DEFAULT_BATCHED_TOKENS; /* as read: resolve may run again */
    if (c->chunk_tokens > 0) return 0;
    long long prompt = c->prompt.max, output = c->output.max, line = 0;
    const char *pk = arrival->format == COLO_LOG_AZURE ? "ContextTokens" : "input_length";
    int rc;
    if (c->prompt.kind == COLO_TOKENS_LOG && (rc = log_longest(arrival, &prompt, &output, &line)))
        return rc;
    if (prompt + output <= DEFAULT_BATCHED_TOKENS) return 0;
    int most = colo_llm_profile_max_tokens(c->profile);
    if (prompt + output > most) {
        if (c->prompt.kind == COLO_TOKENS_LOG)
            return colo_error_set(r->err, COLO_ERANGE, arrival->path, (int)line, pk,
                                  "%lld prompt and %lld output tokens, the log's longest "
                                  "request: " DEFAULTS_TO ": chunk prefills (llm.chunk_tokens)",
                                  prompt, output, prompt + output, c->profile_path, most);
        return colo_cfg_error(r, longest_at(t, c), COLO_ERANGE,
                              "requests of up to %lld prompt and %lld output tokens: " DEFAULTS_TO
                              ": chunk prefills (llm.chunk_tokens), or shorten the requests",
                              prompt, output, prompt + output, c->profile_path, most);
    }
    c->max_num_batched_tokens = (int)(prompt + output);
    return 0;
}

int colo_llm_cfg_resolve(const colo_cfg_reader_t *r, const config_setting_t *t, colo_llm_cfg_t *c,
                         const struct colo_arrival_cfg *arrival, double memory_gib,
                         const char *from)
{
    const colo_llm_profile_t *p = c->profile;
    const config_setting_t *g = config_setting_get_member(t, "llm");
    int rc = default_batched_tokens(r, t, c, arrival);
    if (rc) return rc;
    /* FP8 halves the FP16 profile's weights and each token's keys and values */
    double elem = c->precision == COLO_MATH_FP8 ? 0.5 : 1.0;
    c->weights_gib = colo_llm_weight_bytes(p) * elem / GIB;
    /* activations of the largest iteration: its tokens through the widest layers (QKV and the
     * gated MLP; a rank's shard of them), and FP32 logits of every sequence (gathered on rank
     * 0, as vLLM's logits processor does) */
    int iter = c->chunk_tokens > 0 ? c->chunk_tokens : c->max_num_batched_tokens;
    double width = (double)(p->q_heads + 2 * p->kv_heads) * p->head_dim +
                   (double)p->mlp_hidden * (p->gated_mlp ? 3 : 2);
    width /= p->tensor_parallel;
    c->activations_gib =
        ((double)iter * width * p->dtype_bytes + (double)c->max_num_seqs * p->vocab * 4.0) / GIB;
    c->memory_gib = memory_gib;
    c->memory_from = from;
    if (c->kv_cache_gib_given > 0) {
        c->kv_cache_gib = c->kv_cache_gib_given;
        if (c->weights_gib + c->activations_gib + c->kv_cache_gib > memory_gib)
            return colo_cfg_error(r, config_setting_get_member(g, "kv_cache_gib"), COLO_ERANGE,
                                  "%.2f GiB of KV cache, %.2f of weights and %.2f of activations "
                                  "exceed the %.2f GiB of %s",
                                  c->kv_cache_gib, c->weights_gib, c->activations_gib, memory_gib,
                                  from);
    } else {
        c->kv_cache_gib =
            memory_gib * c->gpu_memory_utilization - c->weights_gib - c->activations_gib;
        if (c->kv_cache_gib <= 0)
            return colo_cfg_error(r, config_setting_get_member(g, "profile"), COLO_ERANGE,
                                  "%s's weights (%.1f GiB) and activations (%.1f GiB) leave no "
                                  "room for a KV cache in %.0f %% of %.1f GiB (%s); give the "
                                  "tenant more memory, or llm.kv_cache_gib",
                                  p->model, c->weights_gib, c->activations_gib,
                                  c->gpu_memory_utilization * 100, memory_gib, from);
    }
    double block_bytes = colo_llm_kv_bytes_per_token(p) * elem * c->block_tokens;
    c->kv_blocks = (long long)floor(c->kv_cache_gib * GIB / block_bytes);
    /* what one request may hold: every block but the watermark kept free on admission */
    long long cap =
        (c->kv_blocks - (long long)(c->watermark * (double)c->kv_blocks)) * c->block_tokens;
    if (cap < 1)
        return colo_cfg_error(r, g, COLO_ERANGE,
                              "a KV cache of %.3g GiB holds no block of %d "
                              "tokens",
                              c->kv_cache_gib, c->block_tokens);
    /* an iteration within the profile's token counts */
    int most = iter > c->max_num_seqs ? iter : c->max_num_seqs;
    if (most > colo_llm_profile_max_tokens(p)) {
        const char *key = c->chunk_tokens > 0       ? "chunk_tokens"
                          : iter >= c->max_num_seqs ? "max_num_batched_tokens"
                                                    : "max_num_seqs";
        const config_setting_t *at = config_setting_get_member(g, key);
        return colo_cfg_error(r, at ? at : g, COLO_ERANGE,
                              "iterations of up to %d tokens%s%s%s: the profile %s goes to %d "
                              "tokens",
                              most, at ? "" : " (the default of llm.", at ? "" : key, at ? "" : ")",
                              c->profile_path, colo_llm_profile_max_tokens(p));
    }
    if (c->prompt.kind == COLO_TOKENS_LOG) return scan_log(c, arrival, cap, r->err);
    long long longest = c->prompt.max + c->output.max;
    if (c->chunk_tokens == 0 && c->prompt.max > c->max_num_batched_tokens)
        return colo_cfg_error(r, max_at(t, c, true), COLO_ERANGE,
                              "prompts of up to %lld tokens never fit one iteration of "
                              "llm.max_num_batched_tokens = %d: raise it, or chunk prefills "
                              "(llm.chunk_tokens)",
                              c->prompt.max, c->max_num_batched_tokens);
    if (c->chunk_tokens == 0 && longest > c->max_num_batched_tokens) { /* given: see above */
        const config_setting_t *at = config_setting_get_member(g, "max_num_batched_tokens");
        return colo_cfg_error(r, at ? at : g, COLO_ERANGE,
                              "requests of up to %lld prompt and %lld output tokens never fit "
                              "one iteration of %d tokens once preempted: " REPREFILL
                              ": raise it to %lld, or chunk prefills (llm.chunk_tokens)",
                              c->prompt.max, c->output.max, c->max_num_batched_tokens, longest);
    }
    if (longest > cap)
        return colo_cfg_error(r, longest_at(t, c), COLO_ERANGE,
                              "a request of %lld prompt and %lld output tokens needs a KV "
                              "cache of %lld tokens; the tenant's holds %lld (%.2f GiB)",
                              c->prompt.max, c->output.max, longest, cap, c->kv_cache_gib);
    return 0;
}

int colo_llm_cfg_trace(const colo_llm_cfg_t *c, colo_trace_t **out, colo_error_t *err)
{
    const colo_llm_profile_t *p = c->profile;
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, c->profile_gpu, c->profile_gpu, p->layers);
    long long q = c->typical_prompt;
    int most = colo_llm_profile_max_tokens(p);
    if (q > most) q = most;
    colo_llm_iter_t it;
    memset(&it, 0, sizeof it);
    colo_llm_iter_prefill(&it, p, (int)q, 0, true);
    size_t cap = colo_llm_model_max_kernels(&m), n = 0;
    colo_op_t *ops = colo_malloc(cap * sizeof *ops);
    colo_trace_t *t = colo_trace_new(p->model, 1, p->gpu);
    int rc = ops && t ? colo_llm_model_kernels(&m, &it, ops, NULL, NULL, &n, err) : COLO_ENOMEM;
    char path[4200];
    snprintf(path, sizeof path, "%s (prefill of %lld tokens)", c->profile_path, q);
    for (size_t i = 0; i < n && !rc; i++)
        rc = colo_trace_append(t, &ops[i]);
    json_t *prov =
        rc ? NULL : json_pack("{s:s,s:s}", "source", "colosim llm", "profile", c->profile_path);
    if (!rc && (!(t->path = colo_strdup(path)) || !prov)) rc = COLO_ENOMEM;
    if (!rc) {
        json_decref(t->provenance);
        t->provenance = prov;
    } else {
        json_decref(prov);
    }
    colo_free(ops);
    return colo_trace_finish(t, rc, out);
}

void colo_llm_cfg_free(colo_llm_cfg_t *c)
{
    if (!c) return;
    colo_free(c->profile_path);
    colo_llm_profile_free(c->profile);
    colo_free(c->prompt.cdf);
    colo_free(c->output.cdf);
    colo_free(c);
}
