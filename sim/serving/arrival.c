/* arrival.c: arrival processes: Poisson, constant, Gamma, two-state MMPP, closed loop, MLPerf
 * LoadGen scenarios, and replay of real request logs streamed from disk. To add a process,
 * write its parse (and next, for an open-loop one) and add a row to the table at the end. */
#include "arrival.h"
#include "alloc.h"
#include "errors.h"
#include "stop.h"

#include <errno.h>
#include <gsl/gsl_randist.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REQ COLO_CFG_REQUIRED
#define POS (COLO_CFG_REQUIRED | COLO_CFG_POSITIVE)
#define MAX_RATE 1e7 /* requests per second */

static const config_setting_t *member(const config_setting_t *g, const char *k)
{
    return config_setting_get_member(g, k);
}

static int check(const colo_cfg_reader_t *r, const config_setting_t *g, const char *const *keys)
{
    return colo_cfg_check_keys(r, g, keys);
}

static int read_rate(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                     double *out)
{
    int rc = colo_cfg_double(r, g, key, POS, out);
    if (!rc && *out > MAX_RATE)
        return colo_cfg_error(r, member(g, key), COLO_ERANGE,
                              "at most 10,000,000 requests per second");
    return rc;
}

static colo_time_t exp_gap(gsl_rng *rng, double rate)
{
    return colo_time_from_ns(gsl_ran_exponential(rng, 1e9 / rate));
}

/* ---- Poisson, constant, Gamma ---- */

static int parse_rate_only(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r,
                           const config_setting_t *g, const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "rate", NULL};
    int rc = check(r, g, keys);
    return rc ? rc : read_rate(r, g, "rate", &c->rate);
}

static int next_poisson(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                        colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)st, (void)err;
    *at = now + exp_gap(rng, c->rate);
    *count = 1;
    return 0;
}

static int next_constant(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                         colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)st, (void)rng, (void)err;
    *at = now + colo_time_from_ns(1e9 / c->rate);
    *count = 1;
    return 0;
}

static int parse_gamma(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g,
                       const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "rate", "cv", NULL};
    int rc = check(r, g, keys);
    if (!rc) rc = read_rate(r, g, "rate", &c->rate);
    if (!rc) rc = colo_cfg_double(r, g, "cv", POS, &c->cv);
    if (!rc && c->cv > 100) return colo_cfg_error(r, member(g, "cv"), COLO_ERANGE, "at most 100");
    /* below this the gaps' shape 1/cv^2 leaves the range Gamma variates are drawn in (at 1e-200
     * it is infinite): and the gaps are constant to a part in a million already */
    if (!rc && c->cv < 1e-6)
        return colo_cfg_error(r, member(g, "cv"), COLO_ERANGE,
                              "at least 1e-6 (got %g): process = \"constant\" has no variation",
                              c->cv);
    return rc;
}

/* Gaps ~ Gamma(k = 1/cv^2, theta = mean/k): mean 1/rate, coefficient of variation cv. */
static int next_gamma(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)st, (void)err;
    double k = 1.0 / (c->cv * c->cv), mean = 1e9 / c->rate;
    *at = now + colo_time_from_ns(gsl_ran_gamma(rng, k, mean / k));
    *count = 1;
    return 0;
}

/* ---- two-state MMPP ---- */

static int parse_pair(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                      double out[2])
{
    const config_setting_t *a;
    int rc = colo_cfg_aggregate(r, g, key, REQ, CONFIG_TYPE_LIST, &a);
    if (rc) return rc;
    if (config_setting_length(a) != 2)
        return colo_cfg_error(r, a, COLO_EINVAL, "needs two numbers: [low, high]");
    for (unsigned i = 0; i < 2; i++) {
        const config_setting_t *e = config_setting_get_elem(a, i);
        if (!config_setting_is_number(e))
            return colo_cfg_error(r, e, COLO_EINVAL, "must be a number");
        out[i] = config_setting_type(e) == CONFIG_TYPE_FLOAT ? config_setting_get_float(e)
                                                             : (double)config_setting_get_int64(e);
        if (!(out[i] > 0) || !isfinite(out[i]))
            return colo_cfg_error(r, e, COLO_ERANGE, "must be greater than 0 (got %g)", out[i]);
        if (out[i] > MAX_RATE)
            return colo_cfg_error(r, e, COLO_ERANGE, "at most 10,000,000 %s (got %g)",
                                  strcmp(key, "rates") == 0 ? "requests per second" : "s", out[i]);
    }
    return 0;
}

static int parse_mmpp(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g,
                      const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "rates", "dwell_s", NULL};
    int rc = check(r, g, keys);
    if (!rc) rc = parse_pair(r, g, "rates", c->rates);
    if (!rc) rc = parse_pair(r, g, "dwell_s", c->dwell_s);
    if (!rc && c->rates[1] < c->rates[0])
        return colo_cfg_error(r, member(g, "rates"), COLO_EINVAL,
                              "the second (burst) rate must not be below the first");
    c->rate = (c->rates[0] * c->dwell_s[0] + c->rates[1] * c->dwell_s[1]) /
              (c->dwell_s[0] + c->dwell_s[1]);
    return rc;
}

/* Poisson at the rate of the current state; states alternate after exponential dwell times.
 * A candidate gap that crosses a switch is discarded at the switch (memorylessness). */
static int next_mmpp(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                     colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)err;
    if (st->mmpp_switch == 0) st->mmpp_switch = exp_gap(rng, 1.0 / c->dwell_s[0]);
    colo_time_t t = now;
    for (;;) {
        colo_time_t cand = t + exp_gap(rng, c->rates[st->mmpp_state]);
        if (cand < st->mmpp_switch) {
            *at = cand;
            *count = 1;
            return 0;
        }
        t = st->mmpp_switch;
        st->mmpp_state ^= 1;
        st->mmpp_switch = t + exp_gap(rng, 1.0 / c->dwell_s[st->mmpp_state]);
    }
}

/* ---- steps: a ladder of Poisson rates ---- */

#define MAX_STEPS 10000

/* rates = [r1, r2, ...] and durations_s = [d1, d2, ...], of one length: Poisson at r1 for d1
 * seconds, then at r2 for d2, ...; no arrivals after the last (a load ladder, as benchmark
 * harnesses such as inference-perf run their stages). */
static int parse_steps(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g,
                       const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "rates", "durations_s", NULL};
    const config_setting_t *ra, *du;
    int rc = check(r, g, keys);
    if (!rc) rc = colo_cfg_aggregate(r, g, "rates", REQ, CONFIG_TYPE_LIST, &ra);
    if (!rc) rc = colo_cfg_aggregate(r, g, "durations_s", REQ, CONFIG_TYPE_LIST, &du);
    if (rc) return rc;
    int n = config_setting_length(ra);
    if (n < 1 || n > MAX_STEPS)
        return colo_cfg_error(r, ra, COLO_EINVAL, "1 to %d rates, one per step", MAX_STEPS);
    if (config_setting_length(du) != n)
        return colo_cfg_error(r, du, COLO_EINVAL, "one duration per rate: %d rates, %d durations",
                              n, config_setting_length(du));
    if (!(c->step_rate = colo_calloc((size_t)n, sizeof *c->step_rate)) ||
        !(c->step_end = colo_calloc((size_t)n, sizeof *c->step_end)))
        return COLO_ENOMEM;
    c->n_steps = n;
    double total = 0, requests = 0;
    for (int k = 0; k < n; k++) {
        const config_setting_t *e[2] = {config_setting_get_elem(ra, (unsigned)k),
                                        config_setting_get_elem(du, (unsigned)k)};
        double v[2];
        for (int j = 0; j < 2; j++) {
            if (!config_setting_is_number(e[j]))
                return colo_cfg_error(r, e[j], COLO_EINVAL, "must be a number");
            v[j] = config_setting_type(e[j]) == CONFIG_TYPE_FLOAT
                       ? config_setting_get_float(e[j])
                       : (double)config_setting_get_int64(e[j]);
            if (!(v[j] > 0) || !isfinite(v[j]) || v[j] > MAX_RATE)
                return colo_cfg_error(r, e[j], COLO_ERANGE, "greater than 0, at most 1e7 (got %g)",
                                      v[j]);
        }
        total += v[1];
        requests += v[0] * v[1];
        c->step_rate[k] = v[0];
        c->step_end[k] = colo_time_from_ns(total * 1e9);
    }
    c->rate = requests / total; /* the mean over the ladder */
    return 0;
}

/* Poisson at the current step's rate; a gap that crosses the step's end is drawn again from
 * there at the next rate (memorylessness). Ends after the last step. */
static int next_steps(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)err;
    colo_time_t t = now;
    for (int k = st->mmpp_state; k < c->n_steps; k++) {
        colo_time_t cand = t + exp_gap(rng, c->step_rate[k]);
        if (cand < c->step_end[k]) {
            st->mmpp_state = k;
            *at = cand;
            *count = 1;
            return 0;
        }
        t = c->step_end[k] > t ? c->step_end[k] : t;
    }
    st->mmpp_state = c->n_steps;
    return 1;
}

/* ---- closed loop ---- */

static int parse_think(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g)
{
    double ms = 0;
    int rc = colo_cfg_double(r, g, "think_ms", COLO_CFG_NONNEG, &ms);
    if (rc < 0) return rc;
    if (ms > 1e9) return colo_cfg_error(r, member(g, "think_ms"), COLO_ERANGE, "too long");
    c->think = colo_time_from_ns(ms * 1e6);
    const char *kind = "exponential";
    if ((rc = colo_cfg_string(r, g, "think", 0, &kind)) < 0) return rc;
    if (strcmp(kind, "exponential") && strcmp(kind, "constant"))
        return colo_cfg_error(r, member(g, "think"), COLO_EINVAL,
                              "\"exponential\" or \"constant\", not '%s'", kind);
    c->think_fixed = strcmp(kind, "constant") == 0;
    return 0;
}

static int parse_closed(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r,
                        const config_setting_t *g, const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "clients", "think_ms", "think", NULL};
    long long n;
    int rc = check(r, g, keys);
    if (!rc) rc = colo_cfg_int(r, g, "clients", POS, &n);
    if (rc) return rc;
    if (n > 100000) return colo_cfg_error(r, member(g, "clients"), COLO_ERANGE, "at most 100,000");
    c->clients = (int)n;
    c->per_query = 1;
    return parse_think(c, r, g);
}

colo_time_t colo_arrival_think(const colo_arrival_cfg_t *c, gsl_rng *rng)
{
    if (c->think <= 0) return 0;
    if (c->think_fixed) return c->think;
    return colo_time_from_ns(gsl_ran_exponential(rng, (double)c->think));
}

/* ---- MLPerf LoadGen scenarios ---- */

static int parse_mlperf(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r,
                        const config_setting_t *g, const char *dir)
{
    (void)dir;
    int rc = colo_loadgen_parse(&c->lg, r, g);
    if (rc) return rc;
    switch (c->lg.scenario) {
    case COLO_LG_SINGLE_STREAM: /* one query at a time, the next when it is answered */
    case COLO_LG_MULTI_STREAM:  /* queries of N samples, back to back */
        c->clients = 1;
        c->per_query = (int)c->lg.samples_per_query;
        break;
    case COLO_LG_SERVER: /* Poisson at the target QPS */
        c->rate = c->lg.target_qps;
        break;
    default: /* Offline: every sample at t = 0 */
        c->burst = c->lg.samples;
        break;
    }
    return 0;
}

static int next_mlperf(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                       colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    if (c->burst > 0) {
        if (st->emitted) return 1;
        st->emitted = c->burst;
        *at = 0;
        *count = c->burst > 1000000000LL ? 1000000000 : (int)c->burst;
        return 0;
    }
    return next_poisson(c, st, rng, now, at, count, err);
}

/* ---- replay of request logs ---- */

static long long days_from_civil(long long y, unsigned m, unsigned d)
{ /* H. Hinnant's algorithm: days since 1970-01-01 of a proleptic Gregorian date */
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

int colo_parse_datetime_ns(const char *s, colo_time_t *out)
{
    int y, mo, d, h, mi, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) return -1;
    /* years 1970-2200: every time, and the gap between any two, fits in colo_time_t's ns */
    if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 ||
        mi > 59 || sec < 0 || sec > 60)
        return -1;
    long long frac = 0;
    int digits = 0;
    const char *p = s + n;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (digits < 9) frac = frac * 10 + (*p - '0'), digits++;
    }
    while (digits < 9)
        frac *= 10, digits++;
    while (*p == ' ' || *p == '\r' || *p == '\n')
        p++;
    if (*p && *p != ',') return -1;
    long long days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    *out = ((days * 24 + h) * 60 + mi) * 60LL * 1000000000LL + sec * 1000000000LL + frac;
    return 0;
}

static int parse_replay(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r,
                        const config_setting_t *g, const char *dir)
{
    static const char *const keys[] = {"process", "file",     "format",    "scale",
                                       "start_s", "window_s", "jitter_ms", NULL};
    const char *file, *fmt = NULL;
    int rc = check(r, g, keys);
    if (!rc) rc = colo_cfg_string(r, g, "file", REQ, &file);
    if (rc) return rc;
    size_t n = strlen(dir) + strlen(file) + 2;
    if (!(c->path = colo_malloc(n))) return COLO_ENOMEM;
    if (file[0] == '/' || !dir[0])
        snprintf(c->path, n, "%s", file);
    else
        snprintf(c->path, n, "%s/%s", dir, file);
    struct stat st;
    if (stat(c->path, &st) != 0)
        return colo_cfg_error(r, member(g, "file"), COLO_ENOENT, "cannot open log '%s': %s",
                              c->path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return colo_cfg_error(r, member(g, "file"), COLO_EINVAL, "'%s' is a folder, not a log",
                              c->path);
    if (access(c->path, R_OK) != 0) /* opened only when the run starts: a FIFO would wait here */
        return colo_cfg_error(r, member(g, "file"), COLO_ENOENT, "cannot open log '%s': %s",
                              c->path, strerror(errno));
    if ((rc = colo_cfg_string(r, g, "format", 0, &fmt)) < 0) return rc;
    size_t len = strlen(file);
    if (!fmt) fmt = (len > 6 && strcmp(file + len - 6, ".jsonl") == 0) ? "mooncake" : "azure";
    if (strcmp(fmt, "azure") == 0)
        c->format = COLO_LOG_AZURE;
    else if (strcmp(fmt, "mooncake") == 0)
        c->format = COLO_LOG_MOONCAKE;
    else
        return colo_cfg_error(r, member(g, "format"), COLO_EINVAL,
                              "unknown log format '%s' (expected azure or mooncake)", fmt);
    c->scale = 1.0;
    double s = 0, w = 0, j = 0;
    if ((rc = colo_cfg_double(r, g, "scale", COLO_CFG_POSITIVE, &c->scale)) < 0 ||
        (rc = colo_cfg_double(r, g, "start_s", COLO_CFG_NONNEG, &s)) < 0 ||
        (rc = colo_cfg_double(r, g, "window_s", COLO_CFG_POSITIVE, &w)) < 0 ||
        (rc = colo_cfg_double(r, g, "jitter_ms", COLO_CFG_NONNEG, &j)) < 0)
        return rc;
    if (c->scale > 1e6 || s > 1e9 || w > 1e9 || j > 1e9)
        return colo_cfg_error(r, g, COLO_ERANGE, "scale, start_s, window_s or jitter_ms too large");
    c->start = colo_time_from_ns(s * 1e9);
    c->window = w > 0 ? colo_time_from_ns(w * 1e9) : COLO_TIME_MAX;
    c->jitter = colo_time_from_ns(j * 1e6);
    return 0;
}

#define LOG_LINE_MAX 65536 /* the longest line of a replayed log */
#define LOG_BLOCK (4 * LOG_LINE_MAX)

/* The next line of a replayed log into *line (not terminated; without its newline), its length
 * into *n; 1 at the end. Read in blocks, so that each is checked as it comes: a NUL byte is
 * malformed (and /dev/zero an endless stream of them), a line has at most 64 KiB, and SIGINT or
 * SIGTERM stop the read (a FIFO's read then fails with EINTR). */
static int read_line(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, const char **line,
                     size_t *n, colo_error_t *err)
{
    for (;;) {
        char *nl = st->pos < st->len ? memchr(st->buf + st->pos, '\n', st->len - st->pos) : NULL;
        size_t avail = st->len - st->pos;
        if (nl || (st->eof && avail)) {
            *line = st->buf + st->pos;
            *n = nl ? (size_t)(nl - *line) : avail;
            st->pos += *n + (nl ? 1 : 0);
            st->line++;
            if (memchr(*line, '\0', *n))
                return colo_error_set(err, COLO_EPARSE, c->path, (int)st->line, NULL,
                                      "a NUL byte: not a text file");
            if (*n > LOG_LINE_MAX && /* a CRLF line may be one more */
                !(*n == LOG_LINE_MAX + 1 && (*line)[*n - 1] == '\r'))
                return colo_error_set(err, COLO_EPARSE, c->path, (int)st->line, NULL,
                                      "line longer than 64 KiB");
            return 0;
        }
        if (st->eof) return 1;
        if (avail > LOG_LINE_MAX + 1) /* no newline in more than a line's room (and its \r) */
            return colo_error_set(err, COLO_EPARSE, c->path, (int)st->line + 1, NULL,
                                  memchr(st->buf + st->pos, '\0', avail)
                                      ? "a NUL byte: not a text file"
                                      : "line longer than 64 KiB");
        if (!st->buf && !(st->buf = colo_malloc(LOG_BLOCK)))
            return colo_error_set(err, COLO_ENOMEM, c->path, 0, NULL, "out of memory");
        memmove(st->buf, st->buf + st->pos, avail);
        st->pos = 0;
        st->len = avail;
        /* one read(2), not fread: a pipe whose writer pauses gives what it has (fread would
         * wait for a whole block) */
        ssize_t got;
        do
            got = read(fileno(st->f), st->buf + st->len, LOG_BLOCK - st->len);
        while (got < 0 && errno == EINTR && !colo_stop_requested());
        if (colo_stop_requested())
            return colo_error_set(err, COLO_EINTR, c->path, (int)st->line, NULL,
                                  "interrupted while reading");
        if (got < 0)
            return colo_error_set(err, COLO_EIO, c->path, (int)st->line + 1, NULL, "read error: %s",
                                  strerror(errno));
        if (got == 0) st->eof = true;
        st->len += (size_t)got;
    }
}

/* Reads the next record's log time; 1 at the end of the file. */
/* A token count from 0 to COLO_TOKENS_MAX, else -1. */
static long long json_tokens(const json_t *v)
{
    if (!json_is_integer(v)) return -1;
    json_int_t n = json_integer_value(v);
    return n >= 0 && n <= COLO_TOKENS_MAX ? (long long)n : -1;
}

static long long csv_tokens(const char *s, const char **end)
{
    errno = 0;
    char *e;
    long long n = strtoll(s, &e, 10);
    *end = e;
    if (e == s || errno || n < 0 || n > COLO_TOKENS_MAX) return -1;
    return n;
}

/* The ContextTokens and GeneratedTokens fields after an Azure record's time, each when it is a
 * count (-1 left in the other: an empty GeneratedTokens is blamed on it, not on its
 * neighbour). */
static void azure_tokens(const char *rec, colo_arrival_state_t *st)
{
    const char *p = strchr(rec, ','), *e;
    if (!p) return;
    long long prompt = csv_tokens(p + 1, &e);
    if (prompt >= 0 && *e == ',') st->prompt_tokens = prompt;
    const char *q = strchr(p + 1, ',');
    if (!q) return;
    long long out = csv_tokens(q + 1, &e);
    while (*e == ' ' || *e == '\r')
        e++;
    if (out >= 0 && (!*e || *e == ',')) st->output_tokens = out;
}

/* A Mooncake record's hash_ids into st (none when v is NULL; hash_bad when v is not a list of
 * non-negative integers). 0 or COLO_ENOMEM. */
static int hash_ids(const json_t *v, colo_arrival_state_t *st)
{
    st->n_hash = 0;
    st->hash_bad = false;
    if (!v) return 0;
    size_t n = json_is_array(v) ? json_array_size(v) : 0;
    if (!json_is_array(v)) st->hash_bad = true;
    if (colo_grow((void **)&st->hash_ids, &st->cap_hash, n, sizeof *st->hash_ids))
        return COLO_ENOMEM;
    for (size_t k = 0; k < n && !st->hash_bad; k++) {
        const json_t *x = json_array_get(v, k);
        if (!json_is_integer(x) || json_integer_value(x) < 0)
            st->hash_bad = true;
        else
            st->hash_ids[st->n_hash++] = (long long)json_integer_value(x);
    }
    if (st->hash_bad) st->n_hash = 0;
    return 0;
}

static int read_record(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, colo_time_t *t,
                       colo_error_t *err)
{
    char buf[LOG_LINE_MAX + 1];
    for (;;) {
        const char *l = NULL;
        size_t len = 0;
        int rc = read_line(c, st, &l, &len, err);
        if (rc) return rc;
        if (len && l[len - 1] == '\r') len--;
        if (len == 0) continue;
        memcpy(buf, l, len);
        buf[len] = '\0';
        st->prompt_tokens = st->output_tokens = -1;
        if (c->format == COLO_LOG_AZURE) {
            if (st->line == 1 && strncmp(buf, "TIMESTAMP", 9) == 0) continue; /* header */
            if (colo_parse_datetime_ns(buf, t) == 0) {
                azure_tokens(buf, st);
                return 0;
            }
            return colo_error_set(
                err, COLO_EPARSE, c->path, (int)st->line, "TIMESTAMP",
                "not a date and time from 1970 to 2200 (YYYY-MM-DD hh:mm:ss.fffffff)");
        }
        json_error_t je;
        unsigned long failed_before = colo_alloc_failures();
        json_t *o = json_loadb(buf, len, JSON_DECODE_ANY, &je);
        if (!o && colo_alloc_failures() != failed_before)
            return colo_error_set(err, COLO_ENOMEM, c->path, (int)st->line, NULL, "out of memory");
        json_t *ts = o ? json_object_get(o, "timestamp") : NULL;
        int ok =
            ts && json_is_number(ts) && json_number_value(ts) >= 0 && json_number_value(ts) < 9e12;
        if (ok) {
            *t = colo_time_from_ns(json_number_value(ts) * 1e6); /* milliseconds */
            st->prompt_tokens = json_tokens(json_object_get(o, "input_length"));
            st->output_tokens = json_tokens(json_object_get(o, "output_length"));
            if (hash_ids(json_object_get(o, "hash_ids"), st)) {
                json_decref(o);
                return colo_error_set(err, COLO_ENOMEM, c->path, (int)st->line, NULL,
                                      "out of memory");
            }
        }
        bool object = json_is_object(o);
        json_decref(o);
        if (ok) return 0;
        if (!o) /* where the line stops being JSON, as Jansson says it */
            return colo_error_set(err, COLO_EPARSE, c->path, (int)st->line, NULL,
                                  "column %d: not a JSON object: %s", je.column, je.text);
        return colo_error_set(
            err, COLO_EPARSE, c->path, (int)st->line, object ? "timestamp" : NULL, "%s",
            object ? "missing, or not a non-negative number of milliseconds"
                   : "column 1: a record is a JSON object { \"timestamp\": ... }");
    }
}

static int next_replay(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                       colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    colo_time_t t;
    for (;;) {
        int rc = read_record(c, st, &t, err);
        if (rc) return rc;
        if (!st->have_origin) { /* Azure: times from the first record; Mooncake: from 0 */
            st->origin = c->format == COLO_LOG_AZURE ? t : 0;
            st->have_origin = true;
        }
        colo_time_t rel = t - st->origin - c->start;
        if (rel < 0) continue; /* before the window */
        if (rel >= c->window) return 1;
        colo_time_t sim = colo_time_from_ns((double)rel / c->scale);
        if (c->jitter > 0) sim += colo_time_from_ns(gsl_rng_uniform(rng) * (double)c->jitter);
        *at = sim > now ? sim : now; /* logs are in time order; jitter must not go back */
        *count = 1;
        return 0;
    }
}

int colo_arrival_start(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, colo_error_t *err)
{
    memset(st, 0, sizeof *st);
    st->prompt_tokens = st->output_tokens = -1;
    if (!c->path) return 0;
    st->f = fopen(c->path, "r"); /* a FIFO waits here for its writer: a signal ends the wait */
    if (!st->f && errno == EINTR && colo_stop_requested())
        return colo_error_set(err, COLO_EINTR, c->path, 0, NULL, "interrupted while opening");
    if (!st->f)
        return colo_error_set(err, COLO_EIO, c->path, 0, NULL, "cannot open: %s", strerror(errno));
    return 0;
}

void colo_arrival_stop(colo_arrival_state_t *st)
{
    if (st->f) fclose(st->f);
    st->f = NULL;
    colo_free(st->buf);
    st->buf = NULL;
    colo_free(st->hash_ids);
    st->hash_ids = NULL;
    st->n_hash = st->cap_hash = 0;
}

/* ---- the table ---- */

static const colo_arrival_ops_t processes[] = {
    {"poisson", "exponential gaps, mean 1/rate", parse_rate_only, next_poisson},
    {"constant", "one request every 1/rate seconds", parse_rate_only, next_constant},
    {"gamma", "Gamma gaps with mean 1/rate and coefficient of variation cv", parse_gamma,
     next_gamma},
    {"mmpp", "two-state Markov-modulated Poisson: rates [low, high], dwell_s [low, high]",
     parse_mmpp, next_mmpp},
    {"closed", "closed loop: clients, each sending the next request think_ms after a reply",
     parse_closed, NULL},
    {"mlperf", "MLPerf LoadGen scenario: SingleStream, MultiStream, Server or Offline",
     parse_mlperf, next_mlperf},
    {"replay", "replay of a request log (Azure LLM CSV, Mooncake JSONL), streamed", parse_replay,
     next_replay},
    {"steps", "Poisson at rates [r1, r2, ...] for durations_s [d1, d2, ...] in turn", parse_steps,
     next_steps},
};

/* processes registered at run time (colo_arrival_register), after the table's */
static const colo_arrival_ops_t **extra;
static size_t n_extra, cap_extra;
static char names[1024] = "poisson, constant, gamma, mmpp, closed, mlperf, replay";

const colo_arrival_ops_t *colo_arrival_find(const char *name)
{
    for (size_t i = 0; i < sizeof processes / sizeof processes[0]; i++)
        if (strcmp(processes[i].name, name) == 0) return &processes[i];
    for (size_t i = 0; i < n_extra; i++)
        if (strcmp(extra[i]->name, name) == 0) return extra[i];
    return NULL;
}

int colo_arrival_register(const colo_arrival_ops_t *ops)
{
    if (!ops || !ops->name || !ops->parse || !ops->next || colo_arrival_find(ops->name))
        return COLO_EINVAL;
    size_t used = strlen(names), len = strlen(ops->name);
    if (used + 2 + len >= sizeof names) return COLO_EINVAL;
    if (colo_grow((void **)&extra, &cap_extra, n_extra + 1, sizeof *extra)) return COLO_ENOMEM;
    extra[n_extra++] = ops;
    snprintf(names + used, sizeof names - used, ", %s", ops->name);
    return 0;
}

const char *colo_arrival_names(void)
{
    return names;
}

int colo_arrival_parse(colo_arrival_cfg_t *cfg, const colo_cfg_reader_t *r,
                       const config_setting_t *g, const char *dir)
{
    memset(cfg, 0, sizeof *cfg);
    const char *proc;
    int rc = colo_cfg_string(r, g, "process", REQ, &proc);
    if (rc) return rc;
    cfg->ops = colo_arrival_find(proc);
    if (!cfg->ops)
        return colo_cfg_error(r, member(g, "process"), COLO_EINVAL,
                              "unknown arrival process '%s' (expected one of: %s; a "
                              "plug-in's is known once loaded: --plugin PATH.so or plugins = "
                              "[...])",
                              proc, colo_arrival_names());
    return cfg->ops->parse(cfg, r, g, dir);
}

void colo_arrival_cfg_fini(colo_arrival_cfg_t *cfg)
{
    colo_free(cfg->path);
    cfg->path = NULL;
    colo_free(cfg->step_rate);
    colo_free(cfg->step_end);
    cfg->step_rate = NULL;
    cfg->step_end = NULL;
    cfg->n_steps = 0;
}

int colo_arrival_next(const colo_arrival_cfg_t *cfg, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    return cfg->ops->next(cfg, st, rng, now, at, count, err);
}

bool colo_arrival_closed(const colo_arrival_cfg_t *cfg)
{
    return cfg->clients > 0;
}

void colo_arrival_describe(const colo_arrival_cfg_t *c, char *buf, size_t n)
{
    const char *name = c->ops->name;
    const colo_loadgen_cfg_t *lg = &c->lg;
    char bound[96] = "";
    if (lg->scenario == COLO_LG_SERVER)
        snprintf(bound, sizeof bound, " at %g queries/s: the %gth percentile within %g ms",
                 lg->target_qps, 100 * lg->percentile, COLO_TO_MS(lg->target_latency));
    else
        snprintf(bound, sizeof bound, ": reports the %gth percentile", 100 * lg->percentile);
    if (lg->scenario == COLO_LG_OFFLINE)
        snprintf(buf, n,
                 "mlperf Offline (LoadGen): one query of %lld samples at t = 0; valid "
                 "when answered in %g s or more",
                 lg->samples, COLO_TO_S(lg->min_duration));
    else if (lg->scenario != COLO_LG_NONE)
        snprintf(buf, n,
                 "mlperf %s (LoadGen)%s; %lld sample%s a query; ends after %lld queries "
                 "and %g s",
                 colo_loadgen_scenario_name(lg->scenario), bound, lg->samples_per_query,
                 lg->samples_per_query == 1 ? "" : "s", lg->min_query_count,
                 COLO_TO_S(lg->min_duration));
    else if (c->path)
        snprintf(buf, n, "replay of %s (%s log, %gx speed%s)", c->path,
                 c->format == COLO_LOG_AZURE ? "Azure" : "Mooncake", c->scale,
                 c->jitter > 0 ? ", jittered" : "");
    else if (c->clients > 0 && c->per_query > 1)
        snprintf(buf, n, "%s: %d client%s sending %d requests per query, think %g ms", name,
                 c->clients, c->clients == 1 ? "" : "s", c->per_query, COLO_TO_MS(c->think));
    else if (c->clients > 0)
        snprintf(buf, n, "%s: %d client%s, think %g ms (%s)", name, c->clients,
                 c->clients == 1 ? "" : "s", COLO_TO_MS(c->think),
                 c->think_fixed ? "constant" : "exponential");
    else if (c->burst > 0)
        snprintf(buf, n, "%s: %lld requests at t = 0", name, c->burst);
    else if (strcmp(name, "gamma") == 0)
        snprintf(buf, n, "gamma at %g/s, cv %g", c->rate, c->cv);
    else if (c->n_steps > 0)
        snprintf(buf, n, "steps: %d Poisson rates from %g/s to %g/s over %g s (mean %g/s)",
                 c->n_steps, c->step_rate[0], c->step_rate[c->n_steps - 1],
                 COLO_TO_S(c->step_end[c->n_steps - 1]), c->rate);
    else if (strcmp(name, "mmpp") == 0)
        snprintf(buf, n, "mmpp: %g/s for %g s, bursts of %g/s for %g s (mean %g/s)", c->rates[0],
                 c->dwell_s[0], c->rates[1], c->dwell_s[1], c->rate);
    else
        snprintf(buf, n, "%s at %g/s", name, c->rate);
}

void colo_arrival_scale_load(colo_arrival_cfg_t *c, double f)
{
    if (c->clients > 0 || c->burst > 0) return; /* closed loops and offline bursts keep theirs */
    if (c->path) {
        c->scale *= f; /* a replayed log runs f times as fast */
        return;
    }
    c->rate *= f;
    c->lg.target_qps *= f; /* an MLPerf Server's target QPS is its rate */
    c->rates[0] *= f;
    c->rates[1] *= f;
    for (int k = 0; k < c->n_steps; k++)
        c->step_rate[k] *= f;
}

double colo_arrival_rate(const colo_arrival_cfg_t *cfg)
{
    if (cfg->clients > 0 || cfg->path || cfg->burst > 0) return 0;
    return cfg->rate;
}
