/* router.h: a service's requests routed among its replicas on one GPU (issue 42, first part):
 * a tenant written with copies = N and router = "POLICY" is one service whose single arrival
 * stream is dealt to its N copies as each request arrives, by the policy, from the replicas'
 * state at that instant (docs/scenarios.md, "Routing among copies"). */
#ifndef COLO_ROUTER_H
#define COLO_ROUTER_H

#include <stddef.h>

struct colo_tenant_run;
struct colo_router;

/* A routing policy: picks the replica for a request arriving now. */
typedef struct colo_router_ops {
    const char *name;
    const char *summary;
    /* the index in reps[0 .. n) of the replica that gets the request; state: the router's own
     * (a counter, its random stream: colo_router_t) */
    size_t (*pick)(struct colo_router *r, struct colo_tenant_run *const *reps, size_t n);
} colo_router_ops_t;

/* One service's router during a run. */
typedef struct colo_router {
    const colo_router_ops_t *ops;
    struct colo_tenant_run **reps; /* the service's copies, the leader (its arrivals) first */
    size_t n;
    size_t next; /* round_robin: the next replica */
    void *rng;   /* random, power_of_two: gsl_rng, its own stream (seed and service name) */
} colo_router_t;

/* The policy called name, or NULL; their names, comma-separated, for messages. */
const colo_router_ops_t *colo_router_find(const char *name);
const char *colo_router_names(void);

/* Gives leader (the tenant run whose arrivals the service's are) a router with ops over reps[0 ..
 * n), the service's replicas, leader among them; they may be tenants of several runs of a fleet,
 * kept in one event order (sim/fleet): a request routed to another run brings that run's clock
 * to now. Its random stream comes from the leader's run's seed and the service's name. Freed
 * with the leader's run. 0 or COLO_ENOMEM. */
int colo_router_attach(struct colo_tenant_run *leader, struct colo_tenant_run *const *reps,
                       size_t n, const colo_router_ops_t *ops);

/* A replica's requests in the system now: waiting, and in the batches its instances run. */
size_t colo_router_outstanding(const struct colo_tenant_run *t);

#endif
