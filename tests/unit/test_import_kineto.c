/* test_import_kineto.c: the PyTorch profiler importer on the real HTA fixture traces. */
#include "helpers.h"
#include "import_kineto.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

TestSuite(import_kineto, .init = test_init);

static const char *shared(const char *file)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/hta_kineto_traces/%s", COLO_SHARED_DATA, file);
    if (access(p, R_OK) != 0) cr_skip_test("shared data not present: %s", p);
    return p;
}

static colo_trace_t *import(const char *path, const char *annotation, int occurrence)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, annotation, occurrence};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    char msg[2048];
    int rc = colo_import_kineto(path, &o, &t, &err);
    colo_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    return t;
}

Test(import_kineto, alexnet_kernels_copies_and_fields_match_the_source)
{
    colo_trace_t *t = import(shared("alexnet_a100_kineto.json.gz"), NULL, 0);
    cr_assert_str_eq(t->gpu, "a100-40gb", "NVIDIA A100-PG509-200, 39.4 GiB");
    cr_assert_eq(t->n_kernels, 79);
    cr_assert_eq(t->n_copies, 16, "the host-to-device weight uploads");
    cr_assert_eq(t->kernel_time, 10692000, "sum of the kernels' dur, 10,692 us");
    /* the max-pool kernel: grid 23328, block 256, 26 registers, no shared memory */
    int found = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        const colo_op_t *op = &t->ops[i];
        if (op->type != COLO_OP_KERNEL || op->grid[0] != 23328) continue;
        found = 1;
        cr_assert_eq(op->block[0], 256);
        cr_assert_eq(op->registers, 26);
        cr_assert_eq(op->shared_bytes, 0);
        cr_assert_eq(op->stream, 7);
        break;
    }
    cr_assert(found, "the 23328-block kernel is there");
    cr_assert_eq(t->ops[0].gap, 0);
    colo_time_t gaps = 0;
    for (size_t i = 0; i < t->n_ops; i++)
        gaps += t->ops[i].gap;
    cr_assert_gt(gaps, 0, "host gaps come from the launch calls");
    colo_trace_free(t);
}

Test(import_kineto, an_annotation_selects_one_forward_pass)
{
    colo_trace_t *t = import(shared("alexnet_a100_kineto.json.gz"), "measure|forward", 2);
    cr_assert_eq(t->n_kernels, 39);
    cr_assert_eq(t->n_copies, 0);
    cr_assert_eq(t->kernel_time, 5315000);
    colo_trace_free(t);
    colo_kineto_opts_t o = {NULL, 0, NULL, "measure|forward", 3};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *none = NULL;
    cr_assert_eq(colo_import_kineto(shared("alexnet_a100_kineto.json.gz"), &o, &none, &err),
                 COLO_ENOENT);
    cr_assert(strstr(err.text, "no user annotation #3"), "%s", err.text);
}

Test(import_kineto, the_event_sync_traces_keep_their_streams)
{
    colo_trace_t *a = import(shared("event_sync_a100_kineto.json.gz"), NULL, 0);
    cr_assert_eq(a->n_kernels, 4);
    cr_assert_eq(a->kernel_time, 49000);
    colo_trace_t *b = import(shared("event_sync_multi_stream_a100_kineto.json.gz"), NULL, 0);
    cr_assert_eq(b->n_kernels, 3);
    cr_assert_eq(b->kernel_time, 369000);
    int streams = 0;
    for (size_t i = 0; i < b->n_ops; i++)
        streams |= 1 << (b->ops[i].stream % 30);
    cr_assert_eq(__builtin_popcount((unsigned)streams), 3, "three streams: 20, 24, 28");
    colo_trace_free(a);
    colo_trace_free(b);
}

static void write_file(const char *path, const char *text, int gz, size_t cut)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, text, (unsigned)strlen(text));
        gzclose(f);
        if (cut) cr_assert_eq(truncate(path, (off_t)cut), 0);
    } else {
        FILE *f = fopen(path, "w");
        fputs(text, f);
        fclose(f);
    }
}

static void expect_error(const char *text, int gz, size_t cut, const char *want)
{
    char path[] = "/tmp/colosim-kineto-XXXXXX";
    close(mkstemp(path));
    write_file(path, text, gz, cut);
    colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_lt(colo_import_kineto(path, &o, &t, &err), 0);
    cr_assert_null(t);
    char msg[2048];
    colo_error_format(&err, msg, sizeof msg);
    cr_assert(strstr(msg, want), "got '%s', wanted '%s'", msg, want);
    cr_assert_eq(strncmp(msg, path, strlen(path)), 0, "names the file: %s", msg);
    unlink(path);
}

Test(import_kineto, malformed_files_get_clear_errors)
{
    static const char ok_kernel[] =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 10, "
        "\"dur\": 5, \"args\": {\"grid\": [4, 1, 1], \"block\": [128, 1, 1]}}]}";
    expect_error("{\"traceEvents\": [", 0, 0, "JSON error");
    expect_error("{\"schemaVersion\": 1}", 0, 0, "traceEvents: missing");
    expect_error("{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", "
                 "\"ts\": 10, \"dur\": 5, \"args\": {\"grid\": [0]}}]}",
                 0, 0, "grid or block missing or invalid");
    expect_error("{\"traceEvents\": []}", 0, 0, "no kernels");
    expect_error(ok_kernel, 1, 20, "cannot decompress: unexpected end of file"); /* cut short */
}

/* Issue 22: on a corrupt gzip stream the message was read from zlib after gzclose had freed it
 * (a use after free: garbage in the release build, a report under ASan). Each corruption is
 * now named in zlib's words; NUL bytes and folders are refused before they are parsed. */
Test(import_kineto, a_corrupt_gzip_stream_is_named_in_zlibs_words)
{
    static const char ok_kernel[] =
        "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 10, "
        "\"dur\": 5, \"args\": {\"grid\": [4, 1, 1], \"block\": [128, 1, 1]}}]}";
    char path[] = "/tmp/colosim-kineto-XXXXXX";
    close(mkstemp(path));
    write_file(path, ok_kernel, 1, 0);
    FILE *f = fopen(path, "r+b"); /* the CRC-32 is the trailer's first 4 bytes */
    cr_assert(f);
    cr_assert_eq(fseek(f, -8, SEEK_END), 0);
    int c = fgetc(f);
    cr_assert_eq(fseek(f, -8, SEEK_END), 0);
    fputc(c ^ 0x5a, f);
    fclose(f);
    colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(colo_import_kineto(path, &o, &t, &err), COLO_EPARSE);
    cr_assert_str_eq(err.text, "cannot decompress: incorrect data check");
    cr_assert_str_eq(err.source, path);
    unlink(path);
    colo_error_clear(&err);
    cr_assert_eq(colo_import_kineto("/dev/zero", &o, &t, &err), COLO_EPARSE);
    cr_assert(strstr(err.text, "NUL"), "%s", err.text);
    colo_error_clear(&err);
    cr_assert_eq(colo_import_kineto("/tmp", &o, &t, &err), COLO_EINVAL);
    cr_assert_str_eq(err.text, "a folder, not a file");
}

/* Found by fuzz_kineto: the message named the GPU after the document holding its name was
 * freed (a use after free under ASan). */
Test(import_kineto, an_unknown_gpu_is_named_in_the_error)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(colo_import_kineto(src_path("tests/fuzz/regressions/kineto/unknown_gpu_name.json"),
                                    &o, &t, &err),
                 COLO_EINVAL);
    cr_assert_null(t);
    cr_assert(strstr(err.text, "cannot tell which GPU 'Mystery GPU 9000' is"), "%s", err.text);
}
