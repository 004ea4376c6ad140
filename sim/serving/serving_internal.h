/* serving_internal.h: what the files of the serving loop share, not part of the layer's
 * interface (serving.h): serving.c (the loop), domain.c (execution domains) and request_time.c
 * (a request alone). */
#ifndef COLO_SERVING_INTERNAL_H
#define COLO_SERVING_INTERNAL_H

#include "kernel_model.h"
#include "serving.h"
#include "simtime.h"
#include "trace.h"

#include <stddef.h>
#include <stdint.h>

/* serving.c */

/* Keeps rc (0: none) as the run's first error met inside an event; colo_sim_run stops on it. */
void colo_serving_fail(colo_sim_t *sim, int rc);
/* The trace the stream's batch runs: its plan's variant. */
const colo_trace_t *colo_serving_stream_trace(const colo_stream_run_t *s);
/* The tenants' timeline track of a stream: the tenant's own when it has one instance. */
int colo_serving_stream_tid(const colo_stream_run_t *s);
/* The stream's current op has ended: the host issues the next one, or the batch is done. */
void colo_serving_op_done(colo_stream_run_t *s);

/* domain.c */

/* Domains and partitions of the hardware for the scenario's sharing mechanism. O(tenants +
 * streams + domains), and the kernel schedulers' init. */
int colo_domain_build(colo_sim_t *sim);
/* Launches what the scheduler picks, until it holds the rest. */
void colo_domain_dispatch(colo_domain_t *d);
/* Stops the stream's running kernel, keeping its progress in kernel_left. */
void colo_domain_halt_kernel(colo_stream_run_t *s);
/* Event: the stream's (obj) current op is ready (arg: its tenant's incarnation, stale ones are
 * ignored): a copy goes to the copy engines, a kernel to its domain (time-slicing policy,
 * kernel scheduler, or straight onto the hardware model). */
void colo_domain_op_ready(void *obj, int64_t arg);

/* request_time.c */

/* Time alone of a kernel of work w at a place: the kernel model's, at least 1 ns. */
colo_time_t colo_request_alone_at(const colo_kernel_work_t *w, colo_place_rates_t pr);
/* Per-op works (kernels) and times alone at pr of trace k of tenant c. O(ops of the trace). */
int colo_request_variant_ops(const colo_tenant_cfg_t *c, size_t k, const colo_gpu_t *gpu,
                             colo_place_rates_t pr, colo_time_t *op_time, colo_kernel_work_t *work,
                             colo_error_t *err);

#endif
