/* hardware.h: one GPU's contended resources: SMs as block slots handed out by a block
 * dispatcher (resident blocks run to completion; pending kernels wait in priority, then arrival
 * order), and as fluid-solver resources for their issue rate; L2 groups (bandwidth and
 * capacity), DRAM channel classes, the two PCIe directions and copy engines; and kernels and
 * copies running on them. Equations: docs/model.md, "Contention". */
#ifndef COLO_HARDWARE_H
#define COLO_HARDWARE_H

#include "event_queue.h"
#include "fluid.h"
#include "gpu.h"
#include "kernel_model.h"
#include "sm_slots.h"
#include "trace.h"

#include <stdbool.h>
#include <stdint.h>

#define COLO_HW_MAX_UNITS 256 /* SMs or DRAM channels */
#define COLO_HW_MAX_PARTS 8   /* classes one set may span */

typedef struct colo_hw_kernel colo_hw_kernel_t;
typedef struct colo_hw_copy colo_hw_copy_t;
struct colo_hw_live;

/* Where a kernel runs: its SM set, the L2 group it shares, and the DRAM channels its memory is
 * spread over (indices returned by the colo_hw_add_* functions). */
typedef struct colo_hw_place {
    uint32_t sm_set, l2_group, channel_set;
    int sm_limit; /* at most this many SMs of the set at a time (an MPS cap); 0: all */
    int priority; /* pending blocks of higher priority are dispatched first (stream priority) */
} colo_hw_place_t;

/* A family of unit sets (SMs, or DRAM channels) over which activities spread evenly. Units that
 * belong to exactly the same sets form a class: one solver resource each, so a family with no
 * overlaps costs one element per set, whatever its number of units. */
typedef struct colo_hw_family {
    struct colo_hw_set {
        uint8_t member[COLO_HW_MAX_UNITS];
        int n_units;
        int n_parts;
        struct {
            uint32_t cls;
            double share; /* of the set's use that falls on this class */
        } parts[COLO_HW_MAX_PARTS];
    } * sets;
    size_t n_sets, cap_sets;
    struct colo_hw_class {
        uint32_t res;
        int n_units;
        double reserved; /* bytes/ns held back from the solver (colo_hw_reserve_dram) */
        bool stale;      /* reserved changed while no copy moved: the solver learns it later */
    } * classes;
    size_t n_classes, cap_classes;
    int n_units;          /* units that exist (SMs or channels of the GPU) */
    double unit_capacity; /* per unit: 1 SM, or a channel's bytes/ns */
} colo_hw_family_t;

typedef struct colo_hw {
    const colo_gpu_t *gpu; /* borrowed */
    colo_eq_t *eq;         /* borrowed */
    colo_fluid_t fl;
    colo_hw_family_t sm, mem;
    bool finalized; /* classes built: no more sets may be added */
    /* the block dispatcher: SM groups, and the kernels with blocks not yet dispatched in the
     * order they get free slots (priority, then arrival) */
    colo_slots_t slots;
    colo_hw_kernel_t *queue;
    uint64_t seq;
    struct colo_hw_live *cofree; /* cohort records to reuse (through their link) */
    /* L2 groups: bandwidth resource, capacity in bytes, and the kernels running in them */
    struct colo_hw_l2 {
        uint32_t res;
        double bytes;
        colo_hw_kernel_t **running;
        size_t n_running, cap_running;
        bool stale; /* its kernels changed since their shares were last worked out */
        bool over;  /* their working sets exceeded it then (some kernel lost hits) */
    } * l2;
    size_t n_l2, cap_l2;
    /* PCIe: one resource per direction; copy engines in domains (the GPU, or a MIG instance) */
    uint32_t pcie[2];
    struct colo_hw_ce {
        int engines, busy;
        colo_hw_copy_t **queue; /* waiting for an engine, FIFO */
        size_t q_head, q_len, q_cap;
    } * ce;
    size_t n_ce, cap_ce;
    struct colo_hw_live *live;          /* kernels and copies in flight */
    struct colo_hw_live *kfree, *cfree; /* kernel and copy records to reuse (through next) */
    bool pcie_fair;                     /* copies weighted by flow (colo_hw_copy_opts_t) */
    bool l2_stale;                      /* some L2 group is stale */
    bool done_whole; /* in a kernel's done callback: it ran as one solver activity */
    colo_hw_copy_t **moving;            /* copies moving bytes */
    size_t n_moving, cap_moving;
    int failed;
} colo_hw_t;

/* Builds the resources of gpu with one SM set of all SMs, one L2 group of the whole L2, one
 * channel set of all channels and one copy-engine domain with all engines (indices 0). */
int colo_hw_init(colo_hw_t *hw, const colo_gpu_t *gpu, colo_eq_t *eq);
void colo_hw_fini(colo_hw_t *hw);

/* More partitions (for MIG, Green Contexts, MPS partitions, channel colouring). SM and channel
 * sets are lists of unit indices, may overlap, and must all be added before the first kernel
 * starts. Each writes the new index to *index. */
int colo_hw_add_sm_set(colo_hw_t *hw, const int *sms, int n, uint32_t *index);
int colo_hw_add_l2_group(colo_hw_t *hw, double bytes, double bandwidth, uint32_t *index);
int colo_hw_add_channel_set(colo_hw_t *hw, const int *channels, int n, uint32_t *index);

/* SMs in SM set i. */
int colo_hw_set_sms(const colo_hw_t *hw, uint32_t i);
int colo_hw_add_ce_domain(colo_hw_t *hw, int engines, uint32_t *index);

/* Starts a kernel (its work from colo_kernel_work on this GPU) at place with remaining fraction
 * remaining of its work left: its blocks join the dispatcher's queue and take block slots on
 * the SMs of its set as resident blocks retire (docs/model.md, "Blocks on SMs"). done(obj, arg)
 * is called when its last block has run. *out is the handle for colo_hw_kernel_stop; it is
 * freed when the kernel finishes or is stopped. */
int colo_hw_kernel_start(colo_hw_t *hw, const colo_kernel_work_t *w, colo_hw_place_t place,
                         double remaining, colo_fluid_done_fn done, void *obj, int64_t arg,
                         colo_hw_kernel_t **out);

/* Gives a running kernel a weight (priority) in the solver; 1 by default. */
int colo_hw_kernel_weight(colo_hw_t *hw, colo_hw_kernel_t *k, double weight);

/* Called from a kernel's done callback: when it ran alone from its start to its end (one solver
 * activity, solved once, alone: colo_fluid_done_solo), its resources and its use of each; else
 * NULL. Its duration is then the same whenever it starts on an idle GPU (no
 * kernel, copy or cohort on the hardware model, hw->live NULL) with all its work to do. */
const struct colo_fluid_use *colo_hw_done_solo(const colo_hw_t *hw);

/* Stops a kernel (compute preemption: its resident blocks leave the SMs with their progress,
 * its pending ones are withdrawn); *remaining gets the fraction of its work left. */
int colo_hw_kernel_stop(colo_hw_t *hw, colo_hw_kernel_t *k, double *remaining);

/* The kernel's current speed (1 = as fast as alone; 0 while none of its blocks is resident)
 * and DRAM bytes it now needs in all. */
double colo_hw_kernel_speed(const colo_hw_t *hw, const colo_hw_kernel_t *k);
double colo_hw_kernel_dram_bytes(const colo_hw_kernel_t *k);

/* The kernel's blocks resident on SMs now, and those not yet dispatched. */
long long colo_hw_kernel_resident(const colo_hw_kernel_t *k);
long long colo_hw_kernel_pending(const colo_hw_kernel_t *k);

/* Checks the dispatcher's invariants: no SM holds more warps, block slots, registers or shared
 * memory than it has, and the groups of each class add up to its SMs. 0, or COLO_ESTATE with a
 * line on stderr. O(groups x residents). */
int colo_hw_check_slots(const colo_hw_t *hw);

/* Starts a copy of bytes in direction dir using an engine of domain ce: it waits for a free
 * engine (FIFO), then the link's per-transfer latency, then moves its bytes sharing the
 * direction's bandwidth with the other copies, and the device memory's bandwidth with every
 * kernel and copy. done(obj, arg) when the last byte is there. */
int colo_hw_copy_start(colo_hw_t *hw, colo_copy_dir_t dir, long long bytes, uint32_t ce,
                       colo_fluid_done_fn done, void *obj, int64_t arg);

/* Where a copy's bytes go and how it shares the link (colo_hw_copy_start_at): the channel set
 * of the device memory it writes or reads (its bytes use those channels' bandwidth too), and
 * under fair PCIe (pcie_fair) its flow (a tenant; -1: none) and the flow's weight: the flows
 * moving bytes in one direction share it in proportion to their weights, each flow's copies
 * equally (as a completely fair scheduler's virtual time makes them); otherwise every copy
 * moving bytes gets an equal share. */
typedef struct colo_hw_copy_opts {
    uint32_t channel_set;
    int flow;
    double weight;
} colo_hw_copy_opts_t;

/* colo_hw_copy_start with the copy's channels and flow; colo_hw_copy_start is this with all
 * channels, no flow and weight 1. */
int colo_hw_copy_start_at(colo_hw_t *hw, colo_copy_dir_t dir, long long bytes, uint32_t ce,
                          const colo_hw_copy_opts_t *o, colo_fluid_done_fn done, void *obj,
                          int64_t arg);

/* A kernel timed alone (time-slicing: its context owns the GPU or its MIG instance, and its
 * duration is its time alone) still moves its DRAM bytes through the channels that copies write
 * and read: rate bytes per ns on channel_set are held back from the solver (copies share what
 * is left) until released with -rate. The caller counts the kernel's own use. 0 or a negative
 * code. */
int colo_hw_reserve_dram(colo_hw_t *hw, uint32_t channel_set, double rate);

/* What the GPU's resources have carried so far through the solver (integrals of use over time,
 * in units x ns) and what the whole GPU can carry per ns: SMs (SM x ns), L2 and DRAM (bytes),
 * each PCIe direction (bytes). Utilisation over [t0, t1) = difference of two readings /
 * (capacity x (t1 - t0)). */
enum { COLO_USE_SM, COLO_USE_L2, COLO_USE_DRAM, COLO_USE_H2D, COLO_USE_D2H, COLO_USE_KINDS };
extern const char *const colo_use_names[COLO_USE_KINDS]; /* "sm", "l2", "dram", ... */
void colo_hw_usage(const colo_hw_t *hw, double integral[COLO_USE_KINDS],
                   double capacity[COLO_USE_KINDS]);

/* Time a copy takes alone: latency + bytes / rate. */
colo_time_t colo_hw_copy_alone(const colo_gpu_t *gpu, colo_copy_dir_t dir, long long bytes);

#endif
