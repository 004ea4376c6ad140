/* fuzz_validate.c: a validation case file (colosim validate), read as the suite's only file.
 * The cases are not run: their scenarios are the scenario target's. */
#include "fuzz.h"
#include "validate.h"

#include <stdio.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[8192];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/v", fuzz_dir());
        mkdir(dir, 0700);
    }
    fuzz_file(data, size, "v/t.cfg");
    colo_error_t err;
    colo_error_clear(&err);
    colo_vsuite_t *s = NULL;
    if (colo_vsuite_load(dir, &s, &err) == 0) {
        (void)colo_vsuite_median(s, false, NULL);
        colo_vsuite_free(s);
    }
    return 0;
}
