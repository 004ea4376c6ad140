/* live_cpu_backend.c: the CPU stand-in backend: each request sleeps its isolated time. */
#include "live_run_internal.h"
#include "alloc.h"
#include "serving.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static colo_time_t *cpu_isolated;

/* COLOSIM_LIVE_CPU_CUDA_ERROR=NAME makes the stand-in's fit fail as a CUDA call failing with
 * that runtime error would, and NAME:run its run-phase set-up instead (as an MPS client when
 * the plan makes it one), so that how a failure is reported can be checked without a GPU
 * (docs/live.md). 0 when not asked. */
static int stand_in_failure(const colo_live_plan_t *plan, int proc, bool run, colo_error_t *err)
{
    const char *v = getenv("COLOSIM_LIVE_CPU_CUDA_ERROR");
    if (!v || !*v) return 0;
    char name[128];
    snprintf(name, sizeof name, "%s", v);
    char *colon = strchr(name, ':');
    bool at_run = colon && strcmp(colon, ":run") == 0;
    if (colon) *colon = '\0';
    if (at_run != run) return 0;
    bool mps = false;
    for (size_t i = 0; run && i < plan->n; i++)
        mps |= plan->t[i].process == proc && plan->t[i].ctx == COLO_LIVE_MPS;
    const char *hint = colo_live_cuda_hint(name, mps);
    return colo_error_set(err, COLO_EIO, NULL, 0, NULL,
                          "cudaSetDevice: a failure the stand-in was asked for (%s, "
                          "COLOSIM_LIVE_CPU_CUDA_ERROR)%s%s",
                          name, hint ? ": " : "", hint ? hint : "");
}

/* The stand-in's fit: every kernel hits its target (there is nothing to size); it takes a few
 * milliseconds so that fits that overlapped in time would show in the results. */
static int cpu_fit(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                   colo_live_fit_t *fit, char *device, size_t device_len, colo_error_t *err)
{
    snprintf(device, device_len, "CPU stand-in (requests sleep their simulated isolated time)");
    int failed = stand_in_failure(plan, proc, false, err);
    if (failed) return failed;
    for (size_t i = 0; i < plan->n; i++) {
        const colo_tenant_cfg_t *c = &sc->tenants[i];
        if (plan->t[i].process != proc || c->command) continue;
        colo_place_rates_t at;
        colo_live_fit_place(sc, plan, i, &at, NULL, 0);
        colo_time_t *t = colo_calloc(c->trace->n_ops + 1, sizeof *t), total;
        if (!t) return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
        int rc = colo_variant_times(c, 0, sc->gpu, at, t, &total, err);
        for (size_t k = 0; !rc && k < c->trace->n_ops; k++)
            if (c->trace->ops[k].type == COLO_OP_KERNEL)
                rc = colo_live_fit_add(fit, i, k, 0, (double)t[k], (double)t[k]);
        colo_free(t);
        if (rc)
            return rc == COLO_ENOMEM ? colo_error_set(err, rc, sc->path, 0, NULL, "out of memory")
                                     : rc;
    }
    colo_live_sleep_ns(20000000);
    return 0;
}

static int cpu_prepare(const colo_scenario_t *sc, const colo_live_plan_t *plan, int proc,
                       const colo_live_fit_t *fit, char *device, size_t device_len,
                       colo_error_t *err)
{
    (void)fit;
    snprintf(device, device_len, "CPU stand-in (requests sleep their simulated isolated time)");
    int rc0 = stand_in_failure(plan, proc, true, err);
    if (rc0) return rc0;
    cpu_isolated = colo_calloc(sc->n_tenants, sizeof *cpu_isolated);
    if (!cpu_isolated) return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    for (size_t i = 0; i < sc->n_tenants; i++) {
        int rc = colo_tenant_isolated(sc, i, &cpu_isolated[i], err);
        if (rc) return rc;
    }
    return 0;
}

static int cpu_request(size_t t, colo_error_t *err)
{
    (void)err;
    colo_live_sleep_ns(cpu_isolated[t]);
    return 0;
}

static void cpu_finish(void)
{
    colo_free(cpu_isolated);
    cpu_isolated = NULL;
}

const colo_live_backend_t colo_live_cpu_backend = {
    .name = "cpu",
    .summary = "no GPU: each request sleeps its simulated isolated time (checks the harness)",
    .uses_gpu = false,
    .fit = cpu_fit,
    .prepare = cpu_prepare,
    .request = cpu_request,
    .finish = cpu_finish,
    .self_test = NULL,
};
