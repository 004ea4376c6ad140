/* test_import_orion.c: the Orion CSV importer on the real published profiles and on bad files. */
#include "helpers.h"
#include "import_orion.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(import_orion, .init = test_init);

static const char *shared(const char *file)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/orion_kernel_profiles_v100/%s", COLO_SHARED_DATA, file);
    if (access(p, R_OK) != 0) cr_skip_test("shared data not present: %s", p);
    return p;
}

Test(import_orion, converts_the_real_resnet50_profile)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    int rc = colo_import_orion(shared("resnet50_4_fwd.csv"), "resnet50", 4, "v100-sxm2", &t, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    cr_assert_eq(t->n_kernels, 175);
    cr_assert_eq(t->kernel_time, 6498424, "sum of the Duration column");
    size_t by_class[3] = {0};
    for (size_t i = 0; i < t->n_ops; i++)
        by_class[t->ops[i].kclass]++;
    cr_assert_eq(by_class[COLO_KCLASS_COMPUTE], 54);
    cr_assert_eq(by_class[COLO_KCLASS_MEMORY], 80);
    cr_assert_eq(by_class[COLO_KCLASS_UNKNOWN], 41);
    cr_assert_str_eq(t->ops[0].name, "Conv");
    cr_assert_eq(t->ops[0].grid[0], 98);
    cr_assert_eq(t->ops[0].duration, 100480);
    cr_assert(strstr(json_string_value(json_object_get(t->provenance, "license")), "MIT"));
    colo_trace_free(t);
}

Test(import_orion, committed_traces_match_a_fresh_conversion)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *fresh, *committed;
    cr_assert_eq(colo_import_orion(shared("bert_2_fwd.csv"), "bert", 2, "v100-sxm2", &fresh, &err),
                 0);
    cr_assert_eq(colo_trace_load(src_path("traces/bert_b2_v100.json"), &committed, &err), 0);
    cr_assert_eq(fresh->n_ops, committed->n_ops);
    cr_assert_eq(fresh->kernel_time, committed->kernel_time);
    for (size_t i = 0; i < fresh->n_ops; i++) {
        cr_assert_str_eq(fresh->ops[i].name, committed->ops[i].name);
        cr_assert_eq(fresh->ops[i].duration, committed->ops[i].duration);
        cr_assert_eq(fresh->ops[i].grid[0], committed->ops[i].grid[0]);
    }
    colo_trace_free(fresh);
    colo_trace_free(committed);
}

Test(import_orion, guesses_model_and_batch_from_the_file_name)
{
    char m[64];
    cr_assert_eq(colo_orion_guess_name("/x/resnet50_4_fwd.csv", m, sizeof m), 4);
    cr_assert_str_eq(m, "resnet50");
    cr_assert_eq(colo_orion_guess_name("transformer_xl_4_fwd.csv", m, sizeof m), 4);
    cr_assert_str_eq(m, "transformer_xl");
    cr_assert_eq(colo_orion_guess_name("profile.csv", m, sizeof m), 0);
}

static void expect_error(const char *content, const char *expected)
{
    char path[] = "/tmp/colosim-orion-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(content, f);
    fclose(f);
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    int rc = colo_import_orion(path, "m", 1, "v100-sxm2", &t, &err);
    unlink(path);
    cr_assert_lt(rc, 0);
    cr_assert_null(t);
    char got[2048];
    colo_error_format(&err, got, sizeof got);
    cr_assert(strstr(got, expected), "got '%s', expected it to contain '%s'", got, expected);
    cr_assert_eq(strncmp(got, path, strlen(path)), 0, "the message names the file: %s", got);
}

Test(import_orion, malformed_files_get_file_line_and_column)
{
    const char *hdr = "Name,Profile,Memory_footprint,SM_usage,Duration\n";
    char buf[512];
    expect_error("", "no kernel rows");
    expect_error("Name,Profile,SM_usage,Duration\nk,1,2,3\n",
                 ":1: Memory_footprint: column missing");
    snprintf(buf, sizeof buf, "%sk,1,0,4,100\nk,1,0,4,abc\n", hdr);
    expect_error(buf, ":3: Duration: not a number: 'abc'");
    snprintf(buf, sizeof buf, "%sk,7,0,4,100\n", hdr);
    expect_error(buf, ":2: Profile: must be 1 (compute), 0 (memory) or -1 (unknown), got 7");
    snprintf(buf, sizeof buf, "%sk,1,0,0,100\n", hdr);
    expect_error(buf, ":2: SM_usage: must be a positive whole number");
    snprintf(buf, sizeof buf, "%s\"k,1,0,4,100\n", hdr);
    expect_error(buf, ":2: unterminated quoted field");
    snprintf(buf, sizeof buf, "%sk,1,0\n", hdr);
    expect_error(buf, ":2: SM_usage: missing: the row has 3 fields");
    snprintf(buf, sizeof buf, "%sk,1,0,4,0\n", hdr);
    expect_error(buf, ":2: Duration: must be at least 1 ns");
}

Test(import_orion, quoted_names_with_commas_survive)
{
    char path[] = "/tmp/colosim-orion-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("Name,Profile,Memory_footprint,SM_usage,Duration\r\n\"gemm<float, 4>\",1,0,8,1000\r\n",
          f);
    fclose(f);
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t;
    int rc = colo_import_orion(path, "m", 1, "v100-sxm2", &t, &err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err.text);
    cr_assert_str_eq(t->ops[0].name, "gemm<float, 4>");
    cr_assert_eq(t->ops[0].duration, 1000);
    colo_trace_free(t);
}

/* Found by fuzz_orion: a first line of one byte 0xEF (half a byte order mark) was read past its
 * end. */
Test(import_orion, a_partial_byte_order_mark_is_a_clear_error)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_lt(colo_import_orion(src_path("tests/fuzz/regressions/orion/lone_bom_byte.csv"), "m",
                                   4, "v100-sxm2", &t, &err),
                 0);
    cr_assert_null(t);
    cr_assert(strstr(err.text, "column missing from the header"), "%s", err.text);
}
