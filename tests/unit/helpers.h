/* helpers.h: shared set-up for the Criterion tests. */
#ifndef COLO_TEST_HELPERS_H
#define COLO_TEST_HELPERS_H

#include "llm_profile.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"
#include "timeline.h"

#include <jansson.h>
#include <stddef.h>

/* GSL error handler off, Jansson through colo_malloc: as the CLI does. */
void test_init(void);

/* Absolute path of a file under the source tree (static buffer, one of four in rotation). */
const char *src_path(const char *rel);

/* Opens a GPU description by name; the test fails if it cannot. Free with colo_gpu_free. */
colo_gpu_t *open_gpu(const char *name);

/* Loads an LLM profile under the source tree; the test fails if it cannot. Free with
 * colo_llm_profile_free. */
colo_llm_profile_t *load_llm_profile(const char *rel);

/* Reads a whole small text file (static buffer), trailing whitespace removed. */
const char *read_text(const char *path);

/* Loads a scenario file with overrides that must be refused: the test fails if it loads; the
 * error as the CLI prints it (a static buffer). */
const char *scenario_load_error(const char *path, const char *const *sets, size_t n);

/* A finished run of a scenario file with overrides; everything freed by run_free. */
typedef struct test_run {
    colo_scenario_t *sc;
    colo_sim_t *sim;
    json_t *results;
    json_t *timeline; /* run_scenario_tl: the parsed timeline */
} test_run_t;

test_run_t run_scenario(const char *path, const char *const *sets, size_t n);
/* The same with a timeline of the window [a, b) seconds, parsed into r.timeline. */
test_run_t run_scenario_tl(const char *path, const char *const *sets, size_t n, double a,
                           double b);
void run_free(test_run_t *r);

/* Tenant i's object in a results document. */
json_t *result_tenant(const test_run_t *r, size_t i);
double result_num(json_t *obj, const char *key);

/* Calls fn(dir, stem) for every file DIR/STEM.EXT, sorted by name; returns how many. */
size_t for_each_file(const char *dir, const char *ext,
                     void (*fn)(const char *dir, const char *stem));

/* Loads DIR/STEM.EXT with load (run in DIR, so the message names the file as the .err expects)
 * and checks that it fails with exactly the message in DIR/STEM.err. load returns 0 or a
 * negative code and frees whatever it loaded. */
typedef int (*golden_loader)(const char *file, colo_error_t *err);
void expect_golden_error(const char *dir, const char *stem, const char *ext, golden_loader load);

#endif
