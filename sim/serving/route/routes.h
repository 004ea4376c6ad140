/* routes.h: the built-in routing policies, one line each: COLO_ROUTE(name) names the
 * colo_router_ops_t colo_route_<name> defined in sim/serving/route/<name>.c. */
COLO_ROUTE(round_robin)
COLO_ROUTE(random)
COLO_ROUTE(least_outstanding)
COLO_ROUTE(power_of_two)
COLO_ROUTE(least_kv_load)
COLO_ROUTE(session_affinity)
COLO_ROUTE(prefix_aware)
COLO_ROUTE(estimated_prefix)
