/* fuzz_cluster.c: the cluster reader (the `cluster` section, per-tenant replicas and the
 * sharing it allows) and the one-GPU scenario it makes for each GPU model, as `colosim check`
 * reads a cluster file; nothing is placed or simulated (that runs simulations). */
#include "cluster.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "fuzz.cfg");
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_cluster_detect(path, NULL, 0, &err) == 1)
        colo_cluster_check(path, NULL, 0, NULL, &err);
    return 0;
}
