/* test_import_orion.c: the Orion CSV importer, both of Orion's formats, on the real published
 * profiles and on bad files. */
#include "helpers.h"
#include "import_orion.h"
#include "kernel_model.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

TestSuite(import_orion, .init = test_init);

static const char *shared_in(const char *folder, const char *file)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s/%s", COLO_SHARED_DATA, folder, file);
    if (access(p, R_OK) != 0) cr_skip_test("shared data not present: %s", p);
    return p;
}

static const char *shared(const char *file)
{
    return shared_in("orion_kernel_profiles_v100", file);
}

static colo_trace_t *import(const char *path, const char *gpu, const colo_orion_rows_t *rows)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *g = open_gpu(gpu);
    colo_trace_t *t = NULL;
    int rc = colo_import_orion(path, "m", 4, g, rows, &t, &err);
    colo_gpu_free(g);
    cr_assert_eq(rc, 0, "%s", err.text);
    return t;
}

/* Writes content to a temporary file; the caller unlinks path. */
static void temp_csv(char *path, const char *content)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(content, f);
    fclose(f);
}

/* SMs the kernel needs on gpu: waves x SMs on the whole GPU, i.e. ceil(blocks / per SM). */
static unsigned long long sms_needed(const colo_op_t *k, const colo_gpu_t *g)
{
    colo_kernel_work_t w;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kernel_work(k, g, g, COLO_FP32_PYTORCH, &w, "t", 0, &err), 0, "%s", err.text);
    return (w.blocks + (unsigned long long)w.occ.blocks_per_sm - 1) /
           (unsigned long long)w.occ.blocks_per_sm;
}

Test(import_orion, converts_the_real_resnet50_profile)
{
    colo_trace_t *t = import(shared("resnet50_4_fwd.csv"), "v100-sxm2", NULL);
    cr_assert_eq(t->n_kernels, 175);
    cr_assert_eq(t->kernel_time, 6498424, "sum of the Duration column");
    size_t by_class[3] = {0};
    for (size_t i = 0; i < t->n_ops; i++)
        by_class[t->ops[i].kclass]++;
    cr_assert_eq(by_class[COLO_KCLASS_COMPUTE], 54);
    cr_assert_eq(by_class[COLO_KCLASS_MEMORY], 80);
    cr_assert_eq(by_class[COLO_KCLASS_UNKNOWN], 41);
    cr_assert_str_eq(t->ops[0].name, "Conv");
    /* SM_usage 98 is SMs, not blocks: 98 SMs' worth of 256-thread blocks, 8 per V100 SM */
    cr_assert_eq(t->ops[0].grid[0], 98 * 8);
    cr_assert_eq(t->ops[0].block[0], 0, "the block size was not recorded");
    cr_assert_eq(t->ops[0].duration, 100480);
    cr_assert(strstr(json_string_value(json_object_get(t->provenance, "license")), "MIT"));
    colo_trace_free(t);
}

/* Every kernel of every profile needs exactly its SM_usage SMs on the GPU it was measured on,
 * in both formats, including kernels that need more SMs than the GPU has (several waves). */
Test(import_orion, every_kernel_needs_its_sm_usage_on_its_gpu)
{
    static const struct {
        const char *folder, *file, *gpu;
    } files[] = {
        {"orion_kernel_profiles_v100", "resnet50_32_fwd.csv", "v100-sxm2"},
        {"orion_kernel_profiles_v100", "bert_2_fwd.csv", "v100-sxm2"},
        {"orion_kernel_profiles_h100", "resnet101_4_fwd.csv", "h100-sxm"},
        {"orion_kernel_profiles_h100", "resnet101_8_fwd.csv", "h100-sxm"},
        {"orion_kernel_profiles_h100", "mobilenet_16_fwd.csv", "h100-sxm"},
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        const char *path = shared_in(files[f].folder, files[f].file);
        colo_trace_t *t = import(path, files[f].gpu, NULL);
        colo_gpu_t *g = open_gpu(files[f].gpu);
        FILE *csv = fopen(path, "r");
        char line[4096];
        cr_assert(fgets(line, sizeof line, csv));
        int beyond = 0, recorded = 0;
        for (size_t i = 0; i < t->n_ops; i++) {
            cr_assert(fgets(line, sizeof line, csv));
            /* SM_usage is the 4th field counted from the end of the 5 fixed columns */
            char *last = strrchr(line, '"');
            char *p = last ? last : line;
            int commas = 0;
            long sm = -1;
            for (char *c = p; *c; c++)
                if (*c == ',' && ++commas == 3) sm = strtol(c + 1, NULL, 10);
            cr_assert_gt(sm, 0, "%s row %zu", files[f].file, i + 1);
            cr_assert_eq(sms_needed(&t->ops[i], g), (unsigned long long)sm,
                         "%s row %zu (%s): needs %llu SMs, SM_usage %ld", files[f].file, i + 1,
                         t->ops[i].name, sms_needed(&t->ops[i], g), sm);
            beyond += sm > g->sm.count;
            recorded += t->ops[i].block[0] > 0;
        }
        cr_assert_gt(beyond, 0, "%s has kernels needing more SMs than the GPU's", files[f].file);
        if (strstr(files[f].file, "_8_") || strstr(files[f].file, "_16_"))
            cr_assert_gt(recorded, 100, "%s: Block,Grid kept", files[f].file);
        fclose(csv);
        colo_gpu_free(g);
        colo_trace_free(t);
    }
}

/* Without ../shared/data: both formats, each with a kernel needing more SMs than the GPU has. */
Test(import_orion, both_formats_keep_sm_usage_beyond_the_gpu)
{
    static const struct {
        const char *gpu, *csv;
    } cases[] = {
        {"v100-sxm2", "Name,Profile,Memory_footprint,SM_usage,Duration\n"
                      "volta_sgemm_128x64_nn,1,0,200,9000\n"
                      "BatchNorm,0,0,3,1200\n"},
        {"h100-sxm", "Name,Profile,Memory_footprint,SM_usage,Duration,Block,Grid\n"
                     "Conv-sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32,1,0,300,9000,0,0\n"
                     "BatchNorm,0,0,3,1200,0,0\n"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[] = "/tmp/colosim-orion-XXXXXX";
        temp_csv(path, cases[c].csv);
        colo_trace_t *t = import(path, cases[c].gpu, NULL);
        unlink(path);
        colo_gpu_t *g = open_gpu(cases[c].gpu);
        cr_assert_eq(t->n_kernels, 2);
        unsigned long long big = sms_needed(&t->ops[0], g);
        cr_assert_eq(big, c ? 300ULL : 200ULL, "%s: needs its SM_usage, got %llu", cases[c].gpu, big);
        cr_assert_gt(big, (unsigned long long)g->sm.count, "more SMs than the GPU: several waves");
        cr_assert_eq(sms_needed(&t->ops[1], g), 3ULL, "%s: a small kernel keeps 3 SMs", cases[c].gpu);
        colo_gpu_free(g);
        colo_trace_free(t);
    }
}

Test(import_orion, the_newer_format_keeps_block_and_grid)
{
    char path[] = "/tmp/colosim-orion-XXXXXX";
    temp_csv(path, "Name,Profile,Memory_footprint,SM_usage,Duration,Block,Grid\n"
                   "Conv-sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc,0,0,300,9000,0,0\n"
                   "BatchNorm,0,0,128,24672,512,512\n"
                   "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize32x64x64,1,0,16,5000,128,80\n");
    colo_trace_t *t = import(path, "h100-sxm", NULL);
    unlink(path);
    cr_assert_eq(t->n_kernels, 3);
    cr_assert_eq(t->ops[0].grid[0], 300 * 8, "not recorded (0,0): rebuilt from SM_usage");
    cr_assert_eq(t->ops[0].block[0], 0);
    cr_assert_eq(t->ops[1].grid[0], 512);
    cr_assert_eq(t->ops[1].block[0], 512);
    cr_assert_eq(t->ops[1].blocks_per_sm, 0, "512 threads: 4 per SM, 128 SMs as recorded");
    cr_assert_eq(t->ops[2].grid[0], 80);
    cr_assert_eq(t->ops[2].blocks_per_sm, 5, "80 blocks on 16 SMs: registers held it to 5");
    cr_assert_eq(t->ops[0].cls.math, COLO_MATH_TF32, "named by its kernel: TF32");
    cr_assert_eq(t->ops[0].cls.kind, COLO_KIND_CUDNN);
    colo_trace_free(t);
}

Test(import_orion, rows_keeps_a_range)
{
    colo_orion_rows_t rows = {2, 3};
    colo_trace_t *t = import(shared("resnet50_4_fwd.csv"), "v100-sxm2", &rows);
    cr_assert_eq(t->n_kernels, 2);
    cr_assert_str_eq(t->ops[0].name, "BatchNorm", "data row 2");
    cr_assert(strstr(json_string_value(json_object_get(t->provenance, "source")), "rows 2-3"));
    colo_trace_free(t);
}

Test(import_orion, committed_traces_match_a_fresh_conversion)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *fresh = import(shared("bert_2_fwd.csv"), "v100-sxm2", NULL), *committed;
    cr_assert_eq(colo_trace_load(src_path("traces/bert_b2_v100.json"), &committed, &err), 0);
    cr_assert_eq(fresh->n_ops, committed->n_ops);
    cr_assert_eq(fresh->kernel_time, committed->kernel_time);
    for (size_t i = 0; i < fresh->n_ops; i++) {
        cr_assert_str_eq(fresh->ops[i].name, committed->ops[i].name);
        cr_assert_eq(fresh->ops[i].duration, committed->ops[i].duration);
        cr_assert_eq(fresh->ops[i].grid[0], committed->ops[i].grid[0]);
        cr_assert_eq(fresh->ops[i].blocks_per_sm, committed->ops[i].blocks_per_sm);
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
    temp_csv(path, content);
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    colo_gpu_t *g = open_gpu("v100-sxm2");
    int rc = colo_import_orion(path, "m", 1, g, NULL, &t, &err);
    colo_gpu_free(g);
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
    const char *hdr7 = "Name,Profile,Memory_footprint,SM_usage,Duration,Block,Grid\n";
    char buf[512];
    expect_error("", "no kernel rows");
    expect_error("Name,Profile,SM_usage,Duration\nk,1,2,3\n",
                 ":1: Memory_footprint: column missing");
    expect_error("Name,Profile,Memory_footprint,SM_usage,Duration,Block\nk,1,0,2,3,4\n",
                 ":1: Grid: column missing: Block and Grid come together");
    snprintf(buf, sizeof buf, "%sk,1,0,4,100\nk,1,0,4,abc\n", hdr);
    expect_error(buf, ":3: Duration: not a number: 'abc'");
    snprintf(buf, sizeof buf, "%sk,7,0,4,100\n", hdr);
    expect_error(buf, ":2: Profile: must be 1 (compute), 0 (memory) or -1 (unknown), got 7");
    snprintf(buf, sizeof buf, "%sk,1,0,0,100\n", hdr);
    expect_error(buf, ":2: SM_usage: must be a positive whole number of SMs");
    snprintf(buf, sizeof buf, "%s\"k,1,0,4,100\n", hdr);
    expect_error(buf, ":2: unterminated quoted field");
    snprintf(buf, sizeof buf, "%sk,1,0\n", hdr);
    expect_error(buf, ":2: SM_usage: missing: the row has 3 fields");
    snprintf(buf, sizeof buf, "%sk,1,0,4,0\n", hdr);
    expect_error(buf, ":2: Duration: must be at least 1 ns");
    snprintf(buf, sizeof buf, "%sk,1,0,40,100,256,20\n", hdr7);
    expect_error(buf, ":2: SM_usage: 40 SMs for 20 blocks");
    snprintf(buf, sizeof buf, "%sk,1,0,4,100,2048,20\n", hdr7);
    expect_error(buf, ":2: Block: must be a whole number of threads (at most 1024)");
    snprintf(buf, sizeof buf, "%sk,1,0,4,100,-1,20\n", hdr7);
    expect_error(buf, ":2: Block: must not be negative");
    /* issue 22: a kernel name that is not UTF-8 was "out of memory" (the trace's JSON refused
     * it); the reader says where it is */
    snprintf(buf, sizeof buf, "%sk,1,0,4,100\ncaf\xe9_kernel,1,0,4,100\n", hdr);
    expect_error(buf, ":3: not UTF-8: byte 0xE9 in column 4");
}

/* Issue 22: what is not a text file is refused before it is read line by line: a NUL byte
 * (/dev/zero would fill memory looking for a line's end) and a folder. */
Test(import_orion, a_nul_byte_or_a_folder_is_refused)
{
    colo_gpu_t *g = open_gpu("v100-sxm2");
    colo_error_t err;
    colo_trace_t *t = NULL;
    colo_error_clear(&err);
    cr_assert_eq(colo_import_orion("/dev/zero", "m", 1, g, NULL, &t, &err), COLO_EPARSE);
    cr_assert_str_eq(err.text, "a NUL byte: not a text file");
    colo_error_clear(&err);
    cr_assert_eq(colo_import_orion("/tmp", "m", 1, g, NULL, &t, &err), COLO_EINVAL);
    cr_assert_str_eq(err.text, "a folder, not a file");
    colo_gpu_free(g);
}

Test(import_orion, quoted_names_with_commas_survive)
{
    char path[] = "/tmp/colosim-orion-XXXXXX";
    temp_csv(path,
             "Name,Profile,Memory_footprint,SM_usage,Duration\r\n\"gemm<float, 4>\",1,0,8,1000\r\n");
    colo_trace_t *t = import(path, "v100-sxm2", NULL);
    unlink(path);
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
    colo_gpu_t *g = open_gpu("v100-sxm2");
    cr_assert_lt(colo_import_orion(src_path("tests/fuzz/regressions/orion/lone_bom_byte.csv"), "m",
                                   4, g, NULL, &t, &err),
                 0);
    colo_gpu_free(g);
    cr_assert_null(t);
    /* since issue 22 the text is checked as UTF-8 first: half a mark is not */
    cr_assert(strstr(err.text, "not UTF-8: byte 0xEF in column 1"), "%s", err.text);
}

/* Merged convolution rows that name no precision run as PyTorch's defaults run cuDNN on the
 * profiled GPU: TF32 on the H100, FP32 on the V100; kernels named with a precision keep it. */
Test(import_orion, unnamed_convolutions_take_pytorchs_default_for_the_gpu)
{
    char path[] = "/tmp/colosim-orion-XXXXXX";
    temp_csv(path, "Name,Profile,Memory_footprint,SM_usage,Duration,Block,Grid\n"
                   "Conv,1,0,98,100000,0,0\n"
                   "Conv-void cutlass::Kernel2,0,0,98,20000,0,0\n"
                   "Conv-sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_ffma,1,0,"
                   "98,20000,0,0\n"
                   "BatchNorm,0,0,64,10000,512,256\n");
    colo_trace_t *h = import(path, "h100-sxm", NULL);
    cr_assert_eq(h->ops[0].math, COLO_MATH_TF32);
    cr_assert_eq(h->ops[1].math, COLO_MATH_TF32);
    cr_assert_eq(h->ops[2].math, COLO_MATH_AUTO, "named: FP32 FMA by its name");
    cr_assert_eq(h->ops[2].cls.math, COLO_MATH_FP32);
    cr_assert_eq(h->ops[3].math, COLO_MATH_AUTO);
    colo_trace_t *v = import(path, "v100-sxm2", NULL);
    cr_assert_eq(v->ops[0].math, COLO_MATH_FP32, "no TF32 on a V100");
    unlink(path);
    colo_trace_free(h);
    colo_trace_free(v);
}

/* A profile whose kernels need units the named GPU lacks was measured on another GPU. */
Test(import_orion, a_tensor_kernel_the_gpu_lacks_means_the_wrong_gpu)
{
    const char *hdr = "Name,Profile,Memory_footprint,SM_usage,Duration\n";
    char buf[512];
    snprintf(buf, sizeof buf,
             "%sBatchNorm,0,0,64,10000\nsm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize32x32x64,"
             "0,0,6,18048\n",
             hdr);
    expect_error(buf, ":3: Name: 'sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize32x32x64' is a "
                      "tf32 kernel, which v100-sxm2 does not have: the profile was measured on "
                      "another GPU (give it with --gpu)");
}

Test(import_orion, rows_past_the_end_are_clipped_and_said)
{
    colo_orion_rows_t rows = {174, 400};
    colo_trace_t *t = import(shared("resnet50_4_fwd.csv"), "v100-sxm2", &rows);
    cr_assert_eq(t->n_kernels, 2);
    cr_assert(strstr(json_string_value(json_object_get(t->provenance, "source")),
                     "data rows 174-175 of 175"));
    colo_trace_free(t);
}
