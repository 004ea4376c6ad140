/* lifo_plugin.c: a plug-in (docs/embedding.md, "Plug-ins"): a shared object colosim loads by
 * name, from `colosim run|sweep|search --plugin liblifo_plugin.so` or a scenario's
 * `plugins = ["liblifo_plugin.so"];`. It registers a kernel scheduler, "lifo" (the most recently
 * ready kernel first, at most `slots` at a time), and an arrival process, "every" (one request
 * every gap_ms exactly); their parameters are scenario keys like any other, so --set and a
 * study's axes reach them (scheduler.slots, tenants.NAME.arrival.gap_ms).
 *   colosim sweep examples/lifo_sweep.cfg --plugin PATH/liblifo_plugin.so */
#include <colosim/colosim.h>

/* The key colo_sched_pick_slots minimises: later readiness first. */
static double newest_first(const colo_sched_item_t *it)
{
    return -(double)it->ready;
}

static long lifo_pick(colo_sched_t *s)
{
    return colo_sched_pick_slots(s, newest_first);
}

static const colo_sched_ops_t lifo = {
    .name = "lifo",
    .summary = "the most recently ready kernel first (a plug-in)",
    .params = {"slots", NULL},
    .defaults = {1},
    .pick_next = lifo_pick,
};

/* arrival = { process = "every"; gap_ms = 5.0; }: its rate in rate, so load_scale scales it. */
static int every_parse(colo_arrival_cfg_t *c, const colo_cfg_reader_t *r, const config_setting_t *g,
                       const char *dir)
{
    (void)dir;
    static const char *const keys[] = {"process", "gap_ms", NULL};
    int rc = colo_cfg_check_keys(r, g, keys);
    if (!rc)
        rc = colo_cfg_double(r, g, "gap_ms", COLO_CFG_REQUIRED | COLO_CFG_POSITIVE, &c->param[0]);
    if (!rc) c->rate = 1e3 / c->param[0];
    return rc;
}

static int every_next(const colo_arrival_cfg_t *c, colo_arrival_state_t *st, gsl_rng *rng,
                      colo_time_t now, colo_time_t *at, int *count, colo_error_t *err)
{
    (void)st, (void)rng, (void)err;
    *at = now + colo_time_from_ns(1e9 / c->rate);
    *count = 1;
    return 0;
}

static const colo_arrival_ops_t every = {"every", "one request every gap_ms (a plug-in)",
                                         every_parse, every_next};

/* colosim calls this once when it loads the plug-in. */
int colosim_plugin_init(int abi);
int colosim_plugin_init(int abi)
{
    if (abi != COLO_PLUGIN_ABI) return 1; /* built against another colosim.h */
    if (colo_sched_register(&lifo)) return 2;
    return colo_arrival_register(&every) ? 3 : 0;
}
