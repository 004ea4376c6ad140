/* fuzz_kineto.c: the PyTorch profiler (Kineto) Chrome-trace importer, with and without an
 * annotation that selects one iteration (odd-sized inputs take the second). */
#include "fuzz.h"
#include "import_kineto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    if (size % 2) o = (colo_kineto_opts_t){"m", 4, "h100-sxm", "forward", 2};
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    if (colo_import_kineto(fuzz_file(data, size, "kineto.json"), &o, &t, &err) == 0)
        colo_trace_free(t);
    return 0;
}
