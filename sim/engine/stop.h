/* stop.h: stopping cleanly on SIGINT or SIGTERM. The handler only records the signal; a run
 * polls it (every few thousand events) and ends with COLO_EINTR, so the command writes either
 * every output whole or none, and says which (issue 10). */
#ifndef COLO_STOP_H
#define COLO_STOP_H

/* Installs the handlers for SIGINT and SIGTERM (without SA_RESTART: a blocking wait returns). */
void colo_stop_install(void);

/* The signal received, or 0. */
int colo_stop_requested(void);

/* The exit status for a command stopped by that signal: 128 + its number, as a shell reports. */
int colo_stop_status(void);

/* The signal's name ("SIGINT"). */
const char *colo_stop_name(void);

#endif
