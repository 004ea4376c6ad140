/* fuzz_scenario.c: the scenario reader (libconfig text, overrides, tenants, traces it names,
 * GPU, layout, faults, scheduler) and the simulation set-up that checks what it read. */
#include "fuzz.h"
#include "serving.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, "fuzz.cfg");
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc = NULL;
    colo_sim_t *sim = NULL;
    if (colo_scenario_load(path, NULL, 0, &sc, &err) == 0) colo_sim_new(sc, &sim, &err);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return 0;
}
