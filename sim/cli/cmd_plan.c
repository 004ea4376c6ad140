/* cmd_plan.c: colosim plan: what a live run on a real GPU would execute. */
#include "cli.h"
#include "alloc.h"
#include "errors.h"
#include "live_plan.h"
#include "scenario.h"

#include <stdbool.h>
#include <stdio.h>

static const char usage_plan[] =
    "usage: colosim plan FILE [--seed N] [--set KEY=VALUE ...]\n"
    "\n"
    "Prints what colosim-live would execute for the scenario on a real GPU, without one: the\n"
    "processes and contexts (one process per tenant for time-slicing and MPS, one Green\n"
    "Context per tenant in one process, existing MIG instances), the private MPS daemon and\n"
    "each client's active-thread percentage, and every tenant's arrivals, drawn from the same\n"
    "generators and seeds as the simulator's (docs/live.md). colosim-live --dry-run prints the\n"
    "same.\n";

static int cmd_plan(int argc, char **argv)
{
    struct colo_cli_scenario_opts o;
    colo_scenario_t *sc;
    int status = colo_cli_open_scenario(argc, argv, usage_plan, 0, &o, &sc);
    if (status >= 0) return status;
    colo_free(o.sets);
    colo_live_plan_t plan;
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_live_plan(sc, &plan, &err);
    if (!rc)
        colo_live_plan_print(sc, &plan, stdout);
    else
        colo_cli_print_error(&err);
    colo_live_plan_free(&plan);
    colo_scenario_free(sc);
    return rc ? colo_cli_exit_for(rc) : 0;
}

const colo_cli_command_t colo_cli_plan = {"plan", usage_plan, cmd_plan, false};
