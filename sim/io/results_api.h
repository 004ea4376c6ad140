/* results_api.h: a run's results document as JSON text, for programs that cannot hold a json_t:
 * the Python binding (python/colosim) over libcolosim.so (results_api.c; also in colosim.h). */
#ifndef COLO_RESULTS_API_H
#define COLO_RESULTS_API_H

#include <stddef.h>

typedef struct colo_sim colo_sim_t;

/* The whole results document of a finished run (docs/results.md) as compact JSON text, with
 * the numbers `colosim run -o` writes (10 significant digits) and its keys in the same order;
 * overrides (n, may be NULL) are recorded in it. A new string (colo_results_text_free), or NULL
 * when out of memory. O(the document's size). */
char *colo_results_json_text(const colo_sim_t *sim, const char *const *overrides, size_t n);

/* Frees a string from colo_results_json_text (NULL: nothing). */
void colo_results_text_free(char *text);

#endif
