/* cmd_live.c: colosim live: the scenario's live harness with the CPU stand-in (the executor is
 * sim/live; colosim-live, built from calibrate/live.cu, runs the same on a GPU). */
#include "cli.h"
#include "live_run.h"

/* The GPU backend of live runs lives in colosim-live (CUDA); this binary has the CPU stand-in. */
static int cmd_live(int argc, char **argv)
{
    static const colo_live_backend_t *const backends[] = {&colo_live_cpu_backend};
    static const char *const self[] = {"/proc/self/exe", "live"};
    return colo_live_main(argc, argv, "colosim live", self, 2, backends, 1);
}

const colo_cli_command_t colo_cli_live = {
    "live", "usage: colosim live FILE [options]: see colosim live --help\n", cmd_live, false};
