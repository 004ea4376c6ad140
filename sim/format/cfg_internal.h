/* cfg_internal.h: what cfg.c (reading, overrides) and cfg_copy.c (copies of settings) share. */
#ifndef COLO_CFG_INTERNAL_H
#define COLO_CFG_INTERNAL_H

/* Hook attached to a setting that a --set override wrote; freed by libconfig's destructor. */
struct override_mark {
    int index;
};

#endif
