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
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *tc = &sc->tenants[i];
        colo_live_tenant_t *t = &p->t[i];
        t->tenant = i;
        t->active_thread_percentage = 100;
        if (tc->n_variants > 1) {
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "live runs replay one trace per tenant; this tenant has %zu "
                                  "batch sizes (dynamic batching is simulated only)",
                                  tc->n_variants);
        }
        if (tc->instances > 1 || tc->cuda_graphs || tc->max_batch > 0) {
            colo_live_plan_free(p);
            return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, tc->name,
                                  "live runs replay one request at a time per tenant, launched "
                                  "kernel by kernel at its traced batch: instances, cuda_graphs "
                                  "and batching are simulated only");
        }
        if (tc->command && sc->sharing.mode == COLO_SHARE_GREEN) {
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
            if (in->share == COLO_SHARE_MPS) p->mps_daemon = true;
            break;
        }
        case COLO_SHARE_MPS:
            t->process = (int)i;
            t->ctx = COLO_LIVE_MPS;
            t->active_thread_percentage = tc->active_thread_percentage;
            t->sms = tc->sm_cap > 0 ? tc->sm_cap : sms;
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
            colo_live_plan_free(p);
            return rc;
        }
        for (size_t k = 0; k < t->n_arrivals; k++)
            t->requests += t->counts[k];
    }
    return 0;
}

void colo_live_plan_free(colo_live_plan_t *p)
{
    for (size_t i = 0; i < p->n; i++) {
        colo_free(p->t[i].arrivals);
        colo_free(p->t[i].counts);
    }
    colo_free(p->t);
    memset(p, 0, sizeof *p);
}

void colo_live_plan_print(const colo_scenario_t *sc, const colo_live_plan_t *p, FILE *f)
{
    fprintf(f, "live plan for %s on %s (%d SMs), %s, seed %llu, %.3g s of arrivals\n", sc->path,
            sc->gpu->name, sc->gpu->sm.count, colo_share_mode_name(p->mode),
            (unsigned long long)sc->seed, COLO_TO_S(sc->duration));
    if (p->needs_mig)
        fprintf(f, "  needs MIG instances that already exist (colosim never changes MIG mode)\n");
    if (p->mps_daemon)
        fprintf(f, "  starts a private MPS control daemon (own pipe and log folders) and stops it "
                   "at the end, also on failure\n");
    for (int proc = 0; proc < p->n_processes; proc++) {
        fprintf(f, "  process %d\n", proc);
        for (size_t i = 0; i < p->n; i++) {
            const colo_live_tenant_t *t = &p->t[i];
            if (t->process != proc) continue;
            const colo_tenant_cfg_t *tc = &sc->tenants[t->tenant];
            fprintf(f, "    tenant %-12s %s", tc->name, ctx_name(t->ctx));
            if (t->ctx == COLO_LIVE_GREEN) fprintf(f, " of %d SMs", t->sms);
            if (t->ctx == COLO_LIVE_MPS)
                fprintf(f, ", CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%d (%d SMs)",
                        t->active_thread_percentage, t->sms);
            if (t->ctx == COLO_LIVE_MIG) fprintf(f, " %s (%d SMs)", t->instance, t->sms);
            fprintf(f, "\n      trace %s: %zu kernels, %zu copies per request\n", tc->trace_path,
                    tc->trace->n_kernels, tc->trace->n_copies);
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
