/* llm_tp.c: reading llm.tensor_parallel (llm_tp.h; docs/llm.md, "Tensor parallelism"). */
#include "llm_tp.h"
#include "alloc.h"
#include "folder.h"

#include <stdio.h>
#include <string.h>

/* The profiles in the folder of p measured at k ranks, of p's model and GPU: their paths, ", "
 * between, into buf (empty when none or the folder cannot be read). */
static void fitting_profiles(const colo_llm_profile_t *p, int k, char *buf, size_t size)
{
    buf[0] = '\0';
    char *dir = colo_strdup(p->path);
    if (!dir) return;
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    static const char *const json[] = {".json", NULL};
    char **paths = NULL;
    size_t n = 0, used = 0;
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_folder_list(dir, json, &paths, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++) {
            colo_llm_profile_t *q = NULL;
            colo_error_t qerr;
            colo_error_clear(&qerr);
            if (colo_llm_profile_load(paths[i], &q, &qerr)) continue; /* not a profile */
            if (q->tensor_parallel == k && strcmp(q->model, p->model) == 0 &&
                strcmp(q->gpu, p->gpu) == 0) {
                int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", paths[i]);
                if (w > 0 && (size_t)w < size - used) used += (size_t)w;
            }
            colo_llm_profile_free(q);
        }
    }
    colo_folder_free(paths, n);
    colo_free(dir);
}

int colo_llm_tp_read(const colo_cfg_reader_t *r, const config_setting_t *g,
                     const colo_llm_profile_t *p, int *out)
{
    long long k = 1;
    int rc = colo_cfg_int(r, g, "tensor_parallel", 0, &k);
    if (rc < 0) return rc;
    const config_setting_t *at = config_setting_get_member(g, "tensor_parallel");
    /* one node's GPUs: 8 in an HGX/DGX node (the sharding divides heads by a power of two) */
    if (k != 1 && k != 2 && k != 4 && k != 8)
        return colo_cfg_error(r, at, COLO_ERANGE,
                              "%lld: 1, 2, 4 or 8 GPUs of one node hold a replica", k);
    if (k > p->kv_heads || p->kv_heads % k)
        return colo_cfg_error(r, at, COLO_ERANGE,
                              "%lld ranks: %s has %d KV heads, and each rank holds a whole "
                              "number of them (at most %d ranks)",
                              k, p->model, p->kv_heads, p->kv_heads);
    if (p->tensor_parallel != k) { /* times of another shard: refused, not scaled */
        char fit[2048];
        fitting_profiles(p, (int)k, fit, sizeof fit);
        if (!at)
            return colo_cfg_error(r, config_setting_get_member(g, "profile"), COLO_EINVAL,
                                  "%s was measured at tensor parallelism %d (one rank's share "
                                  "of the model): set llm.tensor_parallel = %d%s%s",
                                  p->path, p->tensor_parallel, p->tensor_parallel,
                                  fit[0] ? ", or on one GPU use " : "", fit);
        return colo_cfg_error(
            r, at, COLO_EINVAL,
            "%lld ranks need a profile measured at tensor parallelism %lld; "
            "%s was measured at %d%s%s",
            k, k, p->path, p->tensor_parallel,
            fit[0] ? ": use " : " (none of its folder's profiles of that model and GPU was)", fit);
    }
    *out = (int)k;
    return 0;
}
