/* router.c: the registry of routing policies, the router key, and routing a request (router.h;
 * the policies are in route/). What a policy is given is what a real router in front of the
 * replicas knows the instant a request arrives: the requests it sent each replica that have not
 * come back (its own count), and for LLM replicas their KV-cache use and which of the request's
 * prefix blocks they hold (what llm-d's scheduler learns from vLLM's KV events and metrics);
 * never a replica's GPU. docs/routing.md says what each reads and how stale it may be. */
#include "router.h"
#include "alloc.h"
#include "errors.h"
#include "rng.h"
#include "serving_internal.h"

#include <stdio.h>
#include <string.h>

#define COLO_ROUTE(n) extern const colo_router_ops_t colo_route_##n;
#include "route/routes.h"
#undef COLO_ROUTE

static const colo_router_ops_t *const builtin[] = {
#define COLO_ROUTE(n) &colo_route_##n,
#include "route/routes.h"
#undef COLO_ROUTE
};
#define N_BUILTIN (sizeof builtin / sizeof *builtin)

static const colo_router_ops_t **extra;
static size_t n_extra, cap_extra;
static char names[1024];

const colo_router_ops_t *colo_router_find(const char *name)
{
    for (size_t i = 0; i < N_BUILTIN; i++)
        if (strcmp(builtin[i]->name, name) == 0) return builtin[i];
    for (size_t i = 0; i < n_extra; i++)
        if (strcmp(extra[i]->name, name) == 0) return extra[i];
    return NULL;
}

int colo_router_register(const colo_router_ops_t *ops)
{
    if (!ops || !ops->name || !ops->pick || colo_router_find(ops->name)) return COLO_EINVAL;
    if (colo_grow((void **)&extra, &cap_extra, n_extra + 1, sizeof *extra)) return COLO_ENOMEM;
    extra[n_extra++] = ops;
    names[0] = '\0';
    return 0;
}

const char *colo_router_names(void)
{
    if (names[0]) return names;
    size_t used = 0;
    for (size_t i = 0; i < N_BUILTIN + n_extra; i++) {
        const char *n = i < N_BUILTIN ? builtin[i]->name : extra[i - N_BUILTIN]->name;
        int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", n);
        if (w < 0 || (size_t)w >= sizeof names - used) break;
        used += (size_t)w;
    }
    return names;
}

/* ---- the router key ---- */

int colo_router_read(const colo_cfg_reader_t *r, const config_setting_t *g, colo_route_cfg_t *out)
{
    *out = (colo_route_cfg_t){0};
    const config_setting_t *s = config_setting_get_member(g, "router");
    if (!s) return 0;
    const char *pol = NULL;
    int rc;
    const config_setting_t *grp = config_setting_is_group(s) ? s : NULL;
    if (grp) {
        if ((rc = colo_cfg_string(r, grp, "policy", COLO_CFG_REQUIRED, &pol)) < 0) return rc;
    } else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
        pol = config_setting_get_string(s);
    } else {
        return colo_cfg_error(r, s, COLO_EINVAL,
                              "a policy's name (\"round_robin\") or a group { policy = \"NAME\"; "
                              "delay_ms = D; ... }");
    }
    const config_setting_t *at = grp ? config_setting_get_member(grp, "policy") : s;
    if (!(out->ops = colo_router_find(pol)))
        return colo_cfg_error(r, at, COLO_EINVAL, "unknown router '%s' (known: %s)", pol,
                              colo_router_names());
    for (int k = 0; k < COLO_ROUTER_MAX_PARAMS; k++)
        out->param[k] = out->ops->defaults[k];
    if (!grp) return 0;
    const char *keys[COLO_ROUTER_MAX_PARAMS + 3] = {"policy", "delay_ms"};
    size_t nk = 2;
    for (int k = 0; k < COLO_ROUTER_MAX_PARAMS && out->ops->params[k]; k++)
        keys[nk++] = out->ops->params[k];
    keys[nk] = NULL;
    if ((rc = colo_cfg_check_keys(r, grp, keys))) return rc;
    double ms = 0;
    if ((rc = colo_cfg_double(r, grp, "delay_ms", COLO_CFG_NONNEG, &ms)) < 0) return rc;
    if (ms > 60000)
        return colo_cfg_error(r, config_setting_get_member(grp, "delay_ms"), COLO_ERANGE,
                              "a routing delay of at most 60000 ms");
    out->delay = colo_time_from_ns(ms * 1e6); /* fractions of a ms kept */
    for (int k = 0; k < COLO_ROUTER_MAX_PARAMS && out->ops->params[k]; k++)
        if ((rc = colo_cfg_double(r, grp, out->ops->params[k], COLO_CFG_NONNEG, &out->param[k])) <
            0)
            return rc;
    return 0;
}

int colo_router_check(const colo_cfg_reader_t *r, const config_setting_t *at,
                      const colo_route_cfg_t *rc, bool llm, const colo_arrival_cfg_t *arrival)
{
    if (rc->ops->llm_only && !llm)
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "%s reads LLM replicas' KV caches: this service is not an LLM "
                              "(least_outstanding or power_of_two read any replica's load)",
                              rc->ops->name);
    if (llm && rc->delay > 0)
        return colo_cfg_error(r, at, COLO_EUNSUPPORTED,
                              "a routing delay for LLM replicas is not modelled yet: give "
                              "delay_ms only for vision services");
    if (!arrival) return 0;
    if (colo_arrival_closed(arrival))
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "a closed loop's clients each wait for their own replica: route "
                              "open-loop arrivals");
    if (arrival->lg.scenario != COLO_LG_NONE)
        return colo_cfg_error(r, at, COLO_EINVAL,
                              "an MLPerf LoadGen test drives one system under test and counts "
                              "its answers there: route Poisson, gamma, MMPP or replayed arrivals");
    return 0;
}

/* ---- routing ---- */

size_t colo_router_outstanding(const colo_tenant_run_t *t)
{
    size_t n = t->qlen;
    for (int k = 0; k < t->n_streams; k++)
        n += t->streams[k].busy ? (size_t)t->streams[k].n_batch : 0;
    return t->llm ? n + colo_serving_llm_waiting(t) + colo_serving_llm_running(t) : n;
}

size_t colo_router_least_outstanding(colo_router_t *r, const colo_route_replica_t *reps, size_t n)
{
    size_t best = r->next % n;
    for (size_t k = 1; k < n; k++) {
        size_t i = (r->next + k) % n;
        if (reps[i].outstanding < reps[best].outstanding) best = i;
    }
    r->next = (best + 1) % n;
    return best;
}

size_t colo_router_pick_scored(colo_router_t *r, const colo_route_replica_t *reps, size_t n,
                               const double *prefix, const double w[3])
{
    size_t lo = reps[0].outstanding, hi = reps[0].outstanding;
    for (size_t i = 1; i < n; i++) {
        if (reps[i].outstanding < lo) lo = reps[i].outstanding;
        if (reps[i].outstanding > hi) hi = reps[i].outstanding;
    }
    size_t best = 0, ties = 0;
    double best_s = -1;
    for (size_t i = 0; i < n; i++) {
        double queue = hi > lo ? (double)(hi - reps[i].outstanding) / (double)(hi - lo) : 1;
        double s = w[0] * prefix[i] + w[1] * (1 - reps[i].kv_usage) + w[2] * queue;
        if (s > best_s) {
            best = i, best_s = s, ties = 1;
        } else if (s == best_s && gsl_rng_uniform_int(r->rng, ++ties) == 0) {
            best = i; /* each of the tied replicas with probability 1 / ties */
        }
    }
    return best;
}

int colo_router_attach(colo_tenant_run_t *leader, colo_tenant_run_t *const *reps, size_t n,
                       const colo_route_cfg_t *cfg)
{
    colo_router_t *r = colo_calloc(1, sizeof *r);
    if (!r) return COLO_ENOMEM;
    leader->router = r;
    r->ops = cfg->ops;
    r->cfg = *cfg;
    r->n = n;
    char name[320];
    snprintf(name, sizeof name, "router:%s",
             leader->cfg->service ? leader->cfg->service : leader->cfg->name);
    if (!(r->reps = colo_calloc(n, sizeof *r->reps)) ||
        !(r->view = colo_calloc(n, sizeof *r->view)) ||
        !(r->rng = colo_rng_new(leader->sim->sc->seed, name)))
        return COLO_ENOMEM;
    memcpy(r->reps, reps, n * sizeof *reps);
    return cfg->scale.max > 0 ? colo_autoscale_start(leader) : 0;
}

int colo_serving_routers_new(colo_sim_t *sim)
{
    for (size_t i = 0; i < sim->n; i++) {
        colo_tenant_run_t *t = &sim->t[i];
        if (!t->cfg->route.ops || t->cfg->routed) continue; /* a leader only */
        size_t n = 0;
        for (size_t j = i; j < sim->n; j++)
            n += sim->t[j].cfg->leader == i;
        colo_tenant_run_t **reps = colo_calloc(n, sizeof *reps);
        if (!reps) return COLO_ENOMEM;
        size_t k = 0;
        for (size_t j = i; j < sim->n; j++)
            if (sim->t[j].cfg->leader == i) reps[k++] = &sim->t[j];
        int rc = colo_router_attach(t, reps, n, &t->cfg->route);
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
        if (r->ops->fini) r->ops->fini(r);
        colo_autoscale_free(r);
        if (r->rng) gsl_rng_free(r->rng);
        colo_free(r->reps);
        colo_free(r->view);
        colo_free(r);
        sim->t[i].router = NULL;
    }
}

colo_tenant_run_t *colo_serving_route(colo_tenant_run_t *t)
{
    colo_router_t *r = t->router;
    if (!r) return t;
    colo_route_request_t q = {0, -1, NULL, 0};
    bool prefix = r->ops->reads & COLO_ROUTE_READS_PREFIX;
    if (t->llm) {
        q.prompt_blocks = colo_serving_llm_prompt_blocks(t);
        q.session = colo_serving_llm_session(t);
        q.prefix = colo_serving_llm_arriving_prefix(t, &q.block_tokens);
    }
    size_t n = r->on ? colo_autoscale_view(r, t->sim->eq.now) : r->n; /* those taking requests */
    for (size_t j = 0; j < n; j++) {
        r->view[j].id = r->on ? r->map[j] : j;
        const colo_tenant_run_t *d = r->reps[r->view[j].id];
        r->view[j].outstanding = colo_router_outstanding(d);
        r->view[j].kv_usage = d->llm ? colo_serving_llm_kv_usage(d) : 0;
        r->view[j].prefix_hit = d->llm && prefix ? colo_serving_llm_prefix_hit(d, t) : 0;
    }
    size_t i = r->ops->pick(r, &q, r->view, n);
    i = i < n ? i : 0;
    colo_tenant_run_t *d = r->reps[r->on ? r->map[i] : i];
    r->routed++;
    if (d->sim != t->sim) /* a replica on another GPU of the fleet, which has run to now */
        colo_eq_set_now(&d->sim->eq, t->sim->eq.now);
    return d;
}
