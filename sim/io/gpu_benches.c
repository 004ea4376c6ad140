/* gpu_benches.c: model parameters from gpu-benches result files (docs/calibration.md,
 * "From published micro-benchmarks"). Each benchmark prints a space-aligned table; a reader per
 * kind turns it into rows of numbers (gpu_benches_read.c), and a derivation per kind turns rows
 * into values (gpu_benches_derive.c), each with the file lines it used. This file picks the files
 * of a GPU, records each value with its source and puts the calibration document together. */
#include "gpu_benches.h"
#include "calibration.h"
#include "gpu_benches_internal.h"
#include "version.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- which files describe which GPU ------------------------------------------------------ */

/* The result files upstream holds for each GPU colosim describes. A file of another board with
 * the same chip (the A100s share GA100, its clocks, SMs and L2) stands in where the GPU has none
 * of its own, and says so. */
struct stem {
    const char *stem, *note;
};
#define GA100_80 "the A100-80GB's file: same GA100 chip, SMs, clocks and L2 as the 40 GB board"
#define GA100_40 "the A100-40GB's file: same GA100 chip, SMs and clocks as the 80 GB board"
#define GA100_ANY "an A100 (the file does not say which memory size): same GA100 SMs and L1"
#define GV100_PCIE                                                                                 \
    "a V100 PCIe (its clock samples are 1380 MHz, the PCIe board's boost; the SXM2's is "          \
    "1530): same GV100 chip, 80 SMs, 6 MB L2 and 900 GB/s HBM2; clock-bound rates run ~10 % "      \
    "lower than on the SXM2"
/* clang-format off */
static const struct {
    const char *gpu;
    struct stem s[COLO_GB_KIND_N]; /* in COLO_GB_KINDS order; NULL stem: no such file */
} known[] = {
    {"v100-sxm2", {{"v100", GV100_PCIE}, {NULL, NULL}, {"v100", GV100_PCIE},
                   {"v100", GV100_PCIE}, {"v100", GV100_PCIE}, {NULL, NULL}, {NULL, NULL}}},
    {"a100-40gb", {{"a100_40", NULL}, {"a100_80", GA100_80}, {"a100_80", GA100_80},
                   {"a100_40", NULL}, {"a100_80", GA100_80}, {"alex_a100_40", NULL},
                   {"a100", GA100_ANY}}},
    {"a100-80gb", {{"a100_80", NULL}, {"a100_80", NULL}, {"a100_80", NULL}, {"a100_80", NULL},
                   {"a100_80", NULL}, {"alex_a100_40", GA100_40}, {"a100", GA100_ANY}}},
    {"h100-pcie", {{"h100_pcie", NULL}, {"h100_pcie", NULL}, {"h100_pcie", NULL},
                   {"h100_pcie", NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}}},
    {"h200", {{"h200", NULL}, {"h200", NULL}, {NULL, NULL}, {NULL, NULL}, {"h200", NULL},
              {"h200", NULL}, {"h200", NULL}}},
};
/* clang-format on */

/* ---- values and their sources ---------------------------------------------------------- */

/* "2-6, 9, 33": the lines of a row set (in increasing order). */
static void lines_text(const int *lines, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size;) {
        size_t j = i;
        while (j + 1 < n && lines[j + 1] == lines[j] + 1)
            j++;
        int w = j > i ? snprintf(buf + used, size - used, "%s%d-%d", used ? ", " : "", lines[i],
                                 lines[j])
                      : snprintf(buf + used, size - used, "%s%d", used ? ", " : "", lines[i]);
        if (w < 0) break;
        used += (size_t)w;
        i = j + 1;
    }
}

static const char *commit_of(const struct colo_gb_ctx *c, const char *path)
{
    size_t n = strlen(path);
    for (size_t i = 0; i < c->o->n_file_commits; i++) {
        const char *fc = c->o->file_commits[i];
        if (strncmp(fc, path, n) == 0 && fc[n] == '=') return fc + n + 1;
    }
    return c->o->commit;
}

static json_t *source(const struct colo_gb_ctx *c, const struct colo_gb_table *t, const int *lines,
                      size_t n)
{
    char text[1024];
    lines_text(lines, n, text, sizeof text);
    const char *commit = commit_of(c, t->path);
    json_t *s = json_pack("{s:s, s:s, s:s}", "repository",
                          c->o->repository ? c->o->repository : "te42kyfo/gpu-benches", "path",
                          t->path, "lines", text);
    if (s && commit) json_object_set_new(s, "commit", json_string(commit));
    if (s && t->note) json_object_set_new(s, "note", json_string(t->note));
    return s;
}

int colo_gb_nomem(const struct colo_gb_ctx *c)
{
    return colo_error_set(c->err, COLO_ENOMEM, c->o->dir, 0, NULL, "out of memory");
}

/* A model parameter: value, unit, the datasheet value it replaces, method and source. */
int colo_gb_param(struct colo_gb_ctx *c, colo_cal_param_t p, double value, const char *method,
                  const struct colo_gb_table *t, const int *lines, size_t n)
{
    /* what the calibration loader would refuse, said here at the rows it came from */
    double sheet = colo_cal_get(c->gpu, p);
    if (!(value > 0) || !isfinite(value))
        return colo_gb_row_error(c->err, t, lines[0], "%s comes out as %g: not a measurement",
                                 colo_cal_key(p), value);
    if (strcmp(colo_cal_unit(p), "us") != 0 && sheet > 0 &&
        (value > 10 * sheet || value < sheet / 10))
        return colo_gb_row_error(
            c->err, t, lines[0],
            "%s comes out as %g %s, more than 10 times off %s's %g: results of "
            "another GPU, or broken ones",
            colo_cal_key(p), value, colo_cal_unit(p), c->gpu->name, sheet);
    if (p == COLO_CAL_DRAM && value > c->gpu->memory.peak_gbps)
        return colo_gb_row_error(c->err, t, lines[0],
                                 "%s comes out as %g GB/s, above %s's peak (%g GB/s): results of "
                                 "another GPU, or broken ones",
                                 colo_cal_key(p), value, c->gpu->name, c->gpu->memory.peak_gbps);
    json_t *s = source(c, t, lines, n);
    json_t *e = s ? json_pack("{s:s, s:f, s:s, s:f, s:s, s:o}", "key", colo_cal_key(p), "value",
                              value, "unit", colo_cal_unit(p), "datasheet", colo_cal_get(c->gpu, p),
                              "method", method, "source", s)
                  : NULL;
    if (!e || json_array_append_new(c->params, e)) return colo_gb_nomem(c);
    return 0;
}

/* A value the model does not use, kept with its source: measurements.NAME. */
int colo_gb_measurement(struct colo_gb_ctx *c, const char *name, json_t *values, const char *method,
                        const struct colo_gb_table *t, const int *lines, size_t n)
{
    json_t *s = source(c, t, lines, n);
    if (!values || !s) {
        json_decref(values);
        json_decref(s);
        return colo_gb_nomem(c);
    }
    json_object_set_new(values, "method", json_string(method));
    json_object_set_new(values, "source", s);
    if (json_object_set_new(c->meas, name, values)) return colo_gb_nomem(c);
    return 0;
}

/* ---- putting it together --------------------------------------------------------------- */

int colo_gb_import(const colo_gb_options_t *o, const colo_gpu_t *gpu, json_t **out,
                   colo_error_t *err)
{
    *out = NULL;
    const struct stem *stems = NULL;
    struct stem given[COLO_GB_KIND_N];
    if (o->stem) {
        for (int k = 0; k < COLO_GB_KIND_N; k++)
            given[k] = (struct stem){o->stem, NULL};
        stems = given;
    } else {
        for (size_t i = 0; i < sizeof known / sizeof known[0] && !stems; i++)
            if (strcmp(known[i].gpu, gpu->name) == 0) stems = known[i].s;
        if (!stems) {
            char list[256];
            size_t used = 0;
            for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
                used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                         known[i].gpu);
            return colo_error_set(err, COLO_EINVAL, "--gpu", 0, NULL,
                                  "gpu-benches has published no results for %s (it has for %s); "
                                  "give --stem STEM for files of your own",
                                  gpu->name, list);
        }
    }
    json_t *doc = json_object(), *params = json_array(), *meas = json_object();
    json_t *files = json_array(), *missing = json_array();
    struct colo_gb_ctx c = {o, gpu, params, meas, err, 0};
    int rc = doc && params && meas && files && missing ? 0 : colo_gb_nomem(&c);
    static const char *const variants[] = {"", "_graph", "_gsync", "_pt"};
    int sms_from_stream = 0;
    for (int k = 0; k < COLO_GB_KIND_N && !rc; k++) {
        if (!stems[k].stem) continue;
        int nv = k == COLO_GB_SMALL ? 4 : 1;
        for (int v = 0; v < nv && !rc; v++) {
            struct colo_gb_table t;
            int found;
            rc = colo_gb_open_table(&c, (colo_gb_kind_t)k, stems[k].stem, variants[v],
                                    stems[k].note, &t, &found);
            if (!rc && !found && v <= 1 && json_array_append_new(missing, json_string(t.path)))
                rc = colo_gb_nomem(&c);
            if (rc || !found) continue;
            if (k == COLO_GB_SMALL) rc = colo_gb_tag_small(&c, &t);
            if (!rc) {
                switch ((colo_gb_kind_t)k) {
                case COLO_GB_STREAM:
                    rc = colo_gb_from_stream(&c, &t);
                    sms_from_stream = !rc;
                    break;
                case COLO_GB_L2:
                    rc = colo_gb_from_l2(&c, &t);
                    break;
                case COLO_GB_CACHE:
                    rc = colo_gb_from_cache(&c, &t);
                    break;
                case COLO_GB_LATENCY:
                    rc = colo_gb_from_latency(&c, &t);
                    break;
                case COLO_GB_SMALL:
                    rc = colo_gb_from_small(&c, &t, variants[v]);
                    break;
                case COLO_GB_ROOFLINE:
                    rc = colo_gb_from_roofline(&c, &t);
                    break;
                case COLO_GB_STRIDES:
                    rc = colo_gb_from_strides(&c, &t);
                    break;
                default:
                    break;
                }
            }
            if (!rc) {
                const char *commit = commit_of(&c, t.path);
                json_t *f = json_pack("{s:s}", "path", t.path);
                if (f && commit) json_object_set_new(f, "commit", json_string(commit));
                if (f && t.note) json_object_set_new(f, "note", json_string(t.note));
                if (!f || json_array_append_new(files, f)) rc = colo_gb_nomem(&c);
            }
            colo_gb_table_free(&t);
        }
    }
    if (!rc && json_array_size(files) == 0)
        rc = colo_error_set(err, COLO_ENOENT, o->dir, 0, NULL,
                            "no gpu-benches result file for %s here (looked for gpu-stream/%s.txt "
                            "and the like)",
                            gpu->name,
                            stems[0].stem ? stems[0].stem
                            : o->stem     ? o->stem
                                          : "?");
    if (!rc) {
        json_t *device = json_pack("{s:s, s:O, s:O}", "name", "published gpu-benches results",
                                   "files", files, "missing", missing);
        if (device && sms_from_stream)
            json_object_set_new(device, "sm_count", json_integer(gpu->sm.count));
        char tool[128];
        snprintf(tool, sizeof tool, "colosim %s calibrate import gpu-benches", COLO_VERSION);
        if (!device || json_object_set_new(doc, "colosim_calibration", json_integer(1)) ||
            json_object_set_new(doc, "gpu", json_string(gpu->name)) ||
            json_object_set_new(doc, "device", device) ||
            json_object_set_new(doc, "date", json_string("date not recorded")) ||
            json_object_set_new(doc, "command",
                                json_string(o->command ? o->command
                                                       : "colosim calibrate import "
                                                         "gpu-benches")) ||
            json_object_set_new(doc, "tool", json_string(tool)) ||
            json_object_set(doc, "parameters", params) ||
            json_object_set(doc, "measurements", meas))
            rc = colo_gb_nomem(&c);
    }
    json_decref(params);
    json_decref(meas);
    json_decref(files);
    json_decref(missing);
    if (rc) {
        json_decref(doc);
        return rc;
    }
    *out = doc;
    return 0;
}
