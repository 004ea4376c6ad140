/* arrival.c: built-in arrival processes. To add one, write its next_gap and add a row below. */
#include "arrival.h"

#include <gsl/gsl_randist.h>
#include <string.h>

/* Poisson arrivals: exponential gaps with mean 1/rate. */
static colo_time_t poisson_gap(const colo_arrival_cfg_t *cfg, gsl_rng *rng)
{
    return colo_time_from_ns(gsl_ran_exponential(rng, 1e9 / cfg->rate));
}

/* Constant rate: every 1/rate seconds exactly. */
static colo_time_t constant_gap(const colo_arrival_cfg_t *cfg, gsl_rng *rng)
{
    (void)rng;
    return colo_time_from_ns(1e9 / cfg->rate);
}

static const colo_arrival_ops_t processes[] = {
    {"poisson", "exponential gaps, mean 1/rate", poisson_gap},
    {"constant", "one request every 1/rate seconds", constant_gap},
};

const colo_arrival_ops_t *colo_arrival_find(const char *name)
{
    for (size_t i = 0; i < sizeof processes / sizeof processes[0]; i++)
        if (strcmp(processes[i].name, name) == 0) return &processes[i];
    return NULL;
}

const char *colo_arrival_names(void)
{
    return "poisson, constant";
}
