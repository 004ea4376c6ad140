/* fuzz_orion.c: the Orion per-kernel profile CSV importer. */
#include "fuzz.h"
#include "import_orion.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    if (colo_import_orion(fuzz_file(data, size, "m_4_fwd.csv"), "m", 4, "v100-sxm2", &t, &err) == 0)
        colo_trace_free(t);
    return 0;
}
