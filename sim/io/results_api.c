/* results_api.c: a run's results document as JSON text (results_api.h), so that a binding with
 * no Jansson of its own (Python's ctypes) can take the results colosim run -o writes. */
#include "results_api.h"
#include "results.h"

#include <jansson.h>

char *colo_results_json_text(const colo_sim_t *sim, const char *const *overrides, size_t n)
{
    json_t *doc = colo_results_json(sim, overrides, n);
    if (!doc) return NULL;
    char *text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(doc);
    return text;
}

void colo_results_text_free(char *text)
{
    /* json_dumps allocated it with Jansson's functions (malloc unless a program set others) */
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    if (text) f(text);
}
