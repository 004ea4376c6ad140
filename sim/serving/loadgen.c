/* loadgen.c: MLPerf LoadGen's settings, stopping rule and VALID/INVALID verdict (loadgen.h).
 * Sources, mlcommons/inference: loadgen/mlperf.conf @ b0662794 (defaults for every model),
 * loadgen/test_settings.h, test_settings_internal.cc, issue_query_controller.cc, results.cc
 * and early_stopping.cc @ b66003e1. */
#include "loadgen.h"
#include "alloc.h"
#include "errors.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_MS 1e9 /* the longest time setting: 11.6 days */

static const char *const names[] = {"", "SingleStream", "MultiStream", "Server", "Offline"};

const char *colo_loadgen_scenario_name(colo_lg_scenario_t s)
{
    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "";
}

static const config_setting_t *member(const config_setting_t *g, const char *k)
{
    return config_setting_get_member(g, k);
}

/* A time in ms (integer or not, as mlperf.conf writes them) into *out; 1 when absent. */
static int read_ms(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                   int flags, colo_time_t *out)
{
    double ms;
    int rc = colo_cfg_double(r, g, key, flags, &ms);
    if (rc) return rc;
    if (ms > MAX_MS)
        return colo_cfg_error(r, member(g, key), COLO_ERANGE,
                              "at most 10^9 ms (in ms, as in mlperf.conf)");
    *out = colo_time_from_ns(ms * 1e6);
    return 0;
}

/* A setting that belongs to other scenarios only. */
static int not_here(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                    const char *sc, const char *why)
{
    if (!member(g, key)) return 0;
    return colo_cfg_error(r, member(g, key), COLO_EINVAL, "LoadGen's %s has no %s (%s)", sc, key,
                          why);
}

int colo_loadgen_parse(colo_loadgen_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g)
{
    static const char *const keys[] = {"process",
                                       "scenario",
                                       "target_qps",
                                       "rate",
                                       "target_latency",
                                       "target_latency_percentile",
                                       "min_duration",
                                       "max_duration",
                                       "min_query_count",
                                       "max_query_count",
                                       "samples_per_query",
                                       "samples",
                                       NULL};
    const char *sc;
    int rc = colo_cfg_check_keys(r, g, keys);
    if (!rc) rc = colo_cfg_string(r, g, "scenario", COLO_CFG_REQUIRED, &sc);
    if (rc) return rc;
    memset(c, 0, sizeof *c);
    c->samples_per_query = 1;
    /* mlperf.conf's values for every model ("*.Scenario.key"), else TestSettings' defaults */
    double pct;
    long long min_q = 100; /* TestSettings.min_query_count */
    double latency_ms;
    if (strcmp(sc, "SingleStream") == 0) {
        c->scenario = COLO_LG_SINGLE_STREAM;
        pct = 90, latency_ms = 10; /* *.SingleStream.target_latency_percentile, target_latency */
    } else if (strcmp(sc, "MultiStream") == 0) {
        c->scenario = COLO_LG_MULTI_STREAM;
        pct = 99, latency_ms = 80, min_q = 662; /* *.MultiStream.* */
        c->samples_per_query = 8;               /* *.MultiStream.samples_per_query */
    } else if (strcmp(sc, "Server") == 0) {
        c->scenario = COLO_LG_SERVER;
        pct = 99, latency_ms = 10; /* *.Server.target_latency_percentile, target_latency */
    } else if (strcmp(sc, "Offline") == 0) {
        c->scenario = COLO_LG_OFFLINE;
        pct = 90, latency_ms = 10; /* *.Offline.target_latency_percentile */
    } else {
        return colo_cfg_error(r, member(g, "scenario"), COLO_EINVAL,
                              "unknown MLPerf scenario '%s' (expected SingleStream, MultiStream, "
                              "Server or Offline)",
                              sc);
    }
    c->min_duration = COLO_MS(600000); /* *.*.min_duration = 600000 (10 minutes) */
    c->target_latency = colo_time_from_ns(latency_ms * 1e6);
    bool closed = c->scenario == COLO_LG_SINGLE_STREAM || c->scenario == COLO_LG_MULTI_STREAM;
    const char *why_closed = "it issues the next query when the last is answered";
    if (closed && ((rc = not_here(r, g, "target_qps", sc, why_closed)) ||
                   (rc = not_here(r, g, "rate", sc, why_closed))))
        return rc;
    if (c->scenario != COLO_LG_OFFLINE &&
        (rc = not_here(r, g, "samples", sc, "Offline's one query has samples")))
        return rc;
    if (c->scenario != COLO_LG_MULTI_STREAM &&
        (rc =
             not_here(r, g, "samples_per_query", sc, "MultiStream's queries have several samples")))
        return rc;
    if (member(g, "target_qps") && member(g, "rate"))
        return colo_cfg_error(r, member(g, "rate"), COLO_EINVAL,
                              "give target_qps (LoadGen's name) or rate, not both");
    if (!closed) {
        const char *k = member(g, "rate") ? "rate" : "target_qps";
        int flags =
            COLO_CFG_POSITIVE |
            (c->scenario == COLO_LG_SERVER || !member(g, "samples") ? COLO_CFG_REQUIRED : 0);
        if ((rc = colo_cfg_double(r, g, k, flags, &c->target_qps)) < 0) return rc;
        if (c->target_qps > 1e7)
            return colo_cfg_error(r, member(g, k), COLO_ERANGE,
                                  "at most 10,000,000 queries per second");
    }
    if ((rc = read_ms(r, g, "target_latency", COLO_CFG_POSITIVE, &c->target_latency)) < 0 ||
        (rc = colo_cfg_double(r, g, "target_latency_percentile", COLO_CFG_POSITIVE, &pct)) < 0 ||
        (rc = read_ms(r, g, "min_duration", COLO_CFG_NONNEG, &c->min_duration)) < 0 ||
        (rc = read_ms(r, g, "max_duration", COLO_CFG_NONNEG, &c->max_duration)) < 0 ||
        (rc = colo_cfg_int(r, g, "min_query_count", COLO_CFG_NONNEG, &min_q)) < 0 ||
        (rc = colo_cfg_int(r, g, "max_query_count", COLO_CFG_NONNEG, &c->max_query_count)) < 0 ||
        (rc = colo_cfg_int(r, g, "samples_per_query", COLO_CFG_POSITIVE, &c->samples_per_query)) <
            0)
        return rc;
    if (pct <= 1 && member(g, "target_latency_percentile"))
        return colo_cfg_error(r, member(g, "target_latency_percentile"), COLO_ERANGE,
                              "%g: a percentile in percent, as mlperf.conf writes it (99 for the "
                              "99th, not 0.99 as LoadGen's TestSettings)",
                              pct);
    if (pct >= 100)
        return colo_cfg_error(r, member(g, "target_latency_percentile"), COLO_ERANGE,
                              "a percentile below 100 (90 for the 90th, as in mlperf.conf)");
    if (c->samples_per_query > 4096)
        return colo_cfg_error(r, member(g, "samples_per_query"), COLO_ERANGE, "at most 4096");
    if (min_q > 1000000000LL || c->max_query_count > 1000000000LL)
        return colo_cfg_error(
            r, member(g, min_q > 1000000000LL ? "min_query_count" : "max_query_count"), COLO_ERANGE,
            "at most 10^9");
    c->percentile = pct / 100;
    c->min_query_count = min_q;
    if (c->scenario == COLO_LG_OFFLINE) {
        /* LoadGen's one query: max(min_query_count, 1.1 x min_duration x target_qps) samples
         * (test_settings_internal.cc, kSlack), unless the scenario gives the count */
        if ((rc = colo_cfg_int(r, g, "samples", COLO_CFG_POSITIVE, &c->samples)) < 0) return rc;
        if (rc == 1) {
            double n = 1.1 * COLO_TO_S(c->min_duration) * c->target_qps;
            c->samples = n > (double)min_q ? (long long)n : min_q;
            if (c->samples < 1) c->samples = 1;
        }
        if (c->samples > 100000000)
            return colo_cfg_error(r, member(g, member(g, "samples") ? "samples" : "target_qps"),
                                  COLO_ERANGE, "at most 10^8 samples in the Offline query");
    }
    return 0;
}

int colo_loadgen_run_init(colo_loadgen_run_t *run, int clients)
{
    memset(run, 0, sizeof *run);
    if (clients > 0 && !(run->query_start = colo_calloc((size_t)clients, sizeof *run->query_start)))
        return COLO_ENOMEM;
    run->clients = clients;
    return 0;
}

void colo_loadgen_run_fini(colo_loadgen_run_t *run)
{
    colo_samples_fini(&run->sample_latency);
    colo_samples_fini(&run->query_latency);
    colo_free(run->query_start);
    memset(run, 0, sizeof *run);
}

bool colo_loadgen_done(const colo_loadgen_cfg_t *c, const colo_loadgen_run_t *run, colo_time_t now)
{
    if (c->scenario == COLO_LG_OFFLINE) return run->queries > 0;
    if (run->queries > 0 && run->queries >= (uint64_t)c->min_query_count &&
        run->last_issue >= c->min_duration)
        return true; /* "Ending naturally: Minimum query count and test duration met." */
    if (c->max_query_count > 0 && run->queries >= (uint64_t)c->max_query_count) return true;
    return c->max_duration > 0 && now > c->max_duration;
}

void colo_loadgen_issue(colo_loadgen_run_t *run, int client, int samples, colo_time_t now)
{
    run->queries++;
    run->samples_issued += (uint64_t)samples;
    run->last_issue = now;
    if (client >= 0 && client < run->clients) run->query_start[client] = now;
}

int colo_loadgen_sample_done(const colo_loadgen_cfg_t *c, colo_loadgen_run_t *run,
                             colo_time_t latency, colo_time_t now)
{
    run->samples_done++;
    run->over_latency += latency > c->target_latency; /* results.cc: latency > target */
    run->last_done = now;
    return colo_samples_push(&run->sample_latency, latency);
}

int colo_loadgen_query_done(colo_loadgen_run_t *run, int client, colo_time_t now)
{
    if (client < 0 || client >= run->clients) return 0;
    return colo_samples_push(&run->query_latency, now - run->query_start[client]);
}

/* The probability of at most t of h + t queries over the bound when a share p is within it:
 * BetaRegularized[p, h, t + 1] (early_stopping.cc, odds). */
static double odds(uint64_t h, uint64_t t, double p)
{
    gsl_sf_result res;
    int rc = gsl_sf_beta_inc_e((double)h, (double)t + 1, p, &res);
    if (rc == GSL_EUNDRFLW) return 0; /* far below 0.01 */
    return rc ? 1 : res.val;          /* 1: no answer, so not yet passing */
}

uint64_t colo_loadgen_min_passing(uint64_t t, double p)
{
    uint64_t lo = 1, hi = 1;
    while (odds(hi, t, p) >= 0.01) { /* confidence 0.99, tolerance 0 */
        lo = hi + 1;
        if (hi > (UINT64_C(1) << 40)) return hi;
        hi *= 2;
    }
    while (lo < hi) { /* the least h in [lo, hi] with odds < 0.01 */
        uint64_t mid = lo + (hi - lo) / 2;
        if (odds(mid, t, p) < 0.01)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* SingleStream and MultiStream: the most queries t that early stopping may set aside of n, the
 * estimate being the latency of rank n - t (the loop in results.cc's EarlyStopping). */
static uint64_t discard(uint64_t n, double p)
{
    uint64_t lo = 1, hi = n; /* min_passing(1) + 1 <= n holds for lo */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (colo_loadgen_min_passing(mid, p) + mid <= n)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

__attribute__((format(printf, 2, 3))) static void add_reason(colo_loadgen_verdict_t *v,
                                                             const char *fmt, ...)
{
    size_t used = strlen(v->reason);
    if (used + 3 >= sizeof v->reason) return;
    if (used) used += (size_t)snprintf(v->reason + used, sizeof v->reason - used, "; ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->reason + used, sizeof v->reason - used, fmt, ap);
    va_end(ap);
}

int colo_loadgen_verdict(const colo_loadgen_cfg_t *c, const colo_loadgen_run_t *run,
                         colo_loadgen_verdict_t *v)
{
    memset(v, 0, sizeof *v);
    gsl_set_error_handler_off();
    v->queries = run->queries;
    v->samples = run->samples_done;
    v->over_latency = c->scenario == COLO_LG_OFFLINE ? 0 : run->over_latency; /* no bound */
    v->unanswered = run->samples_issued - run->samples_done;
    v->all_answered = v->unanswered == 0 && run->queries > 0;
    v->percentile_latency_ms = v->early_stopping_latency_ms = v->samples_per_s = -1;
    double p = c->percentile;
    /* min_duration: Offline's last answer, Server's last scheduled query, the others' last
     * issued query (results.cc, MinDurationMet) */
    colo_time_t d = c->scenario == COLO_LG_OFFLINE ? run->last_done : run->last_issue;
    v->duration_s = COLO_TO_S(d);
    v->min_duration_met = run->queries > 0 && d >= c->min_duration;
    /* min queries and samples: Offline's one query carries min_sample_count samples */
    uint64_t min_q = c->scenario == COLO_LG_OFFLINE ? 1 : (uint64_t)c->min_query_count;
    uint64_t min_s = c->scenario == COLO_LG_OFFLINE
                         ? (uint64_t)c->samples
                         : (uint64_t)c->min_query_count * (uint64_t)c->samples_per_query;
    v->min_queries_met = run->queries >= min_q && run->samples_done >= min_s;
    /* the target percentile: LoadGen's sorted[floor(n p)] */
    const colo_samples_t *lat =
        c->scenario == COLO_LG_MULTI_STREAM ? &run->query_latency : &run->sample_latency;
    uint64_t n = lat->count;
    uint64_t ranks[2] = {(uint64_t)floor((double)n * p), 0};
    size_t n_ranks = n > 0 && c->scenario != COLO_LG_OFFLINE ? 1 : 0;
    v->early_stopping_met = true;
    if (c->scenario == COLO_LG_SERVER) {
        v->has_perf_constraints = true;
        /* sorted[floor(n p)] <= bound: more than floor(n p) samples within it */
        v->perf_constraints_met = n > 0 && n - run->over_latency > ranks[0];
        uint64_t h = colo_loadgen_min_passing(run->over_latency, p);
        v->early_stopping_queries = h + run->over_latency;
        v->early_stopping_met = run->queries >= v->early_stopping_queries;
        if (n > 1 && run->last_done > 0)
            v->samples_per_s = (double)(n - 1) / COLO_TO_S(run->last_done);
    } else if (c->scenario == COLO_LG_OFFLINE) {
        if (run->last_done > 0)
            v->samples_per_s = (double)run->samples_done / COLO_TO_S(run->last_done);
    } else {
        v->early_stopping_queries = colo_loadgen_min_passing(1, p) + 1;
        v->early_stopping_met = run->queries >= v->early_stopping_queries;
        if (v->early_stopping_met && n > 0) {
            uint64_t t = discard(run->queries, p);
            ranks[1] = n > t ? n - t : 0;
            n_ranks = 2;
        }
    }
    if (n_ranks) {
        colo_time_t at[2];
        if (ranks[0] >= n) ranks[0] = n - 1;
        int rc = colo_samples_ranks(lat, ranks, n_ranks, at);
        if (rc) return rc;
        v->percentile_latency_ms = COLO_TO_MS(at[0]);
        if (n_ranks == 2) v->early_stopping_latency_ms = COLO_TO_MS(at[1]);
    }
    v->valid = v->all_answered && v->min_duration_met && v->min_queries_met &&
               v->early_stopping_met && (!v->has_perf_constraints || v->perf_constraints_met);
    if (!run->queries) add_reason(v, "no query was issued");
    if (run->queries && v->unanswered)
        add_reason(
            v,
            "%llu of %llu samples unanswered when the run ended (LoadGen waits for every one: "
            "lengthen drain_s)",
            (unsigned long long)v->unanswered, (unsigned long long)run->samples_issued);
    if (v->has_perf_constraints && !v->perf_constraints_met)
        add_reason(v,
                   "the target percentile's latency is above target_latency (%.3f ms): reduce "
                   "target_qps",
                   COLO_TO_MS(c->target_latency));
    if (run->queries && !v->min_duration_met)
        add_reason(v, "min duration not met: %.3f s of %.3f s (min_duration; %s)", v->duration_s,
                   COLO_TO_S(c->min_duration),
                   c->scenario == COLO_LG_OFFLINE ? "raise target_qps or samples"
                   : c->max_query_count > 0 && run->queries >= (uint64_t)c->max_query_count
                       ? "max_query_count ended the test"
                   : c->max_duration > 0 && run->last_issue + 1 >= c->max_duration
                       ? "max_duration ended the test"
                       : "lengthen duration_s or lower min_duration");
    if (!v->min_queries_met && c->scenario == COLO_LG_OFFLINE)
        add_reason(v, "min queries not met: %llu of %llu samples answered",
                   (unsigned long long)run->samples_done, (unsigned long long)min_s);
    else if (!v->min_queries_met)
        add_reason(v, "min queries not met: %llu of %lld queries (min_query_count)",
                   (unsigned long long)run->queries, c->min_query_count);
    if (!v->early_stopping_met)
        add_reason(v, "early stopping needs %llu queries, %llu issued",
                   (unsigned long long)v->early_stopping_queries, (unsigned long long)run->queries);
    return 0;
}
