/* host.h: the host side of serving (docs/model.md, "The host"): the framework that dispatches a
 * tenant's ops and the CPU time each kernel launch costs it, the node's CPU cores that the
 * tenants' dispatching threads share, and the stretch of host time when they are too few. */
#ifndef COLO_HOST_H
#define COLO_HOST_H

#include "gpu.h"
#include "simtime.h"

#include <stdbool.h>

/* What issues a tenant's kernels. */
typedef enum {
    COLO_FW_TRACE,         /* the trace's own host gaps, at least one CUDA launch per launch */
    COLO_FW_PYTORCH_EAGER, /* eager PyTorch: Python and ATen dispatch per operator */
    COLO_FW_CUDA_GRAPHS,   /* the request is one CUDA graph (cuda_graphs = true) */
    COLO_FW_TENSORRT,      /* a C++ runtime (TensorRT, Triton's backends): launches alone */
    COLO_FRAMEWORKS
} colo_framework_t;

/* "trace", "pytorch_eager", "cuda_graphs", "tensorrt". */
const char *colo_framework_name(colo_framework_t f);
/* COLO_FRAMEWORKS when name is none of them. */
colo_framework_t colo_framework_parse(const char *name);
/* Whether its threads of one process take turns in one interpreter (Python's GIL). */
bool colo_framework_gil(colo_framework_t f);

/* Host time per kernel launch of framework f on gpu's host, at speed times the speed of the
 * hosts it was measured on; 0 for COLO_FW_TRACE and COLO_FW_CUDA_GRAPHS (the trace's gaps, or
 * the GPU's launch figures, decide). */
colo_time_t colo_framework_launch(colo_framework_t f, const colo_gpu_t *gpu, double speed);

/* The host's cores in use (colo_sim_t.host): each process with a request in flight needs one
 * core per dispatching thread, a process whose threads share an interpreter one core for all
 * of them (host.c). cores 0: as many as asked (the interpreter is still one). */
typedef struct colo_host_load {
    int cores;
    int demand;    /* cores asked for now */
    int *gil_busy; /* per process: busy streams of its GIL-bound tenants */
    int *busy;     /* per process: busy streams of its other tenants */
    /* time in [from, to) (the measured window) with more cores asked for than there are */
    colo_time_t from, to, saturated, since;
} colo_host_load_t;

/* A stream of a tenant of process proc becomes busy (+1) or idle (-1) at now. */
void colo_host_busy(colo_host_load_t *h, int proc, bool gil, int delta, colo_time_t now);
/* Closes the saturated time at the run's end. */
void colo_host_finish(colo_host_load_t *h, colo_time_t end);
/* How much longer host work of a stream of process proc takes now than alone: the processes'
 * demand over the cores (at least 1), times the streams sharing its interpreter. */
double colo_host_stretch(const colo_host_load_t *h, int proc, bool gil);

#endif
