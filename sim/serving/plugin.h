/* plugin.h: plug-ins by name (docs/embedding.md, "Plug-ins"): a shared object that registers
 * kernel schedulers and arrival processes through colosim.h, loaded by `colosim run|sweep|search
 * --plugin PATH.so` or a scenario's `plugins = ["PATH.so", ...]`. */
#ifndef COLO_PLUGIN_H
#define COLO_PLUGIN_H

#include "errors.h"

/* The interface version a plug-in is given; it changes when colosim.h's plug-in types do. */
#define COLO_PLUGIN_ABI 1

/* What a plug-in exports, under the name colosim_plugin_init: registers its schedulers
 * (colo_sched_register) and arrival processes (colo_arrival_register), whose ops must be static
 * (a plug-in is never unloaded). abi is COLO_PLUGIN_ABI of the colosim loading it: return
 * nonzero when it is not the one the plug-in was built with. 0 on success. */
typedef int (*colo_plugin_init_fn)(int abi);

/* Loads the plug-in at path (a shared object) and runs its colosim_plugin_init, once per file
 * however often it is named. source, line and key say where it was named, for errors: a file
 * that cannot be opened, a library dlopen refuses (its words), no colosim_plugin_init, or one
 * that fails (a name taken). 0 or a negative code, err set. Thread-safe. */
int colo_plugin_load(const char *path, const char *source, int line, const char *key,
                     colo_error_t *err);

/* The plug-ins loaded so far, in order, comma-separated (for messages; "" when none). */
void colo_plugin_names(char *buf, size_t n);

#endif
