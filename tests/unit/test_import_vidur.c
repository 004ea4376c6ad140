/* test_import_vidur.c: Vidur's mlp.csv (and attention.csv) to a colosim LLM profile. The
 * fixtures are rows cut unchanged from microsoft/vidur's data/profiling (MIT, LICENSE.vidur-MIT
 * beside them). */
#include "import_vidur.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define FIX COLO_TEST_SRC "/tests/fixtures/vidur/"

static json_t *import(const char *mlp, const char *attention, int tp, colo_error_t *err)
{
    colo_vidur_opts_t o = {.gpu = "a100-80gb", .tensor_parallel = tp, .commit = "7d47513"};
    json_t *doc = NULL;
    colo_error_clear(err);
    int rc = colo_import_vidur(mlp, attention, &o, &doc, err);
    cr_assert((rc == 0) == (doc != NULL));
    return doc;
}

static double at(json_t *doc, const char *op, size_t i)
{
    return json_real_value(json_array_get(json_object_get(json_object_get(doc, "ops"), op), i));
}

Test(import_vidur, llama3_8b_rows_become_one_sorted_table_with_the_models_dimensions)
{
    colo_error_t err;
    json_t *doc = import(FIX "llama3_8b_a100_mlp.csv", NULL, 1, &err);
    cr_assert_not_null(doc, "%s", err.text);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "format")), "colosim-llm-profile");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "model")),
                     "meta-llama/Meta-Llama-3-8B");
    json_t *d = json_object_get(doc, "dims");
    cr_assert_eq(json_integer_value(json_object_get(d, "layers")), 32);
    cr_assert_eq(json_integer_value(json_object_get(d, "kv_heads")), 8);
    cr_assert_eq(json_integer_value(json_object_get(d, "head_dim")), 128);
    cr_assert_eq(json_integer_value(json_object_get(d, "mlp_hidden")), 14336);
    cr_assert(json_is_true(json_object_get(d, "gated_mlp")));
    cr_assert(json_is_true(json_object_get(d, "post_attention_norm")));
    /* ascending, each count once (the file is descending and repeats 2048), TP 2 left out */
    json_t *tok = json_object_get(json_object_get(doc, "ops"), "tokens");
    long want[] = {1, 2, 8, 512, 2048};
    cr_assert_eq(json_array_size(tok), 5);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(json_integer_value(json_array_get(tok, i)), want[i]);
    cr_assert_float_eq(at(doc, "attn_pre_proj", 3), 0.13, 1e-12);
    cr_assert_float_eq(at(doc, "mlp_up_proj", 0), 0.142, 1e-12);
    /* 2048 twice: the mean of the two medians */
    cr_assert_float_eq(at(doc, "attn_pre_proj", 4), (0.467 + 0.479) / 2, 1e-12);
    cr_assert_float_eq(at(doc, "mlp_up_proj", 4), (2.2485 + 2.309) / 2, 1e-12);
    json_t *p = json_object_get(doc, "provenance");
    cr_assert_str_eq(json_string_value(json_object_get(p, "licence")), "MIT");
    cr_assert_str_eq(json_string_value(json_object_get(p, "commit")), "7d47513");
    cr_assert_str_eq(json_string_value(json_object_get(p, "layers_from")),
                     "vidur/config/model_config.py");
    json_decref(doc);

    doc = import(FIX "llama3_8b_a100_mlp.csv", NULL, 2, &err);
    cr_assert_not_null(doc, "%s", err.text);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(doc, "ops"), "tokens")), 1);
    cr_assert_float_eq(at(doc, "attn_pre_proj", 0), 0.057, 1e-12);
    json_decref(doc);
    cr_assert_null(import(FIX "llama3_8b_a100_mlp.csv", NULL, 4, &err));
    cr_assert_str_eq(err.key, "num_tensor_parallel_workers");
}

/* The fixture with line `line` (1-based, 1 the header) passed through edit. */
static const char *edited(const char *fixture, int line, void (*edit)(char *, size_t))
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/colosim-vidur-XXXXXX");
    int fd = mkstemp(path);
    FILE *in = fopen(fixture, "r"), *out = fdopen(fd, "w");
    char buf[8192];
    for (int n = 1; fgets(buf, sizeof buf, in); n++) {
        if (n == line) edit(buf, sizeof buf);
        fputs(buf, out);
    }
    fclose(in);
    fclose(out);
    return path;
}

/* field k (0-based) of a CSV line replaced by v */
static void set_field(char *buf, size_t n, int k, const char *v)
{
    char out[8192] = "", *save = NULL, copy[8192];
    snprintf(copy, sizeof copy, "%s", buf);
    copy[strcspn(copy, "\n")] = '\0';
    int i = 0;
    for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save), i++) {
        strcat(out, i ? "," : "");
        strcat(out, i == k ? v : f);
    }
    snprintf(buf, n, "%s\n", out);
}
static void negative_pre_proj(char *b, size_t n)
{
    set_field(b, n, 13, "-0.1");
}
static void other_embd(char *b, size_t n)
{
    set_field(b, n, 52, "5120");
}
static void no_tokens_column(char *b, size_t n)
{
    set_field(b, n, 56, "tokens");
}
static void unknown_model(char *b, size_t n)
{
    set_field(b, n, 54, "32001");
}

static void tp_128(char *b, size_t n)
{
    set_field(b, n, 57, "128");
}
static void vocab_huge(char *b, size_t n)
{
    set_field(b, n, 54, "50000000");
}

/* An importer wrote profiles (tensor parallelism to 1024, dimensions to 10^8) that every later
 * command refused (issue 40): it takes what a profile may hold, no more, at the CSV's cell. */
Test(import_vidur, values_no_profile_can_hold_are_refused_at_their_cell)
{
    colo_error_t err;
    const char *p = edited(FIX "llama3_8b_a100_mlp.csv", 3, tp_128);
    cr_assert_null(import(p, NULL, 1, &err));
    cr_assert_eq(err.line, 3);
    cr_assert_str_eq(err.key, "num_tensor_parallel_workers");
    cr_assert(strstr(err.text, "64"), "%s", err.text);
    unlink(p);
    p = edited(FIX "llama3_8b_a100_mlp.csv", 2, vocab_huge);
    cr_assert_null(import(p, NULL, 1, &err));
    cr_assert_eq(err.line, 2);
    cr_assert_str_eq(err.key, "vocab_size");
    cr_assert(strstr(err.text, "10000000"), "%s", err.text);
    unlink(p);
    /* and whatever it writes, the profile reader takes */
    json_t *doc = import(FIX "llama3_8b_a100_mlp.csv", FIX "llama3_8b_a100_attention.csv", 1, &err);
    cr_assert_not_null(doc, "%s", err.text);
    cr_assert_eq(colo_llm_profile_check(doc, "doc", &err), 0, "%s", err.text);
    json_object_set_new(doc, "tensor_parallel", json_integer(65));
    cr_assert_lt(colo_llm_profile_check(doc, "doc", &err), 0);
    cr_assert_str_eq(err.key, "tensor_parallel");
    json_decref(doc);
}

Test(import_vidur, bad_rows_are_named_by_file_line_and_column)
{
    colo_error_t err;
    const char *p = edited(FIX "llama3_8b_a100_mlp.csv", 3, negative_pre_proj);
    cr_assert_null(import(p, NULL, 1, &err));
    cr_assert_eq(err.line, 3);
    cr_assert_str_eq(err.key, "time_stats.attn_pre_proj.median");
    cr_assert(strstr(err.text, "must be a time from 0"), "%s", err.text);
    unlink(p);

    p = edited(FIX "llama3_8b_a100_mlp.csv", 4, other_embd);
    cr_assert_null(import(p, NULL, 1, &err));
    cr_assert_eq(err.line, 4);
    cr_assert_str_eq(err.key, "n_embd");
    cr_assert(strstr(err.text, "one profile holds one model"), "%s", err.text);
    unlink(p);

    p = edited(FIX "llama3_8b_a100_mlp.csv", 1, no_tokens_column);
    cr_assert_null(import(p, NULL, 1, &err));
    cr_assert_eq(err.line, 1);
    cr_assert_str_eq(err.key, "num_tokens");
    unlink(p);

    /* a model colosim has no layer count for: --layers and --model say it */
    char *all = NULL;
    size_t cap = 0;
    FILE *in = fopen(FIX "llama3_8b_a100_mlp.csv", "r");
    char tmp[] = "/tmp/colosim-vidur-XXXXXX";
    FILE *out = fdopen(mkstemp(tmp), "w");
    for (int n = 1; getline(&all, &cap, in) > 0; n++) {
        if (n > 1) unknown_model(all, cap);
        fputs(all, out);
    }
    free(all);
    fclose(in);
    fclose(out);
    cr_assert_null(import(tmp, NULL, 1, &err));
    cr_assert_str_eq(err.key, "--layers");
    cr_assert(strstr(err.text, "vocabulary 32001"), "%s", err.text);
    colo_vidur_opts_t o = {.gpu = "a100-80gb", .model = "my/model", .layers = 40};
    json_t *doc = NULL;
    colo_error_clear(&err);
    cr_assert_eq(colo_import_vidur(tmp, NULL, &o, &doc, &err), 0, "%s", err.text);
    cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "dims"), "layers")), 40);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "model")), "my/model");
    json_decref(doc);
    unlink(tmp);
}

static double cell(json_t *doc, const char *kind, size_t row, size_t k)
{
    json_t *rows =
        json_object_get(json_object_get(json_object_get(doc, "attention"), kind), "rows");
    return json_number_value(json_array_get(json_array_get(rows, row), k));
}

static void other_kv_heads(char *b, size_t n)
{
    set_field(b, n, 27, "32");
}

Test(import_vidur, attention_rows_of_the_same_model_are_kept_by_kind)
{
    colo_error_t err;
    json_t *doc = import(FIX "llama3_8b_a100_mlp.csv", FIX "llama3_8b_a100_attention.csv", 1, &err);
    cr_assert_not_null(doc, "%s", err.text);
    json_t *att = json_object_get(doc, "attention");
    /* one prefill row (kv 0, chunk 64) and one decode row (batch 1, kv 1920) at TP 1; the TP 4
     * row is left out */
    cr_assert_eq(json_array_size(json_object_get(json_object_get(att, "prefill"), "rows")), 1);
    cr_assert_eq(json_array_size(json_object_get(json_object_get(att, "decode"), "rows")), 1);
    cr_assert_eq(cell(doc, "prefill", 0, 0), 0);
    cr_assert_eq(cell(doc, "prefill", 0, 1), 64);
    cr_assert_float_eq(cell(doc, "prefill", 0, 2), 0.011, 1e-12);
    cr_assert_float_eq(cell(doc, "prefill", 0, 3), 0.019, 1e-12);
    cr_assert_eq(cell(doc, "decode", 0, 0), 1);
    cr_assert_eq(cell(doc, "decode", 0, 1), 1920);
    cr_assert_float_eq(cell(doc, "decode", 0, 2), 0.025, 1e-12);
    json_decref(doc);

    /* an attention profile of another model is refused, naming the column */
    const char *p = edited(FIX "llama3_8b_a100_attention.csv", 3, other_kv_heads);
    cr_assert_null(import(FIX "llama3_8b_a100_mlp.csv", p, 1, &err));
    cr_assert_eq(err.line, 3);
    cr_assert_str_eq(err.key, "n_kv_head");
    cr_assert(strstr(err.text, "where mlp.csv has 8"), "%s", err.text);
    unlink(p);
}
