/* layout.h: where each tenant runs under its sharing mechanism: MIG instances and their
 * placements, Green Context and MPS static partition SM ranges, MPS SM caps and client limits,
 * and whether every tenant's device memory fits. */
#ifndef COLO_LAYOUT_H
#define COLO_LAYOUT_H

#include "cfg.h"
#include "scenario.h"

/* Resolves and validates the layout of a scenario whose GPU, sharing and tenants are read.
 * Errors name the offending key of the scenario (root is its root setting). */
int colo_layout_resolve(const colo_cfg_reader_t *r, const config_setting_t *root,
                        colo_scenario_t *sc);

/* The automatic MIG layout for n tenants on gpu (one instance each): the largest profile of
 * which n fit. Returns the profile, or NULL when n > 7 or the GPU has no MIG. */
const colo_mig_profile_t *colo_layout_auto_mig_profile(const colo_gpu_t *gpu, size_t n);

/* The SMs an MPS client's kernels may use out of sms when its active thread percentage is
 * percentage: rounded down to the GPU's masking granularity, at least one unit; 0 when that is
 * all of them (no cap). */
int colo_layout_mps_cap(const colo_gpu_t *g, int sms, int percentage);

#endif
