/* live_plan.c: a scenario as processes, contexts and arrival times for colosim-live. */
#include "live_plan.h"
#include "alloc.h"
#include "rng.h"

#include <gsl/gsl_rng.h>
#include <string.h>

int colo_arrival_times(const colo_arrival_cfg_t *cfg, uint64_t seed, const char *tenant,
                       colo_time_t duration, colo_time_t **at_out, int **count_out, size_t *n_out,
                       colo_error_t *err)
{
    *at_out = NULL;
    *count_out = NULL;
    *n_out = 0;
    gsl_rng *rng = colo_rng_new(seed, tenant);
    if (!rng) return COLO_ENOMEM;
    colo_arrival_state_t st;
    memset(&st, 0, sizeof st);
    int rc = colo_arrival_start(cfg, &st, err);
    colo_time_t *at = NULL;
    int *count = NULL;
    size_t n = 0, cap = 0, cap2 = 0;
    colo_time_t now = 0;
    while (!rc) {
        colo_time_t t;
        int c;
        int r = colo_arrival_next(cfg, &st, rng, now, &t, &c, err);
        if (r < 0) rc = r;
        if (r != 0 || t >= duration) break;
        if (colo_grow((void **)&at, &cap, n + 1, sizeof *at) ||
            colo_grow((void **)&count, &cap2, n + 1, sizeof *count)) {
            rc = COLO_ENOMEM;
            break;
        }
        at[n] = t;
        count[n++] = c;
        now = t;
    }
    colo_arrival_stop(&st);
    gsl_rng_free(rng);
    if (rc) {
        colo_free(at);
        colo_free(count);
        return rc;
    }
    *at_out = at;
    *count_out = count;
    *n_out = n;
    return 0;
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

static const char *ctx_name(colo_live_ctx_t c)
{
    switch (c) {
    case COLO_LIVE_MPS:
        return "MPS client";
    case COLO_LIVE_GREEN:
        return "Green Context";
    case COLO_LIVE_MIG:
        return "MIG instance";
    default:
        return "own context";
    }
}

int colo_live_plan(const colo_scenario_t *sc, colo_live_plan_t *p, colo_error_t *err)
{
    memset(p, 0, sizeof *p);
    p->mode = sc->sharing.mode;
    p->t = colo_calloc(sc->n_tenants, sizeof *p->t);
    if (!p->t) return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    p->n = sc->n_tenants;
    int sms = sc->gpu->sm.count;
    /* MPS daemons: one for the GPU, or one per MPS-shared MIG instance */
    size_t n_daemons = sc->sharing.mode == COLO_SHARE_MPS ? 1 : 0;
    if (sc->sharing.mode == COLO_SHARE_MIG)
        for (size_t k = 0; k < sc->sharing.n_instances; k++)
            n_daemons += sc->sharing.instances[k].share == COLO_SHARE_MPS;
    if (n_daemons && !(p->daemons = colo_calloc(n_daemons, sizeof *p->daemons))) {
        colo_live_plan_free(p);
        return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
    }
    int *instance_daemon = NULL;
    if (sc->sharing.mode == COLO_SHARE_MPS) {
        p->daemons[0].instance = -1;
        p->daemons[0].static_partitions = sc->sharing.static_partitions;
        p->n_daemons = 1;
    } else if (n_daemons) {
        instance_daemon = colo_calloc(sc->sharing.n_instances, sizeof *instance_daemon);
        if (!instance_daemon) {
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_ENOMEM, sc->path, 0, NULL, "out of memory");
        }
        for (size_t k = 0; k < sc->sharing.n_instances; k++) {
            instance_daemon[k] = -1;
            if (sc->sharing.instances[k].share != COLO_SHARE_MPS) continue;
            instance_daemon[k] = p->n_daemons;
            p->daemons[p->n_daemons].instance = (int)k;
            p->daemons[p->n_daemons++].static_partitions = sc->sharing.static_partitions;
        }
    }
    /* Green Contexts: one split into groups of the largest size every tenant's SMs are made of */
    if (sc->sharing.mode == COLO_SHARE_GREEN) {
        int unit = 0, end = 0;
        for (size_t i = 0; i < sc->n_tenants; i++)
            unit = gcd(unit, sc->tenants[i].sm_count);
        for (size_t i = 0; unit > 0 && i < sc->n_tenants; i++) {
            const colo_tenant_cfg_t *tc = &sc->tenants[i];
            p->t[i].group_first = tc->sm_first / unit;
            p->t[i].group_count = tc->sm_count / unit;
            if (p->t[i].group_first + p->t[i].group_count > end)
                end = p->t[i].group_first + p->t[i].group_count;
        }
        p->green_unit = unit;
        p->green_groups = end;
    }
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *tc = &sc->tenants[i];
        colo_live_tenant_t *t = &p->t[i];
        t->tenant = i;
        t->active_thread_percentage = 100;
        t->daemon = -1;
        if (tc->n_variants > 1) {
            colo_free(instance_daemon);
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "live runs replay one trace per tenant; this tenant has %zu "
                                  "batch sizes (dynamic batching is simulated only)",
                                  tc->n_variants);
        }
        if (tc->instances > 1 || tc->cuda_graphs || tc->max_batch > 0) {
            colo_free(instance_daemon);
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "live runs replay one request at a time per tenant, launched "
                                  "kernel by kernel at its traced batch: instances, cuda_graphs "
                                  "and batching are simulated only");
        }
        if (tc->framework != COLO_FW_TRACE && !tc->command) {
            colo_free(instance_daemon);
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "framework = \"%s\" is simulated only: a live run replays the "
                                  "trace's own host gaps (a real program, command = \"...\", "
                                  "brings its own host)",
                                  colo_framework_name(tc->framework));
        }
        if (tc->command && sc->sharing.mode == COLO_SHARE_GREEN) {
            colo_free(instance_daemon);
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "a tenant with a command runs in its own process, and Green "
                                  "Contexts share one process: use timeslice, mps or mig");
        }
        switch (sc->sharing.mode) {
        case COLO_SHARE_GREEN:
            t->process = 0; /* one process, one Green Context per tenant */
            t->ctx = COLO_LIVE_GREEN;
            t->sms = tc->sm_count;
            break;
        case COLO_SHARE_MIG: {
            const colo_mig_instance_t *in = &sc->sharing.instances[tc->instance];
            t->process = (int)i;
            t->ctx = COLO_LIVE_MIG;
            t->instance = in->profile->name;
            t->sms = in->profile->sms;
            p->needs_mig = true;
            if (in->share == COLO_SHARE_MPS) {
                p->mps_daemon = true;
                t->daemon = instance_daemon[tc->instance];
                t->active_thread_percentage = tc->active_thread_percentage;
                if (sc->sharing.static_partitions) t->partition = tc->sm_count;
            }
            break;
        }
        case COLO_SHARE_MPS:
            t->process = (int)i;
            t->ctx = COLO_LIVE_MPS;
            t->daemon = 0;
            t->active_thread_percentage = tc->active_thread_percentage;
            t->sms = tc->sm_cap > 0 ? tc->sm_cap : sms;
            if (sc->sharing.static_partitions) {
                t->partition = tc->sm_count;
                t->sms = tc->sm_count;
                t->active_thread_percentage = 100; /* ignored under static partitions */
            }
            p->mps_daemon = true;
            break;
        default:
            t->process = (int)i;
            t->ctx = COLO_LIVE_PRIMARY;
            break;
        }
        if (t->process + 1 > p->n_processes) p->n_processes = t->process + 1;
        if (colo_arrival_closed(&tc->arrival)) {
            t->clients = tc->arrival.clients;
            t->think = tc->arrival.think;
            continue;
        }
        int rc = colo_arrival_times(&tc->arrival, sc->seed, tc->name, sc->duration, &t->arrivals,
                                    &t->counts, &t->n_arrivals, err);
        if (rc) {
            if (rc == COLO_ENOMEM) colo_error_set(err, rc, sc->path, 0, NULL, "out of memory");
            colo_free(instance_daemon);
            colo_live_plan_free(p);
            return rc;
        }
        for (size_t k = 0; k < t->n_arrivals; k++)
            t->requests += t->counts[k];
    }
    colo_free(instance_daemon);
    return 0;
}

void colo_live_plan_free(colo_live_plan_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        colo_free(p->t[i].arrivals);
        colo_free(p->t[i].counts);
    }
    colo_free(p->t);
    colo_free(p->daemons);
    memset(p, 0, sizeof *p);
}

void colo_live_pipe_dir(const char *run_dir, int d, char *buf, size_t len)
{
    if (d < 0)
        snprintf(buf, len, "%s/no-mps", run_dir);
    else
        snprintf(buf, len, "%s/mps-%d/pipe", run_dir, d);
}

size_t colo_live_env(const colo_live_plan_t *p, int proc, colo_live_phase_t phase,
                     const char *run_dir, const char *uuid, const char *partition,
                     char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN])
{
    const colo_live_tenant_t *t = NULL;
    for (size_t i = 0; i < p->n && !t; i++)
        if (p->t[i].process == proc) t = &p->t[i];
    size_t n = 0;
    /* an MPS client only in the run; fitting runs alone, before any daemon starts */
    int d = t && phase == COLO_LIVE_RUN ? t->daemon : -1;
    char pipe[COLO_LIVE_ENV_LEN - 32];
    colo_live_pipe_dir(run_dir, d, pipe, sizeof pipe);
    snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_PIPE_DIRECTORY=%s", pipe);
    if (d >= 0 && t->active_thread_percentage < 100)
        snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d",
                 t->active_thread_percentage);
    else
        snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    if (d >= 0 && partition)
        snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_SM_PARTITION=%s", partition);
    else
        snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_SM_PARTITION");
    /* a MIG instance by its UUID, for clients of its daemon too (the MIG user guide's MPS example
     * gives clients the daemon's pipe folder and the same MIG UUID) */
    if (uuid) snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_VISIBLE_DEVICES=%s", uuid);
    return n;
}

size_t colo_live_daemon_env(const colo_live_plan_t *p, int d, const char *run_dir,
                            const char *uuid, char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN])
{
    (void)p;
    size_t n = 0;
    char pipe[COLO_LIVE_ENV_LEN - 32];
    colo_live_pipe_dir(run_dir, d, pipe, sizeof pipe);
    snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_PIPE_DIRECTORY=%s", pipe);
    snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_MPS_LOG_DIRECTORY=%s/mps-%d/log", run_dir, d);
    if (uuid) snprintf(env[n++], COLO_LIVE_ENV_LEN, "CUDA_VISIBLE_DEVICES=%s", uuid);
    return n;
}

void colo_live_fit_place(const colo_scenario_t *sc, const colo_live_plan_t *plan, size_t i,
                         colo_place_rates_t *rates, char *where, size_t where_len)
{
    const colo_gpu_t *g = sc->gpu;
    if (plan->t[i].ctx == COLO_LIVE_MIG) {
        *rates = colo_tenant_place_rates(sc, i);
        if (where)
            snprintf(where, where_len, "MIG %s (%d SMs)", plan->t[i].instance, plan->t[i].sms);
        return;
    }
    colo_place_rates_t whole = {g->sm.count, colo_gpu_dram_rate(g), colo_gpu_l2_rate(g)};
    *rates = whole;
    if (where) snprintf(where, where_len, "whole GPU (%d SMs)", g->sm.count);
}

int colo_live_green_check(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                          const unsigned *group_sms, int n_groups, int *granted, colo_error_t *err)
{
    for (size_t i = 0; i < plan->n; i++) {
        const colo_live_tenant_t *t = &plan->t[i];
        const colo_tenant_cfg_t *tc = &sc->tenants[i];
        if (t->ctx != COLO_LIVE_GREEN) continue;
        if (t->group_first + t->group_count > n_groups)
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "needs groups %d-%d of %d SMs and the driver split the device "
                                  "into %d such groups",
                                  t->group_first, t->group_first + t->group_count - 1,
                                  plan->green_unit, n_groups);
        long long got = 0;
        for (int k = t->group_first; k < t->group_first + t->group_count; k++)
            got += group_sms[k];
        granted[i] = (int)got;
        if (got != tc->sm_count)
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "the driver granted %lld SMs where the simulator assumed %d "
                                  "(asked %d): its groups are not of %d SMs on this GPU",
                                  got, tc->sm_count, tc->sms_asked ? tc->sms_asked : tc->sm_count,
                                  plan->green_unit);
    }
    return 0;
}

void colo_live_plan_print(const colo_scenario_t *sc, const colo_live_plan_t *p, FILE *f)
{
    fprintf(f, "live plan for %s on %s (%d SMs), %s, seed %llu, %.3g s of arrivals\n", sc->path,
            sc->gpu->name, sc->gpu->sm.count, colo_share_mode_name(p->mode),
            (unsigned long long)sc->seed, COLO_TO_S(sc->duration));
    if (p->needs_mig)
        fprintf(f, "  needs MIG instances that already exist (colosim never changes MIG mode)\n");
    fprintf(f, "  first each process alone, one at a time, fits its synthetic kernels (before any MPS "
               "daemon starts); then all run together\n");
    for (int d = 0; d < p->n_daemons; d++) {
        const colo_live_daemon_t *dm = &p->daemons[d];
        char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
        char uuid[96];
        if (dm->instance >= 0)
            snprintf(uuid, sizeof uuid, "<MIG-UUID of %s>", sc->sharing.instances[dm->instance].name);
        size_t n = colo_live_daemon_env(p, d, "RUN", dm->instance >= 0 ? uuid : NULL, env);
        fprintf(f, "  MPS daemon %d (private; stopped at the end, also on failure): "
                   "nvidia-cuda-mps-control -d%s with", d, dm->static_partitions ? " -S" : "");
        for (size_t k = 0; k < n; k++)
            fprintf(f, " %s", env[k]);
        fprintf(f, "\n");
    }
    for (int proc = 0; proc < p->n_processes; proc++) {
        char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
        char uuid[96];
        const char *u = NULL, *part = NULL;
        for (size_t i = 0; i < p->n; i++) {
            if (p->t[i].process != proc) continue;
            if (p->t[i].ctx == COLO_LIVE_MIG) {
                snprintf(uuid, sizeof uuid, "<MIG-UUID of %s>",
                         sc->sharing.instances[sc->tenants[i].instance].name);
                u = uuid;
            }
            if (p->t[i].partition) part = "<partition ID>";
        }
        fprintf(f, "  process %d\n", proc);
        for (int ph = 0; ph < 2; ph++) {
            size_t n = colo_live_env(p, proc, ph ? COLO_LIVE_RUN : COLO_LIVE_FIT, "RUN", u, part, env);
            fprintf(f, "    %s environment:", ph ? "run" : "fit");
            for (size_t k = 0; k < n; k++)
                fprintf(f, " %s%s", strchr(env[k], '=') ? "" : "-", env[k]);
            fprintf(f, "\n");
        }
        for (size_t i = 0; i < p->n; i++) {
            const colo_live_tenant_t *t = &p->t[i];
            if (t->process != proc) continue;
            const colo_tenant_cfg_t *tc = &sc->tenants[t->tenant];
            fprintf(f, "    tenant %-12s %s", tc->name, ctx_name(t->ctx));
            if (t->ctx == COLO_LIVE_GREEN)
                fprintf(f, " of %d SMs (groups %d-%d of the one split into groups of %d)", t->sms,
                        t->group_first, t->group_first + t->group_count - 1, p->green_unit);
            if (t->partition) fprintf(f, ", static partition of %d SMs", t->partition);
            if (t->ctx == COLO_LIVE_MPS)
                fprintf(f, ", CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d (%d SMs)",
                        t->active_thread_percentage, t->sms);
            if (t->ctx == COLO_LIVE_MIG) fprintf(f, " %s (%d SMs)", t->instance, t->sms);
            char where[96];
            colo_place_rates_t rates;
            colo_live_fit_place(sc, p, i, &rates, where, sizeof where);
            fprintf(f, "\n      trace %s: %zu kernels, %zu copies per request; fitted on the %s\n",
                    tc->trace_path, tc->trace->n_kernels, tc->trace->n_copies, where);
            if (tc->command) fprintf(f, "      runs the real program: %s\n", tc->command);
            if (t->clients) {
                fprintf(f, "      closed loop: %d clients, think %.3f ms\n", t->clients,
                        COLO_TO_MS(t->think));
                continue;
            }
            double span = COLO_TO_S(sc->duration);
            fprintf(f, "      %lld requests at %zu arrival times (%.1f/s); first at", t->requests,
                    t->n_arrivals, span > 0 ? (double)t->requests / span : 0.0);
            for (size_t k = 0; k < t->n_arrivals && k < 5; k++)
                fprintf(f, " %.3f", COLO_TO_MS(t->arrivals[k]));
            fprintf(f, "%s ms\n", t->n_arrivals > 5 ? " ..." : "");
        }
    }
    fprintf(f, "  each kernel is replayed by a synthetic kernel of the traced grid, block and "
               "shared memory whose work is sized to the traced duration alone\n");
}
