/* hardware_internal.h: what hardware.c (resources, copies) and blocks.c (kernels) share. */
#ifndef COLO_HARDWARE_INTERNAL_H
#define COLO_HARDWARE_INTERNAL_H

#include "alloc.h"
#include "hardware.h"

/* Kernels and copies in flight are on the hardware's live list, so colo_hw_fini can free those
 * a run left behind when it stopped. */
struct colo_hw_live {
    struct colo_hw_live *prev, *next;
};

static inline void colo_hw__live_add(colo_hw_t *hw, struct colo_hw_live *l)
{
    l->prev = NULL;
    l->next = hw->live;
    if (hw->live) hw->live->prev = l;
    hw->live = l;
}

static inline void colo_hw__live_remove(colo_hw_t *hw, struct colo_hw_live *l)
{
    if (l->prev)
        l->prev->next = l->next;
    else
        hw->live = l->next;
    if (l->next) l->next->prev = l->prev;
}

/* The first error met inside an event, for the caller to find in hw->failed. */
static inline void colo_hw__note(colo_hw_t *hw, int rc)
{
    if (rc && !hw->failed) hw->failed = rc;
}

/* Kernel and copy records come from a free list of their kind when one is there (their link,
 * the first member, chains it): no allocation per kernel or copy once a run has reached its
 * most concurrent ones. Not zeroed: the caller sets every field. */
static inline void *colo_hw__pool_take(struct colo_hw_live **pool, size_t size)
{
    struct colo_hw_live *l = *pool;
    if (!l) return colo_malloc(size);
    *pool = l->next;
    return l;
}

static inline void colo_hw__pool_put(struct colo_hw_live **pool, struct colo_hw_live *l)
{
    l->next = *pool;
    *pool = l;
}

/* Builds the SM and channel classes and the SM slots: after it no set may be added. */
int colo_hw__finalize(colo_hw_t *hw);

/* Tells the solver the DRAM held back (colo_hw_reserve_dram) on the classes of channel_set
 * that changed since it last knew: before a copy's bytes move there, or at once while copies
 * move. */
int colo_hw__apply_reserved(colo_hw_t *hw, uint32_t channel_set);

/* The L2 shares of the groups whose kernels changed, before each solve (blocks.c). */
void colo_hw__presolve(void *obj);

#endif
