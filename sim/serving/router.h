/* router.h: a service's requests routed among its replicas (issue 42; docs/routing.md): a
 * tenant written with copies = N and router = "POLICY" on one GPU, or a cluster service with
 * replicas = N and a router across GPUs (sim/fleet), is one service whose single arrival stream
 * is dealt to its replicas as each request arrives, by the policy, from what a real router in
 * front of them knows at that instant. Policies are plug-ins like the schedulers: the built-in
 * ones are in sim/serving/route/, one file each, and colo_router_register adds more. */
#ifndef COLO_ROUTER_H
#define COLO_ROUTER_H

#include "cfg.h"
#include "errors.h"
#include "simtime.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stddef.h>

struct colo_tenant_run;
struct colo_router;

#define COLO_ROUTER_MAX_PARAMS 4

/* What a router knows of one replica when a request arrives. */
typedef struct colo_route_replica {
    size_t outstanding;   /* requests it was sent that have not come back: waiting or running */
    double kv_usage;      /* LLM: share of its KV blocks running requests hold, 0..1 (0: vision) */
    long long prefix_hit; /* LLM: leading KV blocks of this request's prompt it has cached (0
                           * unless the policy reads prefixes and the replica caches them) */
    size_t id; /* which of the service's replicas (0 .. router's n - 1): an autoscaled service
                * offers only those taking requests, so the i-th offered is not always the i-th */
} colo_route_replica_t;

/* What a router knows of the request. */
struct colo_prefix;
typedef struct colo_route_request {
    long long prompt_blocks; /* LLM: KV blocks its prompt fills (0: vision) */
    long long session;       /* its session (a user's conversation), -1: none */
    /* LLM with prefix caching: its prompt as hashed units (prefix_cache.h: colo_prefix_blocks,
     * colo_prefix_block_key) and the engine's block size; NULL, 0 otherwise */
    const struct colo_prefix *prefix;
    int block_tokens;
} colo_route_request_t;

/* What a policy reads: the replicas' outstanding requests (always), their KV use and cached
 * prefixes (LLM; the prefix match costs a walk of the request's blocks, so only for policies
 * that read it). */
enum { COLO_ROUTE_READS_PREFIX = 1u };

/* A routing policy. */
typedef struct colo_router_ops {
    const char *name;
    const char *summary;
    /* its parameters' names (NULL-terminated, at most COLO_ROUTER_MAX_PARAMS) and defaults:
     * written in the router group (router = { policy = "NAME"; PARAM = ...; }) */
    const char *params[COLO_ROUTER_MAX_PARAMS + 1];
    double defaults[COLO_ROUTER_MAX_PARAMS];
    unsigned reads; /* COLO_ROUTE_READS_* */
    bool llm_only;  /* needs LLM replicas (KV use, prefixes) */
    /* the index in reps[0 .. n) of the replica that gets request q */
    size_t (*pick)(struct colo_router *r, const colo_route_request_t *q,
                   const colo_route_replica_t *reps, size_t n);
    /* optional: frees what pick kept in r->state */
    void (*fini)(struct colo_router *r);
} colo_router_ops_t;

/* A routed service's autoscaler (autoscale.c; docs/routing.md, "Autoscaling"): every interval
 * it recommends ceil(outstanding / target) replicas, as Kubernetes' Horizontal Pod Autoscaler
 * does for an average-value metric, and turns replicas on (taking requests cold_start later) or
 * off (taking no more; they finish what they hold). */
typedef struct colo_autoscale_cfg {
    int min, max;         /* replicas on; max 0: no autoscaling */
    double target;        /* requests outstanding per replica it aims at */
    double tolerance;     /* no change while outstanding / (target x replicas) is within 1 +- it */
    colo_time_t interval; /* between decisions */
    colo_time_t cold_start; /* from turning a replica on to its first request */
    colo_time_t window;     /* scale down to the largest recommendation of this long */
} colo_autoscale_cfg_t;

/* A router as a scenario gives it: the policy, its parameters, the routing delay, the
 * autoscaler. */
typedef struct colo_route_cfg {
    const colo_router_ops_t *ops; /* NULL: not routed */
    double param[COLO_ROUTER_MAX_PARAMS];
    colo_time_t delay; /* from the request's arrival at the router to its arrival at the replica */
    colo_autoscale_cfg_t scale;
} colo_route_cfg_t;

/* One service's router during a run: what a policy may keep between requests. */
typedef struct colo_router {
    const colo_router_ops_t *ops;
    colo_route_cfg_t cfg;
    struct colo_tenant_run **reps; /* the service's replicas, the leader (its arrivals) first */
    size_t n;
    size_t next;                /* the replica after the last one picked (turns, ties) */
    gsl_rng *rng;               /* its own stream: the leader's run's seed and the service */
    colo_route_replica_t *view; /* reps' state, filled for each request */
    void *state;                /* a policy's own (ops->fini frees it) */
    /* autoscaling (cfg.scale.max > 0): which replicas are on and from when they take requests,
     * the routable ones' indices (map), the next decision, recent recommendations, and the
     * number on over time (changes: time in s, count) */
    bool *on;
    colo_time_t *ready_at;
    size_t *map;
    colo_time_t next_tick;
    int *recent;
    size_t n_recent, recent_pos;
    double *series;
    size_t n_series, cap_series;
    uint64_t routed; /* requests routed */
} colo_router_t;

/* The policy called name, or NULL; their names, comma-separated (static storage). */
const colo_router_ops_t *colo_router_find(const char *name);
const char *colo_router_names(void);

/* Adds a policy (ops borrowed; must outlive every run that uses it), after the built-in ones.
 * 0, COLO_EINVAL (name taken, no name or pick) or COLO_ENOMEM. Not thread-safe: register before
 * running. */
int colo_router_register(const colo_router_ops_t *ops);

/* Reads key `router` of group g into *out: a policy's name, or a group { policy = "NAME";
 * delay_ms = D; PARAM = V; ... }. *out->ops stays NULL when g has no such key. 0 or a negative
 * code with the error at the key. */
int colo_router_read(const colo_cfg_reader_t *r, const config_setting_t *g, colo_route_cfg_t *out);

/* Reads key `autoscale` of group g into *out (max stays 0 without it); replicas: the copies or
 * replicas the service has, the most it may turn on. 0 or a negative code at the key. */
int colo_autoscale_read(const colo_cfg_reader_t *r, const config_setting_t *g, int replicas,
                        colo_autoscale_cfg_t *out);

/* An autoscaled router's mean number of replicas on over [from, to). */
double colo_autoscale_mean(const struct colo_router *r, colo_time_t from, colo_time_t to);

/* Refuses a router the service cannot have, at key `at`: an LLM-only policy for vision
 * replicas, a delay for LLM replicas (not modelled yet), a closed loop or an MLPerf test (not
 * checked when arrival is NULL). 0 or COLO_EINVAL / COLO_EUNSUPPORTED with the error at `at`. */
struct colo_arrival_cfg;
int colo_router_check(const colo_cfg_reader_t *r, const config_setting_t *at,
                      const colo_route_cfg_t *rc, bool llm, const struct colo_arrival_cfg *arrival);

/* Gives leader (the tenant run whose arrivals the service's are) a router over reps[0 .. n), the
 * service's replicas, leader among them; they may be tenants of several runs of a fleet, kept in
 * one event order (sim/fleet): a request routed to another run brings that run's clock to now.
 * Its random stream comes from the leader's run's seed and the service's name. Freed with the
 * leader's run. 0 or COLO_ENOMEM. */
int colo_router_attach(struct colo_tenant_run *leader, struct colo_tenant_run *const *reps,
                       size_t n, const colo_route_cfg_t *cfg);

/* A replica's requests in the system now: waiting, and in the batches its instances run. */
size_t colo_router_outstanding(const struct colo_tenant_run *t);

/* Helpers for policies: the replica with the fewest outstanding among reps (ties: the first
 * after r->next, so equal replicas take turns), and r->next moved past it. */
size_t colo_router_least_outstanding(struct colo_router *r, const colo_route_replica_t *reps,
                                     size_t n);

/* The replica with the highest w[0] x prefix[i] + w[1] x (1 - KV use) + w[2] x queue score,
 * queue = (most outstanding - its) / (most - fewest), 1 when all are equal; ties at random from
 * r's stream: llm-d's weighted scorers and max-score picker (docs/routing.md). */
size_t colo_router_pick_scored(struct colo_router *r, const colo_route_replica_t *reps, size_t n,
                               const double *prefix, const double w[3]);

#endif
