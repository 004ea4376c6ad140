/* fleet.h: several GPUs simulated in one event order (docs/architecture.md, "The fleet"). Each
 * GPU is its own run (colo_sim_t: its hardware model, its tenants under its mechanism), and the
 * fleet takes their events in one order of time, so that a router deciding at time t sees every
 * replica's state at t, on whichever GPU it runs. Runs share nothing but routed requests: a GPU
 * whose tenants no router feeds runs exactly as it would alone. */
#ifndef COLO_FLEET_H
#define COLO_FLEET_H

#include "errors.h"
#include "scenario.h"
#include "serving.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A cluster run's timelines (colosim run --timeline on a cluster file): one file per simulated
 * GPU, PATH with ".gpuN" before its ".json" or ".json.gz", recording [start, end) (window false:
 * the second after warmup). */
typedef struct colo_fleet_timeline {
    const char *path;
    colo_time_t start, end;
    bool window;
} colo_fleet_timeline_t;

/* The file of GPU gi's timeline into buf. */
void colo_fleet_timeline_name(const char *path, size_t gi, char *buf, size_t n);

/* Runs sims[0 .. n) (new, routers attached: router.h colo_router_attach) to their ends in one
 * event order: events by time, and at one time by the index of their run. 0, or the first run's
 * error (err set); every run is left finished or failed, for the caller to free. */
int colo_fleet_run(colo_sim_t *const *sims, size_t n, colo_error_t *err);

/* Simulates a loaded one-GPU scenario into *out (results JSON, sets as its overrides). */
int colo_simulate_scenario(const colo_scenario_t *sc, const char *const *sets, size_t n,
                           json_t **out, colo_error_t *err);

#endif
