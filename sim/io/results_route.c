/* results_route.c: a routed service's autoscaler in the results document (docs/routing.md,
 * "Autoscaling"): the replicas on over time and their mean over the window. */
#include "results.h"
#include "router.h"
#include "serving.h"

json_t *colo_results_autoscale(const colo_sim_t *sim, const colo_tenant_run_t *t)
{
    const colo_router_t *r = t->router;
    const colo_autoscale_cfg_t *c = &r->cfg.scale;
    json_t *series = json_array();
    for (size_t k = 0; series && k + 1 < r->n_series; k += 2)
        json_array_append_new(series, json_pack("[f,i]", r->series[k], (int)r->series[k + 1]));
    return json_pack("{s:i,s:i,s:f,s:f,s:f,s:f,s:o,s:f}", "min", c->min, "max", c->max, "target",
                     c->target, "interval_s", COLO_TO_S(c->interval), "cold_start_s",
                     COLO_TO_S(c->cold_start), "window_s", COLO_TO_S(c->window),
                     "replicas_over_time", series ? series : json_null(), "mean_replicas",
                     colo_autoscale_mean(r, sim->sc->warmup, sim->sc->duration));
}
