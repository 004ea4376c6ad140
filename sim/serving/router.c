/* router.c: the routing policies of a service's copies (router.h). What each may read is what a
 * real router in front of the replicas knows at once: how many requests it has sent each
 * replica that have not come back (least_outstanding, power_of_two), or nothing (round_robin,
 * random); none sees a replica's GPU. A request is routed the instant it arrives (no routing
 * delay on one GPU). */
#include "router.h"
#include "alloc.h"
#include "errors.h"
#include "rng.h"
#include "serving_internal.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <string.h>

size_t colo_router_outstanding(const colo_tenant_run_t *t)
{
    size_t n = t->qlen;
    for (int k = 0; k < t->n_streams; k++)
        n += t->streams[k].busy ? (size_t)t->streams[k].n_batch : 0;
    return n;
}

/* In turn, 1, 2, ..., N, 1, ...: what Kubernetes' kube-proxy (IPVS rr) and most load balancers
 * do by default. */
static size_t round_robin(colo_router_t *r, colo_tenant_run_t *const *reps, size_t n)
{
    (void)reps;
    size_t i = r->next;
    r->next = (r->next + 1) % n;
    return i;
}

/* Uniformly at random (kube-proxy's iptables mode). */
static size_t random_pick(colo_router_t *r, colo_tenant_run_t *const *reps, size_t n)
{
    (void)reps;
    return (size_t)gsl_rng_uniform_int(r->rng, n);
}

/* The fewest requests outstanding (Envoy's LEAST_REQUEST with all hosts considered); ties to the
 * lowest index after the last one picked, so equal replicas take turns. */
static size_t least_outstanding(colo_router_t *r, colo_tenant_run_t *const *reps, size_t n)
{
    size_t best = r->next % n, best_n = colo_router_outstanding(reps[best]);
    for (size_t k = 1; k < n; k++) {
        size_t i = (r->next + k) % n, o = colo_router_outstanding(reps[i]);
        if (o < best_n) best = i, best_n = o;
    }
    r->next = (best + 1) % n;
    return best;
}

/* Two replicas at random, the one with fewer outstanding (Mitzenmacher's power of two choices;
 * Envoy's LEAST_REQUEST default choice_count = 2). */
static size_t power_of_two(colo_router_t *r, colo_tenant_run_t *const *reps, size_t n)
{
    if (n < 2) return 0;
    size_t a = (size_t)gsl_rng_uniform_int(r->rng, n);
    size_t b = (size_t)gsl_rng_uniform_int(r->rng, n - 1);
    if (b >= a) b++;
    return colo_router_outstanding(reps[b]) < colo_router_outstanding(reps[a]) ? b : a;
}

static const colo_router_ops_t routers[] = {
    {"round_robin", "in turn", round_robin},
    {"random", "uniformly at random", random_pick},
    {"least_outstanding", "the fewest requests outstanding", least_outstanding},
    {"power_of_two", "the fewer outstanding of two at random", power_of_two},
};

const colo_router_ops_t *colo_router_find(const char *name)
{
    for (size_t i = 0; i < sizeof routers / sizeof *routers; i++)
        if (strcmp(routers[i].name, name) == 0) return &routers[i];
    return NULL;
}

const char *colo_router_names(void)
{
    return "round_robin, random, least_outstanding, power_of_two";
}

/* ---- the routers of a run ---- */

int colo_router_attach(colo_tenant_run_t *leader, colo_tenant_run_t *const *reps, size_t n,
                       const colo_router_ops_t *ops)
{
    colo_router_t *r = colo_calloc(1, sizeof *r);
    if (!r) return COLO_ENOMEM;
    leader->router = r;
    r->ops = ops;
    r->n = n;
    char name[320];
    snprintf(name, sizeof name, "router:%s",
             leader->cfg->service ? leader->cfg->service : leader->cfg->name);
    if (!(r->reps = colo_calloc(n, sizeof *r->reps)) ||
        !(r->rng = colo_rng_new(leader->sim->sc->seed, name)))
        return COLO_ENOMEM;
    memcpy(r->reps, reps, n * sizeof *reps);
    return 0;
}

int colo_serving_routers_new(colo_sim_t *sim)
{
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        if (!t->cfg->router || t->cfg->routed) continue; /* a leader only */
        size_t n = 0;
        for (size_t j = i; j < sim->n; j++)
            n += sim->t[j].cfg->leader == i;
        colo_tenant_run_t **reps = colo_calloc(n, sizeof *reps);
        if (!reps) return COLO_ENOMEM;
        size_t k = 0;
        for (size_t j = i; j < sim->n; j++)
            if (sim->t[j].cfg->leader == i) reps[k++] = &sim->t[j];
        int rc = colo_router_attach(t, reps, n, t->cfg->router);
        colo_free(reps);
        if (rc) return rc;
    }
    return 0;
}

void colo_serving_routers_free(colo_sim_t *sim)
{
    for (size_t i = 0; sim->t && i < sim->n; i++) {
        colo_router_t *r = sim->t[i].router;
        if (!r) continue;
        if (r->rng) gsl_rng_free(r->rng);
        colo_free(r->reps);
        colo_free(r);
        sim->t[i].router = NULL;
    }
}

colo_tenant_run_t *colo_serving_route(colo_tenant_run_t *t)
{
    colo_router_t *r = t->router;
    if (!r) return t;
    colo_tenant_run_t *d = r->reps[r->ops->pick(r, r->reps, r->n)];
    if (d->sim != t->sim) { /* a replica on another GPU of the fleet: its clock comes to now */
        colo_eq_set_now(&d->sim->eq, t->sim->eq.now);
        t->sim->yield = true;
        if (t->sim->touch) t->sim->touch(t->sim->touch_ctx, d->sim);
    }
    return d;
}
