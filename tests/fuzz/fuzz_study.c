/* fuzz_study.c: a study file (sweep or search over a scenario); the scenarios it names resolve
 * among the fixtures. */
#include "fuzz.h"
#include "study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_study_t *s = NULL;
    if (colo_study_load(fuzz_file(data, size, "study.cfg"), &s, &err) == 0) colo_study_free(s);
    return 0;
}
