/* cmd_validate.c: colosim validate: predictions against published measurements. */
#include "cli.h"
#include "errors.h"
#include "json_lines.h"
#include "validate.h"
#include "version.h"

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

static const char usage_validate[] =
    "usage: colosim validate [DIR] [-o FILE.json] [--markdown FILE.md] [--check RECORDED.json]\n"
    "                        [-q]\n"
    "\n"
    "Runs the validation suite in DIR (default: ./validation, else the source tree's): each case\n"
    "simulates the set-up of a published measurement and compares colosim's prediction with the\n"
    "published figure. Prints one table (case, published, predicted, error) with the median\n"
    "absolute error of the validation cases; cases whose source also set a model parameter are\n"
    "listed apart and not counted (docs/validation.md).\n"
    "  -o FILE.json         write the table as JSON (the record --check compares with)\n"
    "  --markdown FILE.md   write the tables into FILE.md between its colosim validate marks\n"
    "  --check RECORDED     exit 1 when a case's |error| grew more than one percentage point past\n"
    "                       the recorded one, a case is not recorded, or one is above 50 %\n"
    "                       without a stated cause\n"
    "  -q                   print only the summary line\n";

/* colosim validate [DIR] ... */
static int cmd_validate(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'}, {"markdown", required_argument, NULL, 'm'},
        {"check", required_argument, NULL, 'c'},  {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *out = NULL, *md = NULL, *check = NULL, *dir = "validation";
    bool quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'm':
            md = optarg;
            break;
        case 'c':
            check = optarg;
            break;
        case 'q':
            quiet = true;
            break;
        case 'h':
            fputs(usage_validate, stdout);
            return 0;
        default:
            return colo_cli_usage_error(usage_validate, "unknown or incomplete option '%s'",
                                        argv[optind - 1]);
        }
    }
    if (argc - optind > 1) return colo_cli_usage_error(usage_validate, "%s", "at most one folder");
    struct stat st;
    if (argc - optind == 1)
        dir = argv[optind];
    else if (stat(dir, &st) != 0) /* not run from the source tree: the suite it was built from */
        dir = COLO_SOURCE_VALIDATION_DIR;
    colo_error_t err;
    colo_error_clear(&err);
    colo_vsuite_t *s = NULL;
    json_t *doc = NULL;
    int rc = colo_vsuite_load(dir, &s, &err);
    if (!rc) rc = colo_vsuite_run(s, &err);
    if (!rc && out && !(doc = colo_vsuite_json(s)))
        rc = colo_error_set(&err, COLO_ENOMEM, dir, 0, NULL, "out of memory");
    int failed = 0;
    if (!rc && check) { /* before anything is written over the record */
        failed = colo_vsuite_check(s, check, 0.01, stderr, &err);
        if (failed < 0) rc = failed;
    }
    if (!rc && failed && (out || md)) /* a table that failed its check does not replace one */
        fprintf(stderr, "colosim validate: the check failed: %s not written\n",
                out && md ? "-o and --markdown"
                : out     ? "-o"
                          : "--markdown");
    if (!rc && out && !failed) {
        rc =
            colo_json_write_file(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6),
                                 out, "write error", &err);
    }
    if (!rc && md && !failed) rc = colo_vsuite_markdown(s, md, &err);
    if (rc) {
        colo_cli_print_error(&err);
    } else if (quiet) {
        size_t n;
        double med = colo_vsuite_median(s, false, &n);
        if (n)
            printf("%zu validation cases: median |error| %.1f %%\n", n, 100 * med);
        else
            printf("no validation cases (only calibration cases)\n");
    } else {
        colo_vsuite_print(s, stdout);
    }
    if (!rc && check)
        fprintf(failed ? stderr : stdout, "check against %s: %s\n", check,
                failed ? "FAILED" : "no case got worse");
    json_decref(doc);
    colo_vsuite_free(s);
    return rc ? (rc == COLO_ENOMEM ? 1 : EXIT_INPUT) : failed ? 1 : 0;
}

const colo_cli_command_t colo_cli_validate = {"validate", usage_validate, cmd_validate, false};
