/* fuzz_calibration.c: a calibration file (colosim-calibrate's JSON) applied to the H100's
 * description, opened afresh for each input (an applied file changes it). */
#include "calibration.h"
#include "fuzz.h"
#include "gpu.h"
#include "gpu_catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "h100-sxm.json");
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *g = NULL;
    if (colo_gpu_open("h100-sxm", NULL, "none", &g, "fuzz", 0, NULL, &err) != 0) return 0;
    colo_calibration_apply(g, path, &err);
    colo_gpu_free(g);
    return 0;
}
