/* fuzz_ncu.c: an Nsight Compute CSV merged into a captured trace (colo_trace_merge_ncu). The
 * trace is the capture fixture's first inference, imported afresh for each input (the merge
 * changes it). */
#include "fuzz.h"
#include "import_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *csv = fuzz_file(data, size, "ncu.csv");
    colo_kineto_opts_t o = {NULL, 0, NULL, "infer", 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t **ts = NULL;
    size_t n = 0;
    if (colo_import_capture(fuzz_src("tests/fixtures/capture/two_inferences.txt"), &o, &ts, &n,
                            &err) != 0)
        return 0; /* only when an allocation fails */
    colo_trace_merge_ncu(ts[0], csv, &err);
    colo_capture_free(ts, n);
    return 0;
}
