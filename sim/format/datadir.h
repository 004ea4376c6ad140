/* datadir.h: the data colosim ships (scenarios, traces), found by name when a path given does
 * not exist where it was given (datadir.c). */
#ifndef COLO_DATADIR_H
#define COLO_DATADIR_H

#include <stddef.h>

/* Finds a data file. A name that is absolute, or that names a regular file relative to the
 * working directory, is itself (no search). Otherwise the name, without its leading "./" and
 * "../", is looked for as D/NAME, then D/SUB/NAME (sub: "scenarios", "traces" or NULL for none)
 * in each data folder D in turn: $COLOSIM_DATA_DIR, the installed share/colosim beside the
 * program or libcolosim.so (wherever the prefix was moved), the source tree (a build run in
 * place), then the configure-time prefix's share/colosim. Writes the path into buf (the name
 * itself when nothing is found): 0, or COLO_ENOENT. Cost: a few stat calls per folder. */
int colo_datadir_find(const char *name, const char *sub, char *buf, size_t n);

/* Looks for name (relative, not found where it was given) in the data folders only, as
 * colo_datadir_find does after its first test: 0 with the path in buf, or COLO_ENOENT. */
int colo_datadir_lookup(const char *name, const char *sub, char *buf, size_t n);

/* The installed share/colosim beside the file this code was loaded from (the colosim program,
 * or libcolosim.so when a program or Python loads the library), wherever the prefix was moved:
 * 0 with its path tidied in buf; COLO_ENOENT with the usual place in buf (to name in a message),
 * or "" when that file cannot be told. The GPU descriptions' search (gpu_catalog.c) uses it
 * too. */
int colo_datadir_installed(char *buf, size_t n);

/* The data folders searched, in order, comma-separated, for messages. */
void colo_datadir_search_path(char *buf, size_t n);

#endif
