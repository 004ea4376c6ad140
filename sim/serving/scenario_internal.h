/* scenario_internal.h: what scenario.c (the file, sharing, faults, metrics, schedulers, k8s,
 * PCIe) and scenario_tenant.c (each tenant) share; not part of the layer's interface. */
#ifndef COLO_SCENARIO_INTERNAL_H
#define COLO_SCENARIO_INTERNAL_H

#include "cfg.h"
#include "scenario.h"

#include <stddef.h>

/* Longest simulated span accepted: far below int64 overflow, far above any useful run. */
#define MAX_SECONDS 1e6

/* tenants.[i].copies = N: N identical tenants NAME-1 ... NAME-N in the tenant's place (each its
 * own name, so its own arrival stream); the copies keep the lines they were written on. */
int colo_scenario_expand_copies(const colo_cfg_reader_t *r, config_setting_t *root);

/* The copies of one routed service (tenants with the same service): each one's leader, the
 * first of them, and whether it is routed to by it (router.h). */
void colo_scenario_group_services(colo_scenario_t *sc);

/* Reads tenant i (group t of the tenants list) into sc->tenants[i]: its traces, loaded once per
 * scenario, or its LLM settings; its arrivals, batching, SLO, memory, MPS settings, class,
 * colour and PCIe weight. Needs the GPU and sharing read. */
int colo_scenario_read_tenant(const colo_cfg_reader_t *r, const config_setting_t *t,
                              colo_scenario_t *sc, size_t i);

/* An LLM tenant once its place is known (after the layout): its KV cache from its memory, and
 * its trace (the prefill of a typical request) in the scenario's table. */
int colo_scenario_resolve_llm(const colo_cfg_reader_t *r, const config_setting_t *t,
                              colo_scenario_t *sc, size_t i);

#endif
