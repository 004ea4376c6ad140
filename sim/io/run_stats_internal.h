/* run_stats_internal.h: the one computation of a tenant's figures that colo_sim_tenant_stats
 * (run_stats.c) and the results document (results.c) share; not part of colosim.h. */
#ifndef COLO_RUN_STATS_INTERNAL_H
#define COLO_RUN_STATS_INTERNAL_H

#include "metrics.h"
#include "run_stats.h"
#include "serving.h"

#include <stddef.h>

/* Tenant i's figures (i < sim->n) from its latency summary lat; the LLM fields stay 0 (the
 * results document writes its own from colo_tenant_llm_stats). */
void colo_run_stats_of(const colo_sim_t *sim, size_t i, const colo_latency_summary_t *lat,
                       colo_run_stats_t *out);

#endif
