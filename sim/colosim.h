/* colosim.h: the one header a program that embeds colosim includes (docs/architecture.md,
 * "Embedding"). It loads a scenario, runs it, reads the results (per tenant, or the whole
 * results document as JSON), and registers the two kinds of plug-in: a kernel scheduler
 * (colo_sched_ops_t, scheduler.h) and an arrival process (colo_arrival_ops_t, arrival.h).
 * Everything else in the tree is internal and may change between versions.
 *
 *   colo_scenario_t *sc = NULL;  colo_sim_t *sim = NULL;  colo_error_t err;
 *   colo_error_clear(&err);
 *   if (colo_scenario_load("my.cfg", NULL, 0, &sc, &err) || colo_sim_new(sc, &sim, &err) ||
 *       colo_sim_run(sim, &err)) { char m[1024]; colo_error_format(&err, m, sizeof m); ... }
 *   long i = colo_sim_tenant_find(sim, "resnet50");   (-1: no such tenant)
 *   colo_run_stats_t st;
 *   if (i >= 0 && colo_sim_tenant_stats(sim, (size_t)i, &st) == 0) printf("%.3f\n", st.p99_ms);
 *   colo_sim_free(sim);  colo_scenario_free(sc);   (both take NULL)
 *
 * Installed (docs/embedding.md): #include <colosim/colosim.h> with pkg-config colosim, or
 * find_package(colosim) and colosim::colosim; in the tree, #include "colosim.h" and link
 * colosim_core and its dependencies (GSL, libconfig, Jansson, zlib, SQLite). The headers below
 * are included by name relative to this one, so that only PREFIX/include is on the path.
 * The scenarios and traces colosim ships are found by name with colo_datadir_find. Python:
 * python/colosim (docs/python.md), over colo_results_json_text.
 * Errors: functions return 0 or a negative COLO_E* code and fill a colo_error_t (file, line,
 * key, message; colo_error_format prints it as the command line does). */
#ifndef COLOSIM_H
#define COLOSIM_H

#include "arrival.h"   /* colo_arrival_ops_t, colo_arrival_register; cfg.h for a process's keys */
#include "errors.h"    /* colo_error_t, COLO_E*, colo_strerror, colo_error_format */
#include "run_stats.h" /* colo_run_stats_t, colo_sim_tenant_stats, ... */
#include "router.h"    /* colo_router_ops_t, colo_router_register: routing policies */
#include "plugin.h"    /* colo_plugin_load, colosim_plugin_init: plug-ins by name */
#include "scheduler.h" /* colo_sched_ops_t, colo_sched_register */
#include "simtime.h"   /* colo_time_t, COLO_TO_MS, ... */

#include <jansson.h>
#include <stddef.h>

typedef struct colo_scenario colo_scenario_t; /* a loaded scenario (read-only while run) */
typedef struct colo_sim colo_sim_t;           /* one run of a scenario */

/* Loads, overrides ("key.path=value", as the command line's --set) and validates a scenario
 * file, with everything it refers to (GPU, traces). *out is new (colo_scenario_free). A
 * scenario with a cluster section is refused: clusters run from the command line. */
int colo_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
                       colo_scenario_t **out, colo_error_t *err);
/* Frees a scenario (NULL: nothing). Free its runs first. */
void colo_scenario_free(colo_scenario_t *sc);

/* A run of sc (borrowed; must outlive the run). *out is new (colo_sim_free). */
int colo_sim_new(const colo_scenario_t *sc, colo_sim_t **out, colo_error_t *err);
/* Runs it to the end. 0 or a negative code with err set. */
int colo_sim_run(colo_sim_t *sim, colo_error_t *err);
/* Frees a run (NULL: nothing). */
void colo_sim_free(colo_sim_t *sim);

/* The whole results document of a run (docs/results.md), as `colosim run -o` writes it; NULL
 * when out of memory. overrides are recorded in it (may be NULL). New reference. */
json_t *colo_results_json(const colo_sim_t *sim, const char *const *overrides, size_t n);
/* Writes results to path atomically ("-": standard output). 0 or a negative code. */
int colo_results_write(json_t *results, const char *path, colo_error_t *err);
/* The same document as compact JSON text, with the numbers colosim run -o writes: a new
 * string (colo_results_text_free), or NULL when out of memory. For bindings without Jansson. */
char *colo_results_json_text(const colo_sim_t *sim, const char *const *overrides, size_t n);
/* Frees a string from colo_results_json_text (NULL: nothing). */
void colo_results_text_free(char *text);

/* Finds a scenario or trace colosim ships by name (datadir.h): a name that is absolute or exists
 * relative to the working directory is itself; otherwise, without its leading "./" and "../",
 * it is looked for as D/NAME, then D/SUB/NAME (sub: "scenarios", "traces", or NULL) in each data
 * folder D: $COLOSIM_DATA_DIR, the installed share/colosim beside libcolosim.so (wherever the
 * prefix was moved), the source tree, the configure-time prefix. The path goes into buf (the
 * name itself when nothing is found): 0 or COLO_ENOENT.
 *   char p[4096];  colo_datadir_find("resnet50_bert_timeslice.cfg", "scenarios", p, sizeof p);
 * A scenario found so finds its traces too (they are named relative to it). */
int colo_datadir_find(const char *name, const char *sub, char *buf, size_t n);

#endif
