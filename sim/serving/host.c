/* host.c: frameworks' host time per launch and the host's cores (host.h; docs/model.md, "The
 * host"). */
#include "host.h"

#include <string.h>

static const char *const names[COLO_FRAMEWORKS] = {"trace", "pytorch_eager", "cuda_graphs",
                                                   "tensorrt"};

/* Eager PyTorch's CPU time per kernel launch of an FP32 vision or BERT model: the median over
 * 36 FP32 and TF32 configurations (six models at batch 1, 4 and 32) of the CPU time of one
 * forward call over the kernels it launched, PyTorch 2.11 on an H200's host (16 cores of an
 * Intel Xeon in a VM): 34.8 us, p10 18.3, p90 39.3 (calibrate/results/h200-2026-11-28/host/
 * models.jsonl, `python3 calibrate/host_precision.py models`). */
#define PYTORCH_EAGER_LAUNCH_US 34.8

const char *colo_framework_name(colo_framework_t f)
{
    return f < COLO_FRAMEWORKS ? names[f] : "?";
}

colo_framework_t colo_framework_parse(const char *name)
{
    for (int f = 0; f < COLO_FRAMEWORKS; f++)
        if (strcmp(name, names[f]) == 0) return (colo_framework_t)f;
    return COLO_FRAMEWORKS;
}

bool colo_framework_gil(colo_framework_t f)
{
    /* two Python threads of one process serving eager ResNet-50 took 2.4x the host time of
     * one, four took 4.1x (host_threads.py threads, same host) */
    return f == COLO_FW_PYTORCH_EAGER;
}

colo_time_t colo_framework_launch(colo_framework_t f, const colo_gpu_t *gpu, double speed)
{
    double us = 0;
    if (f == COLO_FW_PYTORCH_EAGER) us = PYTORCH_EAGER_LAUNCH_US;
    if (f == COLO_FW_TENSORRT) us = gpu->launch.host_us; /* a C++ loop of launches */
    return us > 0 ? colo_time_from_ns(us * 1e3 / (speed > 0 ? speed : 1.0)) : 0;
}

/* Adds the time since h->since that lies in the window, while saturated. */
static void saturated_to(colo_host_load_t *h, colo_time_t now)
{
    if (h->cores > 0 && h->demand > h->cores) {
        colo_time_t a = h->since > h->from ? h->since : h->from, b = now < h->to ? now : h->to;
        if (b > a) h->saturated += b - a;
    }
    h->since = now;
}

void colo_host_finish(colo_host_load_t *h, colo_time_t end)
{
    saturated_to(h, end);
}

void colo_host_busy(colo_host_load_t *h, int proc, bool gil, int delta, colo_time_t now)
{
    saturated_to(h, now);
    if (gil) {
        int before = h->gil_busy[proc];
        h->gil_busy[proc] += delta;
        h->demand += (h->gil_busy[proc] > 0) - (before > 0);
    } else {
        h->busy[proc] += delta;
        h->demand += delta;
    }
}

double colo_host_stretch(const colo_host_load_t *h, int proc, bool gil)
{
    double s = h->cores > 0 && h->demand > h->cores ? (double)h->demand / h->cores : 1.0;
    if (gil && h->gil_busy[proc] > 1) s *= h->gil_busy[proc];
    return s;
}
