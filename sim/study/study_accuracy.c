/* study_accuracy.c: the accuracy a study's answers carry (accuracy.h): what its points run, read
 * from their scenarios without simulating them. */
#include "accuracy.h"
#include "alloc.h"
#include "study_internal.h"

/* Adds point i's scenario (with extra, a search's key at its top, after its overrides) to *f;
 * a point that cannot be set up, or a cluster, adds nothing. */
static void add_point(const colo_study_t *s, size_t i, const char *extra, colo_accuracy_facts_t *f)
{
    char **sets;
    size_t n;
    if (colo_study_point(s, i, &sets, &n)) return;
    size_t used = n; /* colo_study_point leaves room for one more, freed with the rest */
    if (extra && !(sets[used++] = colo_strdup(extra))) {
        colo_study_point_free(sets, n);
        return;
    }
    colo_scenario_t *sc = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_scenario_load(s->scenario, (const char *const *)sets, used, &sc, &err) == 0)
        colo_accuracy_add(f, sc);
    colo_scenario_free(sc);
    colo_study_point_free(sets, n);
}

json_t *colo_study_accuracy(const colo_study_t *s)
{
    colo_accuracy_facts_t f = {0};
    char kv[512], *extra = NULL;
    if (s->search.given) { /* at its top: the most copies, the heaviest load */
        colo_study_search_kv(s, s->search.hi, kv, sizeof kv);
        extra = kv;
    }
    size_t total = colo_study_n_points(s);
    if (!s->grid) {
        for (size_t i = 0; i < total && i < 256; i++)
            add_point(s, i, extra, &f);
    } else { /* every value of each axis, the others at their first: not their product */
        add_point(s, 0, extra, &f);
        size_t stride = 1;
        for (size_t a = s->n_axes; a-- > 0;) {
            for (size_t v = 1; v < s->axes[a].n; v++)
                add_point(s, v * stride, extra, &f);
            stride *= s->axes[a].n;
        }
    }
    return colo_accuracy_find(&f);
}
