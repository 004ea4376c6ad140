/* test_accuracy.c: the accuracy beside a run's answer (issue 41; accuracy.h): what a scenario
 * runs selects the validation record's cases, and the figures are those cases' errors. */
#include "accuracy.h"
#include "helpers.h"
#include "scenario.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(accuracy, .init = test_init);

#define RECORD COLO_TEST_SRC "/validation/recorded.json"

static colo_accuracy_facts_t facts_of(const char *file, const char *const *sets, size_t n)
{
    colo_scenario_t *sc = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(src_path(file), sets, n, &sc, &err), 0, "%s", err.text);
    colo_accuracy_facts_t f = {0};
    colo_accuracy_add(&f, sc);
    colo_scenario_free(sc);
    return f;
}

static json_t *entry(json_t *acc, const char *list, const char *what)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(acc, list), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "what")), what) == 0) return e;
    }
    return NULL;
}

/* The median and worst |error| of the record's validation cases run under MPS, computed here. */
static void mps_cases(double *median, double *worst, size_t *n)
{
    json_t *rec = json_load_file(RECORD, 0, NULL);
    cr_assert_not_null(rec);
    double x[256];
    size_t i, k = 0;
    json_t *c;
    *worst = 0;
    json_array_foreach(json_object_get(rec, "cases"), i, c)
    {
        const char *m = json_string_value(json_object_get(c, "mechanism"));
        if (!m || strcmp(m, "mps") != 0 ||
            strcmp(json_string_value(json_object_get(c, "role")), "validation") != 0)
            continue;
        x[k] = fabs(json_number_value(json_object_get(c, "error")));
        *worst = fmax(*worst, x[k]);
        k++;
    }
    cr_assert_gt(k, 4, "the record's cases carry their mechanism");
    for (size_t a = 1; a < k; a++) /* insertion sort: a handful */
        for (size_t b = a; b > 0 && x[b - 1] > x[b]; b--) {
            double t = x[b];
            x[b] = x[b - 1];
            x[b - 1] = t;
        }
    *median = k % 2 ? x[k / 2] : (x[k / 2 - 1] + x[k / 2]) / 2;
    *n = k;
    json_decref(rec);
}

/* An MPS scenario of V100 traces on an H100 with an LLM tenant: MPS, side by side, the model
 * moved, the GPU; LLM tenants are said to be uncovered. The MPS figures are the record's. */
Test(accuracy, a_run_is_told_the_errors_of_its_kind)
{
    colo_accuracy_facts_t f = facts_of("scenarios/llm_beside_vision_h100.cfg", NULL, 0);
    cr_assert(f.mechanism[COLO_SHARE_MPS] && !f.mechanism[COLO_SHARE_MIG]);
    cr_assert(f.colocated && f.llm);
    colo_error_t err;
    colo_error_clear(&err);
    json_t *acc = colo_accuracy_json(&f, RECORD, &err);
    cr_assert_not_null(acc, "%s", err.text);
    json_t *mps = entry(acc, "applies", "MPS");
    cr_assert_not_null(mps);
    double med, worst;
    size_t n;
    mps_cases(&med, &worst, &n);
    cr_assert_eq(json_integer_value(json_object_get(mps, "cases")), (json_int_t)n);
    cr_assert_float_eq(json_number_value(json_object_get(mps, "median_error")), med, 1e-12);
    cr_assert_float_eq(json_number_value(json_object_get(mps, "worst_error")), worst, 1e-12);
    cr_assert_not_null(entry(acc, "applies", "  tenants side by side under MPS"));
    cr_assert_not_null(entry(acc, "not_covered", "LLM tenants"));
    cr_assert_null(entry(acc, "applies", "MIG"));
    json_decref(acc);
}

/* The same tenants under MIG, and a GPU no published case ran on: MIG's cases, the model moved
 * from the traces' V100, and the GPU uncovered. */
Test(accuracy, an_uncovered_gpu_is_said_to_be)
{
    colo_accuracy_facts_t f = facts_of("scenarios/edge_cameras_orin.cfg", NULL, 0);
    cr_assert_eq(f.n_moved, 1);
    cr_assert_str_eq(f.moved[0][1], "orin-agx");
    colo_error_t err;
    colo_error_clear(&err);
    json_t *acc = colo_accuracy_json(&f, RECORD, &err);
    char what[160];
    snprintf(what, sizeof what, "a model moved between GPUs, any pair (here %s to orin-agx)",
             f.moved[0][0]);
    cr_assert_not_null(entry(acc, "applies", what));
    cr_assert_not_null(entry(acc, "not_covered", "on orin-agx (datasheet values)"));
    json_decref(acc);
}

/* A record that cannot be read is named, with nothing made up. */
Test(accuracy, a_missing_record_is_an_error_naming_it)
{
    colo_accuracy_facts_t f = facts_of("scenarios/resnet50_bert_timeslice.cfg", NULL, 0);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_null(colo_accuracy_json(&f, "/nonexistent/recorded.json", &err));
    cr_assert_not_null(strstr(err.source, "/nonexistent/recorded.json"));
}

/* A run's results give the same facts as its scenario (a cluster's run has only its results). */
Test(accuracy, a_results_document_gives_the_scenarios_facts)
{
    const char *file = "scenarios/compare_three_tenants_h100.cfg";
    const char *sets[] = {"duration_s=1", "warmup_s=0.2", "sharing.mode=mig"};
    colo_accuracy_facts_t a = facts_of(file, sets, 3), b = {0};
    test_run_t r = run_scenario(src_path(file), sets, 3);
    colo_accuracy_add_results(&b, r.results);
    cr_assert(b.mechanism[COLO_SHARE_MIG] && !b.mechanism[COLO_SHARE_MPS]);
    cr_assert_eq(a.colocated, b.colocated);
    cr_assert_eq(a.n_moved, b.n_moved);
    for (size_t k = 0; k < a.n_moved; k++) {
        cr_assert_str_eq(a.moved[k][0], b.moved[k][0]);
        cr_assert_str_eq(a.moved[k][1], b.moved[k][1]);
    }
    cr_assert_eq(b.n_gpus, 1);
    cr_assert_str_eq(b.gpu[0], a.gpu[0]);
    cr_assert_eq(b.calibrated[0], a.calibrated[0]);
    run_free(&r);
}
