/* cluster_results.c: a cluster's results: per service (its replicas merged), per GPU and the
 * summary, as JSON and as the table colosim run prints. */
#include "cluster.h"
#include "cluster_internal.h"
#include "scenario.h"
#include "simtime.h"
#include "version.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The counts of an LLM replica's prefix cache (results.md), summed over a service's replicas. */
static const char *const prefix_counts[] = {"requests",      "prompt_blocks", "hit_blocks",
                                            "prompt_tokens", "hit_tokens",    "evicted_blocks"};

static double num(json_t *o, const char *k)
{
    return json_number_value(json_object_get(o, k));
}

static json_t *part_json(const colo_cluster_t *c, const colo_cluster_replica_t *r, int start)
{
    if (c->mode == COLO_SHARE_MIG)
        return json_pack("{s:s,s:i}", "mig_profile", r->part.prof->name, "placement", start);
    if (c->mode == COLO_SHARE_GREEN) return json_pack("{s:i}", "sms", r->part.sms);
    return json_pack("{s:s}", "whole", "gpu");
}

/* One service's figures over its replicas: counts and rates summed, SLO attainment weighted
 * by arrivals, the mean weighted by completions, percentiles the worst replica's; a routed
 * service's latency over all its requests (lat, from their samples). */
static json_t *service_json(const colo_cluster_t *c, size_t t, json_t *const *gpu_res,
                            json_t *lat_all)
{
    double arrived = 0, completed = 0, dropped = 0, in_flight = 0, tput = 0, good = 0, met = 0;
    double mean = 0, iso = 0, slo = 0;
    double worst[5] = {0}, pc_sum[6] = {0}, tok_out = 0, tok_in = 0;
    int pc_n = 0;
    static const char *const pct[] = {"p50", "p90", "p99", "p999", "max"};
    json_t *gpus = json_array(), *first = NULL;
    bool has_slo = false;
    int placed = 0;
    for (size_t gi = 0; gi < c->n_gpus; gi++)
        for (size_t m = 0; m < c->gpus[gi].n; m++) {
            const colo_cluster_replica_t *r = &c->replicas[c->gpus[gi].members[m]];
            if (r->tenant != t) continue;
            json_t *o = json_array_get(json_object_get(gpu_res[gi], "tenants"), m);
            if (!o) continue;
            if (!first) first = o;
            placed++;
            json_array_append_new(gpus, json_integer((json_int_t)gi));
            double a = num(o, "arrived"), done = num(o, "completed");
            arrived += a;
            completed += done;
            dropped += num(o, "dropped");
            in_flight += num(o, "in_flight");
            tput += num(o, "throughput_rps");
            good += num(o, "goodput_rps");
            json_t *att = json_object_get(o, "slo_attainment");
            if (json_is_number(att)) {
                has_slo = true;
                met += json_number_value(att) * a;
            }
            json_t *lat = json_object_get(o, "latency_ms");
            json_t *pc = json_object_get(json_object_get(o, "llm"), "prefix_cache");
            tok_out += num(json_object_get(o, "llm"), "output_tokens_per_s");
            tok_in += num(json_object_get(o, "llm"), "prompt_tokens_per_s");
            if (json_is_object(pc)) { /* an LLM replica's prefix cache: counts summed */
                for (size_t k = 0; k < 6; k++)
                    pc_sum[k] += num(pc, prefix_counts[k]);
                pc_n++;
            }
            mean += num(lat, "mean") * done;
            for (size_t k = 0; k < 5; k++)
                worst[k] = fmax(worst[k], num(lat, pct[k]));
            iso = num(o, "isolated_ms");
            slo = num(o, "slo_ms");
        }
    json_t *lat =
        json_pack("{s:f,s:f,s:f,s:f,s:f,s:f}", "mean", completed > 0 ? mean / completed : 0, "p50",
                  worst[0], "p90", worst[1], "p99", worst[2], "p999", worst[3], "max", worst[4]);
    json_t *o =
        json_pack("{s:s,s:o,s:i,s:i,s:o,s:o,s:f,s:I,s:I,s:I,s:I,s:o,s:f,s:o,s:o,s:s}", "name",
                  colo_cluster_tenant_name(c, t), "model",
                  first ? json_incref(json_object_get(first, "model")) : json_null(), "replicas",
                  c->tenants[t].replicas, "placed", placed, "gpus", gpus, "slo_ms",
                  slo > 0 ? json_real(slo) : json_null(), "isolated_ms", iso, "arrived",
                  (json_int_t)arrived, "completed", (json_int_t)completed, "dropped",
                  (json_int_t)dropped, "in_flight", (json_int_t)in_flight, "latency_ms", lat,
                  "throughput_rps", tput, "goodput_rps", has_slo ? json_real(good) : json_null(),
                  "slo_attainment", has_slo && arrived > 0 ? json_real(met / arrived) : json_null(),
                  "percentiles", lat_all ? "all its requests'" : "the worst replica's");
    json_t *llm = NULL; /* a routed LLM service: its requests' TTFT and TPOT, tokens summed */
    if (o && lat_all) {
        json_object_set(o, "latency_ms", json_object_get(lat_all, "latency_ms"));
        if (json_object_get(lat_all, "autoscale"))
            json_object_set(o, "autoscale", json_object_get(lat_all, "autoscale"));
        if (json_object_get(lat_all, "ttft_ms")) {
            llm = json_pack("{s:O,s:O,s:f,s:f}", "ttft_ms", json_object_get(lat_all, "ttft_ms"),
                            "tpot_ms", json_object_get(lat_all, "tpot_ms"), "output_tokens_per_s",
                            tok_out, "prompt_tokens_per_s", tok_in);
            json_object_set_new(o, "llm", llm);
        }
    }
    if (o && pc_n > 0) {
        json_t *pc = json_object();
        for (size_t k = 0; pc && k < 6; k++)
            json_object_set_new(pc, prefix_counts[k], json_integer((json_int_t)pc_sum[k]));
        json_object_set_new(pc, "hit_rate_blocks",
                            json_real(pc_sum[1] > 0 ? pc_sum[2] / pc_sum[1] : 0));
        json_object_set_new(pc, "hit_rate_tokens",
                            json_real(pc_sum[3] > 0 ? pc_sum[4] / pc_sum[3] : 0));
        json_object_set_new(llm ? llm : o, "prefix_cache", pc);
    }
    if (o)
        json_object_set_new(o, "router",
                            c->tenants[t].route.ops ? json_string(c->tenants[t].route.ops->name)
                                                    : json_null());
    if (o && c->tenants[t].rate >= 0)
        json_object_set_new(o, "offered_rps", json_real(c->tenants[t].rate));
    return o;
}

json_t *colo_cluster_results_json(const colo_cluster_t *c, json_t *const *gpu_res,
                                  json_t *const *svc_lat)
{
    const colo_scenario_t *sc = c->models[0];
    json_t *services = json_array(), *gpus = json_array(), *by_model = json_object();
    json_t *unplaced = json_array(), *pool = json_array(), *sets = json_array();
    if (!services || !gpus || !by_model || !unplaced || !pool || !sets) goto oom;
    bool all_met = true;
    for (size_t t = 0; t < c->n_tenants; t++) {
        json_t *o = service_json(c, t, gpu_res, svc_lat ? svc_lat[t] : NULL);
        if (!o || json_array_append_new(services, o)) goto oom;
        json_t *att = json_object_get(o, "slo_attainment");
        if (json_is_number(att) && json_number_value(att) < c->attainment) all_met = false;
    }
    double busy = 0;
    size_t used = 0; /* GPUs, with tensor-parallel replicas' other ranks */
    for (size_t gi = 0; gi < c->n_gpus; gi++) {
        const colo_cluster_gpu_t *g = &c->gpus[gi];
        const char *model = c->pools[g->pool].model;
        json_t *members = json_array();
        for (size_t m = 0; m < g->n && members; m++) {
            const colo_cluster_replica_t *r = &c->replicas[g->members[m]];
            char name[256];
            colo_cluster_replica_name(c, r, name, sizeof name);
            json_array_append_new(members,
                                  json_pack("{s:s,s:o,s:f}", "name", name, "part",
                                            part_json(c, r, g->placement[m]), "demand", r->demand));
        }
        double b = num(json_object_get(gpu_res[gi], "gpu"), "busy_fraction");
        busy += b * (1 + g->tp_ranks); /* a tensor-parallel replica's ranks run in lockstep */
        json_t *o = json_pack("{s:I,s:s,s:o,s:f,s:O}", "index", (json_int_t)gi, "model", model,
                              "tenants", members, "busy_fraction", b, "results", gpu_res[gi]);
        if (!o || json_array_append_new(gpus, o)) goto oom;
        if (g->tp_ranks > 0) /* the GPUs of its replica's other ranks */
            json_object_set_new(o, "tensor_parallel_ranks", json_integer(g->tp_ranks));
        used += 1 + (size_t)g->tp_ranks;
        json_object_set_new(
            by_model, model,
            json_integer(json_integer_value(json_object_get(by_model, model)) + 1 + g->tp_ranks));
    }
    for (size_t i = 0; i < c->n_replicas; i++)
        if (c->replicas[i].gpu < 0) {
            char name[256];
            colo_cluster_replica_name(c, &c->replicas[i], name, sizeof name);
            json_array_append_new(unplaced, json_string(name));
            all_met = false;
        }
    for (size_t p = 0; p < c->n_pools; p++)
        json_array_append_new(pool,
                              json_pack("{s:s,s:o}", "model", c->pools[p].model, "count",
                                        c->pools[p].count < 0 ? json_string("as many as needed")
                                                              : json_integer(c->pools[p].count)));
    for (size_t i = 0; i < c->n_sets; i++)
        json_array_append_new(sets, json_string(c->sets[i]));
    json_t *cluster = json_pack(
        "{s:s,s:s,s:s,s:f,s:f,s:o,s:I,s:o,s:b,s:o,s:o}", "policy",
        colo_cluster_policy_names[c->policy], "order", c->given_order ? "given" : "decreasing",
        "mechanism", colo_share_mode_name(c->mode), "headroom", c->headroom, "attainment_goal",
        c->attainment, "pool", pool, "gpus_used", (json_int_t)used, "gpus_by_model", by_model,
        "all_slo_met", all_met, "unplaced", unplaced, "gpus", gpus);
    json_t *scenario =
        json_pack("{s:s,s:o,s:f,s:f,s:f,s:o}", "path", c->path, "description",
                  sc->description ? json_string(sc->description) : json_null(), "duration_s",
                  COLO_TO_S(sc->duration), "warmup_s", COLO_TO_S(sc->warmup), "load_scale",
                  sc->load_scale, "overrides", sets);
    return json_pack("{s:{s:s,s:i},s:s,s:o,s:I,s:o,s:{s:f},s:o}", "colosim", "version",
                     COLO_VERSION, "results_format", 1, "kind", "cluster", "scenario", scenario,
                     "seed", (json_int_t)c->seed, "tenants", services, "gpu", "busy_fraction",
                     used ? busy / (double)used : 0.0, "cluster", cluster);
oom:
    json_decref(services);
    json_decref(gpus);
    json_decref(by_model);
    json_decref(unplaced);
    json_decref(pool);
    json_decref(sets);
    return NULL;
}

/* Each routed service's replicas: requests routed to each, on which GPU, and its p99. */
static void print_routed(json_t *res, FILE *f)
{
    size_t i, g, k;
    json_t *t, *gpu, *r;
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        const char *router = json_string_value(json_object_get(t, "router"));
        if (!router) continue;
        const char *svc = json_string_value(json_object_get(t, "name"));
        size_t len = strlen(svc);
        fprintf(f, "%s, routed by %s: requests (p99 ms) per replica:", svc, router);
        json_array_foreach(json_object_get(json_object_get(res, "cluster"), "gpus"), g, gpu)
        {
            json_array_foreach(json_object_get(json_object_get(gpu, "results"), "tenants"), k, r)
            {
                const char *name = json_string_value(json_object_get(r, "name"));
                if (!name || strncmp(name, svc, len) != 0 || strncmp(name + len, "-r", 2) != 0)
                    continue;
                fprintf(f, " %s %lld (%.2f) on GPU %zu;", name + len + 1,
                        (long long)json_integer_value(json_object_get(r, "arrived")),
                        num(json_object_get(r, "latency_ms"), "p99"), g);
            }
        }
        fputc('\n', f);
        json_t *llm = json_object_get(t, "llm"), *ttft = json_object_get(llm, "ttft_ms");
        json_t *pc = json_object_get(llm, "prefix_cache");
        json_t *as = json_object_get(t, "autoscale");
        if (json_is_object(ttft))
            fprintf(f,
                    "  over all its requests: TTFT p50 %.1f ms, p90 %.1f, p99 %.1f; TPOT p50 "
                    "%.2f ms, p99 %.2f; %.0f output tokens/s\n",
                    num(ttft, "p50"), num(ttft, "p90"), num(ttft, "p99"),
                    num(json_object_get(llm, "tpot_ms"), "p50"),
                    num(json_object_get(llm, "tpot_ms"), "p99"), num(llm, "output_tokens_per_s"));
        if (json_is_object(pc))
            fprintf(f, "  prefix cache: %.1f %% of prompt tokens found cached\n",
                    100 * num(pc, "hit_rate_tokens"));
        if (json_is_object(as))
            fprintf(f,
                    "  autoscaled %d to %d replicas: %.2f on average over the window, %zu "
                    "changes\n",
                    (int)num(as, "min"), (int)num(as, "max"), num(as, "mean_replicas"),
                    json_array_size(json_object_get(as, "replicas_over_time")) - 1);
    }
}

void colo_cluster_print(json_t *res, FILE *f)
{
    json_t *cl = json_object_get(res, "cluster");
    fprintf(f, "placement: %s, %s on every GPU, headroom %.0f %%\n",
            json_string_value(json_object_get(cl, "policy")),
            json_string_value(json_object_get(cl, "mechanism")), 100 * num(cl, "headroom"));
    size_t i, k;
    json_t *g, *t;
    json_array_foreach(json_object_get(cl, "gpus"), i, g)
    {
        fprintf(f, "  GPU %-3zu %-10s busy %5.1f %% :", i,
                json_string_value(json_object_get(g, "model")), 100 * num(g, "busy_fraction"));
        json_array_foreach(json_object_get(g, "tenants"), k, t)
        {
            json_t *p = json_object_get(t, "part");
            const char *prof = json_string_value(json_object_get(p, "mig_profile"));
            fprintf(f, " %s", json_string_value(json_object_get(t, "name")));
            if (prof)
                fprintf(f, " [%s]", prof);
            else if (json_object_get(p, "sms"))
                fprintf(f, " [%d SMs]", (int)num(p, "sms"));
            fprintf(f, " (%.0f %%)", 100 * num(t, "demand"));
        }
        int ranks = (int)num(g, "tensor_parallel_ranks");
        if (ranks > 0) fprintf(f, " + %d GPU%s for its other ranks", ranks, ranks > 1 ? "s" : "");
        fputc('\n', f);
    }
    fprintf(f, "\n%-16s %4s %9s %9s %9s %9s %8s %8s\n", "service", "reps", "offered/s", "tput/s",
            "p50 ms", "p99 ms", "SLO ms", "met %");
    json_array_foreach(json_object_get(res, "tenants"), i, t)
    {
        json_t *lat = json_object_get(t, "latency_ms"), *att = json_object_get(t, "slo_attainment");
        json_t *off = json_object_get(t, "offered_rps");
        char offered[32] = "-", slo[32] = "-", met[32] = "-";
        if (json_is_number(off)) snprintf(offered, sizeof offered, "%.1f", json_number_value(off));
        if (json_is_number(json_object_get(t, "slo_ms")))
            snprintf(slo, sizeof slo, "%.1f", num(t, "slo_ms"));
        if (json_is_number(att)) snprintf(met, sizeof met, "%.2f", 100 * json_number_value(att));
        fprintf(f, "%-16.16s %4d %9s %9.1f %9.3f %9.3f %8s %8s\n",
                json_string_value(json_object_get(t, "name")), (int)num(t, "replicas"), offered,
                num(t, "throughput_rps"), num(lat, "p50"), num(lat, "p99"), slo, met);
    }
    bool routed = false;
    json_array_foreach(json_object_get(res, "tenants"), i, t) routed |=
        json_is_string(json_object_get(t, "router"));
    fprintf(f, "(a service's percentiles are its worst replica's%s)\n",
            routed ? "; a routed one's, all its requests'" : "");
    print_routed(res, f);
    fputc('\n', f);
    fprintf(f, "GPUs %s: %d (",
            json_array_size(json_object_get(cl, "unplaced")) ? "used" : "needed",
            (int)num(cl, "gpus_used"));
    const char *model;
    json_t *cnt;
    bool first = true;
    json_object_foreach(json_object_get(cl, "gpus_by_model"), model, cnt)
    {
        fprintf(f, "%s%d %s", first ? "" : ", ", (int)json_integer_value(cnt), model);
        first = false;
    }
    size_t unplaced = json_array_size(json_object_get(cl, "unplaced"));
    bool any_slo = false;
    json_array_foreach(json_object_get(res, "tenants"), i, t) any_slo |=
        json_is_number(json_object_get(t, "slo_attainment"));
    if (any_slo)
        fprintf(f, ")%s; every SLO met for >= %.4g of requests: %s\n",
                unplaced ? ", all the cluster has, and more are needed" : "",
                num(cl, "attainment_goal"),
                json_is_true(json_object_get(cl, "all_slo_met")) ? "yes" : "no");
    else
        fprintf(f, ")%s; no service has an SLO\n",
                unplaced ? ", all the cluster has, and more are needed" : "");
    if (unplaced) {
        fprintf(f, "not placed (no GPU left):");
        json_array_foreach(json_object_get(cl, "unplaced"), i, t)
            fprintf(f, " %s", json_string_value(t));
        fputc('\n', f);
    }
}
