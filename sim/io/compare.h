/* compare.h: several results files side by side, with relative differences to the first
 * (`colosim compare`): policy against policy, simulation against live hardware. */
#ifndef COLO_COMPARE_H
#define COLO_COMPARE_H

#include "errors.h"

#include <jansson.h>
#include <stdio.h>

/* One column: a run's results and its label. */
typedef struct colo_compare_col {
    char *label;
    json_t *results;
} colo_compare_col_t;

typedef struct colo_compare {
    colo_compare_col_t *col;
    size_t n, cap;
} colo_compare_t;

/* Adds the runs in results file path: one column for a `colosim run -o` file (labelled by its
 * path), one per mechanism for a `run --compare-modes` file (PATH:MODE). Errors name the file
 * and line (bad JSON) or the key (not colosim results). 0 or a negative code. */
int colo_compare_load(colo_compare_t *c, const char *path, colo_error_t *err);
void colo_compare_fini(colo_compare_t *c);

/* The table: per tenant (matched by name; '-' where a run lacks it) and for the GPU, each
 * metric of each run, and its difference to the first run's: relative (%) for times and
 * rates, in percentage points for fractions. */
void colo_compare_print(const colo_compare_t *c, FILE *f);

/* The same as JSON: {"runs": [labels], "tenants": {name: {metric: [values]}}, "gpu": {...}}. */
json_t *colo_compare_json(const colo_compare_t *c);

#endif
