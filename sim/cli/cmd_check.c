/* cmd_check.c: colosim check: validate a scenario and print the set-up it resolves to. */
#include "cli.h"
#include "llm_cfg.h"
#include "alloc.h"
#include "cluster.h"
#include "errors.h"
#include "gpu.h"
#include "scenario.h"
#include "serving.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char usage_check[] =
    "usage: colosim check FILE [--seed N] [--set KEY=VALUE ...]\n"
    "\n"
    "Validates the scenario in FILE, with the same overrides as run, and prints the set-up it\n"
    "resolves to: GPU, sharing, each tenant's trace, its time alone on the GPU and the load it\n"
    "offers; for a cluster, its GPUs, placement policy and services (nothing is placed or\n"
    "simulated). Prints FILE:LINE: KEY: PROBLEM and exits 2 when something is wrong.\n";

/* The sharing set-up in words, for check. */
/* The host's cores when they may be too few, or when a tenant's framework costs host time
 * (docs/model.md, "The host"). */
static void print_host(const colo_scenario_t *sc)
{
    int streams = 0;
    bool framework = false;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *t = &sc->tenants[i];
        streams += t->llm ? 0 : t->instances;
        framework |= t->host_launch > 0;
    }
    bool few = sc->host.cores > 0 && streams > sc->host.cores;
    if (!few && !framework && sc->host.speed == 1.0) return;
    if (sc->host.cores > 0)
        printf("host      %d cores for %d dispatching stream%s%s, speed x%g\n", sc->host.cores,
               streams, streams == 1 ? "" : "s",
               few ? ": host time stretches when more dispatch at once" : "", sc->host.speed);
    else
        printf("host      cores not limited, speed x%g\n", sc->host.speed);
}

static void print_sharing(const colo_scenario_t *sc)
{
    const char *mode = colo_share_mode_name(sc->sharing.mode);
    const char *autol = sc->sharing.auto_layout ? " (layout chosen by colosim)" : "";
    if (sc->k8s.on && sc->k8s.mps)
        printf("k8s       device plugin MPS sharing, %d replicas: each pod an MPS client with "
               "%d %% of the threads and %lld MiB of memory (set_default_active_thread_percentage "
               "%d, set_default_device_pinned_mem_limit %lldM)\n",
               sc->k8s.replicas, sc->k8s.thread_percentage, sc->k8s.mem_limit_mib,
               sc->k8s.thread_percentage, sc->k8s.mem_limit_mib);
    else if (sc->k8s.on)
        printf("k8s       device plugin time-slicing, %d replicas: each pod a process taking "
               "turns on the GPU, no memory or fault isolation\n",
               sc->k8s.replicas);
    if (sc->sharing.colours)
        printf("colours   DRAM channels in %d colours of %d\n", sc->sharing.colours,
               sc->gpu->memory.channels / sc->sharing.colours);
    if (sc->pcie_fair) printf("pcie      fair: tenants share each direction by pcie_weight\n");
    if (sc->merge)
        printf("fidelity  merged: runs of kernels within %g of their average use run as one "
               "(approximate; docs/engine.md)\n",
               sc->merge_tolerance);
    print_host(sc);
    switch (sc->sharing.mode) {
    case COLO_SHARE_TIMESLICE:
        printf("sharing   timeslice: %s time slice %.0f us, context switch %.0f us\n",
               sc->sharing.timeslice_name, (double)sc->sharing.timeslice / 1e3,
               (double)sc->sharing.switch_cost / 1e3);
        break;
    case COLO_SHARE_MPS:
        printf("sharing   mps: one server, at most %d clients (CUDA %s)%s\n",
               sc->sharing.mps_clients, sc->sharing.cuda_13_1 ? "13.1" : "13.0",
               sc->sharing.static_partitions ? ", static SM partitions" : "");
        break;
    case COLO_SHARE_GREEN:
        printf("sharing   green: one process, one Green Context per tenant%s%s\n",
               sc->sharing.overlap ? ", overlap allowed" : "", autol);
        break;
    case COLO_SHARE_MIG:
        printf("sharing   mig: %zu instance%s%s\n", sc->sharing.n_instances,
               sc->sharing.n_instances == 1 ? "" : "s", autol);
        for (size_t k = 0; k < sc->sharing.n_instances; k++) {
            const colo_mig_instance_t *in = &sc->sharing.instances[k];
            printf("            %-8s %-11s at slots %d-%d, %d SMs, %.2f GiB, %s inside\n", in->name,
                   in->profile->name, in->placement, in->placement + in->profile->memory_slices - 1,
                   in->profile->sms, in->profile->memory_gib, colo_share_mode_name(in->share));
        }
        break;
    }
    (void)mode;
    if (sc->scheduler.ops) {
        const colo_sched_ops_t *ops = sc->scheduler.ops;
        printf("scheduler %s: %s", ops->name, ops->summary);
        for (size_t k = 0; k < COLO_SCHED_MAX_PARAMS && ops->params[k]; k++)
            printf("%s%s = %g", k ? ", " : "; ", ops->params[k], sc->scheduler.param[k]);
        printf("\n");
    }
    if (sc->n_faults)
        printf("faults    %zu; a crashed process or MPS server is back after %.3g s\n",
               sc->n_faults, COLO_TO_S(sc->sharing.recovery));
}

static void tokens_text(const colo_token_dist_t *d, char *buf, size_t n)
{
    switch (d->kind) {
    case COLO_TOKENS_LOG: snprintf(buf, n, "from the log"); break;
    case COLO_TOKENS_FIXED: snprintf(buf, n, "%lld", d->value); break;
    case COLO_TOKENS_UNIFORM: snprintf(buf, n, "uniform %lld-%lld", d->min, d->max); break;
    case COLO_TOKENS_LOGNORMAL:
        snprintf(buf, n, "lognormal median %g sigma %g, at most %lld", d->median, d->sigma, d->max);
        break;
    case COLO_TOKENS_ZIPF: snprintf(buf, n, "Zipf s %g over 1-%lld", d->s, d->max); break;
    case COLO_TOKENS_SESSION:
        snprintf(buf, n, "a session's history, %lld-%lld", d->min, d->max);
        break;
    }
}

/* An LLM tenant's profile, engine, KV cache and tokens. */
static void print_llm(const colo_tenant_cfg_t *t)
{
    const colo_llm_cfg_t *c = t->llm;
    const colo_llm_profile_t *p = c->profile;
    printf("  %-14s llm   %s\n", t->name, c->profile_path);
    printf("  %-14s   %s, %d layers, measured on %s%s%s\n", "", p->model, p->layers, p->gpu,
           c->precision != COLO_MATH_AUTO ? "; run at " : "",
           c->precision != COLO_MATH_AUTO ? colo_math_name(c->precision) : "");
    char how[64];
    if (c->chunk_tokens > 0)
        snprintf(how, sizeof how, "chunked prefill, %d tokens an iteration", c->chunk_tokens);
    else
        snprintf(how, sizeof how, "prefill first, %d tokens an iteration",
                 c->max_num_batched_tokens);
    printf("  %-14s   engine: up to %d sequences, %s, %d kernel%s per operator\n", "",
           c->max_num_seqs, how, c->layer_groups, c->layer_groups == 1 ? "" : "s");
    if (c->tensor_parallel > 1)
        printf("  %-14s   tensor parallelism %d: rank 0 of %d GPUs like this one, two "
               "all-reduces a layer\n",
               "", c->tensor_parallel, c->tensor_parallel);
    if (c->kv_cache_gib_given > 0)
        printf("  %-14s   KV cache %.2f GiB (kv_cache_gib; weights %.2f, activations %.2f, of "
               "%.1f GiB: %s)",
               "", c->kv_cache_gib, c->weights_gib, c->activations_gib, c->memory_gib,
               c->memory_from);
    else
        printf("  %-14s   KV cache %.2f GiB = %.1f GiB (%s) x %.2f - weights %.2f - "
               "activations %.2f",
               "", c->kv_cache_gib, c->memory_gib, c->memory_from, c->gpu_memory_utilization,
               c->weights_gib, c->activations_gib);
    printf(": %lld blocks of %d tokens\n", c->kv_blocks, c->block_tokens);
    char pr[96], ou[96];
    tokens_text(&c->prompt, pr, sizeof pr);
    tokens_text(&c->output, ou, sizeof ou);
    printf("  %-14s   tokens: prompt %s; output %s; typical %lld and %lld\n", "", pr, ou,
           c->typical_prompt, c->typical_output);
    const colo_prompts_cfg_t *g = &c->prompts;
    if (g->kind == COLO_PROMPTS_GROUPS)
        printf("  %-14s   prompts: %lld groups x %lld users, prefix %lld, question %lld\n", "",
               g->groups, g->users, g->prefix, g->question);
    if (g->kind == COLO_PROMPTS_SESSIONS)
        printf("  %-14s   prompts: %lld sessions of %lld turns, system %lld, message %lld\n", "",
               g->sessions, g->turns, g->system, g->message);
    if (c->prefix_caching) printf("  %-14s   prefix caching on\n", "");
}

/* Batching: the smallest batch b whose time alone, shared by its b requests, lets instances
 * keep up with rate (rate x time(b) / b < instances) into *out; the largest batch when none
 * does. Time per request falls with the batch while the GPU is underfilled, so a binary search
 * over [1, max_batch] (O(log max_batch) request times). */
static int min_batch(const colo_scenario_t *sc, size_t i, colo_place_rates_t pr, double rate,
                     int instances, int *out, colo_error_t *err)
{
    int lo = 1, hi = sc->tenants[i].max_batch;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        colo_time_t t;
        int rc = colo_tenant_request_time(sc, i, pr, mid, &t, err);
        if (rc) return rc;
        if (rate * COLO_TO_S(t) / mid < instances)
            hi = mid;
        else
            lo = mid + 1;
    }
    *out = lo;
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    struct colo_cli_scenario_opts o;
    colo_scenario_t *sc;
    int status = colo_cli_scenario_args(argc, argv, usage_check, 0, &o);
    if (status >= 0) return status;
    if (colo_cli_is_cluster(&o)) {
        colo_error_t cerr;
        colo_error_clear(&cerr);
        int rc = colo_cluster_check(o.file, o.sets, o.n_sets, stdout, &cerr);
        if (rc) colo_cli_print_error(&cerr);
        colo_free(o.sets);
        return rc ? colo_cli_exit_for(rc) : 0;
    }
    if ((status = colo_cli_load_scenario(&o, &sc)) >= 0) return status;
    colo_free(o.sets);
    const colo_gpu_t *g = sc->gpu;
    /* a description is a line, not a document: the first 200 bytes (a whole character) */
    int dlen = sc->description ? (int)strlen(sc->description) : 0;
    bool cut = dlen > 200;
    if (cut)
        for (dlen = 200; dlen > 0 && ((unsigned char)sc->description[dlen] & 0xC0) == 0x80; dlen--)
            ;
    printf("scenario  %s%s%.*s%s\n", sc->path, sc->description ? ": " : "", dlen,
           sc->description ? sc->description : "", cut ? " ..." : "");
    printf("gpu       %s (%s), from %s\n", g->name, g->full_name, g->path);
    if (g->calibration.path)
        printf("          calibrated: %s (%s, %s)\n", g->calibration.path, g->calibration.device,
               g->calibration.date);
    else if (sc->calibration && strcmp(sc->calibration, "none") == 0)
        printf("          datasheet values: calibration = \"none\"\n");
    else
        printf("          datasheet values: no calibration file\n");
    printf("run       seed %llu; arrivals for %.3g s, measured after %.3g s warm-up; up to %.3g s "
           "drain\n",
           (unsigned long long)sc->seed, COLO_TO_S(sc->duration), COLO_TO_S(sc->warmup),
           COLO_TO_S(sc->drain));
    print_sharing(sc);
    printf("tenants   %zu\n", sc->n_tenants);
    double together = 0; /* time-slicing: the tenants' loads on the GPU, summed */
    for (size_t i = 0; i < sc->n_tenants; i++) {
        const colo_tenant_cfg_t *t = &sc->tenants[i];
        const colo_trace_t *tr = t->trace;
        colo_time_t alone;
        colo_error_t err;
        colo_error_clear(&err);
        colo_place_rates_t pr = colo_tenant_place_rates(sc, i);
        if (colo_tenant_isolated(sc, i, &alone, &err)) {
            colo_cli_print_error(&err);
            colo_scenario_free(sc);
            return EXIT_INPUT;
        }
        /* the GPU time one request takes: a full batch's time shared by its requests */
        colo_time_t per_request = alone, one = alone;
        int keeps_up = 0; /* batching: the smallest batch whose time per request keeps up */
        double rate = colo_arrival_rate(&t->arrival);
        if (t->max_batch > 1) {
            colo_time_t full;
            if (colo_tenant_request_time(sc, i, pr, t->max_batch, &full, &err) ||
                colo_tenant_request_time(sc, i, pr, 1, &one, &err) ||
                (rate > 0 && min_batch(sc, i, pr, rate, t->instances, &keeps_up, &err))) {
                colo_cli_print_error(&err);
                colo_scenario_free(sc);
                return EXIT_INPUT;
            }
            per_request = full / t->max_batch;
            alone = full; /* printed below as the full batch's time */
        }
        double load = colo_arrival_rate(&t->arrival) * COLO_TO_S(per_request);
        if (!t->llm) together += load;
        char arr[600];
        colo_arrival_describe(&t->arrival, arr, sizeof arr);
        if (t->llm) print_llm(t);
        for (size_t v = 0; v < t->n_variants && !t->llm; v++) {
            tr = t->variants[v].trace;
            printf("  %-14s %s %s\n", v ? "" : t->name, v ? "      " : "trace",
                   t->variants[v].path);
            printf("  %-14s   %s, batch %d: %zu kernels, %zu copies, measured on %s\n", "",
                   tr->model, tr->batch, tr->n_kernels, tr->n_copies, tr->gpu);
        }
        tr = t->trace;
        if (t->max_batch > 0)
            printf("  %-14s   dynamic batching: up to %d requests, waiting at most %g ms\n", "",
                   t->max_batch, COLO_TO_MS(t->max_delay));
        if (t->queue_limit > 0 || t->deadline > 0)
            printf("  %-14s   queue limit %lld, deadline %g ms\n", "", t->queue_limit,
                   COLO_TO_MS(t->deadline));
        char where[160] = "";
        if (sc->sharing.mode == COLO_SHARE_MIG)
            snprintf(where, sizeof where, "instance %s, ", sc->sharing.instances[t->instance].name);
        else if (t->sm_count > 0)
            snprintf(where, sizeof where, "SMs %d-%d, ", t->sm_first,
                     t->sm_first + t->sm_count - 1);
        else if (t->sm_cap > 0)
            snprintf(where, sizeof where, "at most %d SMs (%d %% of threads), ", t->sm_cap,
                     t->active_thread_percentage);
        printf("  %-14s   runs on %s%d SMs, %.0f GB/s DRAM, %.0f GB/s L2%s\n", "", where, pr.sms,
               pr.dram_rate, pr.l2_rate, t->priority ? ", below-normal priority" : "");
        if (t->n_channels > 0)
            printf("  %-14s   its memory on %d of %d DRAM channels (%d-%d%s)\n", "", t->n_channels,
                   sc->gpu->memory.channels, t->channels[0], t->channels[t->n_channels - 1],
                   t->colour >= 0 ? ", its colour" : "");
        if (!t->llm) {
            char how[160];
            if (t->cuda_graphs)
                snprintf(how, sizeof how, "each request one CUDA graph");
            else if (t->host_launch > 0)
                snprintf(how, sizeof how,
                         "kernels launched one by one by %s (%.1f us of host each)",
                         colo_framework_name(t->framework), COLO_TO_MS(t->host_launch) * 1e3);
            else
                snprintf(how, sizeof how, "kernels launched one by one");
            printf("  %-14s   %d instance%s (requests in flight at once), %s, fp32_math %s%s%s\n",
                   "", t->instances, t->instances == 1 ? "" : "s", how,
                   colo_fp32_math_name(t->fp32_math),
                   t->precision != COLO_MATH_AUTO ? ", precision " : "",
                   t->precision != COLO_MATH_AUTO ? colo_math_name(t->precision) : "");
        }
        if (t->llm)
            printf("  %-14s   alone there: %.3f ms for a typical request, arrival to last token\n",
                   "", COLO_TO_MS(alone));
        else if (t->max_batch > 1)
            printf("  %-14s   alone there: %.3f ms per full batch of %d (kernels on %s: %.3f ms at "
                   "batch %d)\n",
                   "", COLO_TO_MS(alone), t->max_batch, tr->gpu, COLO_TO_MS(tr->kernel_time),
                   tr->batch);
        else
            printf("  %-14s   alone there: %.3f ms per request (kernels on %s: %.3f ms)\n", "",
                   COLO_TO_MS(alone), tr->gpu, COLO_TO_MS(tr->kernel_time));
        char slo[80] = "none";
        if (t->slo > 0) snprintf(slo, sizeof slo, "%.6g ms", t->slo_ms);
        if (t->llm && (t->llm->slo_ttft_ms > 0 || t->llm->slo_tpot_ms > 0))
            snprintf(slo, sizeof slo, "TTFT %.6g ms, TPOT %.6g ms%s", t->llm->slo_ttft_ms,
                     t->llm->slo_tpot_ms, t->slo > 0 ? " and end to end" : "");
        printf("  %-14s   arrivals: %s; SLO %s\n", "", arr, slo);
        double load1 = rate * COLO_TO_S(one);
        if (load > 0 && !t->llm && t->max_batch > 1) {
            /* a batch fills only as requests come: full batches are the best case, one request
             * at a time the worst */
            char note[128] = "";
            if (load >= t->instances)
                snprintf(note, sizeof note, " (its queue grows without bound even in full batches)");
            else if (load1 >= t->instances)
                snprintf(note, sizeof note, " (it keeps up only in batches of %d or more)",
                         keeps_up);
            printf("  %-14s   busy %.1f %% of the time alone in full batches, %.1f %% one request "
                   "at a time%s\n",
                   "", 100 * load, 100 * load1, note);
        }
        else if (load > 0 && !t->llm)
            printf("  %-14s   busy %.1f %% of the time alone%s\n", "", 100 * load,
                   load >= t->instances ? " (its queue grows without bound)"
                   : load >= 1 ? " (more than one request at a time: its instances must overlap)"
                               : "");
        if (t->memory_gib > 0) printf("  %-14s   device memory %.2f GiB\n", "", t->memory_gib);
    }
    if (sc->sharing.mode == COLO_SHARE_TIMESLICE && sc->n_tenants > 1 && together > 0)
        /* one context at a time: their times alone add up (full batches: the best case) */
        printf("together busy %.1f %% of the GPU's time alone%s\n", 100 * together,
               together >= 1 ? " (time-slicing runs one at a time: the queues grow without bound)"
                             : "");
    printf("ok\n");
    colo_scenario_free(sc);
    return 0;
}

const colo_cli_command_t colo_cli_check = {"check", usage_check, cmd_check, false};
