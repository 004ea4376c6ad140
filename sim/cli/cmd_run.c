/* cmd_run.c: colosim run: simulate a scenario (one GPU, a cluster, or --compare-modes). */
#include "cli.h"
#include "accuracy.h"
#include "alloc.h"
#include "cluster.h"
#include "errors.h"
#include "results.h"
#include "scenario.h"
#include "serving.h"
#include "stop.h"
#include "timeline.h"
#include "trace.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char usage_run[] =
    "usage: colosim run FILE [-o OUT.json] [--csv OUT.csv] [--timeline OUT.json\n"
    "                    [--timeline-window START:END]] [--seed N] [--set KEY=VALUE ...] [-q]\n"
    "                    [--compare-modes] [--plugin PATH.so ...]\n"
    "\n"
    "Simulates the scenario in FILE (libconfig; see docs/scenarios.md) and prints a per-tenant\n"
    "latency table. A scenario with a cluster section (docs/cluster.md) describes several GPUs:\n"
    "its tenants are placed on them by the cluster's policy, every GPU is simulated, and the\n"
    "placement, a per-service table and the number of GPUs needed are printed. Under the table:\n"
    "warnings (an overloaded tenant, a log that ran out) and the accuracy of predictions of\n"
    "this kind against published measurements (docs/validation.md), also in the results. A run\n"
    "that takes over a second shows its progress on a terminal (standard error; not with -q).\n"
    "\n"
    "  -o, --output OUT.json  write the results (docs/results.md) to OUT.json, atomically;\n"
    "                         '-' writes them to standard output and implies --quiet\n"
    "      --csv OUT.csv      write one row per tenant (docs/results.md), atomically\n"
    "      --timeline OUT.json\n"
    "                         write a timeline (Chrome Trace Event JSON; open it in\n"
    "                         ui.perfetto.dev): a track per tenant (batches, kernels), each\n"
    "                         request from arrival to end with arrows to its kernels, per SM\n"
    "                         partition and per copy-engine direction, kernels running and queue\n"
    "                         lengths; only events in the window are written; OUT.json.gz is\n"
    "                         written gzipped. A timeline estimated over 100 MB is announced.\n"
    "                         A cluster file: one per simulated GPU, OUT.gpuN.json\n"
    "      --timeline-window START:END\n"
    "                         the timeline's window in seconds of simulated time (default: the\n"
    "                         first second after warmup_s); START below duration_s\n"
    "      --seed N           use seed N instead of the scenario's seed\n"
    "      --set KEY=VALUE    override any single value of the scenario, e.g.\n"
    "                         --set sharing.timeslice=short  --set duration_s=60\n"
    "                         --set tenants.resnet50.arrival.rate=300  (a tenant by name or [N])\n"
    "      --plugin PATH.so   load a plug-in first: its schedulers and arrival processes become\n"
    "                         names the scenario may use (docs/embedding.md); may be repeated\n"
    "  -q, --quiet            do not print the table\n"
    "      --compare-modes    run the same tenants under timeslice, mps, mig and green and print\n"
    "                         them side by side (-o writes all four results); where the scenario\n"
    "                         gives no MIG instances or Green Context SMs, colosim chooses an "
    "even\n"
    "                         layout (docs/sharing.md)\n";

/* Says on stderr, before the run, when the timeline of window [a, b) will be large (over 100
 * MB written): its size estimated from the kernels the window will hold, each tenant's requests
 * per second x kernels per request x the window's seconds of arrivals, at the bytes per kernel
 * measured on a shipped scenario (COLO_TL_BYTES_PER_KERNEL; over COLO_TL_GZIP_RATIO gzipped).
 * Rough where requests are batched (fewer kernels) or arrive in a closed loop (a client's rate
 * taken as one request per think time and request alone). O(tenants x kernels of a trace). */
static void timeline_size_note(const colo_scenario_t *sc, const colo_sim_t *sim, colo_time_t a,
                               colo_time_t b, const char *path)
{
    double secs = COLO_TO_S((b < sc->duration ? b : sc->duration) - a), kernels = 0;
    for (size_t i = 0; i < sc->n_tenants && i < sim->n; i++) {
        const colo_tenant_cfg_t *c = &sc->tenants[i];
        const colo_arrival_cfg_t *ar = &c->arrival;
        double rate = colo_arrival_rate(ar);
        if (rate <= 0 && ar->clients > 0)
            rate = ar->clients * (ar->per_query > 0 ? ar->per_query : 1) /
                   COLO_TO_S(ar->think + sim->t[i].isolated + 1);
        size_t k = 0;
        for (size_t j = 0; c->trace && j < c->trace->n_ops; j++)
            k += c->trace->ops[j].type == COLO_OP_KERNEL;
        kernels += rate * secs * (double)k;
    }
    bool gz = colo_timeline_gzipped(path);
    double bytes = kernels * COLO_TL_BYTES_PER_KERNEL / (gz ? COLO_TL_GZIP_RATIO : 1.0);
    if (bytes <= 100e6) return;
    fprintf(stderr,
            "colosim: the timeline will be about %.0f MB%s (some %.3g kernels in its %.6g s "
            "window, ~%.0f bytes each%s): a shorter --timeline-window%s makes it smaller\n",
            bytes / 1e6, gz ? " gzipped" : "", kernels, secs, COLO_TL_BYTES_PER_KERNEL,
            gz ? " before gzip" : "", gz ? "" : ", or a name ending .json.gz (gzipped),");
}

/* run on a scenario with a cluster section: placement, every GPU, the summary. */
static int run_cluster(struct colo_cli_scenario_opts *o)
{
    colo_error_t err;
    colo_error_clear(&err);
    json_t *res = NULL;
    int rc = 0;
    if (o->csv)
        rc = colo_error_set(&err, COLO_EINVAL, "--csv", 0, NULL,
                            "not for a cluster yet: run one GPU's scenario for that");
    /* --timeline: a file per simulated GPU (FILE.gpuN.json), requests on their replica's track */
    colo_fleet_timeline_t tl = {o->timeline, o->tl_start, o->tl_end, o->tl_end > 0};
    if (!rc)
        rc = colo_cluster_run_timeline(o->file, o->sets, o->n_sets, o->timeline ? &tl : NULL, &res,
                                       &err);
    if (!rc) { /* the accuracy of what its GPUs ran */
        colo_accuracy_facts_t facts = {0};
        colo_accuracy_add_results(&facts, res);
        if (json_object_set_new(res, "accuracy", colo_accuracy_find(&facts)))
            rc = colo_error_set(&err, COLO_ENOMEM, o->file, 0, NULL, "out of memory");
    }
    if (!rc && o->output) rc = colo_results_write(res, o->output, &err);
    size_t n_gpus = json_array_size(json_object_get(json_object_get(res, "cluster"), "gpus"));
    for (size_t gi = 0; rc && o->timeline && gi < n_gpus; gi++) { /* written whole or not */
        char name[4096];
        colo_fleet_timeline_name(o->timeline, gi, name, sizeof name);
        colo_cli_take_back(name);
    }
    int status = 0;
    if (rc) {
        colo_cli_print_error(&err);
        status = colo_cli_exit_for(rc);
    } else if (!o->quiet) {
        colo_cluster_print(res, stdout);
        colo_accuracy_print(json_object_get(res, "accuracy"), stdout);
        if (o->timeline) {
            char first[4096];
            colo_fleet_timeline_name(o->timeline, 0, first, sizeof first);
            printf("timelines written to %s ... (one per GPU, %zu)\n", first, n_gpus);
        }
        if (o->output) printf("results written to %s\n", o->output);
    }
    json_decref(res);
    colo_free(o->sets);
    return status;
}

/* run --compare-modes: the same tenants under each mechanism, one table. */
static int compare_modes(struct colo_cli_scenario_opts *o)
{
    static const char *const modes[] = {"timeslice", "mps", "mig", "green"};
    json_t *all = json_object(), *by_mode[4] = {NULL};
    const char **sets = colo_calloc(o->n_sets + 1, sizeof *sets);
    if (!all || !sets) {
        json_decref(all);
        colo_free(sets);
        fprintf(stderr, "colosim: out of memory\n");
        return 1;
    }
    if (o->n_sets) memcpy(sets, o->sets, o->n_sets * sizeof *sets);
    /* pods shared by the Kubernetes device plugin: its two ways, time-slicing and MPS, set as
     * k8s.sharing (sharing.mode follows it); MIG and Green Contexts are not among them */
    bool k8s = false;
    colo_scenario_t *base = NULL;
    colo_error_t berr;
    colo_error_clear(&berr);
    if (colo_scenario_load(o->file, sets, o->n_sets, &base, &berr) == 0) k8s = base->k8s.on;
    colo_scenario_free(base);
    int status = 0, ran = 0;
    colo_accuracy_facts_t facts = {0}; /* of every mechanism that ran */
    for (int m = 0; m < 4; m++) {
        char set[64];
        snprintf(set, sizeof set, "%s=%s", k8s ? "k8s.sharing" : "sharing.mode",
                 k8s && m == 0 ? "time-slicing" : modes[m]);
        sets[o->n_sets] = set;
        colo_error_t err;
        colo_error_clear(&err);
        colo_scenario_t *sc = NULL;
        int rc = k8s && m >= 2
                     ? colo_error_set(&err, COLO_EUNSUPPORTED, o->file, 0, "k8s",
                                      "the device plugin shares a GPU among pods by time-slicing "
                                      "or MPS; %s is not one of its replica sharing modes",
                                      m == 2 ? "MIG" : "a Green Context")
                     : colo_scenario_load(o->file, sets, o->n_sets + 1, &sc, &err);
        if (!rc) rc = colo_simulate_scenario(sc, sets, o->n_sets + 1, &by_mode[m], &err);
        if (!rc) colo_accuracy_add(&facts, sc);
        colo_scenario_free(sc);
        if (rc == COLO_EINTR) break;
        if (rc) {
            char msg[2048];
            colo_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "%s: %s\n", modes[m], msg);
            if (rc == COLO_ENOMEM || rc == COLO_EIO) status = 1;
            json_object_set_new(all, modes[m], json_pack("{s:s}", "error", msg));
            continue;
        }
        ran++;
        json_object_set(all, modes[m], by_mode[m]);
    }
    colo_free(sets);
    if (colo_stop_requested()) { /* before any output: all or none */
        fprintf(stderr,
                "colosim: stopped by %s before every mechanism had run; nothing was "
                "written\n",
                colo_stop_name());
        json_decref(all);
        for (int m = 0; m < 4; m++)
            json_decref(by_mode[m]);
        return colo_stop_status();
    }
    if (!ran && !status) status = EXIT_INPUT;
    json_t *acc = ran ? colo_accuracy_find(&facts) : NULL;
    if (ran && !o->quiet) {
        colo_results_print_compare(by_mode, modes, 4, stdout);
        colo_accuracy_print(acc, stdout);
    }
    if (ran && o->csv) {
        colo_error_t err;
        colo_error_clear(&err);
        if (colo_results_write_csv(by_mode, 4, o->csv, &err)) {
            colo_cli_print_error(&err);
            status = 1;
        } else if (!o->quiet) {
            printf("CSV written to %s\n", o->csv);
        }
    }
    if (ran && o->output) {
        colo_error_t err;
        colo_error_clear(&err);
        json_t *doc =
            json_pack("{s:s,s:o,s:O*}", "compare", "sharing modes", "modes", all, "accuracy", acc);
        all = NULL;
        if (!doc || colo_results_write(doc, o->output, &err)) {
            if (doc) colo_cli_print_error(&err);
            status = 1;
        } else if (!o->quiet) {
            printf("results written to %s\n", o->output);
        }
        json_decref(doc);
    }
    json_decref(all);
    json_decref(acc);
    for (int m = 0; m < 4; m++)
        json_decref(by_mode[m]);
    return status;
}

/* A long run's progress on a terminal (standard error): simulated time, its rate against the
 * wall clock and the time left, redrawn four times a second once the run has taken a second;
 * the line is cleared when the run ends (run_progress_end), so the table below stays clean. */
struct run_progress {
    double t0, last;
    bool shown;
};

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_progress(void *ctx, colo_time_t now, colo_time_t end)
{
    struct run_progress *p = ctx;
    double w = wall_s();
    if (p->t0 == 0) p->t0 = w;
    if (w - p->t0 < 1.0 || w - p->last < 0.25) return;
    p->last = w;
    double sim = COLO_TO_S(now), all = COLO_TO_S(end), rate = sim / (w - p->t0);
    double left = rate > 0 ? (all - sim) / rate : 0; /* at most: the drain may end sooner */
    fprintf(stderr,
            "\r  simulated %.1f of at most %.1f s (%.0f %%), %.3g s per second, ETA %d:%02d  ", sim,
            all, all > 0 ? 100 * sim / all : 0, rate, (int)left / 60, (int)left % 60);
    fflush(stderr);
    p->shown = true;
}

static void run_progress_end(const struct run_progress *p)
{
    if (p->shown) fputs("\r\033[K", stderr);
}

static int cmd_run(int argc, char **argv)
{
    struct colo_cli_scenario_opts o;
    colo_scenario_t *sc;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--compare-modes") == 0) { /* loads the scenario once per mode */
            int rc = colo_cli_parse_scenario_opts(argc, argv, usage_run, 1, &o);
            if (!rc) rc = compare_modes(&o);
            colo_free(o.sets);
            return rc < 0 ? 0 : rc;
        }
    int status = colo_cli_scenario_args(argc, argv, usage_run, 1, &o);
    if (status >= 0) return status;
    if (colo_cli_is_cluster(&o)) return run_cluster(&o);
    colo_error_t err;
    colo_error_clear(&err);
    sc = NULL;
    if ((status = colo_cli_load_scenario(&o, &sc)) >= 0) return status;
    colo_sim_t *sim = NULL;
    json_t *res = NULL;
    colo_timeline_t tl;
    bool tl_open = false;
    int rc = colo_sim_new(sc, &sim, &err);
    if (!rc && o.timeline) {
        colo_time_t a = o.tl_end ? o.tl_start : sc->warmup;
        colo_time_t b = o.tl_end ? o.tl_end : sc->warmup + COLO_S(1);
        if (a >= sc->duration) /* nothing would be recorded: say so before writing anything */
            rc = colo_error_set(&err, COLO_EINVAL, "--timeline-window", 0, NULL,
                                "START %.9g s is at or past the end of the run (duration_s = "
                                "%.9g s): the timeline would hold nothing; give a START below %.9g",
                                COLO_TO_S(a), COLO_TO_S(sc->duration), COLO_TO_S(sc->duration));
        if (!rc && !o.quiet) timeline_size_note(sc, sim, a, b, o.timeline);
        if (!rc) rc = colo_timeline_open(&tl, o.timeline, a, b, &err);
        tl_open = !rc;
        if (tl_open && colo_sim_set_timeline(sim, &tl))
            rc = colo_error_set(&err, COLO_ENOMEM, o.file, 0, NULL, "out of memory");
    }
    struct run_progress prog = {0};
    if (!rc && !o.quiet && isatty(2)) colo_sim_set_progress(sim, run_progress, &prog);
    if (!rc) rc = colo_sim_run(sim, &err);
    run_progress_end(&prog);
    if (!rc && !(res = colo_results_json(sim, o.sets, o.n_sets)))
        rc = colo_error_set(&err, COLO_ENOMEM, o.file, 0, NULL, "out of memory");
    if (!rc) { /* how far predictions of this kind are from published measurements */
        colo_accuracy_facts_t facts = {0};
        colo_accuracy_add(&facts, sc);
        if (json_object_set_new(res, "accuracy", colo_accuracy_find(&facts)))
            rc = colo_error_set(&err, COLO_ENOMEM, o.file, 0, NULL, "out of memory");
    }
    /* The outputs are committed in turn, the largest (the timeline) first; one that fails takes
     * back those committed before it, so a run is written whole or not at all. */
    const char *written[3];
    int n_written = 0;
    if (tl_open) {
        colo_error_t terr;
        colo_error_clear(&terr);
        int trc = colo_timeline_close(&tl, rc == 0, &terr);
        if (!rc && trc) {
            rc = trc;
            err = terr;
        } else if (!rc) {
            written[n_written++] = o.timeline;
        }
    }
    if (!rc && o.output && !(rc = colo_results_write(res, o.output, &err)))
        written[n_written++] = o.output;
    if (!rc && o.csv) rc = colo_results_write_csv(&res, 1, o.csv, &err);
    for (int k = 0; rc && k < n_written; k++)
        colo_cli_take_back(written[k]);
    status = 0;
    if (rc == COLO_EINTR) {
        fprintf(stderr, "colosim: stopped by %s before the run finished; nothing was written\n",
                colo_stop_name());
        status = colo_cli_exit_for(rc);
    } else if (rc) {
        colo_cli_print_error(&err);
        status = colo_cli_exit_for(rc);
    } else if (!o.quiet) {
        colo_results_print(res, stdout);
        colo_accuracy_print(json_object_get(res, "accuracy"), stdout);
        if (o.output) printf("results written to %s\n", o.output);
        if (o.csv) printf("CSV written to %s\n", o.csv);
        if (o.timeline)
            printf("timeline written to %s (%.3f s to %.3f s; open it in ui.perfetto.dev)\n",
                   o.timeline, COLO_TO_S(tl.t0), COLO_TO_S(tl.t1));
    }
    json_decref(res);
    colo_sim_free(sim);
    colo_scenario_free(sc);
    colo_free(o.sets);
    return colo_cli_stopped_after_writing(status);
}

const colo_cli_command_t colo_cli_run = {"run", usage_run, cmd_run, true};
