/* atomic_file.h: output files that appear whole or not at all (temp file + rename). */
#ifndef COLO_ATOMIC_FILE_H
#define COLO_ATOMIC_FILE_H

#include "errors.h"

#include <stdio.h>

typedef struct colo_atomic_file {
    FILE *f;    /* write here between open and commit */
    char *path; /* final name */
    char *tmp;  /* temporary name in the same directory; NULL for "-" (stdout) */
} colo_atomic_file_t;

/* Opens a temporary file beside path ("-" means standard output). A path that is a device or
 * a pipe (/dev/null) is written in place, never replaced; a folder is an error. 0 or a negative
 * code with err naming the path. */
int colo_atomic_open(colo_atomic_file_t *af, const char *path, colo_error_t *err);

/* Flushes, syncs and renames the temporary file over path. On any failure the temporary file is
 * removed, nothing is left at path that was not there before, and err says why. */
int colo_atomic_commit(colo_atomic_file_t *af, colo_error_t *err);

/* Discards the temporary file. Safe after a failed open or commit. */
void colo_atomic_abort(colo_atomic_file_t *af);

/* Installs a handler for SIGHUP, SIGINT, SIGTERM and SIGPIPE (those not ignored already) that
 * removes the temporary files this process is writing, says so on stderr, and dies of the
 * signal as it would have without the handler. For commands that do not poll colo_stop (stop.h)
 * or for the signals they do not poll: a killed command leaves no NAME.tmp.XXXXXX behind. */
void colo_atomic_remove_on_signal(void);

/* A temporary file written some other way (gnuplot's output), removed by that handler while it
 * is tracked: from before it is created until after it is renamed or removed. tmp must stay
 * allocated while tracked. The atomic files above are tracked by open, untracked by commit. */
void colo_atomic_track(char *tmp);
void colo_atomic_untrack(const char *tmp);

#endif
