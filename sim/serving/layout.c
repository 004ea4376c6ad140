/* layout.c: MIG layouts, SM partitions and caps, client limits, memory fit. */
#include "layout.h"
#include "alloc.h"

#include <stdio.h>
#include <string.h>

static const config_setting_t *tenant_key(const config_setting_t *root, size_t i, const char *key)
{
    const config_setting_t *t =
        config_setting_get_elem(config_setting_get_member(root, "tenants"), (unsigned)i);
    const config_setting_t *k = t ? config_setting_get_member(t, key) : NULL;
    return k ? k : t;
}

static int round_up(int x, int unit)
{
    return (x + unit - 1) / unit * unit;
}

/* The tenants in list (n of them) need no more device memory than capacity_gib. */
static int memory_fits(const colo_cfg_reader_t *r, const config_setting_t *root,
                       const colo_scenario_t *sc, const size_t *list, size_t n, double capacity_gib,
                       const char *where)
{
    double need = 0;
    for (size_t i = 0; i < n; i++) {
        const colo_tenant_cfg_t *t = &sc->tenants[list[i]];
        if (t->memory_limit_gib > 0 && t->memory_gib > t->memory_limit_gib &&
            (sc->sharing.mode == COLO_SHARE_MPS || sc->sharing.mode == COLO_SHARE_MIG))
            return colo_cfg_error(r, tenant_key(root, list[i], "memory_gib"), COLO_ERANGE,
                                  "%.2f GiB does not fit the tenant's MPS memory limit of %.2f GiB",
                                  t->memory_gib, t->memory_limit_gib);
        need += t->memory_gib;
        if (need > capacity_gib) { /* as many digits as show the two apart (80.001 > 80) */
            int d = 2;
            char a[64], b[64];
            do {
                snprintf(a, sizeof a, "%.*f", d, need);
                snprintf(b, sizeof b, "%.*f", d, capacity_gib);
            } while (strcmp(a, b) == 0 && ++d < 12);
            return colo_cfg_error(r, tenant_key(root, list[i], "memory_gib"), COLO_ERANGE,
                                  "the tenants on %s need %s GiB of device memory; it has %s GiB",
                                  where, a, b);
        }
    }
    return 0;
}

/* The error for a scenario that asks pre-Volta MPS (the GPU file's mps.volta = false) for a
 * per-client SM limit: only Volta MPS provisions execution resources (CUDA MPS docs). */
static int needs_volta_mps(const colo_cfg_reader_t *r, const config_setting_t *at,
                           const colo_gpu_t *g, const char *what)
{
    return colo_cfg_error(r, at, COLO_EUNSUPPORTED,
                          "%s needs Volta MPS (compute capability 7.0 or later); %s has only "
                          "pre-Volta MPS, without per-client SM limits (mps.volta = false in %s)",
                          what, g->name, g->path);
}

/* One MPS server with the tenants in list on SMs [first, first + sms), at most limit clients. */
static int mps_server(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc,
                      const size_t *list, size_t n, int first, int sms, int limit,
                      const char *where)
{
    const colo_gpu_t *g = sc->gpu;
    if ((int)n > limit)
        return colo_cfg_error(r, config_setting_get_member(root, "tenants"), COLO_ERANGE,
                              "%zu MPS clients on %s; one server takes at most %d (CUDA %s%s)", n,
                              where, limit, sc->sharing.cuda_13_1 ? "13.1" : "13.0",
                              sc->sharing.mode == COLO_SHARE_MIG ? ", scaled to the instance" : "");
    if (!g->mps.volta && sc->sharing.static_partitions)
        return needs_volta_mps(r,
                               config_setting_get_member(config_setting_get_member(root, "sharing"),
                                                         "static_partitions"),
                               g, "sharing.static_partitions (MPS static SM partitions)");
    int gran = g->mps.sm_granularity, cursor = first;
    for (size_t i = 0; i < n; i++) {
        colo_tenant_cfg_t *t = &sc->tenants[list[i]];
        if (!g->mps.volta && t->active_thread_percentage < 100)
            return needs_volta_mps(r, tenant_key(root, list[i], "active_thread_percentage"), g,
                                   "an active_thread_percentage below 100 (an MPS client SM "
                                   "limit)");
        if (sc->sharing.static_partitions) {
            if (!t->sms_asked)
                return colo_cfg_error(r, tenant_key(root, list[i], "sms"), COLO_EINVAL,
                                      "with MPS static partitions every tenant gives its sms");
            t->sm_first = cursor;
            t->sm_count = round_up(t->sms_asked, gran);
            cursor += t->sm_count;
            if (cursor > first + sms)
                return colo_cfg_error(r, tenant_key(root, list[i], "sms"), COLO_ERANGE,
                                      "static partitions need %d SMs in all (in chunks of %d); "
                                      "%s has %d",
                                      cursor - first, gran, where, sms);
            continue;
        }
        t->sm_cap = colo_layout_mps_cap(g, sms, t->active_thread_percentage);
    }
    return 0;
}

int colo_layout_mps_cap(const colo_gpu_t *g, int sms, int percentage)
{
    /* rounded down to what the hardware can mask (DS: MPS docs; 2-SM TPCs, INF) */
    int gran = g->mps.sm_granularity;
    int cap = percentage * sms / 100 / gran * gran;
    if (cap < gran) cap = gran;
    return cap < sms ? cap : 0;
}

static int green(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    const colo_gpu_t *g = sc->gpu;
    if (!g->green.supported)
        return colo_cfg_error(
            r, config_setting_get_member(config_setting_get_member(root, "sharing"), "mode"),
            COLO_EUNSUPPORTED, "%s has no Green Contexts (green.supported = false in %s)", g->name,
            g->path);
    int align = g->green.alignment, min = g->green.min_sms, sms = g->sm.count, cursor = 0;
    int even = sms / (int)sc->n_tenants / align * align;
    for (size_t i = 0; i < sc->n_tenants; i++) {
        colo_tenant_cfg_t *t = &sc->tenants[i];
        int ask = t->sms_asked;
        if (!ask) {
            if (even < min)
                return colo_cfg_error(r, tenant_key(root, i, "sms"), COLO_ERANGE,
                                      "%zu Green Contexts cannot each get %d SMs on %s: give sms",
                                      sc->n_tenants, min, g->name);
            ask = even;
            sc->sharing.auto_layout = true;
        }
        /* rounded up to the architecture's minimum and alignment (DS: CUDA green contexts) */
        int n = round_up(ask < min ? min : ask, align);
        if (n > sms)
            return colo_cfg_error(r, tenant_key(root, i, "sms"), COLO_ERANGE,
                                  "%d SMs (rounded up to multiples of %d) is more than %s has", n,
                                  align, g->name);
        if (cursor + n > sms) {
            if (!sc->sharing.overlap)
                return colo_cfg_error(
                    r, tenant_key(root, i, "sms"), COLO_ERANGE,
                    "the Green Contexts need %d SMs in all (each rounded up to a multiple of %d); "
                    "%s has %d (sharing.overlap = true lets them overlap)",
                    cursor + n, align, g->name, sms);
            cursor = sms - n; /* overlapping: the last n SMs, which overlap the fewest */
        }
        t->sm_first = cursor;
        t->sm_count = n;
        cursor += n;
    }
    size_t *all = colo_malloc(sc->n_tenants * sizeof *all);
    if (!all) return COLO_ENOMEM;
    for (size_t i = 0; i < sc->n_tenants; i++)
        all[i] = i;
    int rc = memory_fits(r, root, sc, all, sc->n_tenants, g->memory.size_gib, g->name);
    colo_free(all);
    return rc;
}

/* ---- MIG ---- */

const colo_mig_profile_t *colo_layout_auto_mig_profile(const colo_gpu_t *gpu, size_t n)
{
    if (!gpu->mig.supported || n == 0 || n > 7) return NULL;
    /* 1: 7g; 2: 3g; 3: 2g; 4: 1g with two memory slices; 5-7: 1g */
    int cs = n == 1 ? 7 : n == 2 ? 3 : n == 3 ? 2 : 1, ms = n == 4 ? 2 : 0;
    for (size_t i = 0; i < gpu->mig.n_profiles; i++) {
        const colo_mig_profile_t *p = &gpu->mig.profiles[i];
        if (p->compute_slices == cs && !(p->media && cs < 7) &&
            (ms == 0 || p->memory_slices == ms) && (n != 4 || p->max_count >= 4) &&
            p->max_count >= (int)n)
            return p;
    }
    return NULL;
}

static void list_profiles(const colo_gpu_t *g, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < g->mig.n_profiles && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", g->mig.profiles[i].name);
        if (w > 0) used += (size_t)w;
    }
}

/* Start slots of p that are free given the memory slices already taken. */
static void free_starts(const colo_mig_profile_t *p, const int *taken, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < p->n_placements && used < n; k++) {
        int ok = 1;
        for (int s = p->placements[k]; s < p->placements[k] + p->memory_slices; s++)
            if (taken[s] >= 0) ok = 0;
        if (!ok) continue;
        int w = snprintf(buf + used, n - used, "%s%d", used ? ", " : "", p->placements[k]);
        if (w > 0) used += (size_t)w;
    }
    if (!used) snprintf(buf, n, "none");
}

static int mig_instance(const colo_cfg_reader_t *r, const config_setting_t *e, colo_scenario_t *sc,
                        size_t k, int *taken, int *counts)
{
    static const char *const keys[] = {"name", "profile", "placement", "share", NULL};
    const colo_gpu_t *g = sc->gpu;
    colo_mig_instance_t *in = &sc->sharing.instances[k];
    char list[512], name[64];
    int rc;
    const char *pname, *iname = NULL, *share = "timeslice";
    if (!config_setting_is_group(e))
        return colo_cfg_error(r, e, COLO_EINVAL,
                              "each instance is a group { name; profile; placement; share; }");
    if ((rc = colo_cfg_check_keys(r, e, keys)) ||
        (rc = colo_cfg_string(r, e, "profile", COLO_CFG_REQUIRED, &pname)))
        return rc;
    if ((rc = colo_cfg_string(r, e, "name", 0, &iname)) < 0 ||
        (rc = colo_cfg_string(r, e, "share", 0, &share)) < 0)
        return rc;
    snprintf(name, sizeof name, "%s", iname ? iname : "");
    if (!iname) snprintf(name, sizeof name, "i%zu", k);
    for (size_t j = 0; j < k; j++)
        if (strcmp(sc->sharing.instances[j].name, name) == 0)
            return colo_cfg_error(r, config_setting_get_member(e, "name"), COLO_EINVAL,
                                  "instance name '%s' is used twice", name);
    if (!(in->name = colo_strdup(name))) return COLO_ENOMEM;
    in->profile = colo_gpu_mig_profile(g, pname);
    if (!in->profile) {
        list_profiles(g, list, sizeof list);
        return colo_cfg_error(r, config_setting_get_member(e, "profile"), COLO_EINVAL,
                              "unknown MIG profile '%s' for %s (valid: %s)", pname, g->name, list);
    }
    if (strcmp(share, "timeslice") == 0 || strcmp(share, "time-slicing") == 0 ||
        strcmp(share, "timeSlicing") == 0)
        in->share = COLO_SHARE_TIMESLICE;
    else if (strcmp(share, "mps") == 0)
        in->share = COLO_SHARE_MPS;
    else
        return colo_cfg_error(r, config_setting_get_member(e, "share"), COLO_EINVAL,
                              "inside a MIG instance tenants share by \"timeslice\" or \"mps\", "
                              "not '%s'",
                              share);
    const colo_mig_profile_t *p = in->profile;
    int pi = (int)(p - g->mig.profiles);
    if (++counts[pi] > p->max_count)
        return colo_cfg_error(r, config_setting_get_member(e, "profile"), COLO_ERANGE,
                              "at most %d instance%s of %s", p->max_count,
                              p->max_count == 1 ? "" : "s", p->name);
    long long start = -1;
    if ((rc = colo_cfg_int(r, e, "placement", COLO_CFG_NONNEG, &start)) < 0) return rc;
    if (start >= 0) {
        int valid = 0;
        for (int j = 0; j < p->n_placements; j++)
            valid |= p->placements[j] == start;
        if (!valid) {
            size_t used = 0;
            for (int j = 0; j < p->n_placements && used < sizeof list; j++) {
                int w = snprintf(list + used, sizeof list - used, "%s%d", j ? ", " : "",
                                 p->placements[j]);
                if (w > 0) used += (size_t)w;
            }
            return colo_cfg_error(r, config_setting_get_member(e, "placement"), COLO_EINVAL,
                                  "%lld is not a placement of %s (valid start slots: %s)", start,
                                  p->name, list);
        }
        for (int s = (int)start; s < (int)start + p->memory_slices; s++)
            if (taken[s] >= 0) {
                free_starts(p, taken, list, sizeof list);
                return colo_cfg_error(
                    r, config_setting_get_member(e, "placement"), COLO_EINVAL,
                    "%s at %lld:%d overlaps instance '%s'; free start slots for %s: %s", p->name,
                    start, p->memory_slices, sc->sharing.instances[taken[s]].name, p->name, list);
            }
    } else { /* first free placement, as nvidia-smi picks */
        for (int j = 0; j < p->n_placements && start < 0; j++) {
            int ok = 1;
            for (int s = p->placements[j]; s < p->placements[j] + p->memory_slices; s++)
                if (taken[s] >= 0) ok = 0;
            if (ok) start = p->placements[j];
        }
        int free_slices = 0;
        for (int s = 0; s < g->mig.memory_slices; s++)
            free_slices += taken[s] < 0;
        if (start < 0 && free_slices < p->memory_slices)
            return colo_cfg_error(r, config_setting_get_member(e, "profile"), COLO_ERANGE,
                                  "no free placement left for %s", p->name);
        if (start < 0) /* room enough, in the wrong places: the order decided them */
            return colo_cfg_error(r, config_setting_get_member(e, "profile"), COLO_ERANGE,
                                  "no free placement left for %s, though %d memory slices are "
                                  "free: each instance takes the first free start in the order "
                                  "listed, as nvidia-smi does; list the larger instances first, "
                                  "or give each its placement",
                                  p->name, free_slices);
    }
    for (int s = (int)start; s < (int)start + p->memory_slices; s++)
        taken[s] = (int)k;
    in->placement = (int)start;
    return 0;
}

static int mig(const colo_cfg_reader_t *r, const config_setting_t *root, colo_scenario_t *sc)
{
    const colo_gpu_t *g = sc->gpu;
    const config_setting_t *sh = config_setting_get_member(root, "sharing");
    if (!g->mig.supported)
        return colo_cfg_error(r, config_setting_get_member(sh, "mode"), COLO_EUNSUPPORTED,
                              "%s does not support MIG", g->name);
    const config_setting_t *list;
    int rc = colo_cfg_aggregate(r, sh, "instances", 0, CONFIG_TYPE_LIST, &list);
    if (rc < 0) return rc;
    rc = 0;
    int taken[COLO_MIG_MAX_SLOTS], counts[COLO_MIG_MAX_PROFILES] = {0};
    for (int s = 0; s < COLO_MIG_MAX_SLOTS; s++)
        taken[s] = -1;
    size_t n = list ? (size_t)config_setting_length(list) : sc->n_tenants;
    if (n == 0) return colo_cfg_error(r, list, COLO_EINVAL, "lists no instances");
    if (!(sc->sharing.instances = colo_calloc(n, sizeof *sc->sharing.instances)))
        return COLO_ENOMEM;
    if (list) {
        for (size_t k = 0; k < n; k++) {
            sc->sharing.n_instances = k + 1;
            rc = mig_instance(r, config_setting_get_elem(list, (unsigned)k), sc, k, taken, counts);
            if (rc) return rc;
        }
    } else { /* automatic: one instance per tenant */
        const colo_mig_profile_t *p = colo_layout_auto_mig_profile(g, n);
        if (!p)
            return colo_cfg_error(r, sh, COLO_ERANGE,
                                  "no MIG layout gives %zu tenants an instance each on %s (at most "
                                  "7): list sharing.instances and share them by time-slicing or "
                                  "MPS",
                                  n, g->name);
        sc->sharing.auto_layout = true;
        for (size_t k = 0; k < n; k++) {
            colo_mig_instance_t *in = &sc->sharing.instances[k];
            char name[32];
            snprintf(name, sizeof name, "i%zu", k);
            if (!(in->name = colo_strdup(name))) return COLO_ENOMEM;
            in->profile = p;
            in->share = COLO_SHARE_TIMESLICE;
            in->placement = p->placements[k];
            sc->sharing.n_instances = k + 1;
        }
    }
    int cs = 0, first = 0;
    for (size_t k = 0; k < sc->sharing.n_instances; k++) {
        colo_mig_instance_t *in = &sc->sharing.instances[k];
        cs += in->profile->compute_slices;
        in->first_sm = first;
        first += in->profile->sms;
    }
    if (cs > g->mig.compute_slices)
        return colo_cfg_error(r, list, COLO_ERANGE,
                              "the instances take %d compute slices; %s has %d", cs, g->name,
                              g->mig.compute_slices);
    /* tenants to instances */
    for (size_t i = 0; i < sc->n_tenants; i++) {
        colo_tenant_cfg_t *t = &sc->tenants[i];
        if (!list) {
            t->instance = i;
            continue;
        }
        char names[512];
        size_t used = 0;
        for (size_t k = 0; k < sc->sharing.n_instances && used < sizeof names; k++) {
            int w = snprintf(names + used, sizeof names - used, "%s%s", k ? ", " : "",
                             sc->sharing.instances[k].name);
            if (w > 0) used += (size_t)w;
        }
        if (!t->instance_name)
            return colo_cfg_error(r, tenant_key(root, i, "instance"), COLO_EINVAL,
                                  "under MIG every tenant names its instance (one of: %s)", names);
        size_t k = 0;
        while (k < sc->sharing.n_instances &&
               strcmp(sc->sharing.instances[k].name, t->instance_name))
            k++;
        if (k == sc->sharing.n_instances)
            return colo_cfg_error(r, tenant_key(root, i, "instance"), COLO_EINVAL,
                                  "unknown instance '%s' (instances: %s)", t->instance_name, names);
        t->instance = k;
    }
    /* per instance: memory, and MPS inside it */
    size_t *members = colo_malloc(sc->n_tenants * sizeof *members);
    if (!members) return COLO_ENOMEM;
    for (size_t k = 0; k < sc->sharing.n_instances && !rc; k++) {
        const colo_mig_instance_t *in = &sc->sharing.instances[k];
        size_t m = 0;
        for (size_t i = 0; i < sc->n_tenants; i++)
            if (sc->tenants[i].instance == k) members[m++] = i;
        char where[96];
        snprintf(where, sizeof where, "instance '%s' (%s)", in->name, in->profile->name);
        rc = memory_fits(r, root, sc, members, m, in->profile->memory_gib, where);
        if (!rc && in->share == COLO_SHARE_MPS) {
            int limit =
                sc->sharing.mps_clients * in->profile->compute_slices / g->mig.compute_slices;
            rc = mps_server(r, root, sc, members, m, in->first_sm, in->profile->sms,
                            limit < 1 ? 1 : limit, where);
        }
    }
    colo_free(members);
    return rc;
}

int colo_layout_resolve(const colo_cfg_reader_t *r, const config_setting_t *root,
                        colo_scenario_t *sc)
{
    if (sc->sharing.mode == COLO_SHARE_MIG) return mig(r, root, sc);
    if (sc->sharing.mode == COLO_SHARE_GREEN) return green(r, root, sc);
    size_t *all = colo_malloc(sc->n_tenants * sizeof *all);
    if (!all) return COLO_ENOMEM;
    for (size_t i = 0; i < sc->n_tenants; i++)
        all[i] = i;
    int rc = memory_fits(r, root, sc, all, sc->n_tenants, sc->gpu->memory.size_gib, sc->gpu->name);
    if (!rc && sc->sharing.mode == COLO_SHARE_MPS)
        rc = mps_server(r, root, sc, all, sc->n_tenants, 0, sc->gpu->sm.count,
                        sc->sharing.mps_clients, sc->gpu->name);
    colo_free(all);
    return rc;
}
