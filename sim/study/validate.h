/* validate.h: the validation suite against published measurements (docs/validation.md):
 * `colosim validate [DIR]`. DIR holds one libconfig file per published source (its citation and
 * its cases); a case names a scenario, the overrides that set it up, the number to take from
 * the results, and optionally a second run to divide by. Deterministic: the same suite gives the
 * same table. */
#ifndef COLO_VALIDATE_H
#define COLO_VALIDATE_H

#include "errors.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* One simulation and the number taken from its results, times scale; or one trace alone on a
 * GPU, as colosim trace --on computes it. */
typedef struct colo_vrun {
    char *scenario; /* resolved against the case file's folder; NULL for a trace run */
    char **sets;    /* --set overrides, in order */
    int *set_lines; /* the line of each in the case file */
    size_t n_sets;
    char *trace;      /* a trace run: the trace (resolved), ... */
    char *gpu;        /* ... the GPU it runs on, ... */
    int batch;        /* ... at this batch (0: its own) ... */
    char *fp32_math;  /* ... with this fp32_math (NULL: pytorch) ... */
    char *framework;  /* ... issued by this framework (NULL: the trace's gaps) ... */
    char *precision;  /* ... at this precision (NULL: the trace's own) ... */
    char *place;      /* ... on this part of it: "mig:PROFILE", "mps:PERCENT", "sms:N" (NULL:
                       * the whole GPU) */
    /* scenario run: a path into the results (tenants.NAME.latency_ms.mean, tenants.*.
     * throughput_rps); trace run: kernels_ms, request_ms or samples_per_s */
    char *metric;
    double scale;
    int metric_line, run_line; /* where metric and scenario/trace are in the case file (0: the
                                * case's line) */
} colo_vrun_t;

typedef struct colo_vsource {
    char *file;       /* the case file */
    char *name;       /* short: "MIGPerf" */
    char *cite;       /* paper and table, or repository, path and commit */
    char *setup;      /* what was measured, on what; NULL when not given */
    char *calibrates; /* the parameters this source set (then its cases are calibration cases) */
} colo_vsource_t;

typedef struct colo_vcase {
    size_t source; /* index into the suite's sources */
    int line;      /* of the case in its file */
    char *id, *category, *what, *from;
    char *note;       /* caveats; NULL when none */
    char *substitute; /* what stands in for the measured set-up and why it compares */
    char *cause;      /* why the error is large, when it is */
    bool calibration; /* the source also set a parameter: listed, not counted */
    double published;
    colo_vrun_t run;
    bool has_over;
    colo_vrun_t over; /* divide by this run's number */
    /* after colo_vsuite_run */
    double predicted, error; /* error = (predicted - published) / published */
    /* the run's sharing mechanism ("timeslice", "mps", "mig", "green"; a trace run: "alone",
     * or the mechanism its place stands for) and GPU, for the accuracy a run is told
     * (accuracy.h) */
    char mechanism[16], gpu[64];
} colo_vcase_t;

typedef struct colo_vsuite {
    char *dir;
    size_t n_sources, n_cases;
    colo_vsource_t *sources;
    colo_vcase_t *cases;
    size_t runs; /* simulations made (identical runs are shared between cases) */
    /* overrides every scenario run takes after its own (colosim validate --set), not owned */
    const char *const *extra_sets;
    size_t n_extra_sets;
} colo_vsuite_t;

/* The categories a case may have (docs/validation.md). */
extern const char *const colo_vcategories[];

/* Reads every *.cfg file directly in dir (sorted by name). Errors name FILE:LINE: key. */
int colo_vsuite_load(const char *dir, colo_vsuite_t **out, colo_error_t *err);
void colo_vsuite_free(colo_vsuite_t *s);

/* Runs every case (sharing identical runs), filling predicted and error. An error names the
 * case's file and line and says what went wrong in its scenario or metric. */
int colo_vsuite_run(colo_vsuite_t *s, colo_error_t *err);

/* Median of |error| over the validation cases (calibration: the calibration cases). NAN when
 * there are none. */
double colo_vsuite_median(const colo_vsuite_t *s, bool calibration, size_t *n);

json_t *colo_vsuite_json(const colo_vsuite_t *s);
void colo_vsuite_print(const colo_vsuite_t *s, FILE *f);

/* Replaces the text between "<!-- colosim validate: begin -->" and "<!-- colosim validate: end
 * -->" in the Markdown file md with the tables, atomically. */
int colo_vsuite_markdown(const colo_vsuite_t *s, const char *md, colo_error_t *err);

/* Compares with a recorded run (colosim validate -o): every case must be recorded, and no
 * case's |error| may exceed its recorded one by more than tolerance (0.01: one percentage
 * point); a case above 50 % must state its cause. Writes one line per failure to report and
 * returns how many failed, or a negative code (err set) when the record cannot be read. */
int colo_vsuite_check(const colo_vsuite_t *s, const char *recorded, double tolerance,
                      FILE *report, colo_error_t *err);

#endif
