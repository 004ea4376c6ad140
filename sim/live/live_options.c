/* live_options.c: the options of the live-run command, and its usage. */
#include "live_run_internal.h"
#include "alloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_fmt[] =
    "usage: %s SCENARIO [-o OUT.json] [--seed N] [--set KEY=VALUE ...] [--backend NAME]\n"
    "       [--ready-timeout S] [-q]\n"
    "       %s SCENARIO --dry-run | --self-test\n"
    "\n"
    "Runs the scenario on the machine: the same tenants, arrivals (same generators and seed as\n"
    "the simulator) and sharing mechanism, and writes results in the simulator's schema, so\n"
    "that `colosim compare SIM.json LIVE.json` sets prediction and measurement side by side.\n"
    "\n"
    "  -o FILE            results JSON (written whole or not at all); default: a table only\n"
    "  --seed N           the seed for arrivals (as colosim run --seed)\n"
    "  --set KEY=VALUE    override a scenario key (as colosim run --set)\n"
    "  --backend NAME     what runs a request:\n"
    "%s"
    "  --dry-run          print the plan (processes, contexts, arrivals) and exit\n"
    "  --self-test        replay each tenant's trace alone and report how close the replay\n"
    "                     comes to the trace, kernel by kernel and per inference (goal 5 %%)\n"
    "  --ready-timeout S  longest wait for processes to get ready (default 900 s)\n"
    "  -q                 no table\n"
    "\n"
    "Exit status: 0 done; 1 failure while running, or a tenant's process failed (its error is\n"
    "in the results, the others' results are kept); 2 bad input, or MIG instances the scenario\n"
    "needs do not exist (colosim never changes MIG mode); 3 --self-test missed its goal;\n"
    "130 interrupted (no results written).\n";

void colo_live_usage(FILE *f, const char *prog, const colo_live_backend_t *const *b, size_t nb)
{
    char list[2048] = "";
    size_t used = 0;
    for (size_t i = 0; i < nb && used < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "                       %-6s %s%s\n",
                         b[i]->name, b[i]->summary, i == 0 ? " (default)" : "");
        if (w > 0) used += (size_t)w;
    }
    fprintf(f, usage_fmt, prog, prog, list);
}

/* 0 to go on, or an exit status. */
int colo_live_parse_opts(int argc, char **argv, const char *prog,
                         const colo_live_backend_t *const *b, size_t nb, struct colo_live_opts *o)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"seed", required_argument, NULL, 'S'},
                                          {"set", required_argument, NULL, 's'},
                                          {"backend", required_argument, NULL, 'b'},
                                          {"dry-run", no_argument, NULL, 'n'},
                                          {"self-test", no_argument, NULL, 't'},
                                          {"ready-timeout", required_argument, NULL, 'r'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"child", required_argument, NULL, 'c'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof *o);
    o->ready_timeout_s = 900;
    o->backend = b[0]->name;
    if (!(o->sets = colo_calloc((size_t)argc + 1, sizeof *o->sets))) return EXIT_RUN;
    optind = 1;
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "o:qh", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->output = optarg;
            break;
        case 'S': {
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (errno || *end || optarg[0] == '-' || !optarg[0]) {
                fprintf(stderr, "%s: --seed: '%s' is not a non-negative integer\n", prog, optarg);
                return EXIT_INPUT;
            }
            snprintf(o->seed_set, sizeof o->seed_set, "seed=%llu", v);
            break;
        }
        case 's':
            o->sets[o->n_sets++] = optarg;
            break;
        case 'b':
            o->backend = optarg;
            break;
        case 'n':
            o->dry_run = true;
            break;
        case 't':
            o->self_test = true;
            break;
        case 'r':
            o->ready_timeout_s = strtod(optarg, &end);
            if (*end || !(o->ready_timeout_s > 0) || o->ready_timeout_s > 86400) {
                fprintf(stderr, "%s: --ready-timeout: '%s' is not a number of seconds (0, 86400]\n",
                        prog, optarg);
                return EXIT_INPUT;
            }
            break;
        case 'q':
            o->quiet = true;
            break;
        case 'c':
            o->child = optarg;
            break;
        case 'h':
            colo_live_usage(stdout, prog, b, nb);
            return -1;
        default:
            colo_live_usage(stderr, prog, b, nb);
            return EXIT_INPUT;
        }
    }
    if (o->seed_set[0]) o->sets[o->n_sets++] = o->seed_set;
    if (optind != argc - 1) {
        fprintf(stderr, "%s: expected one scenario file\n\n", prog);
        colo_live_usage(stderr, prog, b, nb);
        return EXIT_INPUT;
    }
    o->file = argv[optind];
    if (o->dry_run && o->self_test) {
        fprintf(stderr, "%s: --dry-run and --self-test exclude each other\n", prog);
        return EXIT_INPUT;
    }
    return 0;
}
