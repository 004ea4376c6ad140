/* import_vidur.h: Vidur's per-operator LLM profiles (github.com/microsoft/vidur,
 * data/profiling/compute/GPU/MODEL/mlp.csv and attention.csv, MIT) to a colosim LLM profile
 * (docs/llm_profiles.md): the model's dimensions and, per token count, the median GPU time of
 * each operator of one transformer layer, with where it came from. */
#ifndef COLO_IMPORT_VIDUR_H
#define COLO_IMPORT_VIDUR_H

#include "errors.h"
#include "llm_profile.h" /* COLO_LLM_PROFILE_VERSION */

#include <jansson.h>

#define COLO_LLM_PROFILE_FORMAT "colosim-llm-profile"

typedef struct colo_vidur_opts {
    const char *gpu;     /* colosim name of the GPU it was measured on (required) */
    const char *model;   /* the model's name; NULL: the name the built-in table gives its dims */
    int layers;          /* transformer layers; 0: from the built-in table (mlp.csv has none) */
    int tensor_parallel; /* the rows of this degree; 0: 1 */
    const char *repository, *commit, *source; /* provenance, recorded as given (may be NULL) */
} colo_vidur_opts_t;

/* Reads mlp.csv (and attention.csv when attention is not NULL) into a new profile document
 * *out. Rows of other tensor-parallel degrees are skipped; the model's columns must be the
 * same on every kept row (and in attention.csv); a token count given twice (Vidur's grid
 * repeats 2048 and 4096) keeps the mean of its medians. Errors: FILE:LINE: column: what.
 * O(rows). */
int colo_import_vidur(const char *mlp, const char *attention, const colo_vidur_opts_t *o,
                      json_t **out, colo_error_t *err);

#endif
