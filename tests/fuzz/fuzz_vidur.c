/* fuzz_vidur.c: Vidur's mlp.csv to an LLM profile (colo_import_vidur). */
#include "fuzz.h"
#include "import_vidur.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    /* sometimes another tensor parallelism, or a model given by hand */
    colo_vidur_opts_t o = {.gpu = "a100-80gb", .tensor_parallel = size % 5 == 0 ? 2 : 1};
    if (size % 3 == 0) o.model = "m", o.layers = 2;
    json_t *doc = NULL;
    if (colo_import_vidur(fuzz_file(data, size, "mlp.csv"), NULL, &o, &doc, &err) == 0)
        json_decref(doc);
    return 0;
}
