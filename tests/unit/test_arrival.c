/* test_arrival.c: arrival processes, checked statistically (each check could fail), and replay
 * of the real request logs. */
#include "arrival.h"
#include "cluster.h"
#include "helpers.h"
#include "rng.h"
#include "stop.h"

#include <criterion/criterion.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(arrival, .init = test_init);

enum { N = 200000 };

static double *gaps(colo_arrival_cfg_t *c, int n, int *high)
{
    gsl_rng *rng = colo_rng_new(42, "test");
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(c, &st, &err), 0);
    double *g = malloc((size_t)n * sizeof *g);
    colo_time_t now = 0;
    if (high) *high = 0;
    for (int i = 0; i < n; i++) {
        colo_time_t at;
        int count;
        cr_assert_eq(colo_arrival_next(c, &st, rng, now, &at, &count, &err), 0);
        cr_assert_geq(at, now);
        cr_assert_eq(count, 1);
        g[i] = (double)(at - now);
        if (high) *high += st.mmpp_state;
        now = at;
    }
    colo_arrival_stop(&st);
    gsl_rng_free(rng);
    return g;
}

Test(arrival, poisson_rate_and_cv_within_their_confidence_intervals)
{
    colo_arrival_cfg_t c = {.ops = colo_arrival_find("poisson"), .rate = 1000};
    double *g = gaps(&c, N, NULL);
    double mean = gsl_stats_mean(g, 1, N), sd = gsl_stats_sd(g, 1, N);
    /* the mean of N exponential gaps has relative standard error 1/sqrt(N) = 0.22 % */
    cr_assert(fabs(mean - 1e6) < 4 * 1e6 / sqrt(N), "mean gap %g ns, expected 1e6", mean);
    cr_assert(fabs(sd / mean - 1) < 0.02, "Poisson gaps have cv 1, got %g", sd / mean);
    free(g);
}

Test(arrival, gamma_has_the_asked_coefficient_of_variation)
{
    colo_arrival_cfg_t c = {.ops = colo_arrival_find("gamma"), .rate = 500, .cv = 3};
    double *g = gaps(&c, N, NULL);
    double mean = gsl_stats_mean(g, 1, N), cv = gsl_stats_sd(g, 1, N) / mean;
    cr_assert(fabs(mean - 2e6) < 0.03 * 2e6, "mean gap %g", mean);
    cr_assert(fabs(cv - 3) < 0.1 * 3, "cv %g, asked 3", cv);
    colo_arrival_cfg_t smooth = {.ops = colo_arrival_find("gamma"), .rate = 500, .cv = 0.2};
    double *s = gaps(&smooth, N, NULL);
    cv = gsl_stats_sd(s, 1, N) / gsl_stats_mean(s, 1, N);
    cr_assert(fabs(cv - 0.2) < 0.02, "cv %g, asked 0.2", cv);
    free(g);
    free(s);
}

Test(arrival, mmpp_spends_the_expected_share_of_arrivals_in_bursts)
{
    colo_arrival_cfg_t c = {
        .ops = colo_arrival_find("mmpp"), .rates = {100, 1000}, .dwell_s = {1.0, 0.2}};
    int high;
    double *g = gaps(&c, N, &high);
    /* arrivals in bursts: 1000 x 0.2 / (100 x 1 + 1000 x 0.2) = 2/3; mean rate 300/1.2 = 250/s */
    double share = (double)high / N;
    cr_assert(fabs(share - 2.0 / 3.0) < 0.03, "burst share %g, expected 0.667", share);
    double mean = gsl_stats_mean(g, 1, N);
    cr_assert(fabs(mean - 4e6) < 0.05 * 4e6, "mean gap %g ns, expected 4e6 (250/s)", mean);
    /* bursty: far more variable than Poisson */
    cr_assert_gt(gsl_stats_sd(g, 1, N) / mean, 1.5);
    free(g);
}

/* A ladder of Poisson rates: each step gets about rate x duration arrivals, none after the last
 * step, and times never go back. */
Test(arrival, steps_follow_their_ladder_and_end)
{
    double rate[3] = {100, 2000, 500};
    colo_time_t end[3] = {COLO_MS(10000), COLO_MS(12000), COLO_MS(20000)};
    colo_arrival_cfg_t c = {
        .ops = colo_arrival_find("steps"), .step_rate = rate, .step_end = end, .n_steps = 3};
    gsl_rng *rng = colo_rng_new(7, "steps");
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(&c, &st, &err), 0);
    long per[3] = {0, 0, 0};
    colo_time_t now = 0, at;
    int count, rc;
    while ((rc = colo_arrival_next(&c, &st, rng, now, &at, &count, &err)) == 0) {
        cr_assert_geq(at, now);
        cr_assert_lt(at, end[2], "an arrival at %lld ns, after the last step", (long long)at);
        per[at < end[0] ? 0 : at < end[1] ? 1 : 2]++;
        now = at;
    }
    cr_assert_eq(rc, 1);
    /* expected 1,000, 4,000, 4,000; Poisson counts within 5 standard deviations */
    double want[3] = {1000, 4000, 4000};
    for (int k = 0; k < 3; k++)
        cr_assert(fabs((double)per[k] - want[k]) < 5 * sqrt(want[k]), "step %d: %ld arrivals", k,
                  per[k]);
    colo_arrival_stop(&st);
    gsl_rng_free(rng);
}

Test(arrival, datetimes_parse_to_nanoseconds)
{
    colo_time_t t, u;
    cr_assert_eq(colo_parse_datetime_ns("1970-01-01 00:00:01.5", &t), 0);
    cr_assert_eq(t, 1500000000);
    cr_assert_eq(colo_parse_datetime_ns("2023-11-16 18:17:03.9799600", &t), 0);
    cr_assert_eq(colo_parse_datetime_ns("2023-11-16 18:17:04.0319600", &u), 0);
    cr_assert_eq(u - t, 52000000);
    cr_assert_eq(colo_parse_datetime_ns("2024-03-01 00:00:00", &u), 0);
    cr_assert_eq(colo_parse_datetime_ns("2024-02-28 00:00:00", &t), 0);
    cr_assert_eq(u - t, 2LL * 86400 * 1000000000, "2024 is a leap year");
    cr_assert_eq(colo_parse_datetime_ns("yesterday", &t), -1);
    cr_assert_eq(colo_parse_datetime_ns("2023-13-01 00:00:00", &t), -1);
    /* found by fuzz_azure: years whose nanoseconds overflow, negative hours and minutes */
    cr_assert_eq(colo_parse_datetime_ns("9999-11-16 18:17:03.9799600", &t), -1);
    cr_assert_eq(colo_parse_datetime_ns("1969-12-31 23:59:59", &t), -1);
    cr_assert_eq(colo_parse_datetime_ns("2200-12-31 23:59:59", &t), 0);
    cr_assert_eq(colo_parse_datetime_ns("2023-11-16 -1:17:03", &t), -1);
    cr_assert_eq(colo_parse_datetime_ns("2023-11-16 18:-7:03", &t), -1);
}

static const char *shared(const char *file)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", COLO_SHARED_DATA, file);
    if (access(p, R_OK) != 0) cr_skip_test("shared data not present: %s", p);
    return p;
}

static colo_arrival_cfg_t replay_cfg(const char *path, colo_log_format_t fmt)
{
    colo_arrival_cfg_t c = {
        .ops = colo_arrival_find("replay"), .format = fmt, .scale = 1, .window = COLO_TIME_MAX};
    c.path = strdup(path);
    return c;
}

Test(arrival, replay_of_the_azure_code_trace_reproduces_its_8819_arrivals_in_order)
{
    const char *path = shared("azure_llm_2023/AzureLLMInferenceTrace_code.csv");
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_AZURE);
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(&c, &st, &err), 0);
    FILE *f = fopen(path, "r");
    char line[256];
    cr_assert(fgets(line, sizeof line, f)); /* header */
    colo_time_t first = -1, now = 0, at;
    int count, n = 0;
    while (colo_arrival_next(&c, &st, NULL, now, &at, &count, &err) == 0) {
        cr_assert(fgets(line, sizeof line, f), "more arrivals than lines");
        colo_time_t t;
        cr_assert_eq(colo_parse_datetime_ns(line, &t), 0);
        if (first < 0) first = t;
        cr_assert_eq(at, t - first, "arrival %d at %lld, the log says %lld", n, (long long)at,
                     (long long)(t - first));
        cr_assert_geq(at, now, "in order");
        now = at;
        n++;
    }
    cr_assert_eq(err.code, 0, "%s", err.text);
    cr_assert_eq(n, 8819);
    cr_assert_gt(now, (colo_time_t)3000 * 1000000000, "about 57 minutes of log");
    fclose(f);
    colo_arrival_stop(&st);
    free(c.path);
}

static int count_replay(colo_arrival_cfg_t *c, colo_time_t *last)
{
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(c, &st, &err), 0);
    colo_time_t now = 0, at;
    int count, n = 0;
    while (colo_arrival_next(c, &st, NULL, now, &at, &count, &err) == 0) {
        now = at;
        n++;
    }
    cr_assert_eq(err.code, 0, "%s", err.text);
    colo_arrival_stop(&st);
    *last = now;
    return n;
}

Test(arrival, replay_scales_time_and_keeps_to_its_window)
{
    const char *path = shared("mooncake_fast25/conversation_trace.jsonl");
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_MOONCAKE);
    colo_time_t last1, last2, lastw;
    cr_assert_eq(count_replay(&c, &last1), 12031);
    c.scale = 2;
    cr_assert_eq(count_replay(&c, &last2), 12031);
    cr_assert(llabs(last2 * 2 - last1) <= 2, "twice as fast: %lld vs %lld", (long long)last2,
              (long long)last1);
    c.scale = 1;
    c.start = COLO_S(600);
    c.window = COLO_S(600);
    int in_window = count_replay(&c, &lastw);
    cr_assert(in_window > 1000 && in_window < 12031, "%d arrivals in 600 s", in_window);
    cr_assert_lt(lastw, COLO_S(600));
    free(c.path);
}

Test(arrival, a_malformed_log_names_its_file_and_line)
{
    char path[] = "/tmp/colosim-log-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9,1,1\nnot a time,1,1\n",
          f);
    fclose(f);
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_AZURE);
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    colo_arrival_start(&c, &st, &err);
    colo_time_t at;
    int count;
    cr_assert_eq(colo_arrival_next(&c, &st, NULL, 0, &at, &count, &err), 0);
    cr_assert_lt(colo_arrival_next(&c, &st, NULL, 0, &at, &count, &err), 0);
    cr_assert_eq(err.line, 3);
    cr_assert_str_eq(err.key, "TIMESTAMP");
    colo_arrival_stop(&st);
    unlink(path);
    free(c.path);
}

/* Each record's token counts in order; -1 where the record has none. */
static void tokens_of(const char *text, colo_log_format_t fmt, long long (*got)[2], int n)
{
    char path[] = "/tmp/colosim-log-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    colo_arrival_cfg_t c = replay_cfg(path, fmt);
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(&c, &st, &err), 0);
    cr_assert_eq(st.prompt_tokens, -1);
    colo_time_t now = 0, at;
    int count, i = 0;
    while (colo_arrival_next(&c, &st, NULL, now, &at, &count, &err) == 0 && i < n) {
        got[i][0] = st.prompt_tokens;
        got[i][1] = st.output_tokens;
        now = at;
        i++;
    }
    cr_assert_eq(err.code, 0, "%s", err.text);
    cr_assert_eq(i, n);
    colo_arrival_stop(&st);
    unlink(path);
    free(c.path);
}

Test(arrival, a_replay_gives_each_records_prompt_and_output_tokens)
{
    long long got[5][2];
    tokens_of("TIMESTAMP,ContextTokens,GeneratedTokens\n"
              "2023-11-16 18:15:46.6805900,374,44\r\n"
              "2023-11-16 18:15:50.9951690,396,109\n"
              "2023-11-16 18:15:51.0,-3,5\n" /* not a count: unknown, and not an error */
              "2023-11-16 18:15:52.0\n"
              "2023-11-16 18:15:53.0,120,\n", /* each field on its own (issue 40) */
              COLO_LOG_AZURE, got, 5);
    cr_assert(got[0][0] == 374 && got[0][1] == 44);
    cr_assert(got[1][0] == 396 && got[1][1] == 109);
    cr_assert(got[2][0] == -1 && got[2][1] == 5);
    cr_assert(got[3][0] == -1 && got[3][1] == -1);
    cr_assert(got[4][0] == 120 && got[4][1] == -1);
    tokens_of(
        "{\"timestamp\": 0, \"input_length\": 6345, \"output_length\": 12, \"hash_ids\": [1]}\n"
        "{\"timestamp\": 5, \"input_length\": 1.5, \"output_length\": 3}\n"
        "{\"timestamp\": 9}\n",
        COLO_LOG_MOONCAKE, got, 3);
    cr_assert(got[0][0] == 6345 && got[0][1] == 12);
    cr_assert(got[1][0] == -1 && got[1][1] == 3);
    cr_assert(got[2][0] == -1 && got[2][1] == -1);
}

Test(arrival, the_azure_conversation_log_gives_token_counts_for_every_record)
{
    const char *path = shared("azure_llm_2023/AzureLLMInferenceTrace_conv.csv");
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_AZURE);
    colo_arrival_state_t st;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(&c, &st, &err), 0);
    colo_time_t now = 0, at;
    int count, n = 0;
    long long prompt = 0, output = 0;
    while (colo_arrival_next(&c, &st, NULL, now, &at, &count, &err) == 0) {
        cr_assert(st.prompt_tokens >= 0 && st.output_tokens >= 0, "record at line %lld", st.line);
        prompt += st.prompt_tokens;
        output += st.output_tokens;
        now = at;
        n++;
    }
    cr_assert_eq(err.code, 0, "%s", err.text);
    cr_assert_eq(n, 19366);
    cr_assert_gt(prompt, output); /* conversations: long contexts, shorter replies */
    colo_arrival_stop(&st);
    free(c.path);
}

/* Issue 22: /dev/zero as a log read forever, skipping its NUL bytes as empty lines. The reader
 * goes by blocks now: NUL is malformed, a line has at most 64 KiB, a stop request ends it. */
static int replay_error(const char *path, colo_error_t *err)
{
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_MOONCAKE);
    colo_arrival_state_t st;
    colo_error_clear(err);
    int rc = colo_arrival_start(&c, &st, err);
    colo_time_t now = 0, at;
    int count;
    while (!rc && (rc = colo_arrival_next(&c, &st, NULL, now, &at, &count, err)) == 0)
        now = at;
    colo_arrival_stop(&st);
    free(c.path);
    return rc;
}

Test(arrival, a_nul_byte_or_an_endless_line_ends_a_replay_with_an_error)
{
    colo_error_t err;
    cr_assert_eq(replay_error("/dev/zero", &err), COLO_EPARSE);
    cr_assert_eq(err.line, 1);
    cr_assert(strstr(err.text, "NUL"), "%s", err.text);
    char path[] = "/tmp/colosim-log-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    static const char nul_on_3[] = "{\"timestamp\": 1}\n{\"timestamp\": 2}\n{\"times\0tamp\": 3}\n";
    fwrite(nul_on_3, 1, sizeof nul_on_3 - 1, f);
    fclose(f);
    cr_assert_eq(replay_error(path, &err), COLO_EPARSE);
    cr_assert_eq(err.line, 3);
    cr_assert(strstr(err.text, "NUL"), "%s", err.text);
    f = fopen(path, "w");
    fputs("{\"timestamp\": 1}\n", f);
    for (int i = 0; i < 70000; i++)
        fputc(' ', f);
    fclose(f);
    cr_assert_eq(replay_error(path, &err), COLO_EPARSE);
    cr_assert_eq(err.line, 2);
    cr_assert(strstr(err.text, "64 KiB"), "%s", err.text);
    unlink(path);
}

Test(arrival, a_replay_reads_lines_across_blocks_crlf_and_a_last_line_without_newline)
{
    char path[] = "/tmp/colosim-log-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    for (int i = 0; i < 60000; i++) /* about 1.3 MB: several blocks, lines cut at their ends */
        fprintf(f, "{\"timestamp\": %d, \"input_length\": 100}%s", i,
                i == 59999 ? ""
                : i % 2    ? "\r\n"
                           : "\n");
    fclose(f);
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_MOONCAKE);
    colo_time_t last;
    cr_assert_eq(count_replay(&c, &last), 60000);
    cr_assert_eq(last, COLO_MS(59999));
    free(c.path);
    unlink(path);
}

/* Review of issue 22: empty lines (read before the CRLF test: an empty line has no last
 * byte), and a CRLF line of exactly 64 KiB before its \r. */
Test(arrival, empty_lines_and_a_full_length_crlf_line_are_read)
{
    char path[] = "/tmp/colosim-log-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "w");
    fputs("\n\n{\"timestamp\": 1}\n\r\n", f);
    const char *head = "{\"timestamp\": 2, \"pad\": \"";
    fputs(head, f);
    for (size_t k = strlen(head); k < 65536 - 2; k++)
        fputc('x', f);
    fputs("\"}\r\n\n", f);
    fclose(f);
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_MOONCAKE);
    colo_time_t last;
    cr_assert_eq(count_replay(&c, &last), 2);
    cr_assert_eq(last, COLO_MS(2));
    free(c.path);
    unlink(path);
}

Test(arrival, a_stop_request_ends_a_replay)
{
    colo_stop_install();
    raise(SIGTERM);
    colo_error_t err;
    const char *path = src_path("traces/arrivals/azure_llm_2023_conv_first20min.csv");
    colo_arrival_cfg_t c = replay_cfg(path, COLO_LOG_AZURE);
    colo_arrival_state_t st;
    colo_error_clear(&err);
    cr_assert_eq(colo_arrival_start(&c, &st, &err), 0);
    colo_time_t at;
    int count;
    cr_assert_eq(colo_arrival_next(&c, &st, NULL, 0, &at, &count, &err), COLO_EINTR);
    colo_arrival_stop(&st);
    free(c.path);
}

/* Closed loop through whole runs. */
Test(arrival, one_closed_loop_client_never_queues)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/closed_loop.cfg"), NULL, 0);
    json_t *a = result_tenant(&r, 0);
    /* one request at a time, back to back: latency = its time alone (600 us of kernels and
     * their launches), throughput its inverse */
    double alone = result_num(a, "isolated_ms");
    cr_assert(alone > 0.6 && alone < 0.61, "%g ms", alone);
    cr_assert_float_eq(result_num(json_object_get(a, "latency_ms"), "max"), alone, 1e-9);
    cr_assert_float_eq(result_num(a, "throughput_rps"), 1e3 / alone, 2);
    run_free(&r);
}

Test(arrival, four_closed_loop_clients_saturate_and_wait_for_each_other)
{
    const char *sets[] = {"tenants.a.arrival.clients=4"};
    test_run_t r = run_scenario(src_path("tests/fixtures/closed_loop.cfg"), sets, 1);
    json_t *a = result_tenant(&r, 0);
    double alone = result_num(a, "isolated_ms");
    cr_assert_float_eq(result_num(a, "throughput_rps"), 1e3 / alone, 2, "still one GPU");
    cr_assert_float_eq(result_num(json_object_get(a, "latency_ms"), "p50"), 4 * alone, 1e-6,
                       "each waits behind the other three");
    run_free(&r);
}

/* Issue 22: five clients thinking 0 ms behind a queue of one: each dropped request came back
 * at the same instant, forever, and simulated time stood still. The engine now bounds the
 * events at one instant and names the tenant. */
Test(arrival, a_closed_loop_that_resends_at_once_forever_is_stopped_and_named)
{
    const char *sets[] = {"tenants.a.arrival.clients=5", "tenants.a.queue_limit=1"};
    colo_error_t err;
    colo_error_clear(&err);
    json_t *res = NULL;
    int rc = colo_simulate_file(src_path("tests/fixtures/closed_loop.cfg"), sets, 2, &res, &err);
    cr_assert_eq(rc, COLO_EINVAL);
    cr_assert_null(res);
    cr_assert_str_eq(err.key, "tenants.a.arrival");
    cr_assert(strstr(err.text, "think_ms > 0"), "%s", err.text);
    /* a queue that holds them all, or a think time, and it runs */
    const char *ok[] = {"tenants.a.arrival.clients=5", "tenants.a.queue_limit=5"};
    test_run_t r = run_scenario(src_path("tests/fixtures/closed_loop.cfg"), ok, 2);
    cr_assert_gt(result_num(result_tenant(&r, 0), "throughput_rps"), 0);
    run_free(&r);
}

Test(arrival, mlperf_offline_queues_all_samples_at_t0)
{
    test_run_t r = run_scenario(src_path("tests/fixtures/mlperf_offline.cfg"), NULL, 0);
    json_t *a = result_tenant(&r, 0);
    cr_assert_eq(json_integer_value(json_object_get(a, "arrived")), 1000);
    cr_assert_eq(json_integer_value(json_object_get(a, "completed")), 1000);
    /* served one after another: the last waits for all 1000 requests' time alone, after
     * loading the context once (43 us) */
    double alone = result_num(a, "isolated_ms");
    cr_assert_float_eq(result_num(json_object_get(a, "latency_ms"), "max"), 1000 * alone + 0.043,
                       1e-6);
    /* LoadGen's Offline samples per second: the samples over the time they took, so one
     * request at a time served back to back gives the service rate, 1 / its time alone (not
     * 1000 samples over the 2 s of duration_s) */
    double tput = result_num(a, "throughput_rps");
    cr_assert(fabs(tput - 1000 / (1000 * alone + 0.043) * 1e3) < 1e-6 * tput,
              "%.3f/s, alone %.4f ms", tput, alone);
    cr_assert_gt(tput, 0.99e3 / alone);
    run_free(&r);
}
