/* run_stats.c: a finished run's figures per tenant, for programs that embed colosim
 * (colosim.h) and for the results document (results.c), from one computation. */
#include "run_stats.h"
#include "errors.h"
#include "llm_cfg.h"
#include "metrics.h"
#include "run_stats_internal.h"
#include "serving.h"

#include <string.h>

size_t colo_sim_tenant_count(const colo_sim_t *sim)
{
    return sim->n;
}

const char *colo_sim_tenant_name(const colo_sim_t *sim, size_t i)
{
    return i < sim->n ? sim->t[i].cfg->name : NULL;
}

long colo_sim_tenant_find(const colo_sim_t *sim, const char *name)
{
    for (size_t i = 0; i < sim->n; i++)
        if (strcmp(sim->t[i].cfg->name, name) == 0) return (long)i;
    return -1;
}

void colo_run_stats_of(const colo_sim_t *sim, size_t i, const colo_latency_summary_t *lat,
                       colo_run_stats_t *out)
{
    const colo_tenant_run_t *t = &sim->t[i];
    const colo_tenant_cfg_t *c = t->cfg;
    colo_time_t window = sim->sc->duration - sim->sc->warmup;
    memset(out, 0, sizeof *out);
    out->arrived = t->arrived;
    out->completed = t->completed;
    out->dropped = t->dropped;
    out->in_flight = t->arrived - t->completed - t->dropped;
    /* an LLM tenant's SLOs: time to first token and per output token, and end to end */
    bool slo = c->slo > 0 || (c->llm && (c->llm->slo_ttft > 0 || c->llm->slo_tpot > 0));
    out->throughput_rps = (double)t->finished_in_window / COLO_TO_S(window);
    out->goodput_rps = slo ? (double)t->good_in_window / COLO_TO_S(window) : -1;
    out->offered_rps = (double)t->arrived / COLO_TO_S(window);
    /* MLPerf Offline: every sample is issued at t = 0, and LoadGen's samples per second are
     * the samples over the time from then to the last completion, not over the window */
    if (c->arrival.burst > 0) {
        double span = t->last_done > 0 ? COLO_TO_S(t->last_done) : 0;
        out->throughput_rps = span > 0 ? (double)t->done_all / span : 0;
        if (slo) out->goodput_rps = span > 0 ? (double)t->good_all / span : 0;
    } else if (t->lg && t->arrivals_ended >= 0 && t->last_done > sim->sc->warmup &&
               t->last_done < sim->sc->duration) {
        /* LoadGen stopped issuing (its minimum duration and queries met) and answered its
         * last query inside the window: its rate over the window up to that answer, as
         * LoadGen measures it, not over the idle rest */
        double span = COLO_TO_S(t->last_done - sim->sc->warmup);
        out->throughput_rps = (double)t->finished_in_window / span;
        if (slo) out->goodput_rps = (double)t->good_in_window / span;
        out->offered_rps = (double)t->arrived / span;
    }
    out->overloaded = t->overloaded;
    out->mean_ms = lat->mean_ms;
    out->p50_ms = lat->p50_ms;
    out->p90_ms = lat->p90_ms;
    out->p99_ms = lat->p99_ms;
    out->p999_ms = lat->p999_ms;
    out->max_ms = lat->max_ms;
    out->slo_ms = c->slo > 0 ? c->slo_ms : 0;
    out->slo_attainment = slo && t->arrived ? (double)t->slo_met / (double)t->arrived : -1;
    out->gpu_share = window > 0 ? (double)t->gpu_time / (double)window : 0.0;
}

/* The LLM fields of *out for tenant i: -1 where it is no LLM tenant or has no such figure. */
static int llm_fields(const colo_sim_t *sim, size_t i, colo_run_stats_t *out)
{
    double *ttft[] = {&out->ttft_mean_ms, &out->ttft_p50_ms, &out->ttft_p90_ms, &out->ttft_p99_ms,
                      &out->ttft_max_ms};
    double *tpot[] = {&out->tpot_mean_ms, &out->tpot_p50_ms, &out->tpot_p90_ms, &out->tpot_p99_ms,
                      &out->tpot_max_ms};
    for (size_t k = 0; k < 5; k++)
        *ttft[k] = *tpot[k] = -1;
    out->output_tokens_per_s = -1;
    out->prefix_hit_rate_blocks = out->prefix_hit_rate_tokens = -1;
    const colo_llm_cfg_t *c = sim->t[i].cfg->llm;
    if (!c) return 0;
    out->slo_ttft_ms = c->slo_ttft > 0 ? c->slo_ttft_ms : 0;
    out->slo_tpot_ms = c->slo_tpot > 0 ? c->slo_tpot_ms : 0;
    colo_llm_stats_t st;
    int rc = colo_tenant_llm_stats(sim, i, &st);
    if (rc) return rc;
    out->output_tokens_per_s = st.output_tokens_per_s;
    if (st.prefix_caching && st.prefix_requests) {
        out->prefix_hit_rate_blocks =
            (double)st.prefix_hit_blocks / (double)st.prefix_prompt_blocks;
        out->prefix_hit_rate_tokens =
            (double)st.prefix_hit_tokens / (double)st.prefix_prompt_tokens;
    }
    out->prefix_evicted_blocks = st.prefix_evicted_blocks;
    const colo_latency_summary_t *s[] = {&st.ttft, &st.tpot};
    double **f[] = {ttft, tpot};
    for (size_t k = 0; k < 2; k++) {
        if (!s[k]->n) continue;
        double v[] = {s[k]->mean_ms, s[k]->p50_ms, s[k]->p90_ms, s[k]->p99_ms, s[k]->max_ms};
        for (size_t j = 0; j < 5; j++)
            *f[k][j] = v[j];
    }
    return 0;
}

int colo_sim_tenant_stats(const colo_sim_t *sim, size_t i, colo_run_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (i >= sim->n) return COLO_EINVAL;
    colo_latency_summary_t lat;
    if (colo_latency_summarise(&sim->t[i].latency, &lat)) return COLO_ENOMEM;
    colo_run_stats_of(sim, i, &lat, out);
    return llm_fields(sim, i, out) ? COLO_ENOMEM : 0;
}
