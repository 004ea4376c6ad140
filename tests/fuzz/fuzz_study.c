/* fuzz_study.c: a study file (sweep or search over a scenario); the scenarios it names resolve
 * among the fixtures. A study that loads is then checked as sweep and search check it before
 * running (colo_study_check: each point's scenario read, none simulated), for up to 64 points. */
#include "fuzz.h"
#include "study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_study_t *s = NULL;
    if (colo_study_load(fuzz_file(data, size, "study.cfg"), &s, &err) == 0) {
        if (colo_study_n_points(s) <= 64) {
            colo_error_clear(&err);
            colo_study_check(s, s->search.given, &err);
        }
        colo_study_free(s);
    }
    return 0;
}
