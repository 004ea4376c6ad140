/* fuzz_llm.c: LLM profiles (colo_llm_profile_load), and the kernels of a prefill and a decode
 * iteration of whatever it accepts (llm_model.c) on an H100. */
#include "fuzz.h"
#include "gpu_catalog.h"
#include "llm_model.h"
#include "llm_profile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_llm_profile_t *p;
    if (colo_llm_profile_load(fuzz_file(data, size, "profile.json"), &p, &err)) return 0;
    colo_gpu_t *g;
    if (colo_gpu_open("h100-sxm", NULL, NULL, &g, "fuzz", 0, NULL, &err) == 0) {
        colo_llm_model_t m;
        colo_llm_model_init(&m, p, g, g, 1 + (int)(size % 3));
        size_t cap = colo_llm_model_max_kernels(&m), n;
        colo_kernel_work_t *w = calloc(cap, sizeof *w);
        colo_op_t *ops = calloc(cap, sizeof *ops);
        if (w && ops) {
            int most = colo_llm_profile_max_tokens(p);
            colo_llm_iter_t it;
            memset(&it, 0, sizeof it);
            colo_llm_iter_prefill(&it, p, most > 1 ? most - 1 : 1, 0, true);
            colo_llm_model_kernels(&m, &it, ops, w, NULL, &n, &err);
            memset(&it, 0, sizeof it);
            colo_llm_iter_decode(&it, 1000);
            colo_llm_model_kernels(&m, &it, ops, w, NULL, &n, &err);
        }
        free(w);
        free(ops);
        colo_gpu_free(g);
    }
    colo_llm_profile_free(p);
    return 0;
}
