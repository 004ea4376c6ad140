/* fluid.c: max-min fair rates over shared resources (progressive filling), activity progress,
 * and one completion event for the earliest-finishing activity. */
#include "fluid.h"
#include "alloc.h"
#include "errors.h"
#include "invariant.h"

#include <math.h>
#include <string.h>

#define NONE UINT32_MAX

struct colo_fluid_res {
    double capacity;
    uint32_t *users; /* activity slots using it */
    size_t n_users, cap_users;
    uint32_t mark; /* epoch of the last component walk that reached it */
    bool dirty;
    /* solver scratch */
    double rem, wsum; /* capacity left; sum of coef x weight of the unfixed users */
    uint32_t unfixed;
    /* utilisation: current use (units per ns) and its integral over time up to since */
    double used, integral;
    colo_time_t since;
};

struct colo_fluid_act {
    bool active, fixed;
    uint32_t gen, next_free, mark, live_pos;
    double work, remaining, speed, bound, weight;
    double lim; /* bound / weight: the level at which its bound stops it */
    colo_time_t since, finish;
    uint32_t solves; /* solves it took part in */
    bool solo;       /* ... each of it alone */
    int n;
    colo_fluid_elem_t e[COLO_FLUID_MAX_ELEMS];
    uint32_t upos[COLO_FLUID_MAX_ELEMS]; /* e[k]'s place among its resource's users */
    colo_fluid_done_fn done;
    void *obj;
    int64_t arg;
};

static void note(colo_fluid_t *fl, int rc)
{
    if (rc && !fl->failed) fl->failed = rc;
}

int colo_fluid_init(colo_fluid_t *fl, colo_eq_t *eq)
{
    memset(fl, 0, sizeof *fl);
    fl->eq = eq;
    fl->free_act = NONE;
    fl->next_time = COLO_TIME_MAX;
    fl->alone_at = COLO_TIME_MAX;
    return 0;
}

void colo_fluid_fini(colo_fluid_t *fl)
{
    for (size_t r = 0; r < fl->n_res; r++)
        colo_free(fl->res[r].users);
    colo_free(fl->res);
    colo_free(fl->act);
    colo_free(fl->dirty);
    colo_free(fl->comp_act);
    colo_free(fl->comp_res);
    colo_free(fl->live);
    memset(fl, 0, sizeof *fl);
}

void colo_fluid_on_presolve(colo_fluid_t *fl, colo_fluid_presolve_fn fn, void *obj)
{
    fl->presolve = fn;
    fl->presolve_obj = obj;
}

int colo_fluid_add_resource(colo_fluid_t *fl, double capacity, uint32_t *index)
{
    if (!(capacity >= 0) || !isfinite(capacity)) return COLO_EINVAL;
    if (colo_grow((void **)&fl->res, &fl->cap_res, fl->n_res + 1, sizeof *fl->res))
        return COLO_ENOMEM;
    struct colo_fluid_res *r = &fl->res[fl->n_res];
    memset(r, 0, sizeof *r);
    r->capacity = capacity;
    *index = (uint32_t)fl->n_res++;
    return 0;
}

/* ---- bookkeeping ---- */

static struct colo_fluid_act *lookup(const colo_fluid_t *fl, colo_activity_id_t id)
{
    uint64_t s = id & 0xffffffffu;
    if (s == 0 || s > fl->cap_act) return NULL;
    struct colo_fluid_act *a = &fl->act[s - 1];
    return (a->active && a->gen == (uint32_t)(id >> 32)) ? a : NULL;
}

/* Adds activity a, whose k-th element is r, to r's users. */
static int add_user(colo_fluid_t *fl, uint32_t r, uint32_t a, int k)
{
    struct colo_fluid_res *res = &fl->res[r];
    if (colo_grow((void **)&res->users, &res->cap_users, res->n_users + 1, sizeof *res->users))
        return COLO_ENOMEM;
    fl->act[a].upos[k] = (uint32_t)res->n_users;
    res->users[res->n_users++] = a;
    return 0;
}

/* Removes activity a's k-th element from its resource's users: the last user takes its place
 * (and learns its new place), with no scan. */
static void remove_user(colo_fluid_t *fl, uint32_t a, int k)
{
    const struct colo_fluid_act *act = &fl->act[a];
    uint32_t r = act->e[k].res, i = act->upos[k];
    struct colo_fluid_res *res = &fl->res[r];
    COLO_DCHECK(i < res->n_users && res->users[i] == a, "activity %u not at its place in %u", a, r);
    uint32_t last = res->users[--res->n_users];
    res->users[i] = last;
    struct colo_fluid_act *m = &fl->act[last];
    for (int j = 0; j < m->n; j++)
        if (m->e[j].res == r) {
            m->upos[j] = i;
            break;
        }
}

static int mark_dirty(colo_fluid_t *fl, uint32_t r)
{
    if (fl->res[r].dirty) return 0;
    if (colo_grow((void **)&fl->dirty, &fl->cap_dirty, fl->n_dirty + 1, sizeof *fl->dirty))
        return COLO_ENOMEM;
    fl->res[r].dirty = true;
    fl->dirty[fl->n_dirty++] = r;
    return 0;
}

/* Brings an activity's remaining work up to the current time at its current speed. */
static void advance(colo_fluid_t *fl, struct colo_fluid_act *a)
{
    colo_time_t now = fl->eq->now;
    if (now > a->since && a->speed > 0) {
        a->remaining -= a->speed * (double)(now - a->since) / a->work;
        if (a->remaining < 0) a->remaining = 0;
    }
    a->since = now;
}

/* A resource joins the component about to be solved: its use integral is brought up to now at
 * the use it had (what changed in this instant has not run yet), its use is summed afresh after
 * the solve, and the filling starts from its whole capacity. Resources outside the component
 * keep their users and speeds, so their use stands. */
static void res_begin(struct colo_fluid_res *r, colo_time_t now)
{
    if (now > r->since) {
        r->integral += r->used * (double)(now - r->since);
        r->since = now;
    }
    r->used = 0;
    r->rem = r->capacity;
    r->wsum = 0;
    r->unfixed = 0;
}

/* ---- solving ---- */

static void fix(colo_fluid_t *fl, struct colo_fluid_act *a, double v, uint32_t *unfixed)
{
    COLO_CHECK(v >= 0 && v <= a->bound * (1 + 1e-12), "activity speed %g outside [0, %g]", v,
               a->bound);
    a->speed = v;
    a->fixed = true;
    (*unfixed)--;
    for (int k = 0; k < a->n; k++) {
        struct colo_fluid_res *r = &fl->res[a->e[k].res];
        r->rem -= a->e[k].coef * v;
        r->wsum -= a->e[k].coef * a->weight;
        r->unfixed--;
    }
}

/* Progressive filling over the activities in comp_act and resources in comp_res. Activities
 * rise together in proportion to their weights (speed = level x weight) until a resource is
 * full or an activity reaches its bound. */
static void solve(colo_fluid_t *fl, size_t na, size_t nr)
{
    fl->solves++;
    if (na == 1) { /* alone: the tightest of its resources or its bound, as the filling finds */
        struct colo_fluid_act *a = &fl->act[fl->comp_act[0]];
        double best = INFINITY;
        for (int k = 0; k < a->n; k++) {
            double w = a->e[k].coef * a->weight, cap = fl->res[a->e[k].res].capacity;
            if (w <= 0) continue;
            double level = (cap > 0 ? cap : 0) / w;
            if (level < best) best = level;
        }
        double v = a->lim < best ? a->bound : best * a->weight;
        COLO_CHECK(v >= 0 && v <= a->bound * (1 + 1e-12), "activity speed %g outside [0, %g]", v,
                   a->bound);
        a->speed = v;
        return;
    }
    uint32_t unfixed = (uint32_t)na;
    while (unfixed) {
        double best = INFINITY;
        long best_r = -1;
        struct colo_fluid_act *best_a = NULL;
        for (size_t i = 0; i < nr; i++) {
            struct colo_fluid_res *r = &fl->res[fl->comp_res[i]];
            if (!r->unfixed) continue;
            double w = r->wsum;
            if (w <= 0) continue;
            double level = (r->rem > 0 ? r->rem : 0) / w;
            if (level < best) {
                best = level;
                best_r = (long)fl->comp_res[i];
            }
        }
        for (size_t i = 0; i < na; i++) {
            struct colo_fluid_act *a = &fl->act[fl->comp_act[i]];
            if (!a->fixed && a->lim < best) {
                best = a->lim;
                best_a = a;
            }
        }
        if (best_a) {
            fix(fl, best_a, best_a->bound, &unfixed);
        } else if (best_r >= 0) {
            struct colo_fluid_res *r = &fl->res[best_r];
            for (size_t u = 0; u < r->n_users; u++) {
                struct colo_fluid_act *a = &fl->act[r->users[u]];
                if (!a->fixed) fix(fl, a, best * a->weight, &unfixed);
            }
        } else { /* only zero-use resources left: nothing limits the rest but their bounds */
            for (size_t i = 0; i < na; i++) {
                struct colo_fluid_act *a = &fl->act[fl->comp_act[i]];
                if (!a->fixed) fix(fl, a, a->bound, &unfixed);
            }
        }
    }
}

#ifdef COLOSIM_CHECKS
/* No resource of the component just solved is granted over its capacity (relative 1e-9: the
 * filling spends capacity by subtraction). */
static void check_capacity(const colo_fluid_t *fl, size_t nr)
{
    for (size_t i = 0; i < nr; i++) {
        const struct colo_fluid_res *r = &fl->res[fl->comp_res[i]];
        double use = 0;
        for (size_t u = 0; u < r->n_users; u++) {
            const struct colo_fluid_act *a = &fl->act[r->users[u]];
            for (int k = 0; k < a->n; k++)
                if (a->e[k].res == fl->comp_res[i]) use += a->e[k].coef * a->speed;
        }
        COLO_DCHECK(use <= r->capacity * (1 + 1e-9) + 1e-12,
                    "resource %u granted %.17g of its capacity %.17g", fl->comp_res[i], use,
                    r->capacity);
    }
}
#endif

static colo_time_t finish_of(const struct colo_fluid_act *a)
{
    if (a->speed <= 0) return COLO_TIME_MAX;
    /* work left takes time: rounded to the nanosecond, less than half of one took none, and a
     * kernel of 1 ns finished at its start, faster than alone (issue 22) */
    colo_time_t d = colo_time_from_ns(a->remaining * a->work / a->speed);
    return a->since + (d < 1 && a->remaining > 0 ? 1 : d);
}

static void on_next(void *obj, int64_t arg);

/* Few of the slots active: the finishes are looked for among the active ones (the live list),
 * else in every slot, in order (no indirection, and the due ones come in slot order). */
static inline bool sparse(const colo_fluid_t *fl)
{
    return fl->n_active * 4 < fl->cap_act;
}

static void reschedule(colo_fluid_t *fl)
{
    colo_time_t next = fl->alone_at;
    if (sparse(fl)) {
        for (size_t i = 0; i < fl->n_active; i++) {
            colo_time_t f = fl->act[fl->live[i]].finish;
            if (f < next) next = f;
        }
    } else {
        for (size_t i = 0; i < fl->cap_act; i++)
            if (fl->act[i].active && fl->act[i].finish < next) next = fl->act[i].finish;
    }
    if (next == fl->next_time && (fl->next_ev || next == COLO_TIME_MAX)) return;
    if (fl->next_ev) colo_eq_cancel(fl->eq, fl->next_ev);
    fl->next_ev = 0;
    fl->next_time = next;
    if (next != COLO_TIME_MAX)
        note(fl, colo_eq_schedule(fl->eq, next, on_next, fl, 0, &fl->next_ev));
}

static int push_u32(uint32_t **arr, size_t *cap, size_t n, uint32_t v)
{
    if (colo_grow((void **)arr, cap, n + 1, sizeof **arr)) return COLO_ENOMEM;
    (*arr)[n] = v;
    return 0;
}

/* Re-solves everything connected to a dirty resource, then moves the completion event. */
static int flush(colo_fluid_t *fl)
{
    if (fl->depth > 0) return 0;
    if (fl->presolve) { /* its own changes wait for this solve */
        fl->depth++;
        fl->presolve(fl->presolve_obj);
        fl->depth--;
    }
    if (fl->n_dirty == 0) {
        reschedule(fl);
        return fl->failed;
    }
    uint32_t epoch = ++fl->epoch;
    colo_time_t now = fl->eq->now;
    size_t na = 0, nr = 0;
    for (size_t d = 0; d < fl->n_dirty; d++) {
        uint32_t r = fl->dirty[d];
        fl->res[r].dirty = false;
        if (fl->res[r].mark == epoch) continue;
        fl->res[r].mark = epoch;
        res_begin(&fl->res[r], now);
        if (push_u32(&fl->comp_res, &fl->cap_comp_res, nr++, r)) return COLO_ENOMEM;
    }
    fl->n_dirty = 0;
    /* breadth-first over resources and the activities that join them; each activity found is
     * brought up to now and counted on its resources for the filling */
    for (size_t i = 0; i < nr; i++) {
        struct colo_fluid_res *r = &fl->res[fl->comp_res[i]];
        for (size_t u = 0; u < r->n_users; u++) {
            uint32_t ai = r->users[u];
            struct colo_fluid_act *a = &fl->act[ai];
            if (a->mark == epoch) continue;
            a->mark = epoch;
            if (push_u32(&fl->comp_act, &fl->cap_comp_act, na++, ai)) return COLO_ENOMEM;
            advance(fl, a);
            a->fixed = false;
            for (int k = 0; k < a->n; k++) {
                struct colo_fluid_res *o = &fl->res[a->e[k].res];
                if (o->mark != epoch) {
                    o->mark = epoch;
                    res_begin(o, now);
                    if (push_u32(&fl->comp_res, &fl->cap_comp_res, nr++, a->e[k].res))
                        return COLO_ENOMEM;
                }
                o->unfixed++;
                o->wsum += a->e[k].coef * a->weight;
            }
        }
    }
    solve(fl, na, nr);
#ifdef COLOSIM_CHECKS
    check_capacity(fl, nr);
#endif
    for (size_t i = 0; i < na; i++) { /* new finish times, and the resources' use afresh */
        struct colo_fluid_act *a = &fl->act[fl->comp_act[i]];
        a->finish = finish_of(a);
        a->solves++;
        a->solo &= na == 1;
        for (int k = 0; k < a->n; k++)
            fl->res[a->e[k].res].used += a->e[k].coef * a->speed;
    }
    const struct colo_fluid_use *u = fl->alone; /* (alone: its resources have no other user) */
    for (int k = 0; u && k < u->n; k++)
        if (fl->res[u->res[k]].mark == epoch) fl->res[u->res[k]].used += u->used[k];
    reschedule(fl);
    return fl->failed;
}

static void release(colo_fluid_t *fl, uint32_t ai)
{
    struct colo_fluid_act *a = &fl->act[ai];
    for (int k = 0; k < a->n; k++) {
        remove_user(fl, ai, k);
        note(fl, mark_dirty(fl, a->e[k].res));
    }
    a->active = false;
    uint32_t last = fl->live[--fl->n_active];
    fl->live[a->live_pos] = last;
    fl->act[last].live_pos = a->live_pos;
    a->gen++;
    a->next_free = fl->free_act;
    fl->free_act = ai;
}

static void on_next(void *obj, int64_t arg)
{
    (void)arg;
    colo_fluid_t *fl = obj;
    colo_time_t now = fl->eq->now;
    fl->next_ev = 0;
    fl->next_time = COLO_TIME_MAX;
    fl->depth++;
    if (fl->alone_at <= now) { /* the activity timed alone: no other is on the solver */
        for (int k = 0; k < fl->alone->n; k++) /* its use leaves them, as a release's does */
            note(fl, mark_dirty(fl, fl->alone->res[k]));
        colo_fluid_alone_clear(fl);
        fl->alone_fn(fl->alone_obj, 0);
        fl->depth--;
        note(fl, flush(fl));
        return;
    }
    /* Finished activities, in slot order (deterministic), are removed before any callback. */
    struct done {
        colo_fluid_done_fn fn;
        void *obj;
        int64_t arg;
        const struct colo_fluid_use *solo; /* its use when it ran alone, else NULL */
    } batch[16];
    /* what an activity alone used, kept before its slot is freed: a callback before its own
     * may start another activity there (a kernel waiting for SMs, another MIG instance's) */
    struct colo_fluid_use solo[sizeof batch / sizeof batch[0]];
    /* the due slots, the first 16 in slot order (the rest fire at once after these); from the
     * live list kept sorted as they are found, by insertion (few are active) */
    uint32_t due[sizeof batch / sizeof batch[0]];
    size_t nb = 0;
    if (sparse(fl)) {
        for (size_t i = 0; i < fl->n_active; i++) {
            uint32_t ai = fl->live[i];
            if (fl->act[ai].finish > now) continue;
            size_t j = nb < sizeof due / sizeof due[0] ? nb++ : nb;
            if (j == nb && ai > due[nb - 1]) continue; /* full, and later than all kept */
            while (j > 0 && due[j - 1] > ai) {
                if (j < nb) due[j] = due[j - 1];
                j--;
            }
            due[j] = ai;
        }
    } else {
        for (size_t i = 0; i < fl->cap_act && nb < sizeof due / sizeof due[0]; i++)
            if (fl->act[i].active && fl->act[i].finish <= now) due[nb++] = (uint32_t)i;
    }
    for (size_t i = 0; i < nb; i++) {
        struct colo_fluid_act *a = &fl->act[due[i]];
        batch[i] = (struct done){a->done, a->obj, a->arg, NULL};
        if (a->solo && a->solves == 1) {
            solo[i].n = a->n;
            for (int k = 0; k < a->n; k++) { /* as flush sums it onto a resource of no other */
                solo[i].res[k] = a->e[k].res;
                solo[i].used[k] = 0.0 + a->e[k].coef * a->speed;
            }
            batch[i].solo = &solo[i];
        }
        release(fl, due[i]);
        fl->completions++;
    }
    for (size_t i = 0; i < nb; i++) {
        fl->done_solo = batch[i].solo;
        if (batch[i].fn) batch[i].fn(batch[i].obj, batch[i].arg);
    }
    fl->done_solo = NULL;
    fl->depth--;
    note(fl, flush(fl));
}

/* ---- public operations ---- */

static int set_elems(colo_fluid_t *fl, struct colo_fluid_act *a, uint32_t ai,
                     const colo_fluid_elem_t *elems, int n)
{
    a->n = 0;
    for (int k = 0; k < n; k++) {
        if (elems[k].res >= fl->n_res || !(elems[k].coef >= 0)) return COLO_EINVAL;
        int j = 0;
        while (j < a->n && a->e[j].res != elems[k].res)
            j++;
        if (j < a->n) { /* the same resource twice: one use, the sum of both */
            a->e[j].coef += elems[k].coef;
            continue;
        }
        a->e[a->n] = elems[k];
        if (add_user(fl, elems[k].res, ai, a->n)) return COLO_ENOMEM;
        a->n++;
        if (mark_dirty(fl, elems[k].res)) return COLO_ENOMEM;
    }
    return 0;
}

int colo_fluid_start(colo_fluid_t *fl, double work, double remaining, double bound,
                     const colo_fluid_elem_t *elems, int n, colo_fluid_done_fn done, void *obj,
                     int64_t arg, colo_activity_id_t *id)
{
    if (n < 1 || n > COLO_FLUID_MAX_ELEMS || !(work > 0) || !(remaining >= 0) || !(bound > 0))
        return COLO_EINVAL;
    if (fl->free_act == NONE) {
        size_t old = fl->cap_act;
        if (colo_grow((void **)&fl->act, &fl->cap_act, old + 1, sizeof *fl->act))
            return COLO_ENOMEM;
        for (size_t i = old; i < fl->cap_act; i++) {
            memset(&fl->act[i], 0, sizeof fl->act[i]);
            fl->act[i].next_free = (i + 1 < fl->cap_act) ? (uint32_t)(i + 1) : fl->free_act;
        }
        fl->free_act = (uint32_t)old;
    }
    if (colo_grow((void **)&fl->live, &fl->cap_live, fl->n_active + 1, sizeof *fl->live))
        return COLO_ENOMEM;
    uint32_t ai = fl->free_act;
    struct colo_fluid_act *a = &fl->act[ai];
    fl->free_act = a->next_free;
    a->active = true;
    a->work = work;
    a->remaining = remaining;
    a->bound = bound;
    a->weight = 1.0;
    a->lim = bound; /* bound / weight */
    a->speed = 0;
    a->since = fl->eq->now;
    a->finish = COLO_TIME_MAX;
    a->solves = 0;
    a->solo = true;
    a->done = done;
    a->obj = obj;
    a->arg = arg;
    a->live_pos = (uint32_t)fl->n_active;
    fl->live[fl->n_active++] = ai;
    int rc = set_elems(fl, a, ai, elems, n);
    if (rc) {
        release(fl, ai);
        return rc;
    }
    if (id) *id = ((uint64_t)a->gen << 32) | ((uint64_t)ai + 1);
    return flush(fl);
}

int colo_fluid_stop(colo_fluid_t *fl, colo_activity_id_t id, double *remaining)
{
    struct colo_fluid_act *a = lookup(fl, id);
    if (!a) return COLO_ENOENT;
    advance(fl, a);
    if (remaining) *remaining = a->remaining;
    release(fl, (uint32_t)(a - fl->act));
    return flush(fl);
}

/* New work and uses (coef[k] of a->e[k]'s resource, a->n of them) for an activity whose
 * resources stay its own: changed in place, with no scan of the resources' users. */
static inline int coefs_in_place(colo_fluid_t *fl, struct colo_fluid_act *a, double work,
                                 const double *coef)
{
    advance(fl, a);
    a->work = work;
    for (int k = 0; k < a->n; k++) {
        a->e[k].coef = coef[k];
        if (mark_dirty(fl, a->e[k].res)) return COLO_ENOMEM;
    }
    return flush(fl);
}

int colo_fluid_update(colo_fluid_t *fl, colo_activity_id_t id, double work,
                      const colo_fluid_elem_t *elems, int n)
{
    struct colo_fluid_act *a = lookup(fl, id);
    if (!a) return COLO_ENOENT;
    if (n < 1 || n > COLO_FLUID_MAX_ELEMS || !(work > 0)) return COLO_EINVAL;
    uint32_t ai = (uint32_t)(a - fl->act);
    /* the same resources as before, in the same order (a kernel whose L2 share or DRAM demand
     * changed): the coefficients change in place, with no scan of the resources' users */
    colo_fluid_elem_t m[COLO_FLUID_MAX_ELEMS];
    int mn = 0;
    for (int k = 0; k < n; k++) {
        if (elems[k].res >= fl->n_res || !(elems[k].coef >= 0)) return COLO_EINVAL;
        int j = 0;
        while (j < mn && m[j].res != elems[k].res)
            j++;
        if (j < mn)
            m[j].coef += elems[k].coef;
        else
            m[mn++] = elems[k];
    }
    bool same = mn == a->n;
    for (int k = 0; same && k < mn; k++)
        same = m[k].res == a->e[k].res;
    if (same) {
        double coef[COLO_FLUID_MAX_ELEMS];
        for (int k = 0; k < mn; k++)
            coef[k] = m[k].coef;
        return coefs_in_place(fl, a, work, coef);
    }
    advance(fl, a);
    for (int k = 0; k < a->n; k++) {
        remove_user(fl, ai, k);
        if (mark_dirty(fl, a->e[k].res)) return COLO_ENOMEM;
    }
    a->work = work;
    int rc = set_elems(fl, a, ai, elems, n);
    return rc ? rc : flush(fl);
}

int colo_fluid_update_coefs(colo_fluid_t *fl, colo_activity_id_t id, double work,
                            const double *coef, int n)
{
    struct colo_fluid_act *a = lookup(fl, id);
    if (!a) return COLO_ENOENT;
    if (n != a->n || !(work > 0)) return COLO_EINVAL;
    for (int k = 0; k < n; k++)
        if (!(coef[k] >= 0)) return COLO_EINVAL;
    return coefs_in_place(fl, a, work, coef);
}

void colo_fluid_begin(colo_fluid_t *fl)
{
    fl->depth++;
}

int colo_fluid_end(colo_fluid_t *fl)
{
    fl->depth--;
    return flush(fl);
}

int colo_fluid_set_capacity(colo_fluid_t *fl, uint32_t r, double capacity)
{
    if (r >= fl->n_res || !(capacity >= 0) || !isfinite(capacity)) return COLO_EINVAL;
    if (fl->res[r].capacity == capacity) return 0;
    fl->res[r].capacity = capacity; /* its integral so far is of its use, closed by the solve */
    if (mark_dirty(fl, r)) return COLO_ENOMEM;
    return flush(fl);
}

int colo_fluid_set_weight(colo_fluid_t *fl, colo_activity_id_t id, double weight)
{
    struct colo_fluid_act *a = lookup(fl, id);
    if (!a) return COLO_ENOENT;
    if (!(weight > 0) || !isfinite(weight)) return COLO_EINVAL;
    advance(fl, a);
    a->weight = weight;
    a->lim = a->bound / weight;
    for (int k = 0; k < a->n; k++)
        if (mark_dirty(fl, a->e[k].res)) return COLO_ENOMEM;
    return flush(fl);
}

double colo_fluid_speed(const colo_fluid_t *fl, colo_activity_id_t id)
{
    const struct colo_fluid_act *a = lookup(fl, id);
    return a ? a->speed : -1;
}

double colo_fluid_remaining(const colo_fluid_t *fl, colo_activity_id_t id)
{
    const struct colo_fluid_act *a = lookup(fl, id);
    if (!a) return -1;
    double r = a->remaining;
    colo_time_t now = fl->eq->now;
    if (now > a->since) r -= a->speed * (double)(now - a->since) / a->work;
    return r > 0 ? r : 0;
}

double colo_fluid_usage(const colo_fluid_t *fl, uint32_t r)
{
    double u = 0;
    const struct colo_fluid_res *res = &fl->res[r];
    for (size_t i = 0; i < res->n_users; i++) {
        const struct colo_fluid_act *a = &fl->act[res->users[i]];
        for (int k = 0; k < a->n; k++)
            if (a->e[k].res == r) u += a->e[k].coef * a->speed;
    }
    return u;
}

double colo_fluid_capacity(const colo_fluid_t *fl, uint32_t r)
{
    return fl->res[r].capacity;
}

double colo_fluid_used_integral(const colo_fluid_t *fl, uint32_t r)
{
    const struct colo_fluid_res *res = &fl->res[r];
    colo_time_t now = fl->eq->now;
    double v = res->integral + (now > res->since ? res->used * (double)(now - res->since) : 0);
    return v > 0 ? v : 0;
}

const struct colo_fluid_use *colo_fluid_done_solo(const colo_fluid_t *fl)
{
    return fl->done_solo;
}

int colo_fluid_alone(colo_fluid_t *fl, colo_time_t at, const struct colo_fluid_use *use,
                     colo_fluid_done_fn done, void *obj)
{
    if (fl->n_active || fl->alone || at < fl->eq->now || use->n < 0 ||
        use->n > COLO_FLUID_MAX_ELEMS)
        return COLO_EINVAL;
    for (int k = 0; k < use->n; k++)
        if (use->res[k] >= fl->n_res) return COLO_EINVAL;
    for (int k = 0; k < use->n; k++) /* its use joins them at the next solve, as a start's does */
        if (mark_dirty(fl, use->res[k])) return COLO_ENOMEM;
    fl->alone_at = at;
    fl->alone = use;
    fl->alone_fn = done;
    fl->alone_obj = obj;
    return flush(fl);
}

void colo_fluid_alone_clear(colo_fluid_t *fl)
{
    fl->alone_at = COLO_TIME_MAX;
    fl->alone = NULL;
}
