/* fuzz_results.c: results files as `colosim compare` reads them (a run's, or a
 * --compare-modes file's), then its table and JSON made from two of them. */
#include "compare.h"
#include "fuzz.h"

#include <stdio.h>

static FILE *devnull;

void fuzz_init(void)
{
    devnull = fopen("/dev/null", "w");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "results.json");
    colo_compare_t c = {0};
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_compare_load(&c, path, &err) == 0 && colo_compare_load(&c, path, &err) == 0) {
        colo_compare_print(&c, devnull);
        json_decref(colo_compare_json(&c));
    }
    colo_compare_fini(&c);
    return 0;
}
