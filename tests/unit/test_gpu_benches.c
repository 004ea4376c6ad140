/* test_gpu_benches.c: calibration from published gpu-benches results reproduces values checked
 * by hand from each kind of result file, matches the committed calibration files, and a
 * malformed file gets FILE:LINE: what. */
#include "calibration.h"
#include "gpu_benches.h"
#include "gpu_catalog.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(gpu_benches, .init = test_init);

static const char *benches(void)
{
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s", src_path("../shared/data/gpu_benches"));
    struct stat st;
    if (stat(dir, &st) != 0) cr_skip_test("shared data not present: %s", dir);
    return dir;
}

static json_t *import(const char *dir, const char *gpu, const char *stem, colo_error_t *err)
{
    colo_gpu_t *g = NULL;
    colo_error_clear(err);
    cr_assert_eq(colo_gpu_open(gpu, NULL, "none", &g, "t", 0, NULL, err), 0, "%s", err->text);
    colo_gb_options_t o = {.dir = dir, .stem = stem, .commit = "abc"};
    json_t *doc = NULL;
    int rc = colo_gb_import(&o, g, &doc, err);
    colo_gpu_free(g);
    return rc ? NULL : doc;
}

static double param(json_t *doc, const char *key)
{
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(doc, "parameters"), i, p)
    {
        if (strcmp(json_string_value(json_object_get(p, "key")), key) == 0)
            return json_number_value(json_object_get(p, "value"));
    }
    cr_assert_fail("no parameter %s", key);
    return NAN;
}

static double meas(json_t *doc, const char *name, const char *key)
{
    json_t *v = json_object_get(json_object_get(json_object_get(doc, "measurements"), name), key);
    cr_assert(json_is_number(v), "no measurements.%s.%s", name, key);
    return json_number_value(v);
}

/* Every value below was worked out by hand (awk over the file) before the importer existed. */
Test(gpu_benches, reproduces_a_hand_checked_value_from_each_kind_of_file)
{
    const char *dir = benches();
    colo_error_t err;
    json_t *a = import(dir, "a100-80gb", NULL, &err);
    cr_assert_not_null(a, "%s", err.text);
    /* gpu-stream: the best of scale and triad; a line through the origin of the scale column
     * over the 6 rows below half its peak, at 2048 threads, over 108 SMs */
    cr_expect_float_eq(param(a, "memory.achievable_gbps"), 1759.0, 1e-9);
    cr_expect_float_eq(param(a, "memory.per_sm_gbps"), 40.5372, 1e-4);
    /* gpu-l2-cache: median of the 26 footprints up to 20 MiB; of the 36 from 160 MiB (1734.5
     * and 1734.9 in the middle); the knee half way between them, between 33792 kB (3621.8 GB/s)
     * and 36864 kB (3004.0 GB/s) */
    cr_expect_float_eq(param(a, "l2.bandwidth_gbps"), 5410.85, 1e-6);
    cr_expect_float_eq(meas(a, "dram_read_many_loads", "gbps"), 1734.7, 1e-9);
    double mid = (5410.85 + 1734.7) / 2;
    double knee_kb = 33792 + (3621.8 - mid) / (3621.8 - 3004.0) * 3072;
    cr_expect_float_eq(param(a, "l2.effective_mib"), knee_kb / 1024, 1e-9);
    /* gpu-cache: median of the 18 buffers up to 64 kB */
    cr_expect_float_eq(meas(a, "l1", "gbps"), 19034.05, 1e-6);
    /* gpu-latency: 36 cycles at 1410 MHz for buffers up to 16 kB */
    cr_expect_float_eq(meas(a, "latency", "l1_cycles"), 36.0, 1e-9);
    cr_expect_float_eq(meas(a, "latency", "l1_ns"), 36.0 / 1410 * 1e3, 1e-9);
    /* gpu-small-kernels: 65536 B at 25 GB/s and the next 9 rows, median 2.6636 us */
    cr_expect_float_eq(param(a, "launch.host_us"), (2.6622 + 2.6650) / 2, 2e-4);
    /* gpu-roofline: median of 8 devices' best GFLOP/s (19142, 19170 in the middle) / 108 SMs */
    cr_expect_float_eq(meas(a, "fp32_fma", "fp32_gflops_per_sm"), (19142.0 + 19170.0) / 2 / 108,
                       1e-9);
    /* gpu-strides: float, stride 1 */
    cr_expect_float_eq(meas(a, "l1_loads", "float_stride1_bytes_per_cycle_per_sm"), 126.0, 0);
    json_decref(a);

    json_t *v = import(dir, "v100-sxm2", NULL, &err);
    cr_assert_not_null(v, "%s", err.text);
    /* the older 2-D gpu-small-kernels form: 16 (d-2)^2 bytes, 15 rows up to twice the first */
    cr_expect_float_eq(param(v, "launch.host_us"), 2.01877, 1e-5);
    /* no gpu-l2-cache file: L2 from gpu-cache, median of the 12 buffers from 408 kB (twice the
     * 204 kB where L1 gave out) to 3 MiB: 2438.2 and 2439.6 in the middle */
    cr_expect_float_eq(param(v, "l2.bandwidth_gbps"), (2438.2 + 2439.6) / 2, 1e-9);
    json_decref(v);
}

/* The calibration files in models/calibrated are this importer's output on the shared data. */
Test(gpu_benches, the_committed_files_are_a_fresh_import)
{
    const char *dir = benches();
    static const char *const gpus[] = {"v100-sxm2", "a100-40gb", "a100-80gb", "h100-pcie", "h200"};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        colo_error_t err;
        json_t *fresh = import(dir, gpus[i], NULL, &err);
        cr_assert_not_null(fresh, "%s", err.text);
        char path[256];
        snprintf(path, sizeof path, "models/calibrated/%s.json", gpus[i]);
        json_t *committed = json_load_file(src_path(path), 0, NULL);
        cr_assert_not_null(committed, "%s", path);
        json_t *a = json_object_get(fresh, "parameters"), *b = json_object_get(committed, "parameters");
        cr_assert_eq(json_array_size(a), json_array_size(b), "%s", gpus[i]);
        for (size_t k = 0; k < json_array_size(a); k++) {
            json_t *x = json_array_get(a, k), *y = json_array_get(b, k);
            cr_expect_str_eq(json_string_value(json_object_get(x, "key")),
                             json_string_value(json_object_get(y, "key")));
            double vx = json_number_value(json_object_get(x, "value"));
            double vy = json_number_value(json_object_get(y, "value"));
            cr_expect(fabs(vx - vy) <= 1e-5 * fabs(vx), "%s %s: %g, committed %g", gpus[i],
                      json_string_value(json_object_get(x, "key")), vx, vy);
            cr_expect_str_eq(
                json_string_value(json_object_get(json_object_get(x, "source"), "lines")),
                json_string_value(json_object_get(json_object_get(y, "source"), "lines")));
        }
        json_decref(fresh);
        json_decref(committed);
    }
}

/* ---- malformed files: no shared data needed ---- */

static char tmp[64];

static void put(const char *rel, const char *text)
{
    char path[256], cmd[512];
    snprintf(path, sizeof path, "%s/%s", tmp, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname %s)\"", path);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void fresh_dir(void)
{
    snprintf(tmp, sizeof tmp, "/tmp/colosim-gb-XXXXXX");
    cr_assert(mkdtemp(tmp));
}

static void clean(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -r %s", tmp);
    cr_assert_eq(system(cmd), 0);
}

static void expect_error(const char *gpu, const char *want_file, const char *want)
{
    colo_error_t err;
    json_t *doc = import(tmp, gpu, "x", &err);
    cr_assert_null(doc, "accepted a malformed file (%s)", want);
    char got[1024], file[512];
    colo_error_format(&err, got, sizeof got);
    snprintf(file, sizeof file, "%s/%s", tmp, want_file);
    cr_expect(strncmp(got, file, strlen(file)) == 0, "names the file %s: %s", want_file, got);
    cr_expect(strstr(got, want), "got '%s', expected '%s'", got, want);
}

static const char stream_head[] =
    "blockSize   threads       %occ  |                init       read       scale     triad       3pt        5pt\n";

/* Rows of gpu-stream for a GPU of sms SMs whose bandwidth grows with the threads up to 1400. */
static void put_stream(int sms, const char *extra)
{
    char text[8192];
    size_t used = (size_t)snprintf(text, sizeof text, "%s", stream_head);
    for (int bs = 32; bs <= 1024; bs += 32) {
        double bw = 3 * bs < 1440 ? 3 * bs : 1440;
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "%9d %9d %6.1f %%  |  GB/s: %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f\n",
                                 bs, sms * bs, bs / 10.24, bw, bw, bw, bw, bw, bw);
    }
    snprintf(text + used, sizeof text - used, "%s", extra);
    put("gpu-stream/x.txt", text);
}

Test(gpu_benches, a_well_formed_stream_file_gives_dram_and_per_sm_rates)
{
    fresh_dir();
    put_stream(108, "");
    colo_error_t err;
    json_t *doc = import(tmp, "a100-40gb", "x", &err);
    cr_assert_not_null(doc, "%s", err.text);
    cr_expect_float_eq(param(doc, "memory.achievable_gbps"), 1440, 0);
    /* 3 GB/s per thread of block size, two blocks per SM: 1.5 per resident thread */
    cr_expect_float_eq(param(doc, "memory.per_sm_gbps"), 1.5 * 2048 / 108, 1e-9);
    json_t *src = json_object_get(json_array_get(json_object_get(doc, "parameters"), 0), "source");
    cr_expect_str_eq(json_string_value(json_object_get(src, "path")), "gpu-stream/x.txt");
    cr_expect_str_eq(json_string_value(json_object_get(src, "commit")), "abc");
    json_decref(doc);
    clean();
}

Test(gpu_benches, malformed_files_get_file_line_and_what)
{
    fresh_dir();
    put_stream(108, "1056 abc 3 % | GB/s: 1 2 3 4 5 6\n");
    expect_error("a100-40gb", "gpu-stream/x.txt:34", "'abc' is not a number");
    put_stream(108, "1056 110592 3 % | GB/s: 1 2 3\n");
    expect_error("a100-40gb", "gpu-stream/x.txt:34", "expected 9 values, found 6");
    put_stream(132, "");
    expect_error("a100-40gb", "gpu-stream/x.txt:2", "measured on a GPU with 132 SMs");
    /* a thread count far beyond any GPU (found by fuzzing: it overflowed an int) */
    put_stream(108, "32 1e45 3 % | GB/s: 1 2 3 4 5 6\n");
    expect_error("a100-40gb", "gpu-stream/x.txt:34", "is not the SM count times blockSize");
    put_stream(108, "4096 1000 3 % | GB/s: 1 2 3 4 5 6\n");
    expect_error("a100-40gb", "gpu-stream/x.txt:34", "blockSize 4096 is not 1 to 1024 threads");
    put("gpu-stream/x.txt", "data set   exec time\n");
    expect_error("a100-40gb", "gpu-stream/x.txt:1", "not a gpu-stream result");
    put("gpu-stream/x.txt", stream_head);
    expect_error("a100-40gb", "gpu-stream/x.txt:1", "no result rows");
    put("gpu-stream/x.txt", "");
    expect_error("a100-40gb", "gpu-stream/x.txt", "no result rows");
    unlink(strcat(strcpy((char[256]){0}, tmp), "/gpu-stream/x.txt"));
    /* gpu-l2-cache: a footprint that shrinks; bandwidth that never falls */
    put("gpu-l2-cache/x.txt", "     data set   exec time     spread       Eff. bw\n"
                              "  512 kB  2048 kB  10ms  0.1%  5000 GB/s\n"
                              "  512 kB  1024 kB  10ms  0.1%  5000 GB/s\n");
    expect_error("a100-40gb", "gpu-l2-cache/x.txt:3", "footprints must grow");
    char l2[4096];
    size_t used = (size_t)snprintf(l2, sizeof l2, "     data set   exec time     spread       Eff. bw\n");
    for (int kb = 1024; kb <= 256 * 1024 * 4; kb *= 2)
        used += (size_t)snprintf(l2 + used, sizeof l2 - used, "512 kB %d kB 10ms 0.1%% 5000 GB/s\n",
                                 kb);
    put("gpu-l2-cache/x.txt", l2);
    expect_error("a100-40gb", "gpu-l2-cache/x.txt:", "never falls half way");
    unlink(strcat(strcpy((char[256]){0}, tmp), "/gpu-l2-cache/x.txt"));
    /* gpu-latency: too few rows beyond the L2 */
    put("gpu-latency/x.txt", "clock: 1410 1410\n"
                             "1000000 1410 1 25.5 36.0\n1000000 1410 2 25.5 36.0\n"
                             "1000000 1410 4 25.5 36.0\n1000000 1410 2048 150 212\n");
    expect_error("a100-40gb", "gpu-latency/x.txt:", "rows with buffers");
    unlink(strcat(strcpy((char[256]){0}, tmp), "/gpu-latency/x.txt"));
    /* a NUL byte: not a text file */
    put("gpu-small-kernels/x.txt", "4096  64kB  26  26\n");
    char path[256];
    snprintf(path, sizeof path, "%s/gpu-small-kernels/x.txt", tmp);
    FILE *f = fopen(path, "a");
    fputs("4341  67kB  2", f);
    fputc('\0', f);
    fputs("7 27\n", f);
    fclose(f);
    expect_error("a100-40gb", "gpu-small-kernels/x.txt:2", "not a text file");
    unlink(path);
    /* nothing at all */
    colo_error_t err;
    cr_assert_null(import(tmp, "a100-40gb", "x", &err));
    cr_expect(strstr(err.text, "no gpu-benches result file"), "%s", err.text);
    clean();
}

Test(gpu_benches, a_gpu_without_published_results_is_refused_by_name)
{
    colo_error_t err;
    cr_assert_null(import("/nonexistent", "h100-sxm", NULL, &err));
    cr_expect(strstr(err.text, "no results for h100-sxm") || strstr(err.text, "published no results"),
              "%s", err.text);
    cr_expect(strstr(err.text, "h100-pcie"), "lists the GPUs it has: %s", err.text);
}
