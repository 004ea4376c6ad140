/* gpu_catalog.c: finding GPU descriptions by name on the search path, listing them, opening one
 * with its calibration applied, and naming the file for a device as CUDA reports it. Uses gpu.c
 * and calibration.c; neither uses this file, so the two do not depend on each other both ways. */
#include "gpu_catalog.h"
#include "alloc.h"
#include "calibration.h"
#include "datadir.h"
#include "errors.h"
#include "version.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The installed data beside this code: share/colosim/gpus of the prefix the colosim program or
 * libcolosim.so was loaded from (datadir.h), so that an installed prefix can be moved anywhere;
 * where there is none, the usual place, to name in a message. Empty when it cannot be told. */
static void exe_relative_dir(char *buf, size_t n)
{
    char base[4096];
    colo_datadir_installed(base, sizeof base);
    if (base[0])
        snprintf(buf, n, "%s/gpus", base);
    else
        buf[0] = '\0';
}

/* Calls fn(dir, ctx) for each search directory until fn returns non-zero: $COLOSIM_GPU_PATH
 * (colon-separated), $COLOSIM_DATA_DIR/gpus, the installed data beside the program, the source
 * tree's models/gpus, the configure-time install prefix's. */
static int each_dir(int (*fn)(const char *dir, void *ctx), void *ctx)
{
    const char *env = getenv("COLOSIM_GPU_PATH");
    if (env && *env) {
        char buf[4096];
        snprintf(buf, sizeof buf, "%s", env);
        char *save = NULL;
        for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
            int rc = fn(d, ctx);
            if (rc) return rc;
        }
    }
    char dir[4200];
    const char *data = getenv("COLOSIM_DATA_DIR");
    int rc = 0;
    if (data && *data) {
        snprintf(dir, sizeof dir, "%s/gpus", data);
        if ((rc = fn(dir, ctx))) return rc;
    }
    exe_relative_dir(dir, sizeof dir);
    if (dir[0] && (rc = fn(dir, ctx))) return rc;
    rc = fn(COLO_SOURCE_GPU_DIR, ctx);
    return rc ? rc : fn(COLO_INSTALL_GPU_DIR, ctx);
}

void colo_gpu_search_path(char *buf, size_t n)
{
    const char *env = getenv("COLOSIM_GPU_PATH"), *data = getenv("COLOSIM_DATA_DIR");
    char exe[4200];
    exe_relative_dir(exe, sizeof exe);
    snprintf(buf, n, "%s%s%s%s%s%s%s, %s", env && *env ? env : "",
             env && *env ? ", " : "", data && *data ? data : "",
             data && *data ? "/gpus, " : "", exe, exe[0] ? ", " : "", COLO_SOURCE_GPU_DIR,
             COLO_INSTALL_GPU_DIR);
}

struct find_ctx {
    const char *name;
    char *buf;
    size_t n;
};

static int find_in(const char *dir, void *vctx)
{
    struct find_ctx *c = vctx;
    snprintf(c->buf, c->n, "%s/%s.cfg", dir, c->name);
    return is_file(c->buf);
}

int colo_gpu_resolve(const char *name, const char *base_dir, char *buf, size_t n)
{
    size_t len = strlen(name);
    if (strchr(name, '/') || (len > 4 && strcmp(name + len - 4, ".cfg") == 0)) {
        if (name[0] == '/' || !base_dir || !base_dir[0])
            snprintf(buf, n, "%s", name);
        else
            snprintf(buf, n, "%s/%s", base_dir, name);
        return is_file(buf) ? 0 : COLO_ENOENT;
    }
    struct find_ctx c = {name, buf, n};
    return each_dir(find_in, &c) ? 0 : COLO_ENOENT;
}

struct names_ctx {
    char **names;
    size_t count, cap;
    int rc;
};

static int collect_in(const char *dir, void *vctx)
{
    struct names_ctx *c = vctx;
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 4 || strcmp(e->d_name + len - 4, ".cfg") != 0) continue;
        int dup = 0;
        for (size_t i = 0; i < c->count; i++)
            if (strncmp(c->names[i], e->d_name, len - 4) == 0 && c->names[i][len - 4] == '\0')
                dup = 1;
        if (dup) continue;
        char *s = colo_malloc(len - 3);
        if (!s || colo_grow((void **)&c->names, &c->cap, c->count + 1, sizeof *c->names)) {
            colo_free(s);
            c->rc = COLO_ENOMEM;
            break;
        }
        memcpy(s, e->d_name, len - 4);
        s[len - 4] = '\0';
        c->names[c->count++] = s;
    }
    closedir(d);
    return c->rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int colo_gpu_names(char ***names, size_t *count)
{
    struct names_ctx c = {NULL, 0, 0, 0};
    each_dir(collect_in, &c);
    if (c.rc) {
        colo_gpu_names_free(c.names, c.count);
        return c.rc;
    }
    if (c.count) qsort(c.names, c.count, sizeof *c.names, cmp_str);
    *names = c.names;
    *count = c.count;
    return 0;
}

void colo_gpu_names_free(char **names, size_t count)
{
    for (size_t i = 0; i < count; i++)
        colo_free(names[i]);
    colo_free(names);
}

int colo_gpu_open(const char *name, const char *base_dir, const char *calibration,
                  colo_gpu_t **out, const char *source, int line, const char *key,
                  colo_error_t *err)
{
    char path[4096];
    *out = NULL;
    if (colo_gpu_resolve(name, base_dir, path, sizeof path) != 0) {
        char **names = NULL;
        size_t n = 0;
        char list[1024] = "none found";
        if (colo_gpu_names(&names, &n) == 0 && n) {
            size_t used = 0;
            for (size_t i = 0; i < n && used < sizeof list; i++) {
                int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names[i]);
                if (w > 0) used += (size_t)w;
            }
        }
        colo_gpu_names_free(names, n);
        if (!n) { /* no GPU description anywhere: an install without its data */
            char where[2048];
            colo_gpu_search_path(where, sizeof where);
            return colo_error_set(err, COLO_ENOENT, source, line, key,
                                  "unknown GPU '%s': no GPU descriptions found in %s (set "
                                  "COLOSIM_DATA_DIR to the folder holding gpus/, or give a path "
                                  "to a .cfg file)",
                                  name, where);
        }
        return colo_error_set(err, COLO_ENOENT, source, line, key,
                              "unknown GPU '%s' (known: %s; or give a path to a .cfg file)", name,
                              list);
    }
    colo_gpu_t *g;
    int rc = colo_gpu_load(path, &g, err);
    if (rc) return rc;
    char cal[4096];
    int have = 0;
    if (!calibration || strcmp(calibration, "auto") == 0)
        have = colo_calibration_default(g, cal, sizeof cal);
    else if (strcmp(calibration, "none") != 0) {
        snprintf(cal, sizeof cal, "%s", calibration);
        have = 1;
    }
    if (have && (rc = colo_calibration_apply(g, cal, err))) {
        colo_gpu_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

/* name holds w as a word of its own ("NVIDIA L4", not "NVIDIA L40S"; "Tesla P4", not "P40") */
static int has_word(const char *name, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = strstr(name, w); p; p = strstr(p + 1, w))
        if ((p == name || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
            return 1;
    return 0;
}

const char *colo_gpu_guess(const char *name, double gib, int sms)
{
    if (!name) return NULL;
    /* the names cudaGetDeviceProperties and nvidia-smi report ("NVIDIA H100 PCIe", "NVIDIA H100
     * 80GB HBM3", "NVIDIA A100-SXM4-40GB", ...), and the GPU files' full names */
    if (strstr(name, "H200")) return "h200";
    if (strstr(name, "H100")) {
        if (strstr(name, "NVL")) return NULL; /* 132 SMs but HBM3 at 3.9 TB/s: no file of its own */
        if (strstr(name, "PCIe") || sms == 114) return "h100-pcie";
        return sms == 0 || sms == 132 ? "h100-sxm" : NULL;
    }
    int pcie = strstr(name, "PCIE") || strstr(name, "PCIe");
    if (strstr(name, "A100")) {
        /* "NVIDIA A100-PCIE-40GB" and "NVIDIA A100 80GB PCIe" have files of their own */
        if (gib > 50 || strstr(name, "80GB")) return pcie ? "a100-80gb-pcie" : "a100-80gb";
        return pcie ? "a100-pcie-40gb" : "a100-40gb";
    }
    if (strstr(name, "V100S")) return NULL; /* 1597 MHz and 1134 GB/s: no file of its own */
    /* "Tesla V100-PCIE-32GB"; the 16 GB PCIe board differs only in memory size */
    if (strstr(name, "V100")) return pcie ? "v100-pcie-32gb" : "v100-sxm2";
    /* "Tesla P100-PCIE-16GB"; the 12 GB board has 3 of 4 HBM2 stacks (549 GB/s), the SXM2
     * board higher clocks: neither has a file */
    if (strstr(name, "P100"))
        return pcie && !strstr(name, "12GB") && !(gib > 0 && gib < 13) ? "tesla-p100-pcie" : NULL;
    if (has_word(name, "T4")) return "tesla-t4"; /* "Tesla T4" */
    if (has_word(name, "P4")) return "tesla-p4"; /* "Tesla P4" */
    if (has_word(name, "L4")) return "l4";       /* "NVIDIA L4" */
    if (strstr(name, "Orin")) return "orin-agx";
    /* "NVIDIA Thor" (CUDA's name for the T5000's iGPU, 20 SMs); other Thor modules have fewer */
    if (strstr(name, "Thor")) return sms == 0 || sms == 20 ? "jetson-agx-thor" : NULL;
    /* "NVIDIA RTX 6000 Ada Generation" before "NVIDIA RTX A6000"; the RTX PRO 6000 (Blackwell)
     * is neither */
    if (strstr(name, "RTX 6000 Ada")) return "rtx-6000-ada";
    if (strstr(name, "RTX A6000")) return "rtx-a6000";
    return NULL;
}
