/* autoscale.c: a routed service's autoscaler (router.h, colo_autoscale_cfg_t; docs/routing.md,
 * "Autoscaling"). Kubernetes' Horizontal Pod Autoscaler is the model (kubernetes.io, "Horizontal
 * Pod Autoscaling", algorithm details): every sync period (15 s by default,
 * --horizontal-pod-autoscaler-sync-period) it recommends ceil(current replicas x current metric /
 * target), here with the metric the replicas' mean requests outstanding, so ceil(outstanding /
 * target); it does nothing while the ratio is within the tolerance (0.1 by default,
 * --horizontal-pod-autoscaler-tolerance); it scales up at once and scales down only to the
 * largest recommendation of the last stabilisation window (300 s by default, behavior.scaleDown.
 * stabilizationWindowSeconds). A replica turned on takes requests after its cold start (its
 * container, the model's weights); one turned off takes no more and finishes what it holds. */
#include "alloc.h"
#include "router.h"
#include "serving_internal.h"

#include <math.h>
#include <string.h>

int colo_autoscale_read(const colo_cfg_reader_t *r, const config_setting_t *g, int replicas,
                        colo_autoscale_cfg_t *out)
{
    static const char *const keys[] = {"min",        "max",      "target",       "tolerance",
                                       "interval_s", "window_s", "cold_start_s", NULL};
    *out = (colo_autoscale_cfg_t){0};
    const config_setting_t *a = config_setting_get_member(g, "autoscale");
    if (!a) return 0;
    if (!config_setting_is_group(a))
        return colo_cfg_error(r, a, COLO_EINVAL,
                              "a group { target = N; cold_start_s = S; min; max; ... }");
    int rc;
    long long mn = 1, mx = replicas;
    double interval = 15, window = 300, cold = 0;
    out->tolerance = 0.1;
    if ((rc = colo_cfg_check_keys(r, a, keys)) ||
        (rc = colo_cfg_int(r, a, "min", COLO_CFG_POSITIVE, &mn)) < 0 ||
        (rc = colo_cfg_int(r, a, "max", COLO_CFG_POSITIVE, &mx)) < 0 ||
        (rc = colo_cfg_double(r, a, "target", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE,
                              &out->target)) < 0 ||
        (rc = colo_cfg_double(r, a, "tolerance", COLO_CFG_NONNEG, &out->tolerance)) < 0 ||
        (rc = colo_cfg_double(r, a, "interval_s", COLO_CFG_POSITIVE, &interval)) < 0 ||
        (rc = colo_cfg_double(r, a, "window_s", COLO_CFG_NONNEG, &window)) < 0 ||
        (rc = colo_cfg_double(r, a, "cold_start_s", COLO_CFG_REQUIRED | COLO_CFG_NONNEG, &cold)) <
            0)
        return rc;
    if (mx > replicas)
        return colo_cfg_error(r, config_setting_get_member(a, "max"), COLO_ERANGE,
                              "at most the service's %d copies or replicas, which are placed "
                              "for it",
                              replicas);
    if (out->tolerance >= 1)
        return colo_cfg_error(r, config_setting_get_member(a, "tolerance"), COLO_ERANGE,
                              "below 1 (got %g): at 1 or more no load would ever scale down",
                              out->tolerance);
    if (mn > mx)
        return colo_cfg_error(r, config_setting_get_member(a, "min"), COLO_ERANGE,
                              "at most max (%lld)", mx);
    if (interval > 3600 || window > 86400 || cold > 3600)
        return colo_cfg_error(r, a, COLO_ERANGE,
                              "interval_s and cold_start_s at most 3600, window_s at most 86400");
    out->min = (int)mn, out->max = (int)mx;
    out->interval = colo_time_from_ns(interval * 1e9);
    out->window = colo_time_from_ns(window * 1e9);
    out->cold_start = colo_time_from_ns(cold * 1e9);
    return 0;
}

static int record(colo_router_t *r, colo_time_t now, size_t n_on)
{
    if (colo_grow((void **)&r->series, &r->cap_series, r->n_series + 2, sizeof *r->series))
        return COLO_ENOMEM;
    r->series[r->n_series++] = COLO_TO_S(now);
    r->series[r->n_series++] = (double)n_on;
    return 0;
}

static size_t count_on(const colo_router_t *r)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        k += r->on[i];
    return k;
}

/* A decision (every interval). */
static void on_tick(void *obj, int64_t arg)
{
    colo_tenant_run_t *t = obj;
    colo_router_t *r = t->router;
    const colo_autoscale_cfg_t *c = &r->cfg.scale;
    colo_time_t now = t->sim->eq.now;
    (void)arg;
    size_t ready = 0, out = 0, on = count_on(r);
    for (size_t i = 0; i < r->n; i++)
        if (r->on[i] && r->ready_at[i] <= now) {
            ready++;
            out += colo_router_outstanding(r->reps[i]);
        }
    double ratio = ready ? (double)out / (c->target * (double)ready) : 1;
    int want =
        fabs(ratio - 1) <= c->tolerance ? (int)on : (int)ceil((double)out / c->target - 1e-9);
    want = want < c->min ? c->min : want > c->max ? c->max : want;
    r->recent[r->recent_pos] = want;
    r->recent_pos = (r->recent_pos + 1) % r->n_recent;
    int keep = want; /* down: the largest recommendation of the window */
    for (size_t k = 0; k < r->n_recent; k++)
        keep = r->recent[k] > keep ? r->recent[k] : keep;
    size_t target = (size_t)want > on ? (size_t)want : (size_t)keep < on ? (size_t)keep : on;
    for (size_t i = 0; i < r->n && on < target; i++) /* the lowest-numbered off */
        if (!r->on[i]) r->on[i] = true, r->ready_at[i] = now + c->cold_start, on++;
    for (size_t i = r->n; i-- > 0 && on > target;) /* the highest-numbered on */
        if (r->on[i]) r->on[i] = false, on--;
    if ((r->n_series < 2 || r->series[r->n_series - 1] != (double)on) && record(r, now, on))
        colo_serving_fail(t->sim, COLO_ENOMEM);
    r->next_tick = now + c->interval;
    colo_serving_fail(t->sim, colo_eq_schedule(&t->sim->eq, r->next_tick, on_tick, t, 0, NULL));
}

int colo_autoscale_start(colo_tenant_run_t *leader)
{
    colo_router_t *r = leader->router;
    const colo_autoscale_cfg_t *c = &r->cfg.scale;
    /* the window's recommendations, one per interval (at least the current one) */
    r->n_recent = (size_t)(c->window / c->interval) + 1;
    if (!(r->on = colo_calloc(r->n, sizeof *r->on)) ||
        !(r->ready_at = colo_calloc(r->n, sizeof *r->ready_at)) ||
        !(r->map = colo_calloc(r->n, sizeof *r->map)) ||
        !(r->recent = colo_calloc(r->n_recent, sizeof *r->recent)))
        return COLO_ENOMEM;
    for (size_t i = 0; i < (size_t)c->min && i < r->n; i++)
        r->on[i] = true; /* the minimum, ready from the start */
    for (size_t k = 0; k < r->n_recent; k++)
        r->recent[k] = c->min;
    r->next_tick = c->interval;
    if (record(r, 0, (size_t)c->min)) return COLO_ENOMEM;
    return colo_eq_schedule(&leader->sim->eq, r->next_tick, on_tick, leader, 0, NULL);
}

void colo_autoscale_free(colo_router_t *r)
{
    colo_free(r->on);
    colo_free(r->ready_at);
    colo_free(r->map);
    colo_free(r->recent);
    colo_free(r->series);
}

size_t colo_autoscale_view(colo_router_t *r, colo_time_t now)
{
    size_t k = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->on[i] && r->ready_at[i] <= now) r->map[k++] = i;
    return k;
}

double colo_autoscale_mean(const colo_router_t *r, colo_time_t from, colo_time_t to)
{
    double a = COLO_TO_S(from), b = COLO_TO_S(to), sum = 0;
    for (size_t k = 0; k + 1 < r->n_series; k += 2) {
        double t0 = r->series[k], t1 = k + 2 < r->n_series ? r->series[k + 2] : b;
        double lo = t0 > a ? t0 : a, hi = t1 < b ? t1 : b;
        if (hi > lo) sum += r->series[k + 1] * (hi - lo);
    }
    return b > a ? sum / (b - a) : 0;
}
