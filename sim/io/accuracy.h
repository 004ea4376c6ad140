/* accuracy.h: how far colosim's predictions of the kind a run makes are from published
 * measurements, from the committed validation record (validation/recorded.json, written by
 * colosim validate): printed and written beside a run's, a study's and --compare-modes' answers
 * (docs/validation.md, "The accuracy beside the answer"). */
#ifndef COLO_ACCURACY_H
#define COLO_ACCURACY_H

#include "errors.h"
#include "scenario.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* What a run does that the validation record has cases of. Gathered from scenarios
 * (colo_accuracy_add); zeroed to start. */
typedef struct colo_accuracy_facts {
    bool mechanism[4];    /* by colo_share_mode_t */
    bool colocated;       /* two tenants or more on one GPU */
    bool batch_scaled;    /* a tenant runs batches at a size none of its traces has */
    bool llm;             /* an LLM tenant */
    bool host;            /* a tenant with a framework's host time (docs/model.md, "The host") */
    bool precision;       /* a tenant at a precision of its own ("Precision") */
    char moved[4][2][64]; /* traces moved between GPUs: from, to (the first 4 pairs) */
    size_t n_moved;
    char gpu[4][64]; /* the GPUs run on (the first 4) */
    bool calibrated[4];
    size_t n_gpus;
} colo_accuracy_facts_t;

/* Adds what scenario sc runs to *f. */
void colo_accuracy_add(colo_accuracy_facts_t *f, const colo_scenario_t *sc);

/* Adds what a results document ran to *f (a cluster's: every GPU's), for runs whose scenario is
 * not at hand; the same facts as colo_accuracy_add. */
void colo_accuracy_add_results(colo_accuracy_facts_t *f, json_t *results);

/* The record found by name ("recorded.json" in the data folders' validation/: the source tree,
 * the installed share/colosim); NULL when there is none. Free with colo_free. */
char *colo_accuracy_record_path(void);

/* The accuracy that applies to *f, from the record at path: {"record": path, "cases": N,
 * "median_error": m, "applies": [{"what", "cases", "median_error", "worst_error", "worst_case"}
 * ...], "not_covered": [{"what", "note"}, ...]}. A new reference; NULL (err set) when the record
 * cannot be read. */
json_t *colo_accuracy_json(const colo_accuracy_facts_t *f, const char *path, colo_error_t *err);

/* colo_accuracy_json with the record found by name; where there is none, or it cannot be read,
 * {"record": ..., "error": why} instead. NULL only when out of memory. */
json_t *colo_accuracy_find(const colo_accuracy_facts_t *f);

/* Prints it as a few lines after a blank line (nothing for NULL). */
void colo_accuracy_print(json_t *acc, FILE *out);

#endif
