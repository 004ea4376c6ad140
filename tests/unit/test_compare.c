/* test_compare.c: results files side by side (colosim compare). */
#include "compare.h"
#include "helpers.h"
#include "number.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];

/* Removes the test's temporary folder and what it wrote there. */
static void cleanup(void)
{
    if (!dir[0]) return;
    DIR *d = opendir(dir);
    struct dirent *e;
    char p[sizeof dir + 260];
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    if (d) closedir(d);
    rmdir(dir);
}

TestSuite(compare, .init = test_init, .fini = cleanup);

static const char *tmp_file(const char *name)
{
    static char path[4][128];
    static int k;
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/colosim-compare-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, name);
    return path[k];
}

static const char *write_json(const char *name, json_t *doc)
{
    const char *p = tmp_file(name);
    cr_assert_eq(json_dump_file(doc, p, 0), 0);
    return p;
}

static double at(json_t *doc, const char *tenant, const char *key, size_t k)
{
    json_t *v = json_array_get(
        json_object_get(json_object_get(json_object_get(doc, "tenants"), tenant), key), k);
    cr_assert(json_is_number(v), "%s.%s[%zu] is not a number", tenant, key, k);
    return json_number_value(v);
}

/* A second run with one tenant missing: tenants are matched by name, the missing one is null,
 * values are the runs' own. */
Test(compare, matches_tenants_by_name_across_runs)
{
    test_run_t a = run_scenario(src_path("tests/fixtures/two_tenants.cfg"), NULL, 0);
    test_run_t b = run_scenario(src_path("tests/fixtures/only_a.cfg"), NULL, 0);
    const char *pa = write_json("a.json", a.results), *pb = write_json("b.json", b.results);
    colo_compare_t c = {0};
    colo_error_t err;
    cr_assert_eq(colo_compare_load(&c, pa, &err), 0);
    cr_assert_eq(colo_compare_load(&c, pb, &err), 0);
    cr_assert_eq(c.n, 2);
    json_t *doc = colo_compare_json(&c);
    cr_assert_not_null(doc);
    json_t *t0 = result_tenant(&a, 0), *t1 = result_tenant(&a, 1);
    const char *n0 = json_string_value(json_object_get(t0, "name"));
    const char *n1 = json_string_value(json_object_get(t1, "name"));
    cr_assert_float_eq(at(doc, n0, "p99", 0), result_num(json_object_get(t0, "latency_ms"), "p99"),
                       1e-12);
    cr_assert_float_eq(at(doc, n0, "p99", 1),
                       result_num(json_object_get(result_tenant(&b, 0), "latency_ms"), "p99"),
                       1e-12);
    json_t *missing = json_array_get(
        json_object_get(json_object_get(json_object_get(doc, "tenants"), n1), "p99"), 1);
    cr_assert(json_is_null(missing), "a tenant absent from a run is null there");
    char *table;
    size_t len;
    FILE *f = open_memstream(&table, &len);
    colo_compare_print(&c, f);
    fclose(f);
    cr_assert_not_null(strstr(table, n1));
    free(table);
    json_decref(doc);
    colo_compare_fini(&c);
    run_free(&a);
    run_free(&b);
}

/* Differences are relative to the first column, in points for fractions. */
Test(compare, differences_are_relative_to_the_first_run)
{
    json_t *a = json_pack("{s:{s:i},s:{s:s,s:{s:s}},s:[{s:s,s:{s:f},s:f}],s:{s:f}}", "colosim",
                          "results_format", 1, "scenario", "gpu", "h100-sxm", "sharing", "mode",
                          "mps", "tenants", "name", "x", "latency_ms", "p99", 10.0,
                          "slo_attainment", 0.9, "gpu", "busy_fraction", 0.5);
    json_t *b = json_deep_copy(a);
    json_object_set_new(
        json_object_get(json_array_get(json_object_get(b, "tenants"), 0), "latency_ms"), "p99",
        json_real(12.5));
    json_object_set_new(json_array_get(json_object_get(b, "tenants"), 0), "slo_attainment",
                        json_real(0.8));
    colo_compare_t c = {0};
    colo_error_t err;
    cr_assert_eq(colo_compare_load(&c, write_json("x.json", a), &err), 0);
    cr_assert_eq(colo_compare_load(&c, write_json("y.json", b), &err), 0);
    char *table;
    size_t len;
    FILE *f = open_memstream(&table, &len);
    colo_compare_print(&c, f);
    fclose(f);
    cr_assert_not_null(strstr(table, "+25.0 %"), "p99 10 -> 12.5 is +25 %%:\n%s", table);
    cr_assert_not_null(strstr(table, "-10.0 pt"), "SLO 90 %% -> 80 %% is -10 points:\n%s", table);
    free(table);
    colo_compare_fini(&c);
    json_decref(a);
    json_decref(b);
}

/* An LLM tenant's TTFT, TPOT and tokens per second get rows (and JSON keys) of their own;
 * a table of vision tenants only has none (issue 41). */
Test(compare, llm_tenants_show_ttft_tpot_and_tokens)
{
    json_t *a = json_pack("{s:{s:i},s:{s:s,s:{s:s}},s:[{s:s,s:{s:f},s:{s:{s:f,s:f},s:{s:f,s:f},"
                          "s:f}},{s:s,s:{s:f}}]}",
                          "colosim", "results_format", 1, "scenario", "gpu", "h100-sxm",
                          "sharing", "mode", "mps", "tenants", "name", "chat", "latency_ms", "p99",
                          900.0, "llm", "ttft_ms", "p50", 40.0, "p99", 80.0, "tpot_ms", "p50",
                          10.0, "p99", 20.0, "output_tokens_per_s", 500.0, "name", "cam",
                          "latency_ms", "p99", 5.0);
    json_t *b = json_deep_copy(a);
    json_t *llm = json_object_get(json_array_get(json_object_get(b, "tenants"), 0), "llm");
    json_object_set_new(json_object_get(llm, "ttft_ms"), "p99", json_real(100.0));
    colo_compare_t c = {0};
    colo_error_t err;
    cr_assert_eq(colo_compare_load(&c, write_json("l1.json", a), &err), 0);
    cr_assert_eq(colo_compare_load(&c, write_json("l2.json", b), &err), 0);
    char *table;
    size_t len;
    FILE *f = open_memstream(&table, &len);
    colo_compare_print(&c, f);
    fclose(f);
    const char *row = strstr(table, "TTFT p99 ms");
    cr_assert_not_null(row, "%s", table);
    cr_assert_not_null(strstr(row, "+25.0 %"), "TTFT p99 80 -> 100 is +25 %%:\n%s", table);
    cr_assert_not_null(strstr(table, "TPOT p50 ms"), "%s", table);
    cr_assert_not_null(strstr(table, "tokens/s"), "%s", table);
    json_t *doc = colo_compare_json(&c);
    cr_assert_float_eq(at(doc, "chat", "ttft_p99_ms", 1), 100.0, 1e-12);
    cr_assert_float_eq(at(doc, "chat", "output_tokens_per_s", 0), 500.0, 1e-12);
    cr_assert_null(json_object_get(json_object_get(json_object_get(doc, "tenants"), "cam"),
                                   "ttft_p99_ms"),
                   "a vision tenant beside an LLM one has no TTFT key");
    json_decref(doc);
    free(table);
    colo_compare_fini(&c);
    json_decref(a);
    json_decref(b);
    /* vision tenants alone: no LLM rows, no LLM keys */
    colo_compare_t v = {0};
    json_t *only = json_pack("{s:{s:i},s:{s:s,s:{s:s}},s:[{s:s,s:{s:f}}]}", "colosim",
                             "results_format", 1, "scenario", "gpu", "h100-sxm", "sharing", "mode",
                             "mps", "tenants", "name", "cam", "latency_ms", "p99", 5.0);
    cr_assert_eq(colo_compare_load(&v, write_json("v.json", only), &err), 0);
    f = open_memstream(&table, &len);
    colo_compare_print(&v, f);
    fclose(f);
    cr_assert_null(strstr(table, "TTFT"), "%s", table);
    doc = colo_compare_json(&v);
    cr_assert_null(json_object_get(json_object_get(json_object_get(doc, "tenants"), "cam"),
                                   "ttft_p99_ms"));
    json_decref(doc);
    free(table);
    colo_compare_fini(&v);
    json_decref(only);
}

/* A hand-edited 1e300 printed 301 digits, and cluster results "(null), (null)" as their set-up
 * (issue 40): numbers keep to their column, and a cluster column says its GPUs. */
Test(compare, huge_numbers_keep_their_column_and_a_cluster_says_its_gpus)
{
    json_t *a =
        json_pack("{s:{s:i},s:{s:s,s:{s:s}},s:[{s:s,s:{s:f}}],s:{s:f}}", "colosim",
                  "results_format", 1, "scenario", "gpu", "h100-sxm", "sharing", "mode", "mps",
                  "tenants", "name", "x", "latency_ms", "p99", 1e300, "gpu", "busy_fraction", 0.5);
    json_t *b = json_pack("{s:{s:i},s:s,s:{s:s},s:[{s:s,s:{s:f}}],s:{s:s,s:{s:i},s:i}}", "colosim",
                          "results_format", 1, "kind", "cluster", "scenario", "path", "fleet.cfg",
                          "tenants", "name", "x", "latency_ms", "p99", 1e-300, "cluster",
                          "mechanism", "mig", "gpus_by_model", "h100-sxm", 7, "gpus_used", 7);
    colo_compare_t c = {0};
    colo_error_t err;
    cr_assert_eq(colo_compare_load(&c, write_json("x.json", a), &err), 0, "%s", err.text);
    cr_assert_eq(colo_compare_load(&c, write_json("y.json", b), &err), 0, "%s", err.text);
    char *table;
    size_t len;
    FILE *f = open_memstream(&table, &len);
    colo_compare_print(&c, f);
    fclose(f);
    cr_assert_null(strstr(table, "(null)"), "%s", table);
    cr_assert_not_null(strstr(table, "7 x h100-sxm, mig"), "%s", table);
    cr_assert_not_null(strstr(table, "1e+300"), "%s", table);
    cr_assert_not_null(strstr(table, "1e-300"), "a tiny value is not shown as 0:\n%s", table);
    for (char *line = table; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        cr_assert_lt(n, 120, "a line of %zu characters:\n%s", n, table);
        line = nl ? nl + 1 : NULL;
    }
    free(table);
    colo_compare_fini(&c);
    json_decref(a);
    json_decref(b);
}

Test(compare, a_compare_modes_file_gives_a_column_per_mechanism)
{
    json_t *r =
        json_pack("{s:{s:i},s:[{s:s}]}", "colosim", "results_format", 1, "tenants", "name", "x");
    json_t *doc = json_pack("{s:s,s:{s:O,s:O,s:{s:s}}}", "compare", "sharing modes", "modes",
                            "timeslice", r, "mps", r, "mig", "error", "could not run");
    colo_compare_t c = {0};
    colo_error_t err;
    const char *p = write_json("modes.json", doc);
    cr_assert_eq(colo_compare_load(&c, p, &err), 0);
    cr_assert_eq(c.n, 2, "the mechanism that could not run is left out");
    cr_assert(strstr(c.col[1].label, "modes.json:mps"));
    colo_compare_fini(&c);
    json_decref(doc);
    json_decref(r);
}

Test(compare, bad_files_are_named_with_their_line_or_key)
{
    const char *p = tmp_file("broken.json");
    FILE *f = fopen(p, "w");
    fputs("{\n  \"colosim\": {\"results_format\": 1},\n  \"tenants\": [\n", f);
    fclose(f);
    colo_compare_t c = {0};
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(colo_compare_load(&c, p, &err), 0);
    cr_assert_eq(err.line, 4, "got line %d", err.line);
    json_t *other = json_pack("{s:{s:i}}", "colosim", "results_format", 2);
    colo_error_clear(&err);
    cr_assert_lt(colo_compare_load(&c, write_json("v2.json", other), &err), 0);
    cr_assert_str_eq(err.key, "colosim.results_format");
    json_t *noname = json_pack("{s:{s:i},s:[{}]}", "colosim", "results_format", 1, "tenants");
    colo_error_clear(&err);
    cr_assert_lt(colo_compare_load(&c, write_json("noname.json", noname), &err), 0);
    cr_assert_str_eq(err.key, "tenants");
    cr_assert_eq(c.n, 0);
    colo_compare_fini(&c);
    json_decref(other);
    json_decref(noname);
}

Test(compare, columns_are_named_by_file_and_long_names_keep_both_ends)
{
    /* a results file deep in folders with a long name: its column shows the file's name without
     * the folder or .json, its start and end around "..." */
    char folder[] = "/tmp/colosim_cmp_XXXXXX";
    cr_assert(mkdtemp(folder));
    char path[256];
    snprintf(path, sizeof path, "%s/results_of_a_rather_long_experiment_name.json", folder);
    test_run_t r = run_scenario(src_path("tests/fixtures/one_tenant.cfg"), NULL, 0);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    json_dumpf(r.results, f, 0);
    fclose(f);
    run_free(&r);
    colo_compare_t c;
    memset(&c, 0, sizeof c);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_compare_load(&c, path, &err), 0, "%s", err.text);
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    colo_compare_print(&c, m);
    fclose(m);
    cr_expect(strstr(buf, "| results_o...iment_name\n"), "%s", buf);
    cr_expect(!strstr(buf, folder), "the folder is not in the header: %s", buf);
    free(buf);
    colo_compare_fini(&c);
    unlink(path);
    rmdir(folder);
}

/* The validation table's figures: fixed decimals while they show the number, else exponents. */
Test(compare, figures_in_sentences_use_exponents_beyond_what_decimals_show)
{
    char b[64];
    cr_assert_str_eq(colo_number_text(b, sizeof b, 1, false, 13.84), "13.8");
    cr_assert_str_eq(colo_number_text(b, sizeof b, 1, true, 13.84), "+13.8");
    cr_assert_str_eq(colo_number_text(b, sizeof b, 1, true, 4.9e302), "+4.9e+302");
    cr_assert_str_eq(colo_number_text(b, sizeof b, 1, false, 1e-300), "1.0e-300");
    cr_assert_str_eq(colo_number_text(b, sizeof b, 1, false, 0), "0.0");
    cr_assert_str_eq(colo_number_cell(b, sizeof b, 10, 3, 2.5), "     2.500");
    cr_assert_str_eq(colo_number_cell(b, sizeof b, 10, 3, 1e300), "    1e+300");
}
