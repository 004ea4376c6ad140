/* gpu.c: loading and validating a GPU description file, and the rates derived from it (finding
 * one by name and applying its calibration: gpu_catalog.c). */
#include "gpu.h"
#include "alloc.h"
#include "cfg.h"

#include <libconfig.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Table-driven reading: each group is a list of fields stored at an offset in colo_gpu_t. */
enum kind { K_INT, K_LLONG, K_DOUBLE, K_US_TIME, K_STRING, K_BOOL };

struct field {
    const char *key;
    enum kind kind;
    size_t off;
    int flags;
};

#define F(key, kind, member, flags)                                                                \
    {                                                                                              \
        key, kind, offsetof(colo_gpu_t, member), flags                                             \
    }
#define REQ COLO_CFG_REQUIRED
#define POS (COLO_CFG_REQUIRED | COLO_CFG_POSITIVE)
#define NONNEG (COLO_CFG_REQUIRED | COLO_CFG_NONNEG)

static const struct field sm_fields[] = {
    F("count", K_INT, sm.count, POS),
    F("max_threads", K_INT, sm.max_threads, POS),
    F("max_warps", K_INT, sm.max_warps, POS),
    F("max_blocks", K_INT, sm.max_blocks, POS),
    F("registers", K_INT, sm.registers, POS),
    F("max_registers_per_thread", K_INT, sm.max_registers_per_thread, POS),
    F("register_alloc_unit", K_INT, sm.register_alloc_unit, POS),
    F("shared_bytes", K_INT, sm.shared_bytes, POS),
    F("max_shared_per_block", K_INT, sm.max_shared_per_block, POS),
    F("reserved_shared_per_block", K_INT, sm.reserved_shared_per_block, NONNEG),
    F("clock_mhz", K_DOUBLE, sm.clock_mhz, POS),
    F("tensor_clock_mhz", K_DOUBLE, sm.tensor_clock_mhz, COLO_CFG_POSITIVE),
    F("fp32_lanes", K_INT, sm.fp32_lanes, POS),
    F("tensor_fp16_flops_per_clock", K_INT, sm.tensor_fp16_flops_per_clock, NONNEG),
    {NULL, K_INT, 0, 0},
};
static const struct field l2_fields[] = {
    F("bytes", K_LLONG, l2.bytes, POS),
    F("slices", K_INT, l2.slices, POS),
    F("partitions", K_INT, l2.partitions, POS),
    F("bandwidth_gbps", K_DOUBLE, l2.bandwidth_gbps, NONNEG),
    {NULL, K_INT, 0, 0},
};
static const struct field memory_fields[] = {
    F("size_gib", K_DOUBLE, memory.size_gib, POS),
    F("type", K_STRING, memory.type, REQ),
    F("stacks", K_INT, memory.stacks, NONNEG),
    F("controllers", K_INT, memory.controllers, NONNEG),
    F("channels", K_INT, memory.channels, POS),
    F("bus_bits", K_INT, memory.bus_bits, POS),
    F("peak_gbps", K_DOUBLE, memory.peak_gbps, POS),
    F("achievable_fraction", K_DOUBLE, memory.achievable_fraction, POS),
    F("per_sm_gbps", K_DOUBLE, memory.per_sm_gbps, POS),
    {NULL, K_INT, 0, 0},
};
static const struct field pcie_fields[] = {
    F("generation", K_INT, pcie.generation, NONNEG),
    F("lanes", K_INT, pcie.lanes, NONNEG),
    F("h2d_gbps", K_DOUBLE, pcie.h2d_gbps, POS),
    F("d2h_gbps", K_DOUBLE, pcie.d2h_gbps, POS),
    F("latency_us", K_DOUBLE, pcie.latency_us, NONNEG),
    F("copy_engines", K_INT, pcie.copy_engines, POS),
    {NULL, K_INT, 0, 0},
};
/* NVLink (optional): a GPU without the group has none. */
static const struct field nvlink_fields[] = {
    F("gbps", K_DOUBLE, nvlink.gbps, POS),
    F("nvswitch", K_BOOL, nvlink.nvswitch, REQ),
    F("sustained", K_DOUBLE, nvlink.sustained, POS),
    {NULL, K_INT, 0, 0},
};
static const struct field launch_fields[] = {
    F("host_us", K_DOUBLE, launch.host_us, NONNEG),
    F("graph_us", K_DOUBLE, launch.graph_us, COLO_CFG_NONNEG),
    F("start_us", K_DOUBLE, launch.start_us, NONNEG),
    F("dispatch_us", K_DOUBLE, launch.dispatch_us, COLO_CFG_NONNEG),
    F("floor_us", K_DOUBLE, launch.floor_us, COLO_CFG_NONNEG),
    {NULL, K_INT, 0, 0},
};
/* The share of the peak a kernel of inference size sustains, per class (0 < share <= 1). */
static const struct field sustained_fields[] = {
    F("fp32", K_DOUBLE, sm.sustained[COLO_MATH_FP32], COLO_CFG_POSITIVE),
    F("fp64", K_DOUBLE, sm.sustained[COLO_MATH_FP64], COLO_CFG_POSITIVE),
    F("tf32", K_DOUBLE, sm.sustained[COLO_MATH_TF32], COLO_CFG_POSITIVE),
    F("fp16", K_DOUBLE, sm.sustained[COLO_MATH_FP16], COLO_CFG_POSITIVE),
    F("bf16", K_DOUBLE, sm.sustained[COLO_MATH_BF16], COLO_CFG_POSITIVE),
    F("int8", K_DOUBLE, sm.sustained[COLO_MATH_INT8], COLO_CFG_POSITIVE),
    F("fp8", K_DOUBLE, sm.sustained[COLO_MATH_FP8], COLO_CFG_POSITIVE),
    {NULL, K_INT, 0, 0},
};
/* Per SM and clock, dense; FP32 and FP16 tensor come from the sm group. */
static const struct field math_fields[] = {
    F("fp64", K_DOUBLE, sm.math_per_clock[COLO_MATH_FP64], COLO_CFG_NONNEG),
    F("tf32", K_DOUBLE, sm.math_per_clock[COLO_MATH_TF32], COLO_CFG_NONNEG),
    F("bf16", K_DOUBLE, sm.math_per_clock[COLO_MATH_BF16], COLO_CFG_NONNEG),
    F("int8", K_DOUBLE, sm.math_per_clock[COLO_MATH_INT8], COLO_CFG_NONNEG),
    F("fp8", K_DOUBLE, sm.math_per_clock[COLO_MATH_FP8], COLO_CFG_NONNEG),
    {NULL, K_INT, 0, 0},
};
/* The host a GPU of this model is usually served from (optional; docs/model.md, "The host"). */
static const struct field host_fields[] = {
    F("cores", K_INT, host.cores, COLO_CFG_NONNEG),
    {NULL, K_INT, 0, 0},
};
static const struct field timeslice_fields[] = {
    F("default_us", K_US_TIME, timeslice.default_ns, POS),
    F("short_us", K_US_TIME, timeslice.short_ns, POS),
    F("medium_us", K_US_TIME, timeslice.medium_ns, POS),
    F("long_us", K_US_TIME, timeslice.long_ns, POS),
    F("switch_us", K_US_TIME, timeslice.switch_ns, NONNEG),
    {NULL, K_INT, 0, 0},
};
static const struct field mps_fields[] = {
    F("max_clients", K_INT, mps.max_clients, POS),
    F("max_clients_cuda_13_1", K_INT, mps.max_clients_cuda_13_1, POS),
    F("sm_granularity", K_INT, mps.sm_granularity, POS),
    F("volta", K_BOOL, mps.volta, 0),
    {NULL, K_INT, 0, 0},
};
static const struct field green_fields[] = {
    F("min_sms", K_INT, green.min_sms, POS),
    F("alignment", K_INT, green.alignment, POS),
    F("supported", K_BOOL, green.supported, 0),
    {NULL, K_INT, 0, 0},
};

static const struct {
    const char *name;
    const struct field *fields;
    int flags; /* REQ: the group must be there */
} groups[] = {
    {"sm", sm_fields, REQ},
    {"math", math_fields, 0},
    {"sustained", sustained_fields, 0},
    {"l2", l2_fields, REQ},
    {"memory", memory_fields, REQ},
    {"pcie", pcie_fields, REQ},
    {"nvlink", nvlink_fields, 0},
    {"launch", launch_fields, REQ},
    {"host", host_fields, 0},
    {"timeslice", timeslice_fields, REQ},
    {"mps", mps_fields, REQ},
    {"green", green_fields, REQ},
};

static int read_group(const colo_cfg_reader_t *r, const config_setting_t *root, const char *name,
                      const struct field *fields, int flags, colo_gpu_t *gpu)
{
    const config_setting_t *g;
    int rc = colo_cfg_aggregate(r, root, name, flags, CONFIG_TYPE_GROUP, &g);
    if (rc) return rc < 0 ? rc : 0; /* absent and optional */
    const char *allowed[32];
    size_t n = 0;
    for (const struct field *f = fields; f->key; f++)
        allowed[n++] = f->key;
    allowed[n] = NULL;
    rc = colo_cfg_check_keys(r, g, allowed);
    if (rc) return rc;
    for (const struct field *f = fields; f->key; f++) {
        char *dst = (char *)gpu + f->off;
        long long iv = 0;
        double dv = 0;
        const char *sv = NULL;
        switch (f->kind) {
        case K_INT:
            rc = colo_cfg_int(r, g, f->key, f->flags, &iv);
            if (rc == 0 && iv > INT_MAX)
                rc = colo_cfg_error(r, config_setting_get_member(g, f->key), COLO_ERANGE,
                                    "too large");
            if (rc == 0) *(int *)dst = (int)iv;
            break;
        case K_LLONG:
            rc = colo_cfg_int(r, g, f->key, f->flags, &iv);
            if (rc == 0) *(long long *)dst = iv;
            break;
        case K_DOUBLE:
            rc = colo_cfg_double(r, g, f->key, f->flags, &dv);
            if (rc == 0) *(double *)dst = dv;
            break;
        case K_US_TIME:
            rc = colo_cfg_double(r, g, f->key, f->flags, &dv);
            if (rc == 0) *(colo_time_t *)dst = colo_time_from_ns(dv * 1e3);
            break;
        case K_STRING:
            rc = colo_cfg_string(r, g, f->key, f->flags, &sv);
            if (rc == 0 && !(*(char **)dst = colo_strdup(sv))) rc = COLO_ENOMEM;
            break;
        case K_BOOL: /* absent: the default read_gpu set */
            rc = colo_cfg_bool(r, g, f->key, f->flags, (bool *)dst);
            break;
        }
        if (rc < 0) return rc;
    }
    return 0;
}

static int read_mig_profile(const colo_cfg_reader_t *r, const config_setting_t *p,
                            const colo_gpu_t *gpu, colo_mig_profile_t *mp)
{
    static const char *const keys[] = {
        "name",       "id",           "sms",   "compute_slices", "memory_slices", "l2_eighths",
        "memory_gib", "copy_engines", "media", "max_count",      "placements",    NULL};
    if (!config_setting_is_group(p))
        return colo_cfg_error(r, p, COLO_EINVAL, "each MIG profile must be a group { ... }");
    int rc = colo_cfg_check_keys(r, p, keys);
    if (rc) return rc;
    const char *name;
    long long id, sms, cs, ms, l2, ce, maxc;
    if ((rc = colo_cfg_string(r, p, "name", REQ, &name)) ||
        (rc = colo_cfg_int(r, p, "id", NONNEG, &id)) ||
        (rc = colo_cfg_int(r, p, "sms", POS, &sms)) ||
        (rc = colo_cfg_int(r, p, "compute_slices", POS, &cs)) ||
        (rc = colo_cfg_int(r, p, "memory_slices", POS, &ms)) ||
        (rc = colo_cfg_int(r, p, "l2_eighths", POS, &l2)) ||
        (rc = colo_cfg_double(r, p, "memory_gib", POS, &mp->memory_gib)) ||
        (rc = colo_cfg_int(r, p, "copy_engines", POS, &ce)) ||
        (rc = colo_cfg_bool(r, p, "media", REQ, &mp->media)) ||
        (rc = colo_cfg_int(r, p, "max_count", POS, &maxc)))
        return rc < 0 ? rc : COLO_EINVAL;
    if (!(mp->name = colo_strdup(name))) return COLO_ENOMEM;
    const config_setting_t *at = p;
    if (sms > gpu->sm.count)
        return colo_cfg_error(r, config_setting_get_member(at, "sms"), COLO_ERANGE,
                              "%lld SMs is more than the GPU's %d", sms, gpu->sm.count);
    if (cs > gpu->mig.compute_slices)
        return colo_cfg_error(r, config_setting_get_member(at, "compute_slices"), COLO_ERANGE,
                              "more than the GPU's %d compute slices", gpu->mig.compute_slices);
    if (ms > gpu->mig.memory_slices)
        return colo_cfg_error(r, config_setting_get_member(at, "memory_slices"), COLO_ERANGE,
                              "more than the GPU's %d memory slices", gpu->mig.memory_slices);
    if (l2 > 8)
        return colo_cfg_error(r, config_setting_get_member(at, "l2_eighths"), COLO_ERANGE,
                              "at most 8 eighths");
    mp->id = (int)id;
    mp->sms = (int)sms;
    mp->compute_slices = (int)cs;
    mp->memory_slices = (int)ms;
    mp->l2_eighths = (int)l2;
    mp->copy_engines = (int)ce;
    mp->max_count = (int)maxc;

    const config_setting_t *pl;
    rc = colo_cfg_aggregate(r, p, "placements", REQ, CONFIG_TYPE_ARRAY, &pl);
    if (rc) return rc;
    int n = config_setting_length(pl);
    if (n < 1 || n > COLO_MIG_MAX_SLOTS)
        return colo_cfg_error(r, pl, COLO_ERANGE, "needs 1 to %d start slots", COLO_MIG_MAX_SLOTS);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(pl, (unsigned)i);
        if (config_setting_type(e) != CONFIG_TYPE_INT)
            return colo_cfg_error(r, e, COLO_EINVAL, "start slots are integers");
        int start = config_setting_get_int(e);
        if (start < 0 || start + mp->memory_slices > gpu->mig.memory_slices)
            return colo_cfg_error(r, e, COLO_ERANGE,
                                  "placement %d:%d does not fit in %d memory slices", start,
                                  mp->memory_slices, gpu->mig.memory_slices);
        mp->placements[i] = start;
    }
    mp->n_placements = n;
    return 0;
}

static int read_mig(const colo_cfg_reader_t *r, const config_setting_t *root, colo_gpu_t *gpu)
{
    static const char *const keys[] = {"compute_slices", "memory_slices", "profiles", NULL};
    const config_setting_t *m;
    int rc = colo_cfg_aggregate(r, root, "mig", 0, CONFIG_TYPE_GROUP, &m);
    if (rc) return rc < 0 ? rc : 0; /* absent: not MIG-capable */
    if ((rc = colo_cfg_check_keys(r, m, keys))) return rc;
    long long cs, ms;
    if ((rc = colo_cfg_int(r, m, "compute_slices", POS, &cs)) ||
        (rc = colo_cfg_int(r, m, "memory_slices", POS, &ms)))
        return rc;
    if (ms > COLO_MIG_MAX_SLOTS || cs > ms)
        return colo_cfg_error(r, m, COLO_ERANGE,
                              "at most %d memory slices, and no more compute "
                              "slices than memory slices",
                              COLO_MIG_MAX_SLOTS);
    gpu->mig.compute_slices = (int)cs;
    gpu->mig.memory_slices = (int)ms;
    const config_setting_t *list;
    if ((rc = colo_cfg_aggregate(r, m, "profiles", REQ, CONFIG_TYPE_LIST, &list))) return rc;
    int n = config_setting_length(list);
    if (n < 1) return colo_cfg_error(r, list, COLO_EINVAL, "lists no profiles");
    if (n > COLO_MIG_MAX_PROFILES)
        return colo_cfg_error(r, list, COLO_ERANGE, "at most %d profiles",
                              COLO_MIG_MAX_PROFILES);
    gpu->mig.profiles = colo_calloc((size_t)n, sizeof *gpu->mig.profiles);
    if (!gpu->mig.profiles) return COLO_ENOMEM;
    for (int i = 0; i < n; i++) {
        const config_setting_t *p = config_setting_get_elem(list, (unsigned)i);
        gpu->mig.n_profiles = (size_t)i + 1; /* so a partly read profile is freed */
        if ((rc = read_mig_profile(r, p, gpu, &gpu->mig.profiles[i]))) return rc;
        for (int j = 0; j < i; j++)
            if (strcmp(gpu->mig.profiles[j].name, gpu->mig.profiles[i].name) == 0)
                return colo_cfg_error(r, config_setting_get_member(p, "name"), COLO_EINVAL,
                                      "profile '%s' is listed twice", gpu->mig.profiles[i].name);
    }
    gpu->mig.supported = true;
    return 0;
}

static int read_gpu(const colo_cfg_reader_t *r, const char *path, const config_setting_t *root,
                    colo_gpu_t *gpu)
{
    static const char *const keys[] = {"name",       "full_name", "arch", "compute_capability",
                                       "integrated", "sm",        "math", "sustained",
                                       "l2",         "memory",    "pcie", "nvlink",
                                       "launch",     "timeslice", "mps",  "green",
                                       "mig",        "host",      NULL};
    int rc = colo_cfg_check_keys(r, root, keys);
    if (rc) return rc;
    const char *name, *full, *arch, *cc;
    if ((rc = colo_cfg_string(r, root, "name", REQ, &name)) ||
        (rc = colo_cfg_string(r, root, "full_name", REQ, &full)) ||
        (rc = colo_cfg_string(r, root, "arch", REQ, &arch)) ||
        (rc = colo_cfg_string(r, root, "compute_capability", REQ, &cc)))
        return rc;
    rc = colo_cfg_bool(r, root, "integrated", 0, &gpu->integrated);
    if (rc < 0) return rc;
    if (!(gpu->name = colo_strdup(name)) || !(gpu->full_name = colo_strdup(full)) ||
        !(gpu->arch = colo_strdup(arch)) || !(gpu->compute_capability = colo_strdup(cc)) ||
        !(gpu->path = colo_strdup(path)))
        return COLO_ENOMEM;
    gpu->mps.volta = true; /* optional keys, true unless the file says otherwise */
    gpu->green.supported = true;
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
        if ((rc = read_group(r, root, groups[i].name, groups[i].fields, groups[i].flags, gpu)))
            return rc;
    for (int m = 0; m < COLO_MATH_CLASSES; m++) /* given shares were read above */
        if (gpu->sm.sustained[m] <= 0) gpu->sm.sustained[m] = 1.0;
    gpu->sm.sustained[COLO_MATH_MEMORY] = gpu->sm.sustained[COLO_MATH_FP32];
    gpu->sm.math_per_clock[COLO_MATH_MEMORY] = 2.0 * gpu->sm.fp32_lanes;
    gpu->sm.math_per_clock[COLO_MATH_FP32] = 2.0 * gpu->sm.fp32_lanes;
    gpu->sm.math_per_clock[COLO_MATH_FP16] = gpu->sm.tensor_fp16_flops_per_clock;

    /* Consistency checks a typo would break. */
    const config_setting_t *sm = config_setting_get_member(root, "sm");
    if (gpu->sm.max_warps * 32 != gpu->sm.max_threads)
        return colo_cfg_error(r, config_setting_get_member(sm, "max_warps"), COLO_EINVAL,
                              "%d warps of 32 threads is not max_threads (%d)", gpu->sm.max_warps,
                              gpu->sm.max_threads);
    if (gpu->sm.max_shared_per_block > gpu->sm.shared_bytes)
        return colo_cfg_error(r, config_setting_get_member(sm, "max_shared_per_block"), COLO_EINVAL,
                              "exceeds shared_bytes (%d)", gpu->sm.shared_bytes);
    const config_setting_t *mem = config_setting_get_member(root, "memory");
    if (gpu->memory.achievable_fraction > 1.0)
        return colo_cfg_error(r, config_setting_get_member(mem, "achievable_fraction"), COLO_ERANGE,
                              "is a fraction of peak, at most 1");
    const config_setting_t *nvl = config_setting_get_member(root, "nvlink");
    if (gpu->nvlink.sustained > 1.0)
        return colo_cfg_error(r, config_setting_get_member(nvl, "sustained"), COLO_ERANGE,
                              "is a share of gbps, at most 1");
    return read_mig(r, root, gpu);
}

int colo_gpu_load(const char *path, colo_gpu_t **out, colo_error_t *err)
{
    *out = NULL;
    colo_gpu_t *gpu = colo_calloc(1, sizeof *gpu);
    if (!gpu) return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    config_t cfg;
    config_init(&cfg);
    int rc = colo_cfg_read_file(&cfg, path, err);
    if (rc == 0) {
        colo_cfg_reader_t r = {path, err};
        rc = read_gpu(&r, path, config_root_setting(&cfg), gpu);
        if (rc == COLO_ENOMEM) colo_error_set(err, rc, path, 0, NULL, "out of memory");
    }
    config_destroy(&cfg);
    if (rc) {
        colo_gpu_free(gpu);
        return rc;
    }
    *out = gpu;
    return 0;
}

void colo_gpu_free(colo_gpu_t *gpu)
{
    if (!gpu) return;
    for (size_t i = 0; i < gpu->mig.n_profiles; i++)
        colo_free(gpu->mig.profiles[i].name);
    colo_free(gpu->mig.profiles);
    colo_free(gpu->name);
    colo_free(gpu->full_name);
    colo_free(gpu->arch);
    colo_free(gpu->compute_capability);
    colo_free(gpu->path);
    colo_free(gpu->memory.type);
    colo_free(gpu->calibration.path);
    colo_free(gpu->calibration.device);
    colo_free(gpu->calibration.date);
    for (int i = 0; i < 16; i++)
        colo_free(gpu->calibration.source[i]);
    colo_free(gpu);
}

double colo_gpu_sm_fp32_rate(const colo_gpu_t *gpu)
{
    if (gpu->sm.fp32_gflops > 0) return gpu->sm.fp32_gflops;
    return gpu->sm.clock_mhz * 1e-3 * gpu->sm.fp32_lanes * 2.0;
}

static double tensor_clock_ghz(const colo_gpu_t *gpu)
{
    return (gpu->sm.tensor_clock_mhz > 0 ? gpu->sm.tensor_clock_mhz : gpu->sm.clock_mhz) * 1e-3;
}

double colo_gpu_sm_tensor_rate(const colo_gpu_t *gpu)
{
    if (gpu->sm.tensor_gflops > 0) return gpu->sm.tensor_gflops;
    return tensor_clock_ghz(gpu) * gpu->sm.tensor_fp16_flops_per_clock;
}

colo_math_t colo_gpu_math_runs_as(const colo_gpu_t *gpu, colo_math_t m)
{
    if (m == COLO_MATH_AUTO || m >= COLO_MATH_CLASSES) m = COLO_MATH_FP32;
    for (int hops = 0; hops < 4 && gpu->sm.math_per_clock[m] <= 0; hops++) {
        switch (m) {
        case COLO_MATH_INT8:
        case COLO_MATH_FP8:
            m = COLO_MATH_FP16; /* frameworks fall back to half precision */
            break;
        default:
            m = COLO_MATH_FP32; /* no such tensor unit: FP32 on CUDA cores */
            break;
        }
    }
    return m;
}

double colo_gpu_math_rate(const colo_gpu_t *gpu, colo_math_t m)
{
    m = colo_gpu_math_runs_as(gpu, m);
    switch (m) {
    case COLO_MATH_MEMORY:
    case COLO_MATH_FP32:
        return colo_gpu_sm_fp32_rate(gpu);
    case COLO_MATH_FP64:
        return gpu->sm.clock_mhz * 1e-3 * gpu->sm.math_per_clock[m];
    default: { /* tensor cores: a measured FP16 rate scales them all */
        double f = gpu->sm.tensor_gflops > 0 && gpu->sm.tensor_fp16_flops_per_clock > 0
                       ? colo_gpu_sm_tensor_rate(gpu) /
                             (tensor_clock_ghz(gpu) * gpu->sm.tensor_fp16_flops_per_clock)
                       : 1.0;
        return tensor_clock_ghz(gpu) * gpu->sm.math_per_clock[m] * f;
    }
    }
}

double colo_gpu_dram_rate(const colo_gpu_t *gpu)
{
    return gpu->memory.peak_gbps * gpu->memory.achievable_fraction;
}

double colo_gpu_l2_rate(const colo_gpu_t *gpu)
{
    return gpu->l2.bandwidth_gbps > 0 ? gpu->l2.bandwidth_gbps : 3 * colo_gpu_dram_rate(gpu);
}

double colo_gpu_l2_capacity(const colo_gpu_t *gpu)
{
    return gpu->l2.effective_bytes > 0 ? gpu->l2.effective_bytes : (double)gpu->l2.bytes;
}

const colo_mig_profile_t *colo_gpu_mig_profile(const colo_gpu_t *gpu, const char *name)
{
    /* as nvidia-smi writes them too: "MIG 3g.40gb" (nvidia-smi -L, mig -lgip), and the
     * GPU-instance profile ID ("9", nvidia-smi mig -cgi 9) */
    if (strncmp(name, "MIG ", 4) == 0) name += 4;
    char *end;
    long id = strtol(name, &end, 10);
    bool by_id = *name >= '0' && *name <= '9' && *end == '\0';
    for (size_t i = 0; i < gpu->mig.n_profiles; i++)
        if (by_id ? gpu->mig.profiles[i].id == id : strcmp(gpu->mig.profiles[i].name, name) == 0)
            return &gpu->mig.profiles[i];
    return NULL;
}

double colo_gpu_math_sustained_rate(const colo_gpu_t *gpu, colo_math_t m)
{
    return colo_gpu_math_rate(gpu, m) * gpu->sm.sustained[colo_gpu_math_runs_as(gpu, m)];
}
