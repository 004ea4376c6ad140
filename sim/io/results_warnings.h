/* results_warnings.h: the traps a run's figures hide, as the results' "warnings" list
 * (docs/results.md, "Overload and short logs"). */
#ifndef COLO_RESULTS_WARNINGS_H
#define COLO_RESULTS_WARNINGS_H

#include "serving.h"

#include <jansson.h>
#include <stdio.h>

/* The warnings of a finished run: a list of {tenant, kind ("overloaded", "arrivals_ended",
 * "loadgen_stopped"), at_s (null: none), message}. A new reference, NULL when out of memory. */
json_t *colo_results_warnings(const colo_sim_t *sim);

/* Prints the results' warnings, one line each after a blank line; nothing when none. */
void colo_results_print_warnings(json_t *results, FILE *f);

#endif
