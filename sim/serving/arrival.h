/* arrival.h: request arrival processes. Each is a small plug-in: it reads its keys from the
 * scenario's arrival group, then yields arrival times (open loop) from the tenant's own random
 * stream; closed-loop processes (clients with think time, MLPerf SingleStream/MultiStream) are
 * driven by completions instead. Documented in docs/arrivals.md. */
#ifndef COLO_ARRIVAL_H
#define COLO_ARRIVAL_H

#include "cfg.h"
#include "loadgen.h"
#include "simtime.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdio.h>

typedef enum { COLO_LOG_AZURE, COLO_LOG_MOONCAKE } colo_log_format_t;

#define COLO_ARRIVAL_MAX_PARAMS 4

/* The most tokens one request's prompt or output may have in a log (far beyond any model's
 * context: a larger count is taken for a damaged record). */
#define COLO_TOKENS_MAX 100000000LL

/* A process and its parameters, as the scenario gives them (read-only during runs). */
typedef struct colo_arrival_cfg {
    const struct colo_arrival_ops *ops;
    double rate;       /* requests per second (open loop), when it has one */
    double cv;         /* gamma: coefficient of variation of the gaps */
    double rates[2];   /* mmpp: rate in the low and the high state */
    double dwell_s[2]; /* mmpp: mean time in each state */
    int clients;       /* closed loop: clients (0: open loop) */
    int per_query;     /* requests each query carries (MLPerf MultiStream: samples) */
    colo_time_t think; /* closed loop: mean think time */
    bool think_fixed;  /* closed loop: constant instead of exponential think times */
    long long burst;   /* offline: requests all at t = 0 */
    /* replay */
    char *path; /* resolved */
    colo_log_format_t format;
    double scale;              /* time compression: 2 replays the log twice as fast */
    colo_time_t start, window; /* part of the log replayed: [start, start + window) */
    colo_time_t jitter;        /* each arrival moved by a uniform [0, jitter) */
    double param[COLO_ARRIVAL_MAX_PARAMS]; /* a registered process's own parameters */
    colo_loadgen_cfg_t lg; /* mlperf: LoadGen's settings (scenario COLO_LG_NONE otherwise) */
    /* steps: Poisson at step_rate[k] (requests/s) until step_end[k] (time from 0), in turn */
    double *step_rate;
    colo_time_t *step_end;
    int n_steps;
} colo_arrival_cfg_t;

/* A process's state during one run (files, the MMPP state). Caller-owned. */
typedef struct colo_arrival_state {
    FILE *f;
    char *buf;              /* a replayed log, read a block at a time: buf[pos, len) unread */
    size_t pos, len;
    bool eof;
    long long line;
    colo_time_t origin; /* log time that maps to simulated time 0 */
    bool have_origin;
    int mmpp_state; /* mmpp: the state; steps: the current step */
    colo_time_t mmpp_switch;
    /* a replayed log's last record: its prompt and output tokens (Azure ContextTokens and
     * GeneratedTokens, Mooncake input_length and output_length), -1 where the record has no
     * such field or not a count from 0 to COLO_TOKENS_MAX; its line is line */
    long long prompt_tokens, output_tokens;
    long long emitted;
    /* a Mooncake record's hash_ids (one per 512 tokens: its prompt's prefix blocks), n_hash of
     * them (0 when it has none); hash_bad: the field is there but not a list of integers from 0
     * to 2^63 - 1. Reused from record to record (as long as the longest list) */
    long long *hash_ids;
    size_t n_hash, cap_hash;
    bool hash_bad;
} colo_arrival_state_t;

typedef struct colo_arrival_ops {
    const char *name;
    const char *summary;
    /* Reads the keys of group g beyond "process" into cfg; dir resolves relative paths. */
    int (*parse)(colo_arrival_cfg_t *cfg, const colo_cfg_reader_t *r, const config_setting_t *g,
                 const char *dir);
    /* Open loop: the next arrival at or after now into *at, and how many requests arrive then
     * into *count. Returns 0, 1 when there are no more, or a negative code (err set). NULL for
     * closed-loop processes. */
    int (*next)(const colo_arrival_cfg_t *cfg, colo_arrival_state_t *st, gsl_rng *rng,
                colo_time_t now, colo_time_t *at, int *count, colo_error_t *err);
} colo_arrival_ops_t;

/* The process called name, or NULL. */
const colo_arrival_ops_t *colo_arrival_find(const char *name);

/* Adds a process (ops borrowed; must outlive every scenario that uses it), after the built-in
 * ones: an open-loop process with parse and next. Its parameters go into the fields of
 * colo_arrival_cfg_t, param[] for its own. Load scaling (load_scale, a cluster's replicas:
 * colo_arrival_scale_load) multiplies rate and rates[] only, so a process should set rate and
 * draw its timing from it. 0, COLO_EINVAL (name taken, or parse or next missing) or
 * COLO_ENOMEM. Not thread-safe: register before running. */
int colo_arrival_register(const colo_arrival_ops_t *ops);

/* Comma-separated names of all processes, for error messages. Static storage. */
const char *colo_arrival_names(void);

/* Reads a tenant's whole arrival group (process and its keys) into cfg. */
int colo_arrival_parse(colo_arrival_cfg_t *cfg, const colo_cfg_reader_t *r,
                       const config_setting_t *g, const char *dir);
void colo_arrival_cfg_fini(colo_arrival_cfg_t *cfg);

/* Prepares and ends a run's state (opens and closes a replayed log). */
int colo_arrival_start(const colo_arrival_cfg_t *cfg, colo_arrival_state_t *st, colo_error_t *err);
void colo_arrival_stop(colo_arrival_state_t *st);

/* Next open-loop arrival, as ops->next. */
int colo_arrival_next(const colo_arrival_cfg_t *cfg, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err);

/* True for closed-loop processes (completions drive the arrivals). */
bool colo_arrival_closed(const colo_arrival_cfg_t *cfg);

/* Multiplies an open-loop process's load by f: its rates (poisson, constant, gamma, mmpp,
 * mlperf server), or a replay's speed. Closed loops and offline bursts are left as they are. */
void colo_arrival_scale_load(colo_arrival_cfg_t *c, double f);

/* The mean offered rate in requests per second, or 0 when it depends on the run (closed loop,
 * replay). */
double colo_arrival_rate(const colo_arrival_cfg_t *cfg);

/* A one-line description ("poisson at 200/s", "closed loop: 4 clients, think 10 ms"). */
void colo_arrival_describe(const colo_arrival_cfg_t *cfg, char *buf, size_t n);

/* Think time before a closed-loop client's next query. */
colo_time_t colo_arrival_think(const colo_arrival_cfg_t *cfg, gsl_rng *rng);

/* Parses an Azure trace timestamp "2023-11-16 18:17:03.9799600" into ns since 1970 (UTC).
 * Returns 0 or -1 when it is not one, or not in 1970-2200 (where every gap fits). Exposed for
 * tests. */
int colo_parse_datetime_ns(const char *s, colo_time_t *out);

#endif
