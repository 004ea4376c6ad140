/* cmd_compare.c: colosim compare: results side by side. */
#include "cli.h"
#include "compare.h"
#include "errors.h"
#include "results.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

static const char usage_compare[] =
    "usage: colosim compare A.json B.json [...] [-o OUT.json]\n"
    "\n"
    "Prints the runs in results files (colosim run -o) side by side: per tenant (matched by\n"
    "name) the latency percentiles, queueing time, throughput, goodput, SLO attainment and\n"
    "drops, and the GPU's busy time, each with its difference to the first run (relative in %,\n"
    "or in percentage points for fractions). A file written by run --compare-modes adds one\n"
    "column per mechanism. -o writes the same table as JSON, atomically.\n";

static int cmd_compare(int argc, char **argv)
{
    const char *out = NULL;
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0}};
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
        if (ch == 'h') {
            fputs(usage_compare, stdout);
            return 0;
        }
        if (ch == 'o') {
            out = optarg;
            continue;
        }
        return colo_cli_usage_error(usage_compare, "%s '%s'",
                                    ch == ':' ? "missing value for option" : "unknown option",
                                    argv[optind - 1]);
    }
    if (argc - optind < 1) return colo_cli_usage_error(usage_compare, "no results files given");
    colo_compare_t c = {0};
    colo_error_t err;
    colo_error_clear(&err);
    int rc = 0;
    for (int i = optind; i < argc && !rc; i++) {
        if (out && colo_cli_same_file(out, argv[i]))
            rc = colo_error_set(&err, COLO_EINVAL, out, 0, NULL,
                                "is one of the results files: refusing to overwrite it");
        else
            rc = colo_compare_load(&c, argv[i], &err);
    }
    json_t *doc = NULL;
    if (!rc && out) {
        if (!(doc = colo_compare_json(&c)))
            rc = colo_error_set(&err, COLO_ENOMEM, out, 0, NULL, "out of memory");
        else
            rc = colo_results_write(doc, out, &err);
    }
    int status = 0;
    if (rc) {
        colo_cli_print_error(&err);
        status = colo_cli_exit_for(rc);
    } else {
        colo_compare_print(&c, stdout);
    }
    json_decref(doc);
    colo_compare_fini(&c);
    return status;
}

const colo_cli_command_t colo_cli_compare = {"compare", usage_compare, cmd_compare, false};
