/* fuzz_orion.c: the Orion per-kernel profile CSV importer. */
#include "fuzz.h"
#include "gpu_catalog.h"
#include "import_orion.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static colo_gpu_t *gpu; /* loaded once: the importer reads its occupancy limits */
    colo_error_t err;
    colo_error_clear(&err);
    if (!gpu && colo_gpu_open("v100-sxm2", NULL, "none", &gpu, "fuzz", 0, NULL, &err) != 0)
        abort();
    colo_trace_t *t = NULL;
    colo_orion_rows_t rows = {size % 7 == 0 ? 2 : 0, 5}; /* sometimes a row range */
    if (colo_import_orion(fuzz_file(data, size, "m_4_fwd.csv"), "m", 4, gpu, &rows, &t, &err) == 0)
        colo_trace_free(t);
    return 0;
}
