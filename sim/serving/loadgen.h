/* loadgen.h: MLPerf LoadGen's test settings, its rule for when a test stops issuing queries,
 * and its VALID/INVALID verdict, for tenants whose arrival process is "mlperf". The settings
 * keep the names of LoadGen's configuration files (mlperf.conf, user.conf); the verdict follows
 * LoadGen's results.cc and early_stopping.cc. Documented in docs/arrivals.md ("MLPerf LoadGen"). */
#ifndef COLO_LOADGEN_H
#define COLO_LOADGEN_H

#include "cfg.h"
#include "metrics.h"
#include "simtime.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    COLO_LG_NONE = 0,
    COLO_LG_SINGLE_STREAM,
    COLO_LG_MULTI_STREAM,
    COLO_LG_SERVER,
    COLO_LG_OFFLINE
} colo_lg_scenario_t;

/* A test's settings, as LoadGen names them (times in ms in the scenario file, as in
 * mlperf.conf). Read-only during runs. */
typedef struct colo_loadgen_cfg {
    colo_lg_scenario_t scenario;
    double target_qps;          /* Server: the Poisson rate; Offline: expected samples/s */
    colo_time_t target_latency; /* Server: the latency bound; others: LoadGen's hint only */
    double percentile;          /* target_latency_percentile as a fraction */
    colo_time_t min_duration, max_duration;     /* max 0: none */
    long long min_query_count, max_query_count; /* max 0: none */
    long long samples_per_query;                /* MultiStream: samples in a query; others 1 */
    long long samples;                          /* Offline: samples in its one query */
} colo_loadgen_cfg_t;

/* Reads the keys of an arrival group with process = "mlperf" (g) into *c: scenario,
 * target_qps (or rate), target_latency, target_latency_percentile, min_duration, max_duration,
 * min_query_count, max_query_count, samples_per_query (MultiStream) and samples (Offline).
 * Absent settings take mlperf.conf's values for every model, else LoadGen's defaults. 0 or a
 * negative code with the error recorded at its key. */
int colo_loadgen_parse(colo_loadgen_cfg_t *c, const colo_cfg_reader_t *r,
                       const config_setting_t *g);

/* The scenario's name as LoadGen writes it ("SingleStream", ...). */
const char *colo_loadgen_scenario_name(colo_lg_scenario_t s);

/* One test's progress during a run. Caller-owned: colo_loadgen_run_init, then _fini. */
typedef struct colo_loadgen_run {
    uint64_t queries;              /* queries issued */
    uint64_t samples_issued;       /* samples in them */
    colo_time_t last_issue;        /* when the last query was issued (Server: scheduled) */
    uint64_t samples_done;         /* samples answered */
    uint64_t over_latency;         /* of those, answered after more than target_latency */
    colo_time_t last_done;         /* when the last sample was answered */
    colo_samples_t sample_latency; /* every answered sample's latency, from t = 0 */
    colo_samples_t query_latency;  /* MultiStream: each query's (its last sample's) */
    colo_time_t *query_start;      /* closed loops: when each client's query was issued */
    int clients;
} colo_loadgen_run_t;

/* 0 or COLO_ENOMEM. clients: the closed loop's clients (0 for Server and Offline). */
int colo_loadgen_run_init(colo_loadgen_run_t *run, int clients);
void colo_loadgen_run_fini(colo_loadgen_run_t *run);

/* Whether LoadGen would issue no more queries at now: it ends a test once it has issued
 * min_query_count queries and the last was issued at min_duration or later, or at
 * max_query_count queries, or after max_duration (LoadGen's issue_query_controller.cc). */
bool colo_loadgen_done(const colo_loadgen_cfg_t *c, const colo_loadgen_run_t *run, colo_time_t now);

/* A query of samples samples is issued at now by client (-1: open loop). */
void colo_loadgen_issue(colo_loadgen_run_t *run, int client, int samples, colo_time_t now);

/* A sample is answered at now after latency; a closed loop's whole query, when query_done, for
 * client. 0 or COLO_ENOMEM. */
int colo_loadgen_sample_done(const colo_loadgen_cfg_t *c, colo_loadgen_run_t *run,
                             colo_time_t latency, colo_time_t now);
int colo_loadgen_query_done(colo_loadgen_run_t *run, int client, colo_time_t now);

/* LoadGen's verdict on a finished test (results.cc: the detail log's result_validity). */
typedef struct colo_loadgen_verdict {
    bool valid;
    bool min_duration_met, min_queries_met, early_stopping_met;
    bool has_perf_constraints, perf_constraints_met; /* Server only */
    bool all_answered; /* every issued sample answered before the run ended */
    double duration_s; /* the test's length as LoadGen measures it for min_duration */
    uint64_t queries, samples, over_latency, unanswered;
    uint64_t early_stopping_queries;  /* queries early stopping needs (0 for Offline) */
    double percentile_latency_ms;     /* the target percentile (MultiStream: of queries); -1 none */
    double early_stopping_latency_ms; /* SingleStream, MultiStream: the estimate; -1 none */
    double samples_per_s; /* Offline: samples / last answer; Server: completed samples/s */
    char reason[320];     /* why INVALID, in words; "" when VALID */
} colo_loadgen_verdict_t;

/* Fills *v for a test that ran until end (the run's end). O(n log n) in the samples while they
 * are exact, and O(log^2 queries) evaluations of the regularised incomplete beta function for
 * early stopping. 0 or COLO_ENOMEM. */
int colo_loadgen_verdict(const colo_loadgen_cfg_t *c, const colo_loadgen_run_t *run,
                         colo_loadgen_verdict_t *v);

/* Early stopping (early_stopping.cc): the fewest queries h within the latency bound such that
 * h + t queries of which t exceed it show, with 99 % confidence, that the percentile p is within
 * the bound: the least h with I_p(h, t + 1) < 0.01 (the binomial tail; GSL's beta_inc). */
uint64_t colo_loadgen_min_passing(uint64_t t, double p);

#endif
