/* arrival.h: request arrival processes, each a small plug-in (name + next-gap function). */
#ifndef COLO_ARRIVAL_H
#define COLO_ARRIVAL_H

#include "simtime.h"

#include <gsl/gsl_rng.h>

typedef struct colo_arrival_cfg {
    const struct colo_arrival_ops *ops;
    double rate; /* requests per second */
} colo_arrival_cfg_t;

/* A process: the time from one arrival to the next, drawn from the tenant's own stream. */
typedef struct colo_arrival_ops {
    const char *name;
    const char *summary;
    colo_time_t (*next_gap)(const colo_arrival_cfg_t *cfg, gsl_rng *rng);
} colo_arrival_ops_t;

/* The built-in process called name, or NULL. */
const colo_arrival_ops_t *colo_arrival_find(const char *name);

/* Comma-separated names of all processes, for error messages. Static storage. */
const char *colo_arrival_names(void);

#endif
