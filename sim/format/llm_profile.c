/* llm_profile.c: reads LLM operator profiles (llm_profile.h, docs/llm_profiles.md). */
#include "llm_profile.h"
#include "alloc.h"
#include "json_lines.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char *const op_keys[COLO_LLM_OPS] = {"input_layernorm",
                                                  "attn_pre_proj",
                                                  "attn_rope",
                                                  "attn_post_proj",
                                                  "post_attention_layernorm",
                                                  "mlp_up_proj",
                                                  "mlp_act",
                                                  "mlp_down_proj",
                                                  "add"};

const char *colo_llm_op_key(colo_llm_op_t op)
{
    return op < COLO_LLM_OPS ? op_keys[op] : "?";
}

/* The most tokens, heads or dimensions a profile may give: far beyond any model. */
#define MAX_DIM COLO_LLM_MAX_DIM

struct reader {
    const char *path, *text;
    size_t len;
    colo_error_t *err;
};

/* An error at the line of the top-level key top, naming key (top's member when not NULL). */
static int bad(const struct reader *r, int code, const char *top, const char *key, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
static int bad(const struct reader *r, int code, const char *top, const char *key, const char *fmt,
               ...)
{
    char k[128], msg[256];
    snprintf(k, sizeof k, "%s%s%s", top, key ? "." : "", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return colo_error_set(r->err, code, r->path, colo_json_key_line(r->text, r->len, top), k, "%s",
                          msg);
}

static int get_dim(const struct reader *r, json_t *dims, const char *key, int lo, int *out)
{
    json_t *v = json_object_get(dims, key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > MAX_DIM)
        return bad(r, COLO_EINVAL, "dims", key, "missing or not an integer from %d to %d", lo,
                   MAX_DIM);
    *out = (int)json_integer_value(v);
    return 0;
}

static int read_dims(const struct reader *r, json_t *root, colo_llm_profile_t *p)
{
    json_t *d = json_object_get(root, "dims");
    if (!json_is_object(d)) return bad(r, COLO_EINVAL, "dims", NULL, "missing or not an object");
    int rc;
    if ((rc = get_dim(r, d, "layers", 1, &p->layers)) ||
        (rc = get_dim(r, d, "q_heads", 1, &p->q_heads)) ||
        (rc = get_dim(r, d, "kv_heads", 1, &p->kv_heads)) ||
        (rc = get_dim(r, d, "hidden", 1, &p->hidden)) ||
        (rc = get_dim(r, d, "head_dim", 1, &p->head_dim)) ||
        (rc = get_dim(r, d, "mlp_hidden", 1, &p->mlp_hidden)) ||
        (rc = get_dim(r, d, "vocab", 1, &p->vocab)))
        return rc;
    if (p->q_heads % p->kv_heads)
        return bad(r, COLO_EINVAL, "dims", "kv_heads", "%d KV heads do not divide %d query heads",
                   p->kv_heads, p->q_heads);
    /* a profile at tensor parallelism k times one rank's shard: k divides the heads */
    if (p->kv_heads % p->tensor_parallel)
        return bad(r, COLO_EINVAL, "tensor_parallel", NULL,
                   "%d ranks cannot share %d KV heads evenly (dims.kv_heads)", p->tensor_parallel,
                   p->kv_heads);
    json_t *g = json_object_get(d, "gated_mlp"), *n = json_object_get(d, "post_attention_norm");
    if (!json_is_boolean(g))
        return bad(r, COLO_EINVAL, "dims", "gated_mlp", "missing or not true/false");
    if (!json_is_boolean(n))
        return bad(r, COLO_EINVAL, "dims", "post_attention_norm", "missing or not true/false");
    p->gated_mlp = json_is_true(g);
    p->post_attention_norm = json_is_true(n);
    return 0;
}

/* ops = {tokens: [...], OP: [...], ...}: every op's array as long as tokens, times >= 0. */
static int read_ops(const struct reader *r, json_t *root, colo_llm_profile_t *p)
{
    json_t *o = json_object_get(root, "ops");
    if (!json_is_object(o)) return bad(r, COLO_EINVAL, "ops", NULL, "missing or not an object");
    json_t *tok = json_object_get(o, "tokens");
    size_t n = json_array_size(tok);
    if (!json_is_array(tok) || n == 0)
        return bad(r, COLO_EINVAL, "ops", "tokens", "missing or not a non-empty array of counts");
    if (!(p->tokens = colo_malloc(n * sizeof *p->tokens))) return COLO_ENOMEM;
    p->n_tokens = n;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(tok, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > MAX_DIM ||
            (i > 0 && json_integer_value(v) <= p->tokens[i - 1]))
            return bad(r, COLO_EINVAL, "ops", "tokens",
                       "element %zu: token counts are integers from 1 to %d, ascending, each "
                       "once",
                       i, MAX_DIM);
        p->tokens[i] = (int)json_integer_value(v);
    }
    static const char *const extra[] = {"tokens", "emb"}; /* emb: profiled, never counted */
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        int op = -1;
        for (int k = 0; k < COLO_LLM_OPS && op < 0; k++)
            if (strcmp(key, op_keys[k]) == 0) op = k;
        if (op < 0 && strcmp(key, extra[0]) && strcmp(key, extra[1]))
            return bad(r, COLO_EINVAL, "ops", key, "unknown operator");
        if (op < 0 && strcmp(key, extra[1])) continue;
        if (!json_is_array(v) || json_array_size(v) != n)
            return bad(r, COLO_EINVAL, "ops", key,
                       "must be an array of %zu times (one per token "
                       "count)",
                       n);
        double *ms = colo_malloc(n * sizeof *ms);
        if (!ms) return COLO_ENOMEM;
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(v, i);
            ms[i] = json_is_number(e) ? json_number_value(e) : -1;
            if (!(ms[i] >= 0 && ms[i] <= 1e6)) {
                colo_free(ms);
                return bad(r, COLO_EINVAL, "ops", key,
                           "element %zu (%d tokens): must be a time from 0 to 1e+06 ms", i,
                           p->tokens[i]);
            }
        }
        if (op < 0) {
            colo_free(ms);
            continue;
        }
        p->ms[op] = ms;
    }
    for (int k = 0; k < COLO_LLM_OPS; k++)
        if (!p->ms[k] && (k != COLO_LLM_POST_NORM || p->post_attention_norm))
            return bad(r, COLO_EINVAL, "ops", op_keys[k], "missing");
    return 0;
}

/* attention = {prefill: {columns, rows}, decode: {columns, rows}}: the first three columns of
 * each row are kept. */
static int read_rows(const struct reader *r, json_t *att, const char *kind, size_t *n,
                     double (**rows)[3])
{
    json_t *g = json_object_get(att, kind);
    json_t *rw = json_object_get(g, "rows");
    if (!json_is_object(g) || !json_is_array(rw))
        return bad(r, COLO_EINVAL, "attention", kind, "missing, or has no \"rows\" array");
    *n = json_array_size(rw);
    if (*n && !(*rows = colo_malloc(*n * sizeof **rows))) return COLO_ENOMEM;
    for (size_t i = 0; i < *n; i++) {
        json_t *row = json_array_get(rw, i);
        for (int c = 0; c < 3; c++) {
            json_t *e = json_array_get(row, (size_t)c);
            double x = json_is_number(e) ? json_number_value(e) : -1;
            if (!(x >= 0 && x <= 1e9))
                return bad(r, COLO_EINVAL, "attention", kind,
                           "row %zu: its first three columns must be numbers from 0 to 1e9", i);
            (*rows)[i][c] = x;
        }
    }
    return 0;
}

static int read_doc(const struct reader *r, json_t *root, colo_llm_profile_t *p)
{
    static const char *const keys[] = {"format", "version",         "model",      "gpu",
                                       "dtype",  "tensor_parallel", "dims",       "ops_unit",
                                       "ops",    "attention",       "provenance", NULL};
    if (!json_is_object(root))
        return colo_error_set(r->err, COLO_EINVAL, r->path, 1, NULL,
                              "not a colosim LLM profile (a JSON object)");
    const char *fmt = json_string_value(json_object_get(root, "format"));
    if (!fmt || strcmp(fmt, "colosim-llm-profile"))
        return bad(r, COLO_EINVAL, "format", NULL,
                   "not \"colosim-llm-profile\": make profiles with colosim import vidur");
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != COLO_LLM_PROFILE_VERSION)
        return bad(r, COLO_EUNSUPPORTED, "version", NULL, "this colosim reads version %d",
                   COLO_LLM_PROFILE_VERSION);
    const char *unknown = colo_json_unknown_key(root, keys);
    if (unknown) return bad(r, COLO_EINVAL, unknown, NULL, "unknown key");
    const char *model = json_string_value(json_object_get(root, "model"));
    const char *gpu = json_string_value(json_object_get(root, "gpu"));
    if (!model || !*model) return bad(r, COLO_EINVAL, "model", NULL, "missing or empty");
    if (!gpu || !*gpu) return bad(r, COLO_EINVAL, "gpu", NULL, "missing or empty");
    const char *dtype = json_string_value(json_object_get(root, "dtype"));
    if (dtype && strcmp(dtype, "fp16") && strcmp(dtype, "bf16"))
        return bad(r, COLO_EUNSUPPORTED, "dtype", NULL, "'%s': colosim knows fp16 and bf16", dtype);
    p->dtype_bytes = 2;
    json_t *tp = json_object_get(root, "tensor_parallel");
    p->tensor_parallel = 1;
    if (tp && (!json_is_integer(tp) || json_integer_value(tp) < 1 ||
               json_integer_value(tp) > COLO_LLM_MAX_TP))
        return bad(r, COLO_EINVAL, "tensor_parallel", NULL, "not an integer from 1 to %d",
                   COLO_LLM_MAX_TP);
    if (tp) p->tensor_parallel = (int)json_integer_value(tp);
    json_t *prov = json_object_get(root, "provenance");
    if (!json_is_object(prov) || !json_is_string(json_object_get(prov, "source")))
        return bad(r, COLO_EINVAL, "provenance", NULL, "missing, or has no \"source\" string");
    int rc;
    if ((rc = read_dims(r, root, p)) || (rc = read_ops(r, root, p))) return rc;
    json_t *att = json_object_get(root, "attention");
    if (att && ((rc = read_rows(r, att, "prefill", &p->n_prefill, &p->prefill)) ||
                (rc = read_rows(r, att, "decode", &p->n_decode, &p->decode))))
        return rc;
    if (!(p->model = colo_strdup(model)) || !(p->gpu = colo_strdup(gpu))) return COLO_ENOMEM;
    p->gpu_line = colo_json_key_line(r->text, r->len, "gpu");
    p->provenance = json_incref(prov);
    return 0;
}

int colo_llm_profile_load(const char *path, colo_llm_profile_t **out, colo_error_t *err)
{
    *out = NULL;
    json_t *root = NULL;
    char *text = NULL;
    size_t len = 0;
    int rc = colo_json_read_file(path, &root, &text, &len, err);
    if (rc) return rc;
    colo_llm_profile_t *p = colo_calloc(1, sizeof *p);
    struct reader r = {path, text, len, err};
    if (!p || !(p->path = colo_strdup(path)))
        rc = COLO_ENOMEM;
    else
        rc = read_doc(&r, root, p);
    json_decref(root);
    colo_free(text);
    if (rc) {
        colo_llm_profile_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

int colo_llm_profile_check(json_t *doc, const char *source, colo_error_t *err)
{
    colo_llm_profile_t *p = colo_calloc(1, sizeof *p);
    if (!p) return colo_error_set(err, COLO_ENOMEM, source, 0, NULL, "out of memory");
    struct reader r = {source, NULL, 0, err};
    int rc = read_doc(&r, doc, p);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, source, 0, NULL, "out of memory");
    colo_llm_profile_free(p);
    return rc;
}

void colo_llm_profile_free(colo_llm_profile_t *p)
{
    if (!p) return;
    colo_free(p->path);
    colo_free(p->model);
    colo_free(p->gpu);
    colo_free(p->tokens);
    for (int k = 0; k < COLO_LLM_OPS; k++)
        colo_free(p->ms[k]);
    colo_free(p->prefill);
    colo_free(p->decode);
    json_decref(p->provenance);
    colo_free(p);
}

int colo_llm_profile_max_tokens(const colo_llm_profile_t *p)
{
    return p->tokens[p->n_tokens - 1];
}

double colo_llm_profile_ms(const colo_llm_profile_t *p, colo_llm_op_t op, int tokens)
{
    const double *ms = p->ms[op];
    if (!ms) return 0;
    size_t lo = 0, hi = p->n_tokens - 1;
    if (tokens <= p->tokens[0]) return ms[0] * tokens / p->tokens[0];
    if (tokens >= p->tokens[hi]) return ms[hi];
    while (hi - lo > 1) { /* tokens[lo] < tokens < tokens[hi] */
        size_t mid = (lo + hi) / 2;
        if (p->tokens[mid] <= tokens)
            lo = mid;
        else
            hi = mid;
    }
    double a = (double)(tokens - p->tokens[lo]) / (p->tokens[hi] - p->tokens[lo]);
    return ms[lo] + a * (ms[hi] - ms[lo]);
}

double colo_llm_kv_bytes_per_token(const colo_llm_profile_t *p)
{
    /* a rank caches the keys and values of its own KV heads (Megatron's split by heads) */
    return 2.0 * p->layers * (p->kv_heads / p->tensor_parallel) * p->head_dim * p->dtype_bytes;
}

double colo_llm_weight_bytes(const colo_llm_profile_t *p)
{
    double h = p->hidden, qd = (double)p->q_heads * p->head_dim,
           kvd = (double)p->kv_heads * p->head_dim;
    /* a rank holds 1/k of every projection (column- and row-parallel) and of the vocabulary
     * (vLLM's VocabParallelEmbedding and ParallelLMHead), and whole norms */
    double layer = (h * (qd + 2 * kvd) + qd * h + h * p->mlp_hidden * (p->gated_mlp ? 2 : 1) +
                    p->mlp_hidden * h) /
                       p->tensor_parallel +
                   4 * h;
    return (layer * p->layers + 2.0 * p->vocab * h / p->tensor_parallel) * p->dtype_bytes;
}
