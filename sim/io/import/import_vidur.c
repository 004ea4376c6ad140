/* import_vidur.c: Vidur's mlp.csv and attention.csv (per-operator GPU times of one transformer
 * layer, milliseconds, measured with the PyTorch profiler) to a colosim LLM profile. */
#include "import_vidur.h"
#include "alloc.h"
#include "csv.h"
#include "json_lines.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 128
#define MAX_TOKENS 1000000 /* far beyond any profiled count; a larger one is a damaged row */
#define MAX_MS 1e6         /* one operator of one layer taking over 16 minutes: damaged */

/* The operators of mlp.csv, in a layer's order. emb is profiled but Vidur counts it nowhere;
 * post_attention_layernorm is absent for models with parallel blocks (phi-2). */
static const char *const ops[] = {"emb",         "input_layernorm", "attn_pre_proj",
                                  "attn_rope",   "attn_post_proj",  "post_attention_layernorm",
                                  "mlp_up_proj", "mlp_act",         "mlp_down_proj",
                                  "add"};
enum { N_OPS = sizeof ops / sizeof ops[0], OP_POST_NORM = 5 };

/* The model columns of both files, and the layer counts Vidur's model configurations give the
 * models it profiled (vidur/config/model_config.py at 7d47513: mlp.csv has no layer count). */
enum { D_HEADS, D_KV_HEADS, D_EMBD, D_EXPANDED, D_VOCAB, D_GATED, N_DIMS };
static const char *const dim_cols[N_DIMS] = {"n_head",          "n_kv_head",  "n_embd",
                                             "n_expanded_embd", "vocab_size", "use_gated_mlp"};
static const struct {
    const char *name;
    long dims[N_DIMS];
    int layers;
} known[] = {
    {"microsoft/phi-2", {32, 32, 2560, 10240, 51200, 0}, 32},
    {"meta-llama/Meta-Llama-3-8B", {32, 8, 4096, 14336, 128256, 1}, 32},
    {"codellama/CodeLlama-34b-Instruct-hf", {64, 8, 8192, 22016, 32768, 1}, 48},
    {"meta-llama/Llama-2-7b-hf", {32, 32, 4096, 11008, 32768, 1}, 32},
    {"meta-llama/Llama-2-70b-hf", {64, 8, 8192, 28672, 32768, 1}, 80},
    {"meta-llama/Meta-Llama-3-70B", {64, 8, 8192, 28672, 128256, 1}, 80},
};

/* A header's columns: the index of each name, -1 when absent. */
struct header {
    char *names[MAX_FIELDS];
    int n;
    char *mem; /* the header line, which names point into */
};

static int col(const struct header *h, const char *name)
{
    for (int i = 0; i < h->n; i++)
        if (strcmp(h->names[i], name) == 0) return i;
    return -1;
}

static int median_col(const struct header *h, const char *op)
{
    char name[96];
    snprintf(name, sizeof name, "time_stats.%s.median", op);
    return col(h, name);
}

/* One CSV file read line by line, with its current line's fields. */
struct reader {
    const char *path;
    FILE *f;
    char *mem, *line;
    size_t cap;
    int lineno, n;
    char *fields[MAX_FIELDS];
    colo_error_t *err;
};

static int reader_open(struct reader *r, const char *path, colo_error_t *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->err = err;
    return colo_text_open(path, &r->f, &r->mem, err);
}

static void reader_close(struct reader *r)
{
    if (r->f) fclose(r->f);
    colo_free(r->mem);
    free(r->line);
}

/* The next non-empty line split into fields: 0, 1 at the end, or a negative code. */
static int next_line(struct reader *r)
{
    for (;;) {
        errno = 0;
        if (getline(&r->line, &r->cap, r->f) < 0) {
            if (errno == ENOMEM)
                return colo_error_set(r->err, COLO_ENOMEM, r->path, r->lineno + 1, NULL,
                                      "out of memory");
            return 1;
        }
        r->lineno++;
        colo_csv_chomp(r->line);
        if (r->line[0] == '\0') continue;
        r->n = colo_csv_split(r->line, r->fields, MAX_FIELDS - 1);
        if (r->n < 0)
            return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, NULL,
                                  "unterminated quoted field");
        if (r->n >= MAX_FIELDS)
            return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, NULL,
                                  "more than %d fields", MAX_FIELDS - 1);
        return 0;
    }
}

static int read_header(struct reader *r, struct header *h)
{
    int rc = next_line(r);
    if (rc == 1) return colo_error_set(r->err, COLO_EPARSE, r->path, 0, NULL, "empty file");
    if (rc) return rc;
    size_t len = 0;
    for (int i = 0; i < r->n; i++)
        len += strlen(r->fields[i]) + 1;
    if (!(h->mem = colo_malloc(len ? len : 1)))
        return colo_error_set(r->err, COLO_ENOMEM, r->path, r->lineno, NULL, "out of memory");
    char *p = h->mem;
    for (int i = 0; i < r->n; i++) {
        size_t l = strlen(r->fields[i]) + 1;
        memcpy(p, r->fields[i], l);
        h->names[i] = p;
        p += l;
    }
    h->n = r->n;
    return 0;
}

/* Field c of the current line as a number; empty is absent (1). */
static int field_num(struct reader *r, int c, const char *name, double *out)
{
    if (c >= r->n)
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, name,
                              "missing: the row has %d fields", r->n);
    const char *s = r->fields[c];
    if (!*s) return 1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, name, "not a number: '%s'",
                              s);
    *out = v;
    return 0;
}

/* A whole number from lo to hi in column c (required). */
static int field_long(struct reader *r, int c, const char *name, long lo, long hi, long *out)
{
    double v = 0;
    int rc = field_num(r, c, name, &v);
    if (rc == 1) return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, name, "empty");
    if (rc) return rc;
    if (v != floor(v) || v < (double)lo || v > (double)hi)
        return colo_error_set(r->err, COLO_ERANGE, r->path, r->lineno, name,
                              "must be a whole number from %ld to %ld (got %g)", lo, hi, v);
    *out = (long)v;
    return 0;
}

static int field_bool(struct reader *r, int c, const char *name, long *out)
{
    if (c >= r->n)
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, name,
                              "missing: the row has %d fields", r->n);
    const char *s = r->fields[c];
    if (strcmp(s, "True") == 0 || strcmp(s, "true") == 0 || strcmp(s, "1") == 0)
        *out = 1;
    else if (strcmp(s, "False") == 0 || strcmp(s, "false") == 0 || strcmp(s, "0") == 0)
        *out = 0;
    else
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->lineno, name,
                              "must be True or False (got '%s')", s);
    return 0;
}

/* A median time in ms: at least 0, below MAX_MS. */
static int field_ms(struct reader *r, int c, const char *name, double *out)
{
    int rc = field_num(r, c, name, out);
    if (rc) return rc;
    if (*out < 0 || *out >= MAX_MS)
        return colo_error_set(r->err, COLO_ERANGE, r->path, r->lineno, name,
                              "must be a time from 0 to %g ms (got %g)", MAX_MS, *out);
    return 0;
}

/* The model columns of the current row into dims; every row must agree with the first kept
 * one (*have: whether there was one). */
static int read_dims(struct reader *r, const int *cols, const char *const *names, long *dims,
                     bool *have, const char *what)
{
    long d[N_DIMS];
    for (int k = 0; k < N_DIMS; k++) {
        if (cols[k] < 0) {
            d[k] = dims[k];
            continue;
        }
        int rc = k == D_GATED ? field_bool(r, cols[k], names[k], &d[k])
                              : field_long(r, cols[k], names[k], 1, COLO_LLM_MAX_DIM, &d[k]);
        if (rc) return rc;
        if (*have && d[k] != dims[k])
            return colo_error_set(r->err, COLO_EINVAL, r->path, r->lineno, names[k],
                                  "%ld, where %s has %ld: one profile holds one model", d[k], what,
                                  dims[k]);
    }
    memcpy(dims, d, sizeof d);
    *have = true;
    return 0;
}

struct row {
    long tokens;
    double ms[N_OPS];
};

static int by_tokens(const void *a, const void *b)
{
    long x = ((const struct row *)a)->tokens, y = ((const struct row *)b)->tokens;
    return (x > y) - (x < y);
}

/* mlp.csv: the kept rows sorted by tokens, duplicates averaged, and the model's dims. */
static int read_mlp(const char *path, int tp, struct row **rows_out, size_t *n_out, long *dims,
                    bool *post_norm, colo_error_t *err)
{
    struct reader r;
    struct header h = {0};
    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    int rc = reader_open(&r, path, err);
    if (!rc) rc = read_header(&r, &h);
    int op_col[N_OPS], dcol[N_DIMS];
    int c_tokens = col(&h, "num_tokens"), c_tp = col(&h, "num_tensor_parallel_workers");
    for (int k = 0; k < N_OPS && !rc; k++) {
        op_col[k] = median_col(&h, ops[k]);
        if (op_col[k] < 0 && k != OP_POST_NORM)
            rc = colo_error_set(err, COLO_EPARSE, path, 1, ops[k],
                                "no time_stats.%s.median column: not a Vidur mlp.csv", ops[k]);
    }
    for (int k = 0; k < N_DIMS && !rc; k++)
        if ((dcol[k] = col(&h, dim_cols[k])) < 0)
            rc = colo_error_set(err, COLO_EPARSE, path, 1, dim_cols[k],
                                "column missing from the header: not a Vidur mlp.csv");
    if (!rc && (c_tokens < 0 || c_tp < 0))
        rc = colo_error_set(err, COLO_EPARSE, path, 1,
                            c_tokens < 0 ? "num_tokens" : "num_tensor_parallel_workers",
                            "column missing from the header: not a Vidur mlp.csv");
    *post_norm = !rc && op_col[OP_POST_NORM] >= 0;
    bool have = false;
    long rows_read = 0;
    while (!rc && (rc = next_line(&r)) == 0) {
        rows_read++;
        long this_tp, tokens;
        if ((rc =
                 field_long(&r, c_tp, "num_tensor_parallel_workers", 1, COLO_LLM_MAX_TP, &this_tp)))
            break;
        if (this_tp != tp) continue;
        if ((rc = field_long(&r, c_tokens, "num_tokens", 1, MAX_TOKENS, &tokens))) break;
        if ((rc = read_dims(&r, dcol, dim_cols, dims, &have, "the row before"))) break;
        if (colo_grow((void **)&rows, &cap, n + 1, sizeof *rows)) {
            rc = colo_error_set(err, COLO_ENOMEM, path, r.lineno, NULL, "out of memory");
            break;
        }
        struct row *w = &rows[n];
        w->tokens = tokens;
        for (int k = 0; k < N_OPS && !rc; k++) {
            w->ms[k] = 0;
            if (op_col[k] < 0) continue;
            char name[96];
            snprintf(name, sizeof name, "time_stats.%s.median", ops[k]);
            rc = field_ms(&r, op_col[k], name, &w->ms[k]);
            if (rc == 1) rc = colo_error_set(err, COLO_EPARSE, path, r.lineno, name, "empty");
        }
        if (!rc) n++;
    }
    if (rc == 1) rc = 0;
    if (!rc && n == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, r.lineno, "num_tensor_parallel_workers",
                            "no rows of tensor parallelism %d (of %ld rows)", tp, rows_read);
    if (!rc) { /* ascending, each token count once: the mean of a repeated count's medians */
        qsort(rows, n, sizeof *rows, by_tokens);
        size_t w = 0;
        for (size_t i = 0; i < n;) {
            size_t j = i;
            double sum[N_OPS] = {0};
            for (; j < n && rows[j].tokens == rows[i].tokens; j++)
                for (int k = 0; k < N_OPS; k++)
                    sum[k] += rows[j].ms[k];
            rows[w].tokens = rows[i].tokens;
            for (int k = 0; k < N_OPS; k++)
                rows[w].ms[k] = sum[k] / (double)(j - i);
            w++;
            i = j;
        }
        n = w;
    }
    reader_close(&r);
    colo_free(h.mem);
    if (rc) {
        colo_free(rows);
        return rc;
    }
    *rows_out = rows;
    *n_out = n;
    return 0;
}

static json_t *num_array(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_real(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* Operator k's median at every token count of rows. */
static json_t *op_array(const struct row *rows, size_t n, int k)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_real(rows[i].ms[k]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* attention.csv: prefill rows [kv_cache_tokens, chunk_tokens, attention_ms, kv_cache_save_ms]
 * and decode rows [batch, kv_cache_tokens, attention_ms, kv_cache_save_ms] into *out. */
static int read_attention(const char *path, int tp, const long *dims, json_t **out,
                          colo_error_t *err)
{
    struct reader r;
    struct header h = {0};
    json_t *prefill = json_array(), *decode = json_array();
    int rc = reader_open(&r, path, err);
    if (!rc && (!prefill || !decode))
        rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    if (!rc) rc = read_header(&r, &h);
    /* the model columns attention.csv shares with mlp.csv (heads under another name) */
    static const char *const names[N_DIMS] = {"n_q_head", "n_kv_head", "n_embd", NULL, NULL, NULL};
    int dcol[N_DIMS] = {-1, -1, -1, -1, -1, -1};
    for (int k = 0; k < 3 && !rc; k++)
        if ((dcol[k] = col(&h, names[k])) < 0)
            rc = colo_error_set(err, COLO_EPARSE, path, 1, names[k],
                                "column missing from the header: not a Vidur attention.csv");
    static const char *const need[] = {"num_tensor_parallel_workers",
                                       "batch_size",
                                       "prefill_chunk_size",
                                       "kv_cache_size",
                                       "is_prefill",
                                       "time_stats.attn_prefill.median",
                                       "time_stats.attn_decode.median"};
    int c[7];
    for (int k = 0; k < 7 && !rc; k++)
        if ((c[k] = col(&h, need[k])) < 0)
            rc = colo_error_set(err, COLO_EPARSE, path, 1, need[k],
                                "column missing from the header: not a Vidur attention.csv");
    int c_save = col(&h, "time_stats.attn_kv_cache_save.median");
    long rows_read = 0, kept = 0;
    while (!rc && (rc = next_line(&r)) == 0) {
        rows_read++;
        long this_tp, batch, chunk, kv, is_prefill;
        if ((rc = field_long(&r, c[0], need[0], 1, COLO_LLM_MAX_TP, &this_tp))) break;
        if (this_tp != tp) continue;
        long d[N_DIMS];
        memcpy(d, dims, sizeof d);
        bool have = true;
        if ((rc = read_dims(&r, dcol, names, d, &have, "mlp.csv"))) break;
        if ((rc = field_long(&r, c[1], need[1], 1, MAX_TOKENS, &batch)) ||
            (rc = field_long(&r, c[2], need[2], 0, MAX_TOKENS, &chunk)) ||
            (rc = field_long(&r, c[3], need[3], 0, 100000000, &kv)) ||
            (rc = field_bool(&r, c[4], need[4], &is_prefill)))
            break;
        double ms = 0, save = 0;
        const char *which = is_prefill ? need[5] : need[6];
        rc = field_ms(&r, is_prefill ? c[5] : c[6], which, &ms);
        if (rc == 1) rc = colo_error_set(err, COLO_EPARSE, path, r.lineno, which, "empty");
        if (!rc && c_save >= 0) {
            rc = field_ms(&r, c_save, "time_stats.attn_kv_cache_save.median", &save);
            if (rc == 1) rc = 0, save = 0;
        }
        if (rc) break;
        if (is_prefill && chunk < 1) {
            rc = colo_error_set(err, COLO_ERANGE, path, r.lineno, need[2],
                                "a prefill row needs a chunk of at least 1 token");
            break;
        }
        double v[4] = {is_prefill ? (double)kv : (double)batch,
                       is_prefill ? (double)chunk : (double)kv, ms, save};
        json_t *row = num_array(v, 4);
        if (!row || json_array_append_new(is_prefill ? prefill : decode, row)) {
            rc = colo_error_set(err, COLO_ENOMEM, path, r.lineno, NULL, "out of memory");
            break;
        }
        kept++;
    }
    if (rc == 1) rc = 0;
    if (!rc && kept == 0)
        rc = colo_error_set(err, COLO_EPARSE, path, r.lineno, "num_tensor_parallel_workers",
                            "no rows of tensor parallelism %d (of %ld rows)", tp, rows_read);
    reader_close(&r);
    colo_free(h.mem);
    json_t *o = NULL;
    if (!rc) {
        o = json_pack("{s:{s:[ssss],s:O},s:{s:[ssss],s:O}}", "prefill", "columns",
                      "kv_cache_tokens", "chunk_tokens", "attention_ms", "kv_cache_save_ms", "rows",
                      prefill, "decode", "columns", "batch", "kv_cache_tokens", "attention_ms",
                      "kv_cache_save_ms", "rows", decode);
        if (!o) rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    json_decref(prefill);
    json_decref(decode);
    *out = o;
    return rc;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int colo_import_vidur(const char *mlp, const char *attention, const colo_vidur_opts_t *o,
                      json_t **out, colo_error_t *err)
{
    *out = NULL;
    int tp = o->tensor_parallel > 0 ? o->tensor_parallel : 1;
    struct row *rows = NULL;
    size_t n = 0;
    long dims[N_DIMS] = {0};
    bool post_norm = false;
    int rc = read_mlp(mlp, tp, &rows, &n, dims, &post_norm, err);
    if (rc) return rc;
    const char *name = o->model;
    int layers = o->layers;
    const char *layers_from = "given";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (memcmp(known[i].dims, dims, sizeof dims) == 0) {
            if (!name) name = known[i].name;
            if (!layers) layers = known[i].layers, layers_from = "vidur/config/model_config.py";
        }
    if (!layers || !name) {
        colo_free(rows);
        return colo_error_set(err, COLO_EINVAL, mlp, 0, layers ? "--model" : "--layers",
                              "a model of %ld heads (%ld KV), hidden size %ld, MLP %ld, vocabulary "
                              "%ld that colosim does not know: give --model NAME and --layers N",
                              dims[D_HEADS], dims[D_KV_HEADS], dims[D_EMBD], dims[D_EXPANDED],
                              dims[D_VOCAB]);
    }
    if (dims[D_EMBD] % dims[D_HEADS] || dims[D_HEADS] % dims[D_KV_HEADS]) {
        colo_free(rows);
        return colo_error_set(err, COLO_EINVAL, mlp, 0, "n_head",
                              "%ld heads do not divide a hidden size of %ld into equal heads "
                              "shared by %ld KV heads",
                              dims[D_HEADS], dims[D_EMBD], dims[D_KV_HEADS]);
    }
    json_t *att = NULL;
    if (attention && (rc = read_attention(attention, tp, dims, &att, err))) {
        colo_free(rows);
        return rc;
    }
    json_t *opsj = json_object(), *tokens = json_array();
    rc = opsj && tokens ? 0 : COLO_ENOMEM;
    for (size_t i = 0; i < n && !rc; i++)
        if (json_array_append_new(tokens, json_integer(rows[i].tokens))) rc = COLO_ENOMEM;
    if (!rc && json_object_set_new(opsj, "tokens", tokens)) rc = COLO_ENOMEM;
    tokens = NULL;
    for (int k = 0; k < N_OPS && !rc; k++) {
        if (k == OP_POST_NORM && !post_norm) continue;
        json_t *a = op_array(rows, n, k);
        if (!a || json_object_set_new(opsj, ops[k], a)) rc = COLO_ENOMEM;
    }
    colo_free(rows);
    json_t *files = json_pack("[s]", base_name(mlp));
    if (files && attention && json_array_append_new(files, json_string(base_name(attention))))
        rc = COLO_ENOMEM;
    json_t *doc = NULL;
    if (!rc && files) {
        doc = json_pack("{s:s,s:i,s:s,s:s,s:s,s:i,s:{s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:b},s:s,s:O}",
                        "format", COLO_LLM_PROFILE_FORMAT, "version", COLO_LLM_PROFILE_VERSION,
                        "model", name, "gpu", o->gpu, "dtype", "fp16", "tensor_parallel", tp,
                        "dims", "layers", layers, "q_heads", (json_int_t)dims[D_HEADS], "kv_heads",
                        (json_int_t)dims[D_KV_HEADS], "hidden", (json_int_t)dims[D_EMBD],
                        "head_dim", (json_int_t)(dims[D_EMBD] / dims[D_HEADS]), "mlp_hidden",
                        (json_int_t)dims[D_EXPANDED], "vocab", (json_int_t)dims[D_VOCAB],
                        "gated_mlp", (int)dims[D_GATED], "post_attention_norm", (int)post_norm,
                        "ops_unit", "ms per layer, median", "ops", opsj);
        json_t *prov =
            json_pack("{s:s,s:s,s:s?,s:s?,s:O,s:s,s:s,s:s}", "source", "vidur", "repository",
                      o->repository ? o->repository : "microsoft/vidur", "commit", o->commit,
                      "path", o->source, "files", files, "layers_from", layers_from, "licence",
                      "MIT", "copyright", "Copyright (c) Microsoft Corporation.");
        if (!doc || !prov || json_object_set_new(doc, "provenance", prov) ||
            (att && json_object_set(doc, "attention", att)))
            rc = COLO_ENOMEM;
    } else if (!rc) {
        rc = COLO_ENOMEM;
    }
    json_decref(files);
    json_decref(opsj);
    json_decref(att);
    if (rc) {
        json_decref(doc);
        return colo_error_set(err, rc, mlp, 0, NULL, "out of memory");
    }
    /* what every later command will read: refused here, not after it is written */
    colo_error_t check;
    colo_error_clear(&check);
    if ((rc = colo_llm_profile_check(doc, mlp, &check))) {
        json_decref(doc);
        if (rc == COLO_ENOMEM) return colo_error_set(err, rc, mlp, 0, NULL, "out of memory");
        return colo_error_set(err, rc, mlp, 0, NULL,
                              "the profile made from it would not be readable: %s: %s", check.key,
                              check.text);
    }
    *out = doc;
    return 0;
}
