/* cli.h: what the files of the colosim command share. Each command is one file, cmd_NAME.c,
 * that defines a colo_cli_command_t; main.c lists them (docs/architecture.md, "Where to add a
 * CLI command"). options.c holds the helpers below. */
#ifndef COLO_CLI_H
#define COLO_CLI_H

#include "errors.h"
#include "scenario.h"
#include "simtime.h"
#include "study.h"

#include <stdbool.h>
#include <stddef.h>

/* Exit statuses: 0 success, 1 failure while running (out of memory, cannot write output),
 * 2 bad input or usage (nothing written), 128 + signal when stopped (stop.h). */
enum { EXIT_INPUT = 2 };

typedef struct colo_cli_command {
    const char *name;                   /* colosim NAME ... */
    const char *usage;                  /* printed by colosim help NAME and on a usage error */
    int (*main)(int argc, char **argv); /* argv[0] is the command's name */
    bool stoppable; /* SIGINT and SIGTERM stop it with its outputs whole or none (stop.h) */
} colo_cli_command_t;

extern const colo_cli_command_t colo_cli_run, colo_cli_check, colo_cli_plan, colo_cli_live,
    colo_cli_compare, colo_cli_sweep, colo_cli_search, colo_cli_plot, colo_cli_gpus,
    colo_cli_import, colo_cli_calibrate, colo_cli_validate, colo_cli_trace, colo_cli_llm;

/* Prints FILE:LINE: KEY: MESSAGE on standard error. */
void colo_cli_print_error(const colo_error_t *e);
/* Prints "colosim: " and the message, then usage, on standard error; returns EXIT_INPUT. */
int colo_cli_usage_error(const char *usage, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The exit status for a failed call's code: stopped, 1 (memory, I/O) or EXIT_INPUT. */
int colo_cli_exit_for(int rc);
/* After a command's outputs: a stop signal that came while they were being written did not cut
 * them short; says so, and exits as stopped. */
int colo_cli_stopped_after_writing(int status);
/* True when path names the same existing file as other: writing it would destroy an input. */
int colo_cli_same_file(const char *path, const char *other);
/* Removes an output the run committed before a later one failed (regular files only). */
void colo_cli_take_back(const char *path);

/* Options shared by run, check and plan. */
struct colo_cli_scenario_opts {
    const char *file; /* as given, or a shipped scenario found by name (found) */
    char found[4200];
    const char *output;
    const char **sets;
    size_t n_sets;
    char seed_set[64];
    int quiet;
    int compare;
    const char *timeline, *csv;
    colo_time_t tl_start, tl_end; /* tl_end 0: from warmup_s, 1 s long */
};

/* --plugin PATH: loads the plug-in (plugin.h) at once; 0, or 1 after printing why not. */
int colo_cli_plugin(const char *path);

/* Parses a scenario command's arguments into o (o->sets is new: the caller frees it). 0, -1
 * for --help (usage printed), or the exit status of a usage error. */
int colo_cli_parse_scenario_opts(int argc, char **argv, const char *usage, int allow_output,
                                 struct colo_cli_scenario_opts *o);
/* colo_cli_parse_scenario_opts for a command: -1 to go on, or the exit status (--help: 0). */
int colo_cli_scenario_args(int argc, char **argv, const char *usage, int allow_output,
                           struct colo_cli_scenario_opts *o);
/* Loads the scenario of parsed options: -1 when loaded, else the exit status (error printed,
 * o->sets freed). */
int colo_cli_load_scenario(struct colo_cli_scenario_opts *o, colo_scenario_t **sc);
/* Parses and loads: -1 with o and *sc set (the caller frees both), else the exit status. */
int colo_cli_open_scenario(int argc, char **argv, const char *usage, int allow_output,
                           struct colo_cli_scenario_opts *o, colo_scenario_t **sc);
/* Whether the file (with the overrides) has a cluster section; one that cannot be read is left
 * to the scenario reader, which says why. */
bool colo_cli_is_cluster(const struct colo_cli_scenario_opts *o);

/* Draws the sweep plot of study s from its results in dir: y against x, one line per value of
 * by (cmd_study.c; used by plot too). 0 or a negative code with err set. */
int colo_cli_plot_sweep(const colo_study_t *s, const char *dir, const char *x, const char *by,
                        const char *y, colo_error_t *err);

#endif
