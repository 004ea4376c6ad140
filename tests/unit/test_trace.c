/* test_trace.c: reading, validating and writing kernel traces. */
#include "alloc.h"
#include "helpers.h"
#include "json_lines.h"
#include "trace.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

TestSuite(trace, .init = test_init);

static colo_trace_t *load(const char *path)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    char msg[2048];
    int rc = colo_trace_load(path, &t, &err);
    colo_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    return t;
}

Test(trace, reads_every_field_of_the_fixture)
{
    colo_trace_t *t = load(src_path("tests/fixtures/tiny_h100.json"));
    cr_assert_str_eq(t->model, "tiny");
    cr_assert_str_eq(t->gpu, "h100-sxm");
    cr_assert_eq(t->n_ops, 5);
    cr_assert_eq(t->n_kernels, 3);
    cr_assert_eq(t->n_copies, 2);
    cr_assert_eq(t->kernel_time, 600000);
    cr_assert_eq(t->copy_bytes[COLO_COPY_H2D], 1048576);
    cr_assert_eq(t->copy_bytes[COLO_COPY_D2H], 4096);
    const colo_op_t *k = &t->ops[1];
    cr_assert_eq(k->type, COLO_OP_KERNEL);
    cr_assert_str_eq(k->name, "conv");
    cr_assert_eq(k->grid[0], 132);
    cr_assert_eq(k->grid[1], 2);
    cr_assert_eq(k->block[0], 256);
    cr_assert_eq(k->registers, 64);
    cr_assert_eq(k->shared_bytes, 16384);
    cr_assert_eq(k->kclass, COLO_KCLASS_COMPUTE);
    cr_assert_float_eq(k->flops, 1.5e9, 1);
    cr_assert_float_eq(k->dram_bytes, -1, 0, "unknown stays unknown");
    cr_assert_eq(t->ops[2].gap, 5000);
    cr_assert_eq(t->ops[3].kclass, COLO_KCLASS_UNKNOWN);
    cr_assert_eq(t->ops[3].block[0], 0, "block not given: unknown");
    cr_assert_eq(t->ops[4].dir, COLO_COPY_D2H);
    colo_trace_free(t);
}

Test(trace, committed_traces_load_with_their_kernel_counts)
{
    static const struct {
        const char *file;
        size_t kernels;
    } traces[] = {
        {"traces/resnet50_b4_v100.json", 175},       {"traces/resnet101_b4_v100.json", 345},
        {"traces/mobilenetv2_b4_v100.json", 152},    {"traces/bert_b2_v100.json", 572},
        {"traces/transformer_xl_b4_v100.json", 459}, {"traces/alexnet_fwd_a100.json", 39},
    };
    for (size_t i = 0; i < sizeof traces / sizeof traces[0]; i++) {
        colo_trace_t *t = load(src_path(traces[i].file));
        cr_expect_eq(t->n_kernels, traces[i].kernels, "%s", traces[i].file);
        cr_expect(strcmp(t->gpu, "v100-sxm2") == 0 || strcmp(t->gpu, "a100-40gb") == 0, "%s",
                  t->gpu);
        cr_expect(json_is_string(json_object_get(t->provenance, "license")), "%s", traces[i].file);
        colo_trace_free(t);
    }
}

/* Makes a file of a unique name from path's XXXXXX (changed in place). */
static void make_temp(char *path)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
}

Test(trace, save_then_load_gives_the_same_trace)
{
    colo_trace_t *a = load(src_path("tests/fixtures/tiny_h100.json"));
    char path[] = "/tmp/colosim-trace-XXXXXX";
    make_temp(path);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_trace_save(a, path, &err), 0, "%s", err.text);
    colo_trace_t *b = load(path);
    unlink(path);
    cr_assert_eq(a->n_ops, b->n_ops);
    cr_assert_eq(a->batch, b->batch);
    for (size_t i = 0; i < a->n_ops; i++) {
        const colo_op_t *x = &a->ops[i], *y = &b->ops[i];
        cr_assert_eq(x->type, y->type);
        cr_assert_eq(x->gap, y->gap);
        if (x->type == COLO_OP_KERNEL) {
            cr_assert_str_eq(x->name, y->name);
            cr_assert_arr_eq(x->grid, y->grid, sizeof x->grid);
            cr_assert_arr_eq(x->block, y->block, sizeof x->block);
            cr_assert_eq(x->duration, y->duration);
            cr_assert_eq(x->kclass, y->kclass);
            cr_assert_eq(x->registers, y->registers);
            cr_assert_eq(x->shared_bytes, y->shared_bytes);
            cr_assert_float_eq(x->flops, y->flops, 1e-3);
            cr_assert_float_eq(x->dram_bytes, y->dram_bytes, 1e-3);
        } else {
            cr_assert_eq(x->dir, y->dir);
            cr_assert_eq(x->bytes, y->bytes);
        }
    }
    cr_assert(json_equal(a->provenance, b->provenance));
    colo_trace_free(a);
    colo_trace_free(b);
}

Test(trace, unwritable_output_leaves_nothing)
{
    colo_trace_t *a = load(src_path("tests/fixtures/tiny_h100.json"));
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_lt(colo_trace_save(a, "/nonexistent-dir/x.json", &err), 0);
    cr_assert(strstr(err.text, "cannot create output file"), "%s", err.text);
    cr_assert_neq(access("/nonexistent-dir/x.json", F_OK), 0);
    colo_trace_free(a);
}

/* An importer can meet ops further apart than a trace may hold (an nsys export of two runs
 * days apart): saving refuses what loading would, and writes nothing. */
Test(trace, what_the_reader_would_refuse_is_not_written)
{
    colo_trace_t *a = load(src_path("tests/fixtures/tiny_h100.json"));
    char path[] = "/tmp/colosim-trace-XXXXXX";
    make_temp(path);
    unlink(path);
    colo_error_t err;
    colo_error_clear(&err);
    a->ops[a->n_ops - 1].gap = COLO_NS(2000000000000000LL);
    cr_assert_eq(colo_trace_save(a, path, &err), COLO_ERANGE);
    char key[48];
    snprintf(key, sizeof key, "ops[%zu].gap_ns", a->n_ops - 1);
    cr_assert_str_eq(err.key, key);
    cr_assert(strstr(err.text, "longer than the 11 days a trace may hold"), "%s", err.text);
    cr_assert_neq(access(path, F_OK), 0, "nothing written");
    a->ops[a->n_ops - 1].gap = COLO_OP_MAX_NS; /* the longest the reader takes */
    colo_error_clear(&err);
    cr_assert_eq(colo_trace_save(a, path, &err), 0, "%s", err.text);
    colo_trace_free(load(path));
    unlink(path);
    colo_trace_free(a);
}

static int load_trace(const char *file, colo_error_t *err)
{
    colo_trace_t *t = NULL;
    int rc = colo_trace_load(file, &t, err);
    cr_expect_null(t, "nothing is returned on failure");
    colo_trace_free(t);
    return rc;
}

static void check_bad_trace(const char *dir, const char *stem)
{
    expect_golden_error(dir, stem, "json", load_trace);
}

Test(trace, bad_traces_give_the_expected_error_with_its_line)
{
    size_t n = for_each_file(src_path("tests/fixtures/traces_bad"), "json", check_bad_trace);
    cr_assert_geq(n, 12);
}

/* colo_read_file (every JSON reader's first step) reads a regular file in one buffer of its size
 * and anything else (a pipe) 64 KiB at a time: each way gives the whole content. */
static void expect_read(const char *path, const char *want, size_t n)
{
    colo_error_t err;
    colo_error_clear(&err);
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(colo_read_file(path, &buf, &len, &err), 0, "%s", err.text);
    cr_assert_not_null(buf);
    cr_assert_eq(len, n);
    cr_assert(memcmp(buf, want, n) == 0);
    colo_free(buf);
}

Test(trace, read_file_gives_whole_files_and_pipes)
{
    size_t sizes[] = {0, 1, 65535, 65536, 65537, 300001};
    char *text = colo_malloc(300001);
    for (size_t i = 0; i < 300001; i++) text[i] = (char)('a' + i * 7 % 26);
    char dir[] = "/tmp/colosim-read-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/f", dir);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        FILE *f = fopen(path, "wb");
        cr_assert_eq(fwrite(text, 1, sizes[s], f), sizes[s]);
        fclose(f);
        expect_read(path, text, sizes[s]);
    }
    unlink(path);
    /* a FIFO fed by a child in small pieces: size unknown, read until the writer closes it */
    cr_assert_eq(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    if (pid == 0) {
        FILE *f = fopen(path, "wb");
        for (size_t o = 0; f && o < 300001; o += 1000)
            fwrite(text + o, 1, o + 1000 < 300001 ? 1000 : 300001 - o, f), fflush(f);
        _exit(f && fclose(f) == 0 ? 0 : 1);
    }
    expect_read(path, text, 300001);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    unlink(path);
    rmdir(dir);
    colo_free(text);
}
