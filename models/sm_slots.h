/* sm_slots.h: a GPU's SMs as block slots: which blocks each SM holds, and where new ones fit.
 * Each SM has warps, block slots, registers and shared memory (the occupancy rules of
 * models/occupancy.c); a block takes a share of each. SMs of one class (the same membership in
 * every SM set) that hold the same blocks are one group, so the state of a GPU is a few
 * groups, not a record per SM: a placement splits a group, a removal merges neighbours again.
 * Used by the block dispatcher of models/blocks.c (docs/model.md, "Blocks on SMs"). */
#ifndef COLO_SM_SLOTS_H
#define COLO_SM_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#define COLO_SLOTS_PER_SM                                                                          \
    16                       /* occupants on one SM at most: an SM holding blocks of 16 cohorts    \
                                takes no 17th, though it has slots left (an approximation) */
#define COLO_SLOTS_MAX_CLS 8 /* classes one occupant spans at most (an SM set's classes) */

/* An occupant: blocks placed together (a cohort), owned by a kernel. Its kernel's blocks' shares
 * of an SM are borrowed and must outlive it. */
typedef struct colo_slots_occ {
    const void *owner; /* its kernel: under an SM cap, SMs holding any of the owner's count */
    const double *u;   /* per block: share of an SM's warps, block slots, registers, shared mem */
    const double *by;  /* 1 / u: blocks each allows on an empty SM (0: no limit) */
    int fit;           /* its blocks on an empty SM */
    /* set by colo_slots_place */
    long long resident; /* blocks on SMs */
    int n_cls;          /* the classes of the SMs holding them, and its blocks on each */
    struct {
        uint32_t cls;
        long long blocks;
    } cls[COLO_SLOTS_MAX_CLS];
} colo_slots_occ_t;

typedef struct colo_slots_group {
    uint32_t cls;
    int n;    /* SMs */
    int next; /* the next group (SMs in order) or free record; -1: none */
    int fit;  /* blocks of the occupant being placed one SM takes, while fit_stamp holds */
    uint64_t fit_stamp;
    double use[4]; /* per SM: shares of warps, block slots, registers, shared memory in use */
    int n_res;
    struct {
        colo_slots_occ_t *o;
        int per_sm;
    } res[COLO_SLOTS_PER_SM];
} colo_slots_group_t;

typedef struct colo_slots {
    colo_slots_group_t *groups; /* records: a list from head, free ones from free */
    int n_groups, head, free, cap;
    int idle[64]; /* per class, its one group of SMs holding no block (-1: none) */
    uint64_t stamp;
} colo_slots_t;

/* One idle group per class; class k has units[k] SMs. 0 or COLO_ENOMEM. */
int colo_slots_init(colo_slots_t *s, const int *units, int n_classes);
void colo_slots_fini(colo_slots_t *s);

/* Places up to want more blocks of occupant o on free slots of the SMs of the classes in mask
 * (bit k: class k), spread evenly over idle SMs first, then over SMs with room, then filling
 * (the block scheduler sends a grid's blocks to the SMs with the most free resources). With
 * room >= 0, at most room SMs that hold none of o's owner's blocks are taken (an SM cap: the
 * caller counts what the owner holds, colo_slots_owner_sms); room < 0: no cap.
 * Updates o's residents and classes. Returns the blocks placed. O(groups x occupants). */
long long colo_slots_place(colo_slots_t *s, colo_slots_occ_t *o, long long want, uint64_t mask,
                           int room);

/* SMs holding blocks of owner's occupants. O(groups x occupants). */
int colo_slots_owner_sms(const colo_slots_t *s, const void *owner);

/* Takes o's blocks off their SMs. O(groups x occupants). */
void colo_slots_remove(colo_slots_t *s, colo_slots_occ_t *o);

/* The first occupant on SMs of mask for which pred(o, arg) holds, in SM order; NULL if none. */
colo_slots_occ_t *colo_slots_find(const colo_slots_t *s, uint64_t mask,
                                  bool (*pred)(const colo_slots_occ_t *, void *), void *arg);

/* 0 when no SM holds more of any resource than it has and class k's groups add up to units[k]
 * SMs; COLO_ESTATE with a line on stderr otherwise. */
int colo_slots_check(const colo_slots_t *s, const int *units, int n_classes);

#endif
