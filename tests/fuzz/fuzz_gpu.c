/* fuzz_gpu.c: a GPU description (models/gpus/NAME.cfg). */
#include "fuzz.h"
#include "gpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *g = NULL;
    if (colo_gpu_load(fuzz_file(data, size, "gpu.cfg"), &g, &err) == 0) colo_gpu_free(g);
    return 0;
}
