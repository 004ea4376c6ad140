/* scenario.c: reading and validating scenario files. */
#include "scenario.h"
#include "scenario_internal.h"
#include "plugin.h"
#include "alloc.h"
#include "cfg.h"
#include "gpu_catalog.h"
#include "hardware.h"
#include "k8s_yaml.h"
#include "kernel_model.h"
#include "layout.h"
#include "llm_cfg.h"
#include "metrics.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define REQ COLO_CFG_REQUIRED
#define POS (COLO_CFG_REQUIRED | COLO_CFG_POSITIVE)

const char *colo_share_mode_name(colo_share_mode_t m)
{
    switch (m) {
    case COLO_SHARE_TIMESLICE:
        return "timeslice";
    case COLO_SHARE_MPS:
        return "mps";
    case COLO_SHARE_MIG:
        return "mig";
    case COLO_SHARE_GREEN:
        return "green";
    }
    return "?";
}

static int seconds(const colo_cfg_reader_t *r, const config_setting_t *g, const char *key,
                   int flags, colo_time_t *out)
{
    double s;
    int rc = colo_cfg_double(r, g, key, flags, &s);
    if (rc) return rc;
    if (s > MAX_SECONDS)
        return colo_cfg_error(r, config_setting_get_member(g, key), COLO_ERANGE,
                              "at most %.0f seconds", MAX_SECONDS);
    *out = colo_time_from_ns(s * 1e9);
    return 0;
}

static int read_sharing(const colo_cfg_reader_t *r, const config_setting_t *root,
                        colo_scenario_t *sc)
{
    static const char *const keys[] = {
        "mode",    "timeslice",  "switch_us", "cuda",    "static_partitions",
        "overlap", "recovery_s", "instances", "colours", NULL};
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "sharing", REQ, CONFIG_TYPE_GROUP, &g);
    if (rc) return rc;
    if ((rc = colo_cfg_check_keys(r, g, keys))) return rc;
    const char *mode;
    if ((rc = colo_cfg_string(r, g, "mode", REQ, &mode))) return rc;
    const config_setting_t *ms = config_setting_get_member(g, "mode");
    /* time-slicing as the device plugin spells it too (its config's sharing.timeSlicing) */
    if (strcmp(mode, "timeslice") == 0 || strcmp(mode, "time-slicing") == 0 ||
        strcmp(mode, "timeSlicing") == 0)
        sc->sharing.mode = COLO_SHARE_TIMESLICE;
    else if (strcmp(mode, "mps") == 0)
        sc->sharing.mode = COLO_SHARE_MPS;
    else if (strcmp(mode, "mig") == 0)
        sc->sharing.mode = COLO_SHARE_MIG;
    else if (strcmp(mode, "green") == 0)
        sc->sharing.mode = COLO_SHARE_GREEN;
    else
        return colo_cfg_error(r, ms, COLO_EINVAL,
                              "unknown sharing mode '%s' (expected timeslice, mps, mig or green)",
                              mode);

    const colo_gpu_t *gpu = sc->gpu;
    const char *name = "default";
    colo_time_t slice = gpu->timeslice.default_ns;
    const config_setting_t *ts = config_setting_get_member(g, "timeslice");
    if (ts && config_setting_type(ts) == CONFIG_TYPE_STRING) {
        name = config_setting_get_string(ts);
        if (strcmp(name, "default") == 0)
            slice = gpu->timeslice.default_ns;
        else if (strcmp(name, "short") == 0)
            slice = gpu->timeslice.short_ns;
        else if (strcmp(name, "medium") == 0)
            slice = gpu->timeslice.medium_ns;
        else if (strcmp(name, "long") == 0)
            slice = gpu->timeslice.long_ns;
        else
            return colo_cfg_error(r, ts, COLO_EINVAL,
                                  "unknown time slice '%s' (expected default, short, medium, "
                                  "long, or a length in microseconds)",
                                  name);
    } else if (ts) {
        double us;
        if ((rc = colo_cfg_double(r, g, "timeslice", POS, &us))) return rc;
        if (us < 1 || us > 1e7)
            return colo_cfg_error(r, ts, COLO_ERANGE,
                                  "a time slice is 1 to 10,000,000 microseconds (got %g)", us);
        name = "custom";
        slice = colo_time_from_ns(us * 1e3);
    }
    sc->sharing.timeslice = slice;
    if (!(sc->sharing.timeslice_name = colo_strdup(name))) return COLO_ENOMEM;

    double sw = COLO_TO_MS(gpu->timeslice.switch_ns) * 1e3;
    if ((rc = colo_cfg_double(r, g, "switch_us", COLO_CFG_NONNEG, &sw)) < 0) return rc;
    if (sw > 1e6)
        return colo_cfg_error(r, config_setting_get_member(g, "switch_us"), COLO_ERANGE,
                              "at most 1,000,000 microseconds");
    sc->sharing.switch_cost = colo_time_from_ns(sw * 1e3);

    const char *cuda = "13.0";
    char cuda_num[16];
    const config_setting_t *cs = config_setting_get_member(g, "cuda");
    if (cs && config_setting_is_number(cs)) { /* cuda = 13.1 (or --set sharing.cuda=13.1) */
        double v = config_setting_type(cs) == CONFIG_TYPE_FLOAT
                       ? config_setting_get_float(cs)
                       : (double)config_setting_get_int64(cs);
        snprintf(cuda_num, sizeof cuda_num, "%.1f", v);
        cuda = cuda_num;
    } else if ((rc = colo_cfg_string(r, g, "cuda", 0, &cuda)) < 0) {
        return rc;
    }
    if (strcmp(cuda, "13.0") != 0 && strcmp(cuda, "13.1") != 0)
        return colo_cfg_error(r, config_setting_get_member(g, "cuda"), COLO_EINVAL,
                              "CUDA '%s': expected \"13.0\" (MPS: %d clients) or \"13.1\" (%d "
                              "clients, static SM partitions)",
                              cuda, gpu->mps.max_clients, gpu->mps.max_clients_cuda_13_1);
    sc->sharing.cuda_13_1 = strcmp(cuda, "13.1") == 0;
    sc->sharing.mps_clients =
        sc->sharing.cuda_13_1 ? gpu->mps.max_clients_cuda_13_1 : gpu->mps.max_clients;
    if ((rc = colo_cfg_bool(r, g, "static_partitions", 0, &sc->sharing.static_partitions)) < 0 ||
        (rc = colo_cfg_bool(r, g, "overlap", 0, &sc->sharing.overlap)) < 0)
        return rc;
    if (sc->sharing.static_partitions && !sc->sharing.cuda_13_1)
        return colo_cfg_error(r, config_setting_get_member(g, "static_partitions"), COLO_EINVAL,
                              "MPS static SM partitions need cuda = \"13.1\"");
    long long colours = 0;
    if ((rc = colo_cfg_int(r, g, "colours", COLO_CFG_POSITIVE, &colours)) < 0) return rc;
    if (rc == 0 && (colours < 2 || colours > gpu->memory.channels))
        return colo_cfg_error(r, config_setting_get_member(g, "colours"), COLO_ERANGE,
                              "%lld colours: from 2 to the %d DRAM channels of %s", colours,
                              gpu->memory.channels, gpu->name);
    if (rc == 0 && sc->sharing.mode == COLO_SHARE_MIG)
        return colo_cfg_error(r, config_setting_get_member(g, "colours"), COLO_EINVAL,
                              "MIG instances have their own DRAM channels: colours are for mps, "
                              "green or timeslice");
    sc->sharing.colours = (int)colours;
    sc->sharing.recovery = COLO_S(1);
    if ((rc = seconds(r, g, "recovery_s", COLO_CFG_NONNEG, &sc->sharing.recovery)) < 0) return rc;
    return 0;
}

/* faults = ( { tenant = "a"; at_s = 10.0; }, ... ); */
static int read_faults(const colo_cfg_reader_t *r, const config_setting_t *root,
                       colo_scenario_t *sc)
{
    static const char *const keys[] = {"tenant", "at_s", NULL};
    const config_setting_t *fl;
    int rc = colo_cfg_aggregate(r, root, "faults", 0, CONFIG_TYPE_LIST, &fl);
    if (rc) return rc < 0 ? rc : 0;
    int n = config_setting_length(fl);
    if (n < 1) return 0;
    if (!(sc->faults = colo_calloc((size_t)n, sizeof *sc->faults))) return COLO_ENOMEM;
    for (int i = 0; i < n; i++) {
        const config_setting_t *f = config_setting_get_elem(fl, (unsigned)i);
        if (!config_setting_is_group(f))
            return colo_cfg_error(r, f, COLO_EINVAL, "each fault is a group { tenant; at_s; }");
        const char *who;
        if ((rc = colo_cfg_check_keys(r, f, keys)) ||
            (rc = colo_cfg_string(r, f, "tenant", REQ, &who)) ||
            (rc = seconds(r, f, "at_s", REQ | COLO_CFG_NONNEG, &sc->faults[i].at)))
            return rc;
        size_t t = 0;
        while (t < sc->n_tenants && strcmp(sc->tenants[t].name, who) != 0)
            t++;
        if (t == sc->n_tenants)
            return colo_cfg_error(r, config_setting_get_member(f, "tenant"), COLO_EINVAL,
                                  "no tenant is called '%s'", who);
        if (sc->faults[i].at >= sc->duration + sc->drain)
            return colo_cfg_error(r, config_setting_get_member(f, "at_s"), COLO_ERANGE,
                                  "after the run ends (%g s)", COLO_TO_S(sc->duration + sc->drain));
        sc->faults[i].tenant = t;
        sc->n_faults = (size_t)i + 1;
    }
    return 0;
}

/* metrics = { exact_samples; interval_ms; }: latency samples per tenant kept exactly before
 * the histogram; how often utilisation is sampled. */
static int read_metrics(const colo_cfg_reader_t *r, const config_setting_t *root,
                        colo_scenario_t *sc)
{
    static const char *const keys[] = {"exact_samples", "interval_ms", NULL};
    const config_setting_t *g;
    sc->exact_samples = 0; /* percentiles from the histogram, within 0.1 % */
    sc->util_interval = COLO_S(1);
    int rc = colo_cfg_aggregate(r, root, "metrics", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0) return rc;
    if (!g) return 0;
    if ((rc = colo_cfg_check_keys(r, g, keys))) return rc;
    long long n = (long long)sc->exact_samples;
    if ((rc = colo_cfg_int(r, g, "exact_samples", COLO_CFG_NONNEG, &n)) < 0) return rc;
    sc->exact_samples = (size_t)n;
    double ms = 1000;
    if ((rc = colo_cfg_double(r, g, "interval_ms", COLO_CFG_POSITIVE, &ms)) < 0) return rc;
    if (ms < 0.001 || ms > 1e9)
        return colo_cfg_error(r, config_setting_get_member(g, "interval_ms"), COLO_ERANGE,
                              "%g ms: use 0.001 ms to 1e9 ms", ms);
    sc->util_interval = colo_time_from_ns(ms * 1e6);
    return 0;
}

/* scheduler = { policy = "NAME"; PARAM = number; ... }: a kernel scheduler (scheduler.h). */
static int read_scheduler(const colo_cfg_reader_t *r, const config_setting_t *root,
                          colo_scenario_t *sc)
{
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "scheduler", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0 || !g) return rc < 0 ? rc : 0;
    const char *policy;
    if ((rc = colo_cfg_string(r, g, "policy", REQ, &policy))) return rc;
    if (strcmp(policy, "none") == 0) { /* kernels launch when ready: as without the group */
        static const char *const only[] = {"policy", NULL};
        return colo_cfg_check_keys(r, g, only);
    }
    const colo_sched_ops_t *ops = colo_sched_find(policy);
    if (!ops) {
        char names[512];
        colo_sched_names(names, sizeof names);
        return colo_cfg_error(r, config_setting_get_member(g, "policy"), COLO_EINVAL,
                              "unknown scheduler '%s' (known: %s, or none; a plug-in's is "
                              "known once loaded: --plugin PATH.so or plugins = [...])",
                              policy, names);
    }
    const char *keys[COLO_SCHED_MAX_PARAMS + 2] = {"policy"};
    size_t k = 0;
    for (; k < COLO_SCHED_MAX_PARAMS && ops->params[k]; k++) {
        keys[k + 1] = ops->params[k];
        sc->scheduler.param[k] = ops->defaults[k];
    }
    keys[k + 1] = NULL;
    if ((rc = colo_cfg_check_keys(r, g, (const char *const *)keys))) return rc;
    for (size_t i = 0; i < k; i++)
        if ((rc = colo_cfg_double(r, g, ops->params[i], COLO_CFG_NONNEG, &sc->scheduler.param[i])) <
            0)
            return rc;
    sc->scheduler.ops = ops;
    if (sc->sharing.mode == COLO_SHARE_TIMESLICE)
        return colo_cfg_error(r, config_setting_get_member(g, "policy"), COLO_EINVAL,
                              "a kernel scheduler needs kernels that run together: sharing.mode "
                              "mps or green, or MPS inside MIG instances");
    return 0;
}

/* k8s.plugin_config: the device plugin's config file (relative to the scenario's folder) read
 * into pc; k8s.sharing (how) or k8s.replicas (n > 0) written beside it must say the same. */
static int k8s_plugin_config(const colo_cfg_reader_t *r, const config_setting_t *g,
                             const colo_scenario_t *sc, const char *file, const char *how,
                             long long n, colo_k8s_plugin_t *pc)
{
    char *path = NULL;
    if (colo_path_join(sc->dir, file, &path)) return COLO_ENOMEM;
    colo_error_t ferr;
    colo_error_clear(&ferr);
    int rc = colo_k8s_plugin_read(path, pc, &ferr);
    colo_free(path);
    if (rc == COLO_EIO) /* not there: said at the key that names it */
        return colo_cfg_error(r, config_setting_get_member(g, "plugin_config"), COLO_EINVAL,
                              "cannot read '%s': %s", ferr.source, ferr.text);
    if (rc)
        return colo_error_set(r->err, rc, ferr.source, ferr.line, ferr.key[0] ? ferr.key : NULL,
                              "%s", ferr.text);
    const char *says = pc->mps ? "mps" : "time-slicing";
    if (how && strcmp(how, says) != 0)
        return colo_cfg_error(r, config_setting_get_member(g, "sharing"), COLO_EINVAL,
                              "\"%s\" here, but k8s.plugin_config %s shares by %s (%s, line "
                              "%d): give one of them, or the same",
                              how, pc->file, says, pc->sharing_key, pc->sharing_line);
    if (n > 0 && n != pc->replicas)
        return colo_cfg_error(r, config_setting_get_member(g, "replicas"), COLO_EINVAL,
                              "%lld here, but k8s.plugin_config %s gives %lld (%s, line %d): "
                              "give one of them, or the same",
                              n, pc->file, pc->replicas, pc->replicas_key, pc->replicas_line);
    return 0;
}

/* k8s = { sharing = "time-slicing" | "mps"; replicas = N; }: the sharing NVIDIA's Kubernetes
 * device plugin configures (sharing.timeSlicing / sharing.mps with resources[].replicas), or
 * k8s = { plugin_config = "FILE.yaml"; }: the plugin's own config file says both (k8s_yaml.h);
 * sharing or replicas written beside it must agree. It sets sharing.mode (a sharing group may
 * add the other keys, but not another mode). */
static int read_k8s(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    static const char *const keys[] = {"sharing", "replicas", "plugin_config", NULL};
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "k8s", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0 || !g) return rc < 0 ? rc : 0;
    const char *how = NULL, *file = NULL;
    long long n = 0;
    if ((rc = colo_cfg_check_keys(r, g, keys)) ||
        (rc = colo_cfg_string(r, g, "plugin_config", 0, &file)) < 0 ||
        (rc = colo_cfg_string(r, g, "sharing", file ? 0 : REQ, &how)) < 0 ||
        (rc = colo_cfg_int(r, g, "replicas", file ? COLO_CFG_POSITIVE : POS, &n)) < 0)
        return rc;
    const config_setting_t *hs = config_setting_get_member(g, "sharing");
    if (how && strcmp(how, "timeSlicing") == 0) how = "time-slicing"; /* its config's spelling */
    if (how && strcmp(how, "mps") != 0 && strcmp(how, "time-slicing") != 0)
        return colo_cfg_error(r, hs, COLO_EINVAL,
                              "'%s': the device plugin shares by \"time-slicing\" or \"mps\"", how);
    colo_k8s_plugin_t pc = {0};
    if (file && (rc = k8s_plugin_config(r, g, sc, file, how, n, &pc))) return rc;
    if (file) how = pc.mps ? "mps" : "time-slicing", n = pc.replicas;
    sc->k8s.on = true;
    sc->k8s.mps = strcmp(how, "mps") == 0;
    /* the plugin refuses fewer than 2 replicas, and more MPS replicas than MPS clients */
    /* the plugin's MPS limit: 48 clients from compute capability 7.5, 16 before
     * (cmd/mps-control-daemon/mps/device.go) */
    int most = !sc->k8s.mps ? 1000000 : atof(sc->gpu->compute_capability) >= 7.5 ? 48 : 16;
    if ((n < 2 || n > most) && file) /* where the file says it */
        return colo_error_set(r->err, COLO_ERANGE, pc.file, pc.replicas_line, pc.replicas_key,
                              "%lld replicas: the device plugin takes 2 to %d%s", n, most,
                              sc->k8s.mps ? " (MPS clients)" : "");
    if (n < 2 || n > most)
        return colo_cfg_error(r, config_setting_get_member(g, "replicas"), COLO_ERANGE,
                              "%lld replicas: the device plugin takes 2 to %d%s", n, most,
                              sc->k8s.mps ? " (MPS clients)" : "");
    sc->k8s.replicas = (int)n;
    if (sc->k8s.mps) {
        sc->k8s.thread_percentage = 100 / (int)n;
        sc->k8s.mem_limit_mib = (long long)(sc->gpu->memory.size_gib * 1073741824.0) / n / 1048576;
    }
    /* the mode the plugin's sharing means; a sharing group may say the same, or nothing */
    config_setting_t *rw = (config_setting_t *)root;
    config_setting_t *sh = config_setting_get_member(rw, "sharing");
    if (!sh && !(sh = config_setting_add(rw, "sharing", CONFIG_TYPE_GROUP))) return COLO_ENOMEM;
    if (!config_setting_is_group(sh)) return 0; /* read_sharing says what is wrong */
    const char *mode = sc->k8s.mps ? "mps" : "timeslice";
    config_setting_t *ms = config_setting_get_member(sh, "mode");
    if (ms && (config_setting_type(ms) != CONFIG_TYPE_STRING ||
               strcmp(config_setting_get_string(ms), mode) != 0)) {
        const char *given = config_setting_get_string(ms);
        return colo_cfg_error(r, ms, COLO_EINVAL,
                              "%s%s%s here, but k8s.sharing = \"%s\" shares the GPU as "
                              "sharing.mode = \"%s\": leave sharing.mode out, or k8s",
                              given ? "\"" : "", given ? given : "not a string", given ? "\"" : "",
                              how, mode);
    }
    if (!ms && (!(ms = config_setting_add(sh, "mode", CONFIG_TYPE_STRING)) ||
                !config_setting_set_string(ms, mode)))
        return COLO_ENOMEM;
    return 0;
}

/* The pods of a k8s scenario: one replica each; under MPS each an MPS client at the plugin's
 * thread percentage and pinned-memory limit, which a pod cannot set itself nor exceed. */
static int k8s_pods(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    if (!sc->k8s.on) return 0;
    const config_setting_t *tl = config_setting_get_member(root, "tenants");
    if ((int)sc->n_tenants > sc->k8s.replicas)
        return colo_cfg_error(
            r, tl, COLO_ERANGE,
            "%zu pods (tenants) for k8s.replicas = %d: each pod takes one replica", sc->n_tenants,
            sc->k8s.replicas);
    if (!sc->k8s.mps) return 0;
    double limit_gib = (double)sc->k8s.mem_limit_mib / 1024.0;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        colo_tenant_cfg_t *tc = &sc->tenants[i];
        const config_setting_t *t = config_setting_get_elem(tl, (unsigned)i);
        static const char *const own[] = {"active_thread_percentage", "memory_limit_gib", NULL};
        for (int k = 0; own[k]; k++)
            if (config_setting_get_member(t, own[k]))
                return colo_cfg_error(r, config_setting_get_member(t, own[k]), COLO_EINVAL,
                                      "set by the device plugin under k8s MPS sharing (%d %% of "
                                      "threads, %lld MiB): leave it out",
                                      sc->k8s.thread_percentage, sc->k8s.mem_limit_mib);
        if (tc->memory_gib > limit_gib)
            return colo_cfg_error(r, config_setting_get_member(t, "memory_gib"), COLO_ERANGE,
                                  "%.2f GiB: the device plugin gives each of %d MPS replicas "
                                  "%lld MiB (%.2f GiB) of %s's memory",
                                  tc->memory_gib, sc->k8s.replicas, sc->k8s.mem_limit_mib,
                                  limit_gib, sc->gpu->name);
        tc->active_thread_percentage = sc->k8s.thread_percentage;
        tc->memory_limit_gib = limit_gib;
    }
    return 0;
}

/* pcie = { scheduler = "fifo" | "fair"; } */
static int read_pcie(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    static const char *const keys[] = {"scheduler", NULL};
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "pcie", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0 || !g) return rc < 0 ? rc : 0;
    if ((rc = colo_cfg_check_keys(r, g, keys))) return rc;
    const char *s = "fifo";
    if ((rc = colo_cfg_string(r, g, "scheduler", 0, &s)) < 0) return rc;
    if (strcmp(s, "fair") == 0)
        sc->pcie_fair = true;
    else if (strcmp(s, "fifo") != 0)
        return colo_cfg_error(r, config_setting_get_member(g, "scheduler"), COLO_EINVAL,
                              "'%s': use \"fifo\" (copies share the link equally, engines taken "
                              "in turn) or \"fair\" (tenants share it by pcie_weight)",
                              s);
    return 0;
}

/* host = { cores = N; speed = x; } */
static int read_host(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    static const char *const keys[] = {"cores", "speed", NULL};
    sc->host.cores = sc->gpu->host.cores;
    sc->host.speed = 1.0;
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "host", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0 || !g) return rc < 0 ? rc : 0;
    if ((rc = colo_cfg_check_keys(r, g, keys))) return rc;
    long long cores = sc->host.cores;
    if ((rc = colo_cfg_int(r, g, "cores", COLO_CFG_NONNEG, &cores)) < 0) return rc;
    if (cores > 4096)
        return colo_cfg_error(r, config_setting_get_member(g, "cores"), COLO_ERANGE,
                              "%lld cores: at most 4096 (0: as many as the tenants need)", cores);
    sc->host.cores = (int)cores;
    if ((rc = colo_cfg_double(r, g, "speed", COLO_CFG_POSITIVE, &sc->host.speed)) < 0) return rc;
    if (sc->host.speed < 0.01 || sc->host.speed > 100)
        return colo_cfg_error(r, config_setting_get_member(g, "speed"), COLO_ERANGE,
                              "%g: from 0.01 to 100 times the speed of the hosts the frameworks' "
                              "launch costs were measured on",
                              sc->host.speed);
    return 0;
}

/* fidelity = { kernels; tolerance; } (docs/engine.md, "Fewer events than kernels"): "exact" (each kernel
 * an activity), or "merged": runs of a trace's consecutive kernels whose use of the SMs, L2 and
 * DRAM differs by at most tolerance (a share of each) run as one kernel. */
static int read_fidelity(const colo_cfg_reader_t *r, const config_setting_t *root,
                         colo_scenario_t *sc)
{
    static const char *const keys[] = {"kernels", "tolerance", NULL};
    sc->merge = false;
    sc->merge_tolerance = 0.25;
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, "fidelity", 0, CONFIG_TYPE_GROUP, &g);
    if (rc < 0 || !g) return rc < 0 ? rc : 0;
    if ((rc = colo_cfg_check_keys(r, g, keys))) return rc;
    const char *k = NULL;
    if ((rc = colo_cfg_string(r, g, "kernels", 0, &k)) < 0) return rc;
    if (k && strcmp(k, "exact") != 0 && strcmp(k, "merged") != 0)
        return colo_cfg_error(r, config_setting_get_member(g, "kernels"), COLO_EINVAL,
                              "'%s': \"exact\" (every kernel simulated) or \"merged\" (runs of "
                              "similar kernels as one, faster and approximate)",
                              k);
    sc->merge = k && strcmp(k, "merged") == 0;
    if ((rc = colo_cfg_double(r, g, "tolerance", COLO_CFG_NONNEG, &sc->merge_tolerance)) < 0)
        return rc;
    if (sc->merge_tolerance > 1)
        return colo_cfg_error(r, config_setting_get_member(g, "tolerance"), COLO_ERANGE,
                              "%g: a share of each resource's use, from 0 to 1",
                              sc->merge_tolerance);
    return 0;
}

/* plugins = ["sched.so", ...]: shared objects registering schedulers and arrival processes
 * (plugin.h), loaded before anything names one; paths relative to the scenario's folder. */
static int read_plugins(const colo_cfg_reader_t *r, const config_setting_t *root,
                        colo_scenario_t *sc)
{
    const config_setting_t *a = config_setting_get_member(root, "plugins");
    if (!a) return 0;
    if (config_setting_type(a) != CONFIG_TYPE_ARRAY && config_setting_type(a) != CONFIG_TYPE_LIST)
        return colo_cfg_error(r, a, COLO_EINVAL, "a list of shared objects: [\"PATH.so\", ...]");
    for (int i = 0; i < config_setting_length(a); i++) {
        const config_setting_t *e = config_setting_get_elem(a, (unsigned)i);
        const char *p = config_setting_get_string(e);
        if (!p) return colo_cfg_error(r, e, COLO_EINVAL, "not a string: a plug-in's path");
        char *path, key[32];
        if (colo_path_join(sc->dir, p, &path)) return COLO_ENOMEM;
        const char *src;
        int line;
        colo_cfg_location(r, e, &src, &line);
        snprintf(key, sizeof key, "plugins.[%d]", i);
        int rc = colo_plugin_load(path, src, line, key, r->err);
        colo_free(path);
        if (rc) return rc;
    }
    return 0;
}

static int read_scenario(const colo_cfg_reader_t *r, const config_setting_t *root,
                         colo_scenario_t *sc)
{
    static const char *const keys[] = {
        "description", "gpu",     "calibration", "seed",    "duration_s", "warmup_s",   "drain_s",
        "sharing",     "tenants", "faults",      "metrics", "scheduler",  "load_scale", "cluster",
        "pcie",        "k8s",     "plugins",     "host",    "fidelity",   NULL};
    int rc = colo_cfg_check_keys(r, root, keys);
    if (rc) return rc;
    if (config_setting_get_member(root, "cluster"))
        return colo_cfg_error(r, config_setting_get_member(root, "cluster"), COLO_EINVAL,
                              "a cluster of GPUs: `colosim run` places its tenants and simulates "
                              "every GPU (docs/cluster.md); this command takes a one-GPU scenario");
    const char *desc = NULL, *gpu;
    if ((rc = colo_cfg_string(r, root, "description", 0, &desc)) < 0) return rc;
    if (desc && !(sc->description = colo_strdup(desc))) return COLO_ENOMEM;

    if ((rc = colo_cfg_string(r, root, "gpu", REQ, &gpu))) return rc;
    const char *gsrc;
    int gline;
    colo_cfg_location(r, config_setting_get_member(root, "gpu"), &gsrc, &gline);
    const char *cal = NULL;
    if ((rc = colo_cfg_string(r, root, "calibration", 0, &cal)) < 0) return rc;
    if (cal && strcmp(cal, "none") == 0) {
        if (!(sc->calibration = colo_strdup(cal))) return COLO_ENOMEM;
    } else if (cal && strcmp(cal, "auto") != 0) {
        if ((rc = colo_path_join(sc->dir, cal, &sc->calibration))) return rc;
        struct stat st;
        if (stat(sc->calibration, &st) != 0 || !S_ISREG(st.st_mode))
            return colo_cfg_error(r, config_setting_get_member(root, "calibration"), COLO_ENOENT,
                                  "no calibration file '%s' (\"auto\", \"none\" or a path relative "
                                  "to the scenario's folder)",
                                  sc->calibration);
    }
    if ((rc = colo_gpu_open(gpu, sc->dir, sc->calibration, &sc->gpu, gsrc, gline, "gpu", r->err)))
        return rc;
    if ((rc = read_plugins(r, root, sc))) return rc;

    long long seed = 1;
    if ((rc = colo_cfg_int(r, root, "seed", COLO_CFG_NONNEG, &seed)) < 0) return rc;
    sc->seed = (uint64_t)seed;
    if ((rc = seconds(r, root, "duration_s", POS, &sc->duration))) return rc;
    sc->warmup = 0;
    sc->drain = COLO_S(10);
    if ((rc = seconds(r, root, "warmup_s", COLO_CFG_NONNEG, &sc->warmup)) < 0) return rc;
    if ((rc = seconds(r, root, "drain_s", COLO_CFG_NONNEG, &sc->drain)) < 0) return rc;
    if (sc->warmup >= sc->duration)
        return colo_cfg_error(r, config_setting_get_member(root, "warmup_s"), COLO_ERANGE,
                              "must be shorter than duration_s (%g s)", COLO_TO_S(sc->duration));

    if ((rc = read_metrics(r, root, sc))) return rc;
    if ((rc = read_k8s(r, root, sc))) return rc;
    if ((rc = read_sharing(r, root, sc))) return rc;
    if ((rc = read_pcie(r, root, sc))) return rc;
    if ((rc = read_host(r, root, sc))) return rc;
    if ((rc = read_fidelity(r, root, sc))) return rc;

    const config_setting_t *tl;
    if ((rc = colo_cfg_aggregate(r, root, "tenants", REQ, CONFIG_TYPE_LIST, &tl))) return rc;
    int n = config_setting_length(tl);
    if (n < 1) return colo_cfg_error(r, tl, COLO_EINVAL, "lists no tenants");
    sc->tenants = colo_calloc((size_t)n, sizeof *sc->tenants);
    if (!sc->tenants) return COLO_ENOMEM;
    for (int i = 0; i < n; i++) {
        sc->n_tenants = (size_t)i + 1;
        rc = colo_scenario_read_tenant(r, config_setting_get_elem(tl, (unsigned)i), sc, (size_t)i);
        if (rc) return rc;
    }
    colo_scenario_group_services(sc);
    if ((rc = k8s_pods(r, root, sc))) return rc;
    sc->load_scale = 1.0;
    if ((rc = colo_cfg_double(r, root, "load_scale", COLO_CFG_POSITIVE, &sc->load_scale)) < 0)
        return rc;
    if (sc->load_scale > 1e6)
        return colo_cfg_error(r, config_setting_get_member(root, "load_scale"), COLO_ERANGE,
                              "at most 1e6");
    for (size_t i = 0; i < sc->n_tenants; i++)
        colo_arrival_scale_load(&sc->tenants[i].arrival, sc->load_scale);
    if ((rc = read_faults(r, root, sc))) return rc;
    if ((rc = read_scheduler(r, root, sc))) return rc;
    if ((rc = colo_layout_resolve(r, root, sc))) return rc;
    for (size_t i = 0; i < sc->n_tenants; i++)
        if (sc->tenants[i].llm &&
            (rc = colo_scenario_resolve_llm(r, config_setting_get_elem(tl, (unsigned)i), sc, i)))
            return rc;
    if (sc->scheduler.ops && sc->sharing.mode == COLO_SHARE_MIG) {
        bool mps = false;
        for (size_t k = 0; k < sc->sharing.n_instances; k++)
            mps |= sc->sharing.instances[k].share == COLO_SHARE_MPS;
        if (!mps)
            return colo_cfg_error(
                r,
                config_setting_get_member(config_setting_get_member(root, "scheduler"), "policy"),
                COLO_EINVAL,
                "a kernel scheduler needs kernels that run together: no MIG instance runs MPS");
    }
    return 0;
}

int colo_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
                       colo_scenario_t **out, colo_error_t *err)
{
    return colo_scenario_load_edited(path, overrides, n_overrides, NULL, NULL, out, err);
}

int colo_scenario_load_edited(const char *path, const char *const *overrides, size_t n_overrides,
                              colo_scenario_edit_fn edit, void *ctx, colo_scenario_t **out,
                              colo_error_t *err)
{
    *out = NULL;
    colo_scenario_t *sc = colo_calloc(1, sizeof *sc);
    if (!sc) return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    int rc = COLO_ENOMEM;
    const char *slash = strrchr(path, '/');
    if ((sc->path = colo_strdup(path)) && (sc->dir = colo_strdup(path))) {
        if (slash)
            sc->dir[slash - path] = '\0';
        else
            sc->dir[0] = '\0';
        if (slash == path) sc->dir[0] = '/', sc->dir[1] = '\0';
        rc = 0;
    }
    config_t cfg;
    config_init(&cfg);
    if (!rc) rc = colo_cfg_read_file(&cfg, path, err);
    for (size_t i = 0; i < n_overrides && !rc; i++)
        rc = colo_cfg_override(&cfg, overrides[i], (int)i + 1, err);
    colo_cfg_reader_t r = {path, err};
    if (!rc) rc = colo_scenario_expand_copies(&r, config_root_setting(&cfg));
    if (!rc && edit) rc = edit(&r, config_root_setting(&cfg), ctx);
    if (!rc) rc = read_scenario(&r, config_root_setting(&cfg), sc);
    if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    config_destroy(&cfg);
    if (rc) {
        colo_scenario_free(sc);
        return rc;
    }
    *out = sc;
    return 0;
}

void colo_scenario_free(colo_scenario_t *sc)
{
    if (!sc) return;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        colo_free(sc->tenants[i].name);
        colo_free(sc->tenants[i].trace_path);
        for (size_t k = 0; k < sc->tenants[i].n_variants; k++)
            colo_free(sc->tenants[i].variants[k].path);
        colo_free(sc->tenants[i].variants);
        colo_free(sc->tenants[i].instance_name);
        colo_free(sc->tenants[i].command);
        colo_free(sc->tenants[i].service);
        colo_llm_cfg_free(sc->tenants[i].llm);
        colo_free(sc->tenants[i].channels);
        colo_arrival_cfg_fini(&sc->tenants[i].arrival);
    }
    colo_free(sc->tenants);
    for (size_t i = 0; i < sc->n_traces; i++) {
        colo_trace_free(sc->traces[i]);
        colo_gpu_free(sc->trace_gpus[i]);
    }
    colo_free(sc->traces);
    colo_free(sc->trace_gpus);
    colo_gpu_free(sc->gpu);
    colo_free(sc->sharing.timeslice_name);
    for (size_t i = 0; i < sc->sharing.n_instances; i++)
        colo_free(sc->sharing.instances[i].name);
    colo_free(sc->sharing.instances);
    colo_free(sc->faults);
    colo_free(sc->description);
    colo_free(sc->calibration);
    colo_free(sc->path);
    colo_free(sc->dir);
    colo_free(sc);
}
