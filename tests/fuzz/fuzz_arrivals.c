/* fuzz_arrivals.c: a request log replayed as arrivals, read to its end: Azure's LLM inference CSV
 * (built as fuzz_azure) or Mooncake's JSONL (fuzz_mooncake). Odd-sized inputs replay a window
 * of the log, compressed in time, with jitter. */
#include "arrival.h"
#include "fuzz.h"

#include <gsl/gsl_rng.h>

#ifndef COLO_FUZZ_LOG
#error "build with -DCOLO_FUZZ_LOG=COLO_LOG_AZURE or COLO_LOG_MOONCAKE"
#endif

static gsl_rng *rng;

void fuzz_init(void)
{
    rng = gsl_rng_alloc(gsl_rng_mt19937);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[8192];
    snprintf(path, sizeof path, "%s",
             fuzz_file(data, size, COLO_FUZZ_LOG == COLO_LOG_AZURE ? "log.csv" : "log.jsonl"));
    colo_arrival_cfg_t c = {.ops = colo_arrival_find("replay"),
                            .format = COLO_FUZZ_LOG,
                            .scale = 1,
                            .window = COLO_TIME_MAX,
                            .path = path};
    if (size % 2) {
        c.scale = 7.5;
        c.start = colo_time_from_ns(2e9);
        c.window = colo_time_from_ns(600e9);
        c.jitter = colo_time_from_ns(3e6);
    }
    gsl_rng_set(rng, 1);
    colo_error_t err;
    colo_error_clear(&err);
    colo_arrival_state_t st;
    if (colo_arrival_start(&c, &st, &err) != 0) return 0;
    colo_time_t now = 0, at;
    int count;
    while (colo_arrival_next(&c, &st, rng, now, &at, &count, &err) == 0) {
        if (at < now || count < 1) __builtin_trap(); /* arrivals never go back in time */
        now = at;
    }
    colo_arrival_stop(&st);
    return 0;
}
