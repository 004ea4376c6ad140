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
    cr_assert(strstr(err.text, "3, but only 2 record_function ranges have a name containing"), "%s",
              err.text);
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

/* ---- an import that cannot mislead: what it holds, the ranges, the host gaps ---- */

static const char *fixture(void) /* HTA's AlexNet trace, trimmed: tests/fixtures/kineto */
{
    return src_path("tests/fixtures/kineto/alexnet_a100_trimmed.json");
}

static colo_trace_t *convert(const char *annotation, int occurrence, const char *gaps,
                             colo_kineto_report_t *r)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, annotation, occurrence};
    colo_gap_policy_t p;
    cr_assert_eq(colo_gap_policy_parse(gaps, &p), 0, "%s", gaps);
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    char msg[2048];
    int rc = colo_kineto_convert(fixture(), &o, &p, &t, r, &err);
    colo_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    return t;
}

static colo_time_t gap_sum(const colo_trace_t *t, colo_time_t *largest)
{
    colo_time_t s = 0;
    *largest = 0;
    for (size_t i = 0; i < t->n_ops; i++) {
        s += t->ops[i].gap;
        if (t->ops[i].gap > *largest) *largest = t->ops[i].gap;
    }
    return s;
}

Test(import_kineto, the_trimmed_fixture_imports_as_the_published_trace)
{
    colo_trace_t *t = import(fixture(), NULL, 0);
    cr_assert_eq(t->n_kernels, 79);
    cr_assert_eq(t->n_copies, 16);
    cr_assert_eq(t->kernel_time, 10692000);
    cr_assert_eq(t->copy_bytes[COLO_COPY_H2D], 244403360, "the weights' upload");
    colo_trace_free(t);
}

Test(import_kineto, the_record_function_ranges_are_listed_with_counts_and_kernels)
{
    colo_kineto_report_t r;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_kineto_annotations(fixture(), &r, &err), 0, "%s", err.text);
    cr_assert_eq(r.n_ranges, 8);
    cr_assert_eq(r.n_names, 5);
    static const char *const names[] = {"[param|cuda]", "[param|pytorch.model.alex_net|0|0|0]",
                                        "[param|pytorch.model.alex_net|0|0|0|warmup|forward]",
                                        "[param|clear_cache]",
                                        "[param|pytorch.model.alex_net|0|0|0|measure|forward]"};
    static const size_t counts[] = {1, 1, 2, 2, 2};
    /* nested ranges of one name count a kernel once: 39 per forward pass, none in a cache
     * clear (memsets) */
    static const size_t kernels[] = {79, 78, 39, 0, 39};
    for (size_t i = 0; i < 5; i++) {
        cr_assert_str_eq(r.names[i].name, names[i], "by first start");
        cr_assert_eq(r.names[i].count, counts[i], "%s", names[i]);
        cr_assert_eq(r.names[i].kernels, kernels[i], "%s", names[i]);
    }
    cr_assert_float_eq(r.names[4].total_us, 79678 + 36356, 1e-6);
    colo_kineto_report_fini(&r);
    cr_assert_null(r.names);
}

Test(import_kineto, an_unknown_annotation_lists_the_ones_there_are)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, "nope", 1};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(colo_import_kineto(fixture(), &o, &t, &err), COLO_ENOENT);
    cr_assert_null(t);
    cr_assert_str_eq(err.key, "--annotation");
    cr_assert(strstr(err.text, "no record_function range has a name containing 'nope'; the "
                               "profile has 5 names: '[param|cuda]' (1), "),
              "%s", err.text);
    cr_assert(strstr(err.text, "'[param|pytorch.model.alex_net|0|0|0|measure|forward]' (2) "
                               "(--list-annotations)"),
              "%s", err.text);
    colo_error_clear(&err);
    o = (colo_kineto_opts_t){NULL, 0, NULL, "measure|forward", 3};
    cr_assert_eq(colo_import_kineto(fixture(), &o, &t, &err), COLO_ENOENT);
    cr_assert_str_eq(err.key, "--occurrence");
    cr_assert_str_eq(
        err.text, "3, but only 2 record_function ranges have a name containing 'measure|forward'");
}

/* Many names: as many as fit, then how many more. */
Test(import_kineto, a_long_list_of_annotations_is_cut_with_a_count)
{
    char path[] = "/tmp/colosim-kineto-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < 200; i++)
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", "
                "\"ts\": %d, \"dur\": 5},\n",
                i, 10 * i);
    fputs("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1, \"dur\": 1, \"args\": "
          "{\"grid\": [1], \"block\": [32]}}]}\n",
          f);
    fclose(f);
    colo_kineto_opts_t o = {NULL, 0, "a100-40gb", "forward", 1};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(colo_import_kineto(path, &o, &t, &err), COLO_ENOENT);
    cr_assert(strstr(err.text, "the profile has 200 names: 'ProfilerStep#0' (1), "), "%s",
              err.text);
    const char *more = strstr(err.text, "more (--list-annotations)");
    cr_assert(more, "%s", err.text);
    cr_assert(strstr(err.text, ", and "), "%s", err.text);
    cr_assert_lt(strlen(err.text), sizeof err.text - 1, "not cut by the buffer: %s", err.text);
    unlink(path);
}

Test(import_kineto, what_is_not_one_inference_is_said)
{
    colo_kineto_report_t r;
    memset(&r, 0, sizeof r);
    colo_trace_t *t = convert(NULL, 0, "keep", &r);
    cr_assert_eq(r.why, COLO_KINETO_WHOLE | COLO_KINETO_GAPS, "whole profile: %u", r.why);
    cr_assert_eq(r.gaps, r.measured_gaps);
    cr_assert_gt(r.gaps, COLO_MS(12000), "12.9 s of host gaps");
    colo_trace_free(t);
    colo_kineto_report_fini(&r);

    /* the first "measure|forward" encloses a clear and the second one of its own name */
    t = convert("measure|forward", 1, "keep", &r);
    cr_assert_eq(r.why, COLO_KINETO_NESTED | COLO_KINETO_GAPS, "%u", r.why);
    cr_assert_eq(r.n_enclosed, 2);
    cr_assert_str_eq(r.enclosed[0].name, "[param|clear_cache]");
    cr_assert_str_eq(r.enclosed[1].name, "[param|pytorch.model.alex_net|0|0|0|measure|forward]");
    colo_trace_free(t);
    colo_kineto_report_fini(&r);

    /* the second: one forward pass, whose 26 ms of host gaps outweigh its 5.3 ms of kernels */
    t = convert("measure|forward", 2, "keep", &r);
    cr_assert_eq(r.why, COLO_KINETO_GAPS, "%u", r.why);
    cr_assert_eq(r.n_enclosed, 0);
    cr_assert_eq(r.kernel_time, 5315000);
    colo_trace_free(t);
    colo_kineto_report_fini(&r);

    t = convert("measure|forward", 2, "drop", &r);
    cr_assert_eq(r.why, 0, "nothing to say: %u", r.why);
    colo_trace_free(t);
    colo_kineto_report_fini(&r);
}

/* A profile whose one range holds every kernel is that range: no warning to choose it. */
Test(import_kineto, one_range_holding_everything_is_one_inference)
{
    colo_kineto_report_t r;
    memset(&r, 0, sizeof r);
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    colo_gap_policy_t drop = {COLO_GAPS_DROP, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(
        colo_kineto_convert(shared("event_sync_a100_kineto.json.gz"), &o, &drop, &t, &r, &err), 0,
        "%s", err.text);
    cr_assert_eq(r.n_ranges, 1, "ProfilerStep#100");
    cr_assert_eq(r.why, 0, "%u", r.why);
    colo_trace_free(t);
    colo_kineto_report_fini(&r);
}

Test(import_kineto, gaps_are_kept_dropped_or_capped_in_the_same_order)
{
    colo_kineto_report_t r;
    memset(&r, 0, sizeof r);
    colo_trace_t *keep = convert("measure|forward", 2, "keep", &r);
    colo_kineto_report_fini(&r);
    colo_trace_t *drop = convert("measure|forward", 2, "drop", &r);
    colo_kineto_report_fini(&r);
    colo_trace_t *cap = convert("measure|forward", 2, "cap:50", &r);
    colo_time_t largest, kept = gap_sum(keep, &largest);
    cr_assert_eq(kept, r.measured_gaps);
    cr_assert_eq(largest, r.measured_largest);
    cr_assert_eq(largest, 14865000, "the largest, as colosim trace says");
    cr_assert_eq(keep->n_ops, drop->n_ops);
    cr_assert_eq(keep->n_ops, cap->n_ops);
    colo_time_t capped = 0;
    for (size_t i = 0; i < keep->n_ops; i++) {
        cr_assert_str_eq(drop->ops[i].name, keep->ops[i].name, "dispatch order kept");
        cr_assert_eq(drop->ops[i].duration, keep->ops[i].duration);
        cr_assert_eq(drop->ops[i].gap, 0);
        colo_time_t want = keep->ops[i].gap < 50000 ? keep->ops[i].gap : 50000;
        cr_assert_eq(cap->ops[i].gap, want, "op %zu", i);
        capped += want;
    }
    cr_assert_eq(r.gaps, capped);
    cr_assert_lt(capped, kept / 10);
    cr_assert_null(json_object_get(keep->provenance, "host_gaps"), "keep changes nothing");
    const char *d = json_string_value(json_object_get(drop->provenance, "host_gaps"));
    const char *c = json_string_value(json_object_get(cap->provenance, "host_gaps"));
    cr_assert(d && strstr(d, "removed (--gaps drop)"), "%s", d ? d : "none");
    cr_assert(c && strstr(c, "each capped at 50 us (--gaps cap:50)"), "%s", c ? c : "none");
    colo_kineto_report_fini(&r);
    colo_trace_free(keep);
    colo_trace_free(drop);
    colo_trace_free(cap);
}

Test(import_kineto, the_gap_policy_is_parsed_strictly)
{
    colo_gap_policy_t p;
    cr_assert_eq(colo_gap_policy_parse("keep", &p), 0);
    cr_assert_eq(p.mode, COLO_GAPS_KEEP);
    cr_assert_eq(colo_gap_policy_parse("drop", &p), 0);
    cr_assert_eq(p.mode, COLO_GAPS_DROP);
    cr_assert_eq(colo_gap_policy_parse("cap:2.5", &p), 0);
    cr_assert_eq(p.mode, COLO_GAPS_CAP);
    cr_assert_eq(p.cap, 2500);
    cr_assert_eq(colo_gap_policy_parse("cap:0", &p), 0);
    cr_assert_eq(p.cap, 0);
    static const char *const bad[] = {"",       "cap",     "cap:",     "cap:-1", "cap:abc",
                                      "cap:5x", "cap:nan", "cap:1e13", "Drop",   "drop ",
                                      "cap50",  "cap:inf", "keep:5"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        p = (colo_gap_policy_t){COLO_GAPS_DROP, 7};
        cr_assert_eq(colo_gap_policy_parse(bad[i], &p), COLO_EINVAL, "'%s'", bad[i]);
        cr_assert_eq(p.cap, 7, "untouched by '%s'", bad[i]);
    }
}

/* The reader holds one 1 MiB chunk at a time: events, names and strings that straddle chunks,
 * a value longer than a chunk, escapes and brackets inside strings, and gzip alike. */
Test(import_kineto, events_across_chunks_are_read_whole)
{
    for (int gz = 0; gz < 2; gz++) {
        char path[] = "/tmp/colosim-kineto-XXXXXX";
        close(mkstemp(path));
        size_t big = 3u << 20; /* an event of 3 MiB (a note in its args), a name of 60,000 */
        char *name = malloc(big + 1);
        memset(name, 'n', big);
        name[big] = '\0';
        size_t cap = 2 * big + (64u << 20), len = 0;
        char *text = malloc(cap);
        len += (size_t)snprintf(text + len, cap - len, "{\"traceEvents\": [\n");
        for (int i = 0; i < 30000; i++)
            len += (size_t)snprintf(
                text + len, cap - len,
                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k]}\\\"%d{[\", \"ts\": %d, "
                "\"dur\": 1, \"args\": {\"grid\": [%d, 1, 1], \"block\": [32]}},\n",
                i % 7, 10 * i, 1 + i % 5);
        len += (size_t)snprintf(text + len, cap - len,
                                "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%.60000s\", \"ts\": "
                                "400000, \"dur\": 2, \"args\": {\"grid\": [9], \"block\": [64], "
                                "\"note\": \"%s\"}}],\n \"deviceProperties\": [{\"name\": \"x\"}]}\n",
                                name, name);
        write_file(path, text, gz, 0);
        colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
        colo_error_t err;
        colo_error_clear(&err);
        colo_trace_t *t = NULL;
        cr_assert_eq(colo_import_kineto(path, &o, &t, &err), 0, "%s: %s", gz ? "gzip" : "text",
                     err.text);
        cr_assert_eq(t->n_kernels, 30001);
        cr_assert_str_eq(t->ops[3].name, "k]}\"3{[");
        cr_assert_eq(t->ops[4].grid[0], 5);
        cr_assert_eq(strlen(t->ops[30000].name), 60000);
        colo_trace_free(t);
        free(text);
        free(name);
        unlink(path);
    }
}

/* Syntax errors and event errors carry the line they are on (tests/golden/bad/kineto/: one
 * .json file per kind of mistake, its message beside it in .err). */
static int load_kineto(const char *file, colo_error_t *err)
{
    colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
    colo_trace_t *t = NULL;
    int rc = colo_import_kineto(file, &o, &t, err);
    cr_expect_null(t, "nothing is returned on failure");
    colo_trace_free(t);
    return rc;
}

static void check_bad_kineto(const char *dir, const char *stem)
{
    expect_golden_error(dir, stem, "json", load_kineto);
}

Test(import_kineto, bad_profiles_give_the_expected_error_with_its_line)
{
    size_t n = for_each_file(src_path("tests/golden/bad/kineto"), "json", check_bad_kineto);
    cr_assert_geq(n, 8);
}

/* Deeper than Jansson parses: its words, at the line, found before the value is held whole. */
Test(import_kineto, a_deep_document_is_refused_in_jansson_words)
{
    char path[] = "/tmp/colosim-kineto-XXXXXX";
    close(mkstemp(path));
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n", f);
    for (int i = 0; i < 100000; i++)
        fputc('[', f);
    fclose(f);
    colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    cr_assert_eq(colo_import_kineto(path, &o, &t, &err), COLO_EPARSE);
    cr_assert_str_eq(err.text, "JSON error: maximum parsing depth reached");
    cr_assert_eq(err.line, 2);
    unlink(path);
}

/* A 0.26 MB gzip whose one name expands to 256 MiB took 42 s and 1 GB (issue 40): a value held
 * whole is bounded (16 MiB, refused before reading on, at its line), and so is a name (64 KiB). */
Test(import_kineto, a_huge_event_or_name_is_refused_where_it_starts)
{
    static const struct {
        size_t name_bytes;
        int gz;
        const char *want;
    } cases[] = {{40u << 20, 1, ":3: a value of more than 16 MiB starts here"},
                 {1u << 20, 0, ":3: name: traceEvents[1]: a name of 1048576 bytes"}};
    for (size_t c = 0; c < 2; c++) {
        char path[] = "/tmp/colosim-kineto-XXXXXX";
        close(mkstemp(path));
        size_t n = cases[c].name_bytes;
        char *text = malloc(n + 512);
        int h = sprintf(text, "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
                              "\"k\", \"ts\": 10, \"dur\": 5},\n{\"ph\": \"X\", \"cat\": "
                              "\"kernel\", \"name\": \"");
        memset(text + h, 'x', n);
        strcpy(text + h + n, "\", \"ts\": 20, \"dur\": 5}]}");
        write_file(path, text, cases[c].gz, 0);
        free(text);
        colo_kineto_opts_t o = {NULL, 0, "a100-40gb", NULL, 0};
        colo_error_t err;
        colo_error_clear(&err);
        colo_trace_t *t = NULL;
        cr_expect_eq(colo_import_kineto(path, &o, &t, &err), COLO_EPARSE);
        cr_expect_null(t);
        char msg[2048];
        colo_error_format(&err, msg, sizeof msg);
        cr_expect(strstr(msg, cases[c].want), "got '%s', wanted '%s'", msg, cases[c].want);
        unlink(path);
    }
}
