/* fuzz_trace.c: colosim's own trace format (JSON). */
#include "fuzz.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    if (colo_trace_load(fuzz_file(data, size, "trace.json"), &t, &err) == 0) colo_trace_free(t);
    return 0;
}
