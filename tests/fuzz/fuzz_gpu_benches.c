/* fuzz_gpu_benches.c: a gpu-benches result file (colosim calibrate import gpu-benches). The
 * first byte picks the benchmark (gpu-stream, gpu-l2-cache, ...; its value modulo their number),
 * the rest is the file, imported for the A100-40GB's datasheet values. */
#include "alloc.h"
#include "fuzz.h"
#include "gpu.h"
#include "gpu_catalog.h"
#include "gpu_benches.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static colo_gpu_t *gpu;
static char dir[8192];

void fuzz_init(void)
{
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_gpu_open("a100-40gb", NULL, "none", &gpu, "fuzz", 0, NULL, &err) != 0) {
        fprintf(stderr, "fuzz_gpu_benches: %s\n", err.text);
        exit(1);
    }
    snprintf(dir, sizeof dir, "%s/gb", fuzz_dir());
    mkdir(dir, 0700);
    for (int k = 0; k < COLO_GB_KIND_N; k++) {
        char sub[8400];
        snprintf(sub, sizeof sub, "%s/%s", dir, colo_gb_kind_dir((colo_gb_kind_t)k));
        mkdir(sub, 0700);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    colo_gb_kind_t k = (colo_gb_kind_t)(data[0] % COLO_GB_KIND_N);
    char name[256];
    snprintf(name, sizeof name, "gb/%s/x.txt", colo_gb_kind_dir(k));
    const char *path = fuzz_file(data + 1, size - 1, name);
    colo_error_t err;
    colo_error_clear(&err);
    colo_gb_options_t o = {.dir = dir, .stem = "x", .commit = "fuzz"};
    json_t *doc = NULL;
    if (colo_gb_import(&o, gpu, &doc, &err) == 0) json_decref(doc);
    unlink(path);
    return 0;
}
