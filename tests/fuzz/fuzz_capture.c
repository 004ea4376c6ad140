/* fuzz_capture.c: colosim-capture's record files (docs/capture.md), all GPU work or one trace
 * per NVTX range (odd-sized inputs). */
#include "fuzz.h"
#include "import_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    if (size % 2) o = (colo_kineto_opts_t){"m", 2, NULL, "infer", 0};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t **ts = NULL;
    size_t n = 0;
    if (colo_import_capture(fuzz_file(data, size, "capture.txt"), &o, &ts, &n, &err) == 0)
        colo_capture_free(ts, n);
    return 0;
}
