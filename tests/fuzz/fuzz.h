/* fuzz.h: what every fuzz target shares. A target is one LLVMFuzzerTestOneInput over one of
 * colosim's readers; it is linked either with libFuzzer (a fuzzing build, COLOSIM_FUZZ) or with
 * replay.c, which runs saved inputs through it (the regression tests of an ordinary build). */
#ifndef COLO_FUZZ_H
#define COLO_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The readers take paths: writes the input to NAME in this process's scratch folder (made on
 * first use, removed at exit) and returns its path. NAME's extension matters to some readers
 * (".jsonl", ".gz"). A scratch folder that cannot be written ends the process. */
const char *fuzz_file(const uint8_t *data, size_t size, const char *name);

/* The scratch folder: for scenarios, it holds the project's fixtures and traces as links, so
 * the files a fuzzed scenario names resolve as they do from tests/fixtures. */
const char *fuzz_dir(void);

/* Absolute path of a file under the source tree (static buffer, one of four in rotation). */
const char *fuzz_src(const char *rel);

/* A target's own set-up, if it defines one: LLVMFuzzerInitialize (fuzz_common.c) calls it
 * after turning GSL's abort handler off and routing Jansson through colo_malloc. */
void fuzz_init(void) __attribute__((weak));

#endif
