/* fleet.c: the event loop of a fleet (fleet.h). Runs touch only where a router decides: a
 * routed service's leader, at each of its arrivals, reads its replicas' state and hands the
 * request to one of them, on its GPU or another. So the fleet keeps every run at the time of
 * the next routing decision T, the earliest next arrival of any leader: each run takes its
 * events before T on its own (nothing another run does can reach it before T), then the runs
 * whose leaders arrive at T take their events at T, routing among replicas that have all run
 * to T. Between decisions a run goes as fast as alone: the cost of the fleet is one pass over
 * the runs per routing decision (docs/engine.md, "A fleet"). */
#include "fleet.h"

#include <stdio.h>
#include <string.h>

static int loop(colo_sim_t *const *sims, size_t n, colo_error_t *err)
{
    for (;;) {
        colo_time_t at = COLO_TIME_MAX;
        for (size_t r = 0; r < n; r++) {
            colo_time_t t = colo_sim_next_routing(sims[r]);
            if (t < at) at = t;
        }
        for (size_t r = 0; r < n; r++) { /* every event before the decision */
            int rc = colo_sim_advance(sims[r], at, at == COLO_TIME_MAX, err);
            if (rc) return rc;
        }
        if (at == COLO_TIME_MAX) return 0;
        for (size_t r = 0; r < n; r++) /* the runs whose leaders decide now, in order */
            if (colo_sim_next_routing(sims[r]) == at) {
                int rc = colo_sim_advance(sims[r], at, true, err);
                if (rc) return rc;
            }
    }
}

int colo_fleet_run(colo_sim_t *const *sims, size_t n, colo_error_t *err)
{
    int rc = 0;
    for (size_t r = 0; r < n && !rc; r++)
        rc = colo_sim_start(sims[r], err);
    if (!rc) rc = loop(sims, n, err);
    for (size_t r = 0; r < n && !rc; r++)
        rc = colo_sim_finish(sims[r], err);
    return rc;
}

void colo_fleet_timeline_name(const char *path, size_t gi, char *buf, size_t n)
{
    size_t len = strlen(path), cut = len;
    if (len > 8 && strcmp(path + len - 8, ".json.gz") == 0)
        cut = len - 8;
    else if (len > 5 && strcmp(path + len - 5, ".json") == 0)
        cut = len - 5;
    snprintf(buf, n, "%.*s.gpu%zu%s", (int)cut, path, gi, path + cut);
}
