/* test_capture.c: colosim-capture record files become one trace per marked inference, with
 * launch shapes, copies and host gaps; Nsight Compute bytes merge by kernel order; and (where
 * CUPTI's headers are installed) CUPTI activity records become the lines the importer reads. */
#include "helpers.h"
#include "import_capture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef COLOSIM_HAVE_CUPTI
#include "capture_records.h"
#endif

TestSuite(capture, .init = test_init);

static colo_trace_t **import(const char *file, const char *annotation, int occurrence, size_t *n)
{
    colo_kineto_opts_t o = {"net", 8, NULL, annotation, occurrence};
    colo_trace_t **ts;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_import_capture(file, &o, &ts, n, &err);
    cr_assert_eq(rc, 0, "%s:%d: %s: %s", err.source, err.line, err.key, err.text);
    return ts;
}

static long long prov_int(const colo_trace_t *t, const char *key)
{
    json_t *v = json_object_get(t->provenance, key);
    cr_assert(json_is_integer(v), "provenance.%s missing", key);
    return (long long)json_integer_value(v);
}

Test(capture, one_trace_per_range_with_shapes_copies_and_gaps)
{
    size_t n;
    colo_trace_t **ts =
        import(src_path("tests/fixtures/capture/two_inferences.txt"), "colosim:infer", 0, &n);
    cr_assert_eq(n, 2, "the 'warmup' range is not an inference");
    static const long long gaps[2][4] = {{0, 8500, 5000, 32000}, {0, 8000, 3500, 32500}};
    for (size_t i = 0; i < 2; i++) {
        colo_trace_t *t = ts[i];
        cr_expect_str_eq(t->gpu, "h100-sxm", "guessed from the device record");
        cr_expect_str_eq(t->model, "net");
        cr_expect_eq(t->batch, 8);
        cr_assert_eq(t->n_ops, 4, "the device-to-device copy is left out");
        cr_expect_eq(t->ops[0].type, COLO_OP_COPY);
        cr_expect_eq(t->ops[0].dir, COLO_COPY_H2D);
        cr_expect_eq(t->ops[0].bytes, 1048576);
        cr_expect_eq(t->ops[1].type, COLO_OP_KERNEL);
        cr_expect_str_eq(t->ops[1].name, "_Z4convPf");
        cr_expect_eq(t->ops[1].grid[0], 264);
        cr_expect_eq(t->ops[1].block[0], 256);
        cr_expect_eq(t->ops[1].registers, 64);
        cr_expect_eq(t->ops[1].shared_bytes, 16384);
        cr_expect_eq(t->ops[1].duration, 20000);
        cr_expect_eq(t->ops[2].duration, 10000);
        cr_expect_eq(t->ops[3].dir, COLO_COPY_D2H);
        for (int k = 0; k < 4; k++)
            cr_expect_eq(t->ops[k].gap, gaps[i][k], "inference %zu op %d: gap %lld", i, k,
                         (long long)t->ops[k].gap);
        cr_expect_eq(prov_int(t, "occurrence"), (long long)i + 1);
    }
    cr_expect_eq(prov_int(ts[0], "measured_ns"), 59000);
    cr_expect_eq(prov_int(ts[1], "measured_ns"), 70000);
    cr_expect_eq(prov_int(ts[0], "gpu_span_ns"), 49500 - 5000);
    colo_capture_free(ts, n);

    ts = import(src_path("tests/fixtures/capture/two_inferences.txt"), "colosim:infer", 2, &n);
    cr_assert_eq(n, 1, "--occurrence keeps one");
    cr_expect_eq(prov_int(ts[0], "measured_ns"), 70000);
    colo_capture_free(ts, n);

    ts = import(src_path("tests/fixtures/capture/two_inferences.txt"), NULL, 0, &n);
    cr_assert_eq(n, 1, "no annotation: one trace of everything");
    cr_expect_eq(ts[0]->n_kernels, 4);
    colo_capture_free(ts, n);
}

static void expect_error(const char *file, const char *annotation, const char *want)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, annotation, 0};
    colo_trace_t **ts;
    size_t n;
    colo_error_t err;
    colo_error_clear(&err);
    cr_expect_lt(colo_import_capture(src_path(file), &o, &ts, &n, &err), 0, "%s", file);
    char got[1024];
    colo_error_format(&err, got, sizeof got);
    cr_expect(strstr(got, want), "%s: got '%s', want '%s'", file, got, want);
}

Test(capture, bad_record_files_say_which_line)
{
    expect_error("tests/fixtures/capture/bad_order.txt", NULL,
                 "bad_order.txt:2: kernel: ends before it starts");
    expect_error("tests/fixtures/capture/bad_fields.txt", NULL,
                 "bad_fields.txt:3: kernel: expected START END DEVICE STREAM");
    expect_error("tests/fixtures/capture/bad_kind.txt", NULL,
                 "bad_kind.txt:2: unknown record 'kernal'");
    expect_error("tests/fixtures/capture/bad_header.txt", NULL,
                 "bad_header.txt:1: not a colosim-capture record file");
    expect_error("tests/fixtures/capture/two_inferences.txt", "nope",
                 "annotation: no NVTX range contains 'nope' (3 ranges recorded)");
    expect_error("tests/fixtures/capture/bad_order.txt", NULL, "bad_order.txt");
}

Test(capture, ncu_bytes_merge_by_kernel_order)
{
    size_t n;
    colo_trace_t **ts =
        import(src_path("tests/fixtures/capture/two_inferences.txt"), "colosim:infer", 1, &n);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_trace_merge_ncu(ts[0], src_path("tests/fixtures/capture/ncu.csv"), &err), 0,
                 "%s", err.text);
    cr_expect_float_eq(ts[0]->ops[1].dram_bytes, 1.5e6 + 5e5, 1e-3);
    cr_expect_float_eq(ts[0]->ops[1].l2_bytes, 4.25e6, 1e-3);
    cr_expect_float_eq(ts[0]->ops[2].dram_bytes, 2097152, 1e-3, "thousands separators");
    cr_expect_float_eq(ts[0]->ops[2].l2_bytes, 3e6, 1e-3);
    colo_error_clear(&err);
    cr_expect_lt(
        colo_trace_merge_ncu(ts[0], src_path("tests/fixtures/capture/ncu_other_kernel.csv"), &err),
        0);
    cr_expect_eq(err.line, 6, "the line of the first row of the kernel that differs");
    cr_expect(strstr(err.text, "'_Z4geluPf' here but '_Z4reluPf' in the trace"), "%s", err.text);
    colo_capture_free(ts, n);
}

/* The imported trace runs: a capture is a trace like any other. */
Test(capture, an_imported_trace_saves_and_loads)
{
    size_t n;
    colo_trace_t **ts =
        import(src_path("tests/fixtures/capture/two_inferences.txt"), "colosim:infer", 1, &n);
    char path[] = "/tmp/colosim-capture-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_trace_save(ts[0], path, &err), 0, "%s", err.text);
    colo_trace_t *back;
    cr_assert_eq(colo_trace_load(path, &back, &err), 0, "%s", err.text);
    cr_expect_eq(back->n_ops, 4);
    cr_expect_eq(back->ops[2].gap, 5000);
    cr_expect_eq(json_integer_value(json_object_get(back->provenance, "measured_ns")), 59000);
    colo_trace_free(back);
    unlink(path);
    colo_capture_free(ts, n);
}

#ifdef COLOSIM_HAVE_CUPTI
/* CUPTI records built by hand, as the activity API hands them over, through the writer the
 * injection library uses and back through the importer. */
Test(capture, cupti_records_become_trace_ops)
{
    char path[] = "/tmp/colosim-cupti-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    colo_capture_writer_t w;
    colo_capture_begin(&w, f);

    CUpti_ActivityDevice5 dev;
    memset(&dev, 0, sizeof dev);
    dev.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    dev.id = 0;
    dev.numMultiprocessors = 132;
    dev.globalMemorySize = 150000000000ull;
    dev.name = "NVIDIA H200";
    cr_expect_eq(colo_capture_record(&w, (CUpti_Activity *)&dev), 1);

    CUpti_ActivityMarker2 m0, m1;
    memset(&m0, 0, sizeof m0);
    m0.kind = CUPTI_ACTIVITY_KIND_MARKER;
    m0.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
    m0.timestamp = 1000;
    m0.id = 5;
    m0.name = "colosim:infer";
    m1 = m0;
    m1.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
    m1.timestamp = 90000;
    m1.name = NULL;

    CUpti_ActivityAPI api;
    memset(&api, 0, sizeof api);
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.start = 2000;
    api.end = 4000;
    api.correlationId = 77;

    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 10000;
    k.end = 60000;
    k.streamId = 13;
    k.correlationId = 77;
    k.gridX = 132;
    k.gridY = 2;
    k.gridZ = 1;
    k.blockX = 128;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 96;
    k.staticSharedMemory = 1024;
    k.dynamicSharedMemory = 32768;
    k.name = "sm90_xmma_gemm_f16f16_f32";

    CUpti_ActivityMemcpy6 c;
    memset(&c, 0, sizeof c);
    c.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
    c.bytes = 4000;
    c.start = 61000;
    c.end = 62000;
    c.correlationId = 78;

    colo_capture_record(&w, (CUpti_Activity *)&m0);
    colo_capture_record(&w, (CUpti_Activity *)&api);
    colo_capture_record(&w, (CUpti_Activity *)&k);
    colo_capture_record(&w, (CUpti_Activity *)&c);
    colo_capture_record(&w, (CUpti_Activity *)&m1);
    cr_expect_eq(w.n_open, 0, "the range closed");
    fclose(f);

    size_t n;
    colo_trace_t **ts = import(path, "colosim:infer", 0, &n);
    cr_assert_eq(n, 1);
    colo_trace_t *t = ts[0];
    cr_expect_str_eq(t->gpu, "h200");
    cr_assert_eq(t->n_ops, 2);
    cr_expect_str_eq(t->ops[0].name, "sm90_xmma_gemm_f16f16_f32");
    cr_expect_eq(t->ops[0].grid[1], 2);
    cr_expect_eq(t->ops[0].block[0], 128);
    cr_expect_eq(t->ops[0].registers, 96);
    cr_expect_eq(t->ops[0].shared_bytes, 1024 + 32768, "static plus dynamic");
    cr_expect_eq(t->ops[0].duration, 50000);
    cr_expect_eq(t->ops[0].stream, 13);
    cr_expect_eq(t->ops[1].type, COLO_OP_COPY);
    cr_expect_eq(t->ops[1].dir, COLO_COPY_D2H);
    cr_expect_eq(t->ops[1].bytes, 4000);
    cr_expect_eq(t->ops[1].gap, 61000 - 2000, "no API record for the copy: its start counts");
    cr_expect_eq(prov_int(t, "measured_ns"), 89000);
    colo_capture_free(ts, n);
    unlink(path);
}
#endif

/* Found by fuzz_capture: copies of 2^63 - 1 bytes overflowed the trace's byte count; times
 * out of range or copies over 1 PB are refused with the line. */
Test(capture, copies_and_times_out_of_range_are_refused_with_the_line)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t **ts = NULL;
    size_t n = 0;
    cr_assert_lt(colo_import_capture(
                     src_path("tests/fuzz/regressions/capture/copy_bytes_overflow.txt"), &o, &ts,
                     &n, &err),
                 0);
    cr_assert_null(ts);
    cr_assert(strstr(err.text, "bytes outside 0 to 1 PB"), "%s", err.text);
    cr_assert_eq(err.line, 8, "the first copy: %d", err.line);
}
