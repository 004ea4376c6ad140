/* main.c: the colosim command: dispatch to the commands (one file each, cmd_*.c), help and
 * version. */
#include "cli.h"
#include "alloc.h"
#include "atomic_file.h"
#include "stop.h"
#include "version.h"

#include <gsl/gsl_errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char usage_main[] =
    "usage: colosim COMMAND [ARGS]\n"
    "\n"
    "Simulates DNN inference services sharing one NVIDIA GPU.\n"
    "\n"
    "commands:\n"
    "  run FILE      simulate a scenario, print a summary table, optionally write results JSON\n"
    "  check FILE    validate a scenario and print the set-up it resolves to\n"
    "  plan FILE     print what a live run on a real GPU would execute (no GPU needed)\n"
    "  live FILE     run the scenario's live harness with the CPU stand-in (colosim-live runs it\n"
    "                on a GPU)\n"
    "  sweep STUDY   run every point of a study (axes of scenario keys) on all cores, resumable\n"
    "  search STUDY  per study point, the highest load at which every tenant meets its SLO\n"
    "  plot KIND IN  SVG and PNG figures: sweep, search or cdf (gnuplot)\n"
    "  compare A.json B.json [...]\n"
    "                compare results side by side, with differences to the first\n"
    "  gpus [NAME]   list the GPU descriptions, or print one with its MIG profiles\n"
    "  trace FILE    validate a kernel trace and summarise it; its time on other GPUs, MIG\n"
    "                profiles and MPS percentages (--on), or against a real trace (--against)\n"
    "  llm PROFILE   an LLM profile's iterations on a GPU through the hardware model, against\n"
    "                another GPU's profile (--against) and its attention rows\n"
    "  import KIND FILE -o TRACE.json\n"
    "                convert a profile (orion CSV, kineto PyTorch trace, nsys SQLite, capture\n"
    "                records) to a trace, or Vidur's LLM operator profile (vidur) to an LLM\n"
    "                profile\n"
    "  calibrate import gpu-benches DIR --gpu NAME\n"
    "                a calibration file from published gpu-benches micro-benchmark results\n"
    "  validate [DIR]\n"
    "                predictions against published measurements, case by case, with errors\n"
    "  version       print the version (also -V, --version)\n"
    "  help [COMMAND]\n"
    "\n"
    "Exit status: 0 success, 1 failure while running, 2 bad input or usage; 130 or 143 when\n"
    "run, sweep or search was stopped by SIGINT or SIGTERM (outputs whole or not written).\n"
    "Ended by SIGHUP or SIGPIPE, or by SIGINT or SIGTERM in another command, colosim removes\n"
    "the outputs it had not finished and dies of the signal.\n"
    "GPU descriptions are searched in $COLOSIM_GPU_PATH, $COLOSIM_DATA_DIR/gpus, the\n"
    "program's ../share/colosim/gpus, then " COLO_SOURCE_GPU_DIR ",\n"
    "then " COLO_INSTALL_GPU_DIR ".\n";

/* Every command; to add one, write cmd_NAME.c defining colo_cli_NAME and list it here. */
static const colo_cli_command_t *const commands[] = {
    &colo_cli_run,       &colo_cli_check,    &colo_cli_plan,  &colo_cli_live, &colo_cli_compare,
    &colo_cli_sweep,     &colo_cli_search,   &colo_cli_plot,  &colo_cli_gpus, &colo_cli_import,
    &colo_cli_calibrate, &colo_cli_validate, &colo_cli_trace, &colo_cli_llm,
};

static const colo_cli_command_t *find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(commands[i]->name, name) == 0) return commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    json_set_alloc_funcs(colo_malloc, colo_free);
    if (argc < 2) {
        fputs(usage_main, stderr);
        return EXIT_INPUT;
    }
    const char *name = argv[1];
    colo_atomic_remove_on_signal(); /* a killed command leaves no temporary file behind */
    const colo_cli_command_t *cmd = find(name);
    if (cmd) {
        if (cmd->stoppable) colo_stop_install(); /* outputs written whole, or none */
        return cmd->main(argc - 1, argv + 1);
    }
    if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0 ||
        strcmp(name, "-V") == 0) {
        printf("colosim %s\n", COLO_VERSION);
        return 0;
    }
    if (strcmp(name, "help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0) {
        const colo_cli_command_t *topic = argc > 2 ? find(argv[2]) : NULL;
        if (argc > 2 && !topic && strcmp(argv[2], "version") != 0 && strcmp(argv[2], "help")) {
            fprintf(stderr, "colosim: no help on '%s': not a command\n\n%s", argv[2], usage_main);
            return EXIT_INPUT;
        }
        fputs(topic ? topic->usage : usage_main, stdout);
        return 0;
    }
    fprintf(stderr, "colosim: unknown command '%s'\n\n%s", name, usage_main);
    return EXIT_INPUT;
}
