/* fleet.c: the event loop of a fleet (fleet.h). The runs sit in a binary heap by the time of
 * their next event (ties: the lower index first). The earliest run takes its events up to the
 * next run's (colo_sim_advance), so a fleet of GPUs that do not touch costs one heap step per
 * stretch of events, not per event; a run that routes a request into another (router.c) stops
 * at once, and both are put back in place: the other run's next event may now be earlier. */
#include "fleet.h"
#include "alloc.h"
#include "results.h"

struct fleet {
    colo_sim_t *const *sims;
    size_t n;
    size_t *heap; /* run indices, earliest next event first */
    size_t *pos;  /* each run's place in heap */
    size_t *touched;
    size_t n_touched;
    bool *is_touched;
};

static bool before(const struct fleet *f, size_t a, size_t b)
{
    colo_time_t ta = colo_sim_next(f->sims[a]), tb = colo_sim_next(f->sims[b]);
    return ta < tb || (ta == tb && a < b);
}

static void swap(struct fleet *f, size_t i, size_t j)
{
    size_t a = f->heap[i], b = f->heap[j];
    f->heap[i] = b, f->heap[j] = a;
    f->pos[b] = i, f->pos[a] = j;
}

/* Puts run r back in place after its next event's time changed. */
static void rekey(struct fleet *f, size_t r)
{
    size_t i = f->pos[r];
    while (i > 0 && before(f, f->heap[i], f->heap[(i - 1) / 2])) {
        swap(f, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < f->n && before(f, f->heap[l], f->heap[m])) m = l;
        if (l + 1 < f->n && before(f, f->heap[l + 1], f->heap[m])) m = l + 1;
        if (m == i) break;
        swap(f, i, m);
        i = m;
    }
}

static void touch(void *ctx, colo_sim_t *to)
{
    struct fleet *f = ctx;
    size_t r = to->fleet_index;
    if (!f->is_touched[r]) {
        f->is_touched[r] = true;
        f->touched[f->n_touched++] = r;
    }
}

static int loop(struct fleet *f, colo_error_t *err)
{
    for (size_t r = 0; r < f->n; r++)
        f->heap[r] = f->pos[r] = r; /* all at time 0 after the start: in index order */
    for (size_t r = f->n; r-- > 0;)
        rekey(f, r);
    for (;;) {
        size_t r = f->heap[0];
        if (colo_sim_next(f->sims[r]) == COLO_TIME_MAX) return 0;
        /* its events before the next run's: at that run's time too when it comes first */
        colo_time_t until = COLO_TIME_MAX;
        bool inclusive = true;
        for (size_t c = 1; c <= 2 && c < f->n; c++) {
            size_t o = f->heap[c];
            colo_time_t t = colo_sim_next(f->sims[o]);
            if (t < until || (t == until && o < r)) until = t, inclusive = r < o;
        }
        int rc = colo_sim_advance(f->sims[r], until, inclusive, err);
        if (rc) return rc;
        rekey(f, r);
        while (f->n_touched) {
            size_t o = f->touched[--f->n_touched];
            f->is_touched[o] = false;
            rekey(f, o);
        }
    }
}

int colo_fleet_run(colo_sim_t *const *sims, size_t n, colo_error_t *err)
{
    struct fleet f = {.sims = sims, .n = n};
    int rc = 0;
    if (n == 0) return 0;
    if (!(f.heap = colo_calloc(n, sizeof *f.heap)) || !(f.pos = colo_calloc(n, sizeof *f.pos)) ||
        !(f.touched = colo_calloc(n, sizeof *f.touched)) ||
        !(f.is_touched = colo_calloc(n, sizeof *f.is_touched)))
        rc = colo_error_set(err, COLO_ENOMEM, sims[0]->sc->path, 0, NULL, "out of memory");
    for (size_t r = 0; r < n && !rc; r++) {
        sims[r]->touch = touch;
        sims[r]->touch_ctx = &f;
        sims[r]->fleet_index = r;
        rc = colo_sim_start(sims[r], err);
    }
    if (!rc) rc = loop(&f, err);
    for (size_t r = 0; r < n; r++) {
        sims[r]->touch = NULL;
        sims[r]->touch_ctx = NULL;
        int frc = rc ? 0 : colo_sim_finish(sims[r], err);
        if (!rc) rc = frc;
    }
    colo_free(f.heap);
    colo_free(f.pos);
    colo_free(f.touched);
    colo_free(f.is_touched);
    return rc;
}
