/* bench_fluid_simgrid.cpp: colosim's fluid solver side by side with SimGrid's LMM solver on the
 * same random problems (issue 28; a benchmark, not a test). Built only with
 * -DCOLOSIM_BENCH_SIMGRID=ON (tests/CMakeLists.txt): it needs Debian's libsimgrid-dev and, for
 * the solver's header, which SimGrid does not install, a source tree of the same version.
 *
 * The problems are bench_fluid's (bench_fluid_problem.h): K kernels always running on an H100's
 * SMs, L2 and DRAM with random demands; when one finishes, the next of the stream starts in its
 * place. colosim runs them through colo_fluid exactly as bench_fluid does. SimGrid runs them as
 * its CPU model Cas01 does: an LMM system from System::build("maxmin", ...), one constraint per
 * resource, one variable per kernel (penalty 1, bound 1: full speed), and SimGrid's Model update,
 * either lazy (cpu/optim:Lazy, the default: selective update, and after each solve only the
 * modified actions' completion dates recomputed, in the Model's action heap) or full
 * (cpu/optim:Full). Both solve once per start and once per completion event (a finish and the
 * start it triggers are one event in colosim, as one date in SimGrid's engine); each run
 * restarts the stream, so every side gets the same kernels in the same order.
 *
 * Checks: the speeds both give to the same kernels (1,000 random problems of each size, one
 * solve each) and, for each timed run, the number of solves and the simulated time at which the
 * last kernel ends. Figures: events (starts + finishes) per second on one core, best of three
 * runs interleaved between the three sides, and colosim's over SimGrid's. */
extern "C" {
#include "bench_fluid_problem.h"
#include "event_queue.h"
#include "fluid.h"
}

#include <simgrid/kernel/resource/Action.hpp>
#include <simgrid/kernel/resource/Model.hpp>
#include <simgrid/version.h>

/* SimGrid's internal header (SIMGRID_SOURCE_DIR/src/kernel/lmm/), read at build time only */
#include "src/kernel/lmm/maxmin.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

namespace
{

namespace lmm = simgrid::kernel::lmm;
namespace sgr = simgrid::kernel::resource;

const double capacity[BENCH_FLUID_N_RES] = {BENCH_FLUID_SM_CAPACITY, BENCH_FLUID_L2_CAPACITY,
                                            BENCH_FLUID_DRAM_CAPACITY};

double now_s()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
    double rate;   /* events per second */
    long solves;   /* solves of the whole run */
    double end_ns; /* simulated time at which the last kernel ended */
};

/* ---- colosim ---- */

struct colo_bench {
    colo_eq_t eq;
    colo_fluid_t fl;
    uint32_t res[BENCH_FLUID_N_RES];
    uint64_t rng;
    long started, finished, limit;
};

void colo_on_done(void *obj, int64_t arg);

/* Starts kernel k; with chain, its end starts the next kernel of the stream (until the limit). */
void colo_start(colo_bench *b, const bench_fluid_kernel &k, bool chain, colo_activity_id_t *id)
{
    colo_fluid_elem_t e[BENCH_FLUID_N_RES];
    for (int r = 0; r < BENCH_FLUID_N_RES; r++)
        e[r] = {b->res[r], k.coef[r]};
    if (colo_fluid_start(&b->fl, k.work, 1.0, 1.0, e, BENCH_FLUID_N_RES,
                         chain ? colo_on_done : nullptr, b, 0, id))
        exit(1);
    b->started++;
}

void colo_on_done(void *obj, int64_t arg)
{
    (void)arg;
    colo_bench *b = static_cast<colo_bench *>(obj);
    b->finished++;
    if (b->started < b->limit) colo_start(b, bench_fluid_draw(&b->rng), true, nullptr);
}

void colo_setup(colo_bench *b)
{
    if (colo_eq_init(&b->eq, 64) || colo_fluid_init(&b->fl, &b->eq)) exit(1);
    for (int r = 0; r < BENCH_FLUID_N_RES; r++)
        if (colo_fluid_add_resource(&b->fl, capacity[r], &b->res[r])) exit(1);
}

void colo_teardown(colo_bench *b)
{
    colo_fluid_fini(&b->fl);
    colo_eq_fini(&b->eq);
}

/* bench_fluid's run, the stream restarted */
result colo_run(int k, long events)
{
    colo_bench *b = new colo_bench();
    colo_setup(b);
    b->rng = BENCH_FLUID_SEED;
    b->limit = events / 2;
    double t0 = now_s();
    for (int i = 0; i < k; i++)
        colo_start(b, bench_fluid_draw(&b->rng), true, nullptr);
    colo_event_t ev;
    while (colo_eq_pop(&b->eq, &ev))
        ev.fn(ev.obj, ev.arg);
    double dt = now_s() - t0;
    result out = {(double)(b->started + b->finished) / dt, (long)b->fl.solves, (double)b->eq.now};
    colo_teardown(b);
    delete b;
    return out;
}

/* ---- SimGrid ---- */

class BenchModel;

/* A kernel: an action whose variable uses the three resources with the kernel's coefficients,
 * penalty 1 and bound 1 (full speed); its cost is the kernel's time alone, in seconds, as
 * SimGrid's CPU actions count flops done at a rate in flops per second. */
class BenchAction final : public sgr::Action
{
  public:
    BenchAction(BenchModel *model, const bench_fluid_kernel &k);
    /* remains brought up to now at the last rate, as SimGrid's CpuAction does */
    void update_remains_lazy(double now) override;
    /* as Action's, but Action's reads SimGrid's engine clock, which this driver does not run */
    double get_remains() override;

  private:
    BenchModel *model_;
    double last_update_;
};

/* The three resources as constraints of one LMM system, updated as SimGrid's CPU model Cas01
 * does under cpu/optim:Lazy (its default: selective update, and only the modified actions'
 * completion dates recomputed, in the Model's action heap) or cpu/optim:Full (no selective
 * update; every action's remains brought forward at each date, the earliest end found by a
 * scan). The simulated time, in seconds, is kept here, as SimGrid's engine keeps it. */
class BenchModel final : public sgr::Model
{
  public:
    double now = 0;
    lmm::Constraint *cnst[BENCH_FLUID_N_RES];

    explicit BenchModel(bool lazy) : Model("colosim-bench")
    {
        set_update_algorithm(lazy ? UpdateAlgo::LAZY : UpdateAlgo::FULL);
        set_maxmin_system(lmm::System::build("maxmin", lazy));
        for (int r = 0; r < BENCH_FLUID_N_RES; r++)
            cnst[r] = get_maxmin_system()->constraint_new(nullptr, capacity[r]);
    }

    /* as SimGrid's CpuModel: the actions due now (to sg_surf_precision) are finished */
    void update_actions_state_lazy(double t, double /*delta*/) override
    {
        while (!get_action_heap().empty() &&
               double_equals(get_action_heap().top_date(), t, sg_surf_precision))
            get_action_heap().pop()->finish(sgr::Action::State::FINISHED);
    }

    /* as SimGrid's CpuModel (no maximum durations here) */
    void update_actions_state_full(double /*t*/, double delta) override
    {
        for (auto it = get_started_action_set()->begin(); it != get_started_action_set()->end();) {
            sgr::Action &a = *it;
            ++it; /* finish moves it to the finished set */
            a.update_remains(a.get_rate() * delta);
            if (a.get_remains_no_update() <= 0 && a.get_sharing_penalty() > 0)
                a.finish(sgr::Action::State::FINISHED);
        }
    }
};

BenchAction::BenchAction(BenchModel *model, const bench_fluid_kernel &k)
    : Action(model, k.work * 1e-9, false,
             model->get_maxmin_system()->variable_new(this, 1.0, 1.0, BENCH_FLUID_N_RES)),
      model_(model), last_update_(model->now)
{
    for (int r = 0; r < BENCH_FLUID_N_RES; r++)
        model->get_maxmin_system()->expand(model->cnst[r], get_variable(), k.coef[r]);
}

void BenchAction::update_remains_lazy(double now)
{
    if (get_remains_no_update() > 0) update_remains(get_last_value() * (now - last_update_));
    last_update_ = now;
    set_last_value(get_rate());
}

double BenchAction::get_remains()
{
    if (model_->is_update_lazy()) update_remains_lazy(model_->now);
    return get_remains_no_update();
}

result sg_run(int k, long events, bool lazy)
{
    uint64_t rng = BENCH_FLUID_SEED;
    long started = 0, finished = 0, solves = 0, limit = events / 2;
    BenchModel *m = new BenchModel(lazy);
    double t0 = now_s();
    double next = -1;
    for (int i = 0; i < k; i++) {
        new BenchAction(m, bench_fluid_draw(&rng)); /* the model's until done */
        started++;
        next = m->next_occurring_event(m->now); /* a solve, as each colosim start */
        solves++;
    }
    while (next >= 0) { /* the engine's loop: to the next date, finish, start, solve */
        m->now += next;
        m->update_actions_state(m->now, next);
        while (sgr::Action *a = m->extract_done_action()) {
            delete a;
            finished++;
            if (started < limit) {
                new BenchAction(m, bench_fluid_draw(&rng));
                started++;
            }
        }
        next = m->next_occurring_event(m->now);
        solves++;
    }
    double dt = now_s() - t0;
    double end = m->now;
    delete m;
    return {(double)(started + finished) / dt, solves, end * 1e9};
}

/* ---- the same rates ---- */

/* Largest relative difference between the speeds colosim and SimGrid give to the kernels of
 * `problems` random problems of k kernels each, one solve each. */
double max_speed_difference(int k, int problems, bool lazy, uint64_t *rng)
{
    double worst = 0;
    std::vector<bench_fluid_kernel> ks((size_t)k);
    std::vector<colo_activity_id_t> ids((size_t)k);
    std::vector<BenchAction *> acts((size_t)k);
    for (int p = 0; p < problems; p++) {
        for (auto &kn : ks)
            kn = bench_fluid_draw(rng);
        colo_bench *b = new colo_bench();
        colo_setup(b);
        colo_fluid_begin(&b->fl);
        for (int i = 0; i < k; i++)
            colo_start(b, ks[(size_t)i], false, &ids[(size_t)i]);
        if (colo_fluid_end(&b->fl)) exit(1);
        BenchModel *m = new BenchModel(lazy);
        for (int i = 0; i < k; i++)
            acts[(size_t)i] = new BenchAction(m, ks[(size_t)i]);
        m->get_maxmin_system()->solve();
        for (int i = 0; i < k; i++) {
            double a = colo_fluid_speed(&b->fl, ids[(size_t)i]);
            double s = acts[(size_t)i]->get_rate();
            double d = std::fabs(a - s) / std::max(std::fabs(a), 1e-300);
            if (!(d <= worst)) worst = d; /* NaN too */
        }
        for (BenchAction *a : acts)
            delete a;
        delete m;
        colo_teardown(b);
        delete b;
    }
    return worst;
}

} // namespace

int main(int argc, char **argv)
{
    long events = argc > 1 ? atol(argv[1]) : 2000000;
    int major, minor, patch;
    sg_version_get(&major, &minor, &patch);
    if (major != SIMGRID_VERSION_MAJOR || minor != SIMGRID_VERSION_MINOR) {
        fprintf(stderr, "bench_fluid_simgrid: built for SimGrid %d.%d, running with %d.%d\n",
                SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR, major, minor);
        return 1;
    }
    static const int ks[] = {2, 8, 32};
    printf("colosim's fluid solver against SimGrid %d.%d.%d's LMM solver (maxmin), as SimGrid's "
           "CPU model uses it:\nlazy = selective update and action heap (cpu/optim:Lazy, the "
           "default), full = neither (cpu/optim:Full)\n",
           major, minor, patch);

    for (int lazy = 1; lazy >= 0; lazy--) {
        uint64_t rng = BENCH_FLUID_SEED;
        printf("same rates, %s: largest relative difference of the speeds after one solve, 1000 "
               "random problems each:",
               lazy ? "lazy" : "full");
        for (int k : ks)
            printf(" %d kernels %.1e", k, max_speed_difference(k, 1000, lazy, &rng));
        printf("\n");
    }

    printf("kernel start+finish events per second, %ld events per run, best of 3\n", events);
    printf("%10s %12s %12s %7s %12s %7s | %21s | %s\n", "concurrent", "colosim", "SimGrid lazy",
           "ratio", "SimGrid full", "ratio", "solves: colosim/lazy/full",
           "last kernel ends, ns: colosim/lazy/full");
    for (int k : ks) {
        result best[3] = {};
        for (int rep = 0; rep < 3; rep++) {
            result r[3] = {colo_run(k, events), sg_run(k, events, true), sg_run(k, events, false)};
            for (int i = 0; i < 3; i++)
                if (r[i].rate > best[i].rate) best[i] = r[i];
        }
        printf("%10d %12.3e %12.3e %6.2fx %12.3e %6.2fx | %ld/%ld/%ld | %.0f/%.0f/%.0f\n", k,
               best[0].rate, best[1].rate, best[0].rate / best[1].rate, best[2].rate,
               best[0].rate / best[2].rate, best[0].solves, best[1].solves, best[2].solves,
               best[0].end_ns, best[1].end_ns, best[2].end_ns);
    }
    return 0;
}
