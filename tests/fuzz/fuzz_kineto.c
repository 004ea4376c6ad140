/* fuzz_kineto.c: the PyTorch profiler (Kineto) Chrome-trace importer, with and without an
 * annotation that selects one iteration (odd-sized inputs take the second, with host gaps capped
 * at 50 us), its report (ranges, what it holds), and the list of its ranges. */
#include "fuzz.h"
#include "import_kineto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_kineto_opts_t o = {NULL, 0, NULL, NULL, 0};
    colo_gap_policy_t gaps = {COLO_GAPS_KEEP, 0};
    if (size % 2) {
        o = (colo_kineto_opts_t){"m", 4, "h100-sxm", "forward", 2};
        gaps = (colo_gap_policy_t){COLO_GAPS_CAP, 50000};
    }
    const char *path = fuzz_file(data, size, "kineto.json");
    colo_error_t err;
    colo_error_clear(&err);
    colo_trace_t *t = NULL;
    colo_kineto_report_t r;
    if (colo_kineto_convert(path, &o, &gaps, &t, &r, &err) == 0) colo_trace_free(t);
    colo_kineto_report_fini(&r);
    colo_error_clear(&err);
    colo_kineto_annotations(path, &r, &err);
    colo_kineto_report_fini(&r);
    return 0;
}
