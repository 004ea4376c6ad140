/* options.c: what the commands share: error printing, exit statuses and the scenario options of
 * run, check and plan. */
#include "cli.h"
#include "plugin.h"
#include "alloc.h"
#include "cluster.h"
#include "datadir.h"
#include "errors.h"
#include "scenario.h"
#include "stop.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void colo_cli_print_error(const colo_error_t *e)
{
    char buf[2048];
    colo_error_format(e, buf, sizeof buf);
    fprintf(stderr, "%s\n", buf);
}

int colo_cli_usage_error(const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "colosim: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* the synopsis only (the usage up to its first blank line), and where the rest is: a long
     * help after one wrong option buries the error */
    const char *end = strstr(usage, "\n\n");
    int n = end ? (int)(end - usage) + 1 : (int)strlen(usage);
    char cmd[64] = "";
    if (sscanf(usage, "usage: colosim %63s", cmd) != 1 || cmd[0] == '[' || cmd[0] == '-') cmd[0] = 0;
    fprintf(stderr, "\n%.*s%s%s%s", n, usage, end ? "(colosim " : "", end ? (cmd[0] ? cmd : "help") : "",
            end ? (cmd[0] ? " --help for more)\n" : " for more)\n") : "");
    return EXIT_INPUT;
}

int colo_cli_exit_for(int rc)
{
    if (rc == COLO_EINTR) return colo_stop_status();
    return (rc == COLO_ENOMEM || rc == COLO_EIO) ? 1 : EXIT_INPUT;
}

/* After a command's outputs: a stop signal that came while they were being written did not cut
 * them short; says so, and exits as stopped. */
int colo_cli_stopped_after_writing(int status)
{
    if (!colo_stop_requested() || status) return status; /* status: it said what happened */
    fprintf(stderr, "colosim: %s received after the run had finished; its outputs are whole\n",
            colo_stop_name());
    return colo_stop_status();
}

/* Removes an output this run has just committed, when a later one failed: a regular file only
 * (not standard output, a pipe or a device). */
void colo_cli_take_back(const char *path)
{
    struct stat st;
    if (path && strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
        unlink(path) == 0)
        fprintf(stderr, "colosim: %s removed: the run's other outputs could not be written\n",
                path);
}

/* True when path names the same existing file as other: writing it would destroy an input. */
int colo_cli_same_file(const char *path, const char *other)
{
    struct stat a, b;
    return strcmp(path, "-") != 0 && stat(path, &a) == 0 && stat(other, &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* --timeline-window START:END in seconds, START < END. */
static int parse_window(const char *arg, struct colo_cli_scenario_opts *o)
{
    char *end;
    errno = 0;
    double a = strtod(arg, &end);
    if (errno || end == arg || *end != ':') return -1;
    const char *b_s = end + 1;
    double b = strtod(b_s, &end);
    if (errno || end == b_s || *end || !(a >= 0) || !(b > a) || b > 1e6) return -1;
    o->tl_start = colo_time_from_ns(a * 1e9);
    o->tl_end = colo_time_from_ns(b * 1e9);
    return 0;
}

int colo_cli_plugin(const char *path)
{
    colo_error_t err;
    colo_error_clear(&err);
    if (!colo_plugin_load(path, "--plugin", 0, NULL, &err)) return 0;
    colo_cli_print_error(&err);
    return 1;
}

int colo_cli_parse_scenario_opts(int argc, char **argv, const char *usage, int allow_output,
                                 struct colo_cli_scenario_opts *o)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 'S'},
        {"set", required_argument, NULL, 's'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"compare-modes", no_argument, NULL, 'C'},
        {"timeline", required_argument, NULL, 'T'},
        {"timeline-window", required_argument, NULL, 'W'},
        {"csv", required_argument, NULL, 'V'},
        {"plugin", required_argument, NULL, 'P'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->sets = colo_calloc((size_t)argc + 1, sizeof *o->sets);
    if (!o->sets) return 1;
    const char *seed = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, allow_output ? "o:qh" : "h", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'S':
            seed = optarg;
            break;
        case 'C':
            o->compare = 1;
            break;
        case 'T':
            o->timeline = optarg;
            break;
        case 'V':
            o->csv = optarg;
            break;
        case 'W':
            if (parse_window(optarg, o))
                return colo_cli_usage_error(
                    usage,
                    "--timeline-window takes START:END in seconds with START < "
                    "END, not '%s'",
                    optarg);
            break;
        case 's':
            o->sets[o->n_sets++] = optarg;
            break;
        case 'P':
            if (colo_cli_plugin(optarg)) return EXIT_INPUT;
            break;
        case 'h':
            fputs(usage, stdout);
            return -1;
        default:
            return colo_cli_usage_error(usage, "unknown or incomplete option '%s'",
                                        argv[optind - 1]);
        }
    }
    if (!allow_output &&
        (o->output || o->quiet || o->compare || o->timeline || o->csv || o->tl_end))
        return colo_cli_usage_error(usage, "%s", "check takes no output options");
    if (optind != argc - 1)
        return colo_cli_usage_error(usage, "%s",
                                    optind >= argc ? "a scenario FILE is required"
                                                   : "exactly one scenario FILE, please");
    o->file = argv[optind];
    /* not a file here: a scenario colosim ships, by name (colo_datadir_find, docs/embedding.md) */
    if (colo_datadir_find(o->file, "scenarios", o->found, sizeof o->found) == 0) o->file = o->found;
    if (seed) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(seed, &end, 10);
        if (errno || end == seed || *end || seed[0] == '-')
            return colo_cli_usage_error(usage, "--seed takes a non-negative integer, not '%s'",
                                        seed);
        snprintf(o->seed_set, sizeof o->seed_set, "seed=%llu", v);
        o->sets[o->n_sets++] = o->seed_set;
    }
    const char *outs[] = {o->output, o->timeline, o->csv};
    for (size_t k = 0; k < 3; k++)
        if (outs[k] && colo_cli_same_file(outs[k], o->file))
            return colo_cli_usage_error(usage, "%s would overwrite the scenario itself", outs[k]);
    static const char *const names[] = {"-o", "--timeline", "--csv"};
    for (size_t k = 0; k < 3; k++) /* two outputs to one file: the second would replace the first */
        for (size_t j = k + 1; j < 3; j++)
            if (outs[k] && outs[j] && strcmp(outs[k], "-") != 0 &&
                (strcmp(outs[k], outs[j]) == 0 || colo_cli_same_file(outs[k], outs[j])))
                return colo_cli_usage_error(usage, "%s and %s name the same file '%s'", names[k],
                                            names[j], outs[k]);
    if (o->tl_end && !o->timeline)
        return colo_cli_usage_error(usage, "%s", "--timeline-window needs --timeline FILE");
    if (o->timeline && o->compare)
        return colo_cli_usage_error(
            usage, "%s",
            "--timeline records one run: use it without --compare-modes, with "
            "--set sharing.mode=MODE");
    if (o->output && strcmp(o->output, "-") == 0) o->quiet = 1;
    return 0;
}

/* Loads the scenario of parsed options: -1 when loaded, else the exit status. */
int colo_cli_load_scenario(struct colo_cli_scenario_opts *o, colo_scenario_t **sc)
{
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_scenario_load(o->file, o->sets, o->n_sets, sc, &err);
    if (rc) {
        colo_cli_print_error(&err);
        colo_free(o->sets);
        return colo_cli_exit_for(rc);
    }
    return -1;
}

/* colo_cli_parse_scenario_opts for a command: -1 to go on, or the exit status (--help: 0). */
int colo_cli_scenario_args(int argc, char **argv, const char *usage, int allow_output,
                           struct colo_cli_scenario_opts *o)
{
    int rc = colo_cli_parse_scenario_opts(argc, argv, usage, allow_output, o);
    if (!rc) return -1;
    colo_free(o->sets);
    return rc < 0 ? 0 : rc;
}

int colo_cli_open_scenario(int argc, char **argv, const char *usage, int allow_output,
                           struct colo_cli_scenario_opts *o, colo_scenario_t **sc)
{
    *sc = NULL;
    int rc = colo_cli_scenario_args(argc, argv, usage, allow_output, o);
    return rc >= 0 ? rc : colo_cli_load_scenario(o, sc);
}

/* Whether the file (with the overrides) has a cluster section; one that cannot be read is left
 * to the scenario reader, which says why. */
bool colo_cli_is_cluster(const struct colo_cli_scenario_opts *o)
{
    colo_error_t err;
    colo_error_clear(&err);
    return colo_cluster_detect(o->file, o->sets, o->n_sets, &err) == 1;
}
