/* llm.c: LLM tenants in the serving loop (docs/llm.md): requests with prompt and output tokens,
 * iteration-level scheduling as vLLM (prefill first) and Sarathi (chunked prefill, decodes
 * first) do it, a paged KV cache with preemption by recomputation, and each iteration run as
 * kernels on the tenant's stream through the hardware model; with llm.prefix_caching, blocks
 * shared through the prefix cache (prefix_cache.h). */
#include "alloc.h"
#include "invariant.h"
#include "llm_cfg.h"
#include "llm_model.h"
#include "prefix_cache.h"
#include "serving.h"
#include "serving_internal.h"

#include <math.h>
#include <string.h>

struct llm_req {
    colo_time_t arrival, first; /* first: when its first token came (-1: not yet) */
    colo_time_t started;        /* when it first joined an iteration (-1: not yet) */
    int32_t client;
    long long prompt, output;
    long long target;    /* tokens to prefill: the prompt, or prompt + generated after preemption */
    long long cached;    /* tokens whose keys and values are in the cache */
    long long generated; /* output tokens so far */
    long long blocks;    /* KV blocks it holds */
    int chunk;           /* this iteration: prompt tokens it prefills (0: none) */
    bool decode;         /* this iteration: it decodes one token */
    bool running;
    long long session;       /* its session key (-1: none) */
    colo_prefix_t pre;       /* prefix caching: its prompt's hashed units */
    colo_prefix_hold_t hold; /* ... and the cache entries among its blocks */
};

/* A ring of request ids. */
struct ring {
    int *v;
    size_t cap, head, len;
};

struct colo_llm_run {
    const colo_llm_cfg_t *cfg;
    colo_llm_model_t model;
    struct llm_req *req;
    size_t n_req, cap_req;
    int *free_ids;
    size_t n_free;
    struct ring waiting;
    int *running; /* ids by arrival time */
    size_t n_running;
    long long free_blocks, watermark_blocks;
    /* the iteration in flight */
    int *batch;
    size_t n_batch;
    colo_llm_iter_t it;
    colo_trace_t iter;         /* its kernels (names static) */
    colo_kernel_work_t *works; /* on the tenant's GPU */
    size_t max_kernels;
    /* the arrival scheduled next, and the one arriving now: a replayed record's tokens */
    long long pending_prompt, pending_output, now_prompt, now_output;
    colo_prefix_t pending_pre, now_pre; /* ... and its hash_ids (prefix caching) */
    /* the request arriving now, drawn at its service's leader before routing (drawn) */
    struct {
        long long prompt, output, session;
        colo_prefix_t pre;
        bool drawn;
    } arr;
    colo_prompts_run_t prompts; /* tokens.sessions: the sessions */
    colo_prefix_cache_t pc;     /* prefix caching (cfg->prefix_caching) */
    /* figures (requests that arrived in the window; tokens and iterations in the window) */
    colo_samples_t ttft, tpot;
    uint64_t preemptions, iterations, prefill_iterations, decode_iterations;
    uint64_t tokens_out_window, prompt_tokens_window;
    uint64_t tokens_generated, tokens_of_completed, tokens_of_dropped; /* all run: conservation */
    double kv_integral; /* blocks in use x ns, in the window */
    colo_time_t kv_since;
    long long kv_peak;
};

#define in_window colo_serving_in_window

/* ---- the KV cache ---- */

static long long blocks_for(const struct colo_llm_run *L, long long tokens)
{
    return (tokens + L->cfg->block_tokens - 1) / L->cfg->block_tokens;
}

/* Blocks in use x ns in the window since the last change, up to now. */
static double kv_pending(const colo_tenant_run_t *t)
{
    const struct colo_llm_run *L = t->llm;
    const colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now, lo = sim->sc->warmup, hi = sim->sc->duration;
    colo_time_t a = L->kv_since > lo ? L->kv_since : lo, b = now < hi ? now : hi;
    long long used = L->cfg->kv_blocks - L->free_blocks;
    return b > a ? (double)used * (double)(b - a) : 0;
}

/* The peak of blocks in use in the window, up to now: a level held into the window counts, not
 * only a change inside it. */
static long long kv_peak_to_now(const colo_tenant_run_t *t)
{
    const struct colo_llm_run *L = t->llm;
    long long used = L->cfg->kv_blocks - L->free_blocks;
    return kv_pending(t) > 0 && used > L->kv_peak ? used : L->kv_peak;
}

/* Blocks in use change: the utilisation integral and peak up to now. */
static void kv_account(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    L->kv_peak = kv_peak_to_now(t);
    L->kv_integral += kv_pending(t);
    L->kv_since = t->sim->eq.now;
}

static void kv_take(colo_tenant_run_t *t, struct llm_req *r, long long n)
{
    struct colo_llm_run *L = t->llm;
    kv_account(t);
    if (L->cfg->prefix_caching) colo_prefix_cache_alloc(&L->pc, n); /* may evict idle blocks */
    L->free_blocks -= n;
    r->blocks += n;
    long long used = L->cfg->kv_blocks - L->free_blocks;
    if (used > L->kv_peak && in_window(t->sim, t->sim->eq.now)) L->kv_peak = used;
    COLO_CHECK(L->free_blocks >= 0, "tenant %s: KV cache over-allocated", t->cfg->name);
}

static void kv_release(colo_tenant_run_t *t, struct llm_req *r)
{
    struct colo_llm_run *L = t->llm;
    kv_account(t);
    if (L->cfg->prefix_caching) { /* its cached blocks stay, idle, for others to hit */
        colo_prefix_cache_release(&L->pc, &r->hold, r->blocks - (long long)r->hold.n);
        L->free_blocks = colo_prefix_cache_free(&L->pc);
    } else {
        L->free_blocks += r->blocks;
    }
    r->blocks = 0;
}

/* The request takes the first hit blocks of its prompt from the prefix cache (idle of them held
 * by nobody until now): prefill starts after them (vLLM's computed blocks). */
static void kv_hits(colo_tenant_run_t *t, struct llm_req *r, long long hit, long long idle)
{
    struct colo_llm_run *L = t->llm;
    kv_account(t);
    colo_serving_fail(t->sim, colo_prefix_cache_take(&L->pc, &r->hold, &r->pre,
                                                     L->cfg->block_tokens, hit));
    L->free_blocks -= idle;
    r->blocks += hit;
    r->cached = hit * L->cfg->block_tokens;
}

/* ---- queues ---- */

static int ring_push(struct ring *q, int id, bool front)
{
    if (q->len == q->cap) {
        size_t ncap = q->cap ? 2 * q->cap : 64;
        int *v = colo_malloc(ncap * sizeof *v);
        if (!v) return COLO_ENOMEM;
        for (size_t i = 0; i < q->len; i++)
            v[i] = q->v[(q->head + i) % q->cap];
        colo_free(q->v);
        q->v = v, q->cap = ncap, q->head = 0;
    }
    if (front) {
        q->head = (q->head + q->cap - 1) % q->cap;
        q->v[q->head] = id;
    } else {
        q->v[(q->head + q->len) % q->cap] = id;
    }
    q->len++;
    return 0;
}

static int ring_pop(struct ring *q)
{
    int id = q->v[q->head];
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return id;
}

static int ring_front(const struct ring *q)
{
    return q->v[q->head];
}

/* Into the running list, which stays in arrival order. */
static void run_insert(struct colo_llm_run *L, int id)
{
    size_t k = L->n_running;
    while (k > 0 && L->req[L->running[k - 1]].arrival > L->req[id].arrival) {
        L->running[k] = L->running[k - 1];
        k--;
    }
    L->running[k] = id;
    L->n_running++;
    L->req[id].running = true;
}

static void run_remove(struct colo_llm_run *L, int id)
{
    size_t k = 0;
    while (k < L->n_running && L->running[k] != id)
        k++;
    if (k == L->n_running) return;
    memmove(&L->running[k], &L->running[k + 1], (L->n_running - k - 1) * sizeof *L->running);
    L->n_running--;
    L->req[id].running = false;
}

static void free_req(struct colo_llm_run *L, int id)
{
    L->free_ids[L->n_free++] = id;
}

/* ---- requests ---- */

void colo_serving_llm_pending(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    const colo_arrival_state_t *st = &t->arrivals;
    L->pending_prompt = st->prompt_tokens;
    L->pending_output = st->output_tokens;
    if (L->cfg->prefix_caching)
        colo_serving_fail(t->sim, colo_prompts_from_ids(&L->pending_pre, st->hash_ids, st->n_hash,
                                                        st->prompt_tokens));
}

void colo_serving_llm_arriving(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    L->now_prompt = L->pending_prompt;
    L->now_output = L->pending_output;
    colo_prefix_t swap = L->now_pre;
    L->now_pre = L->pending_pre;
    L->pending_pre = swap;
}

int colo_serving_llm_draw(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    const colo_llm_cfg_t *c = L->cfg;
    long long p, o, session = -1;
    colo_prefix_t *pre = c->prefix_caching ? &L->arr.pre : NULL;
    int rc = 0;
    if (c->prompt.kind == COLO_TOKENS_LOG) {
        p = L->now_prompt, o = L->now_output;
        if (p < 1 || o < 1) /* every record was checked when the scenario was read */
            return colo_error_set(&t->sim->err, COLO_EINVAL, t->cfg->arrival.path,
                                  (int)t->arrivals.line, NULL,
                                  "a record without prompt and output token counts");
        if (pre) rc = colo_prefix_copy(pre, &L->now_pre);
    } else if (c->prompts.kind != COLO_PROMPTS_DRAWN) { /* a shared-prefix workload */
        o = colo_token_draw(&c->output, t->rng);
        rc = colo_prompts_draw(&c->prompts, &L->prompts, t->rng, o, c->block_tokens, &p, &session,
                               pre);
    } else {
        p = colo_token_draw(&c->prompt, t->rng);
        o = colo_token_draw(&c->output, t->rng);
        if (pre) colo_prefix_reset(pre, c->block_tokens); /* nothing to share */
    }
    L->arr.prompt = p, L->arr.output = o, L->arr.session = session;
    L->arr.drawn = true;
    return rc;
}

int colo_serving_llm_push(colo_tenant_run_t *t, int32_t client)
{
    return colo_serving_llm_push_from(t, t, client);
}

int colo_serving_llm_push_from(colo_tenant_run_t *t, colo_tenant_run_t *from, int32_t client)
{
    struct colo_llm_run *L = t->llm, *F = from->llm;
    int rc = F->arr.drawn ? 0 : colo_serving_llm_draw(from);
    F->arr.drawn = false;
    if (rc) return rc;
    int id;
    if (L->n_free) {
        id = L->free_ids[--L->n_free];
    } else {
        if (L->n_req == L->cap_req) {
            size_t ncap = L->cap_req ? 2 * L->cap_req : 256;
            struct llm_req *v = colo_realloc(L->req, ncap * sizeof *v);
            if (v) L->req = v;
            int *f = v ? colo_realloc(L->free_ids, ncap * sizeof *f) : NULL;
            if (f) L->free_ids = f;
            if (!v || !f) return COLO_ENOMEM;
            L->cap_req = ncap;
        }
        id = (int)L->n_req++;
        memset(&L->req[id], 0, sizeof L->req[id]);
    }
    struct llm_req *r = &L->req[id]; /* its units and holds keep their memory from use to use */
    colo_prefix_t pre = r->pre;
    colo_prefix_hold_t hold = r->hold;
    *r = (struct llm_req){.arrival = t->sim->eq.now,
                          .first = -1,
                          .started = -1,
                          .client = client,
                          .prompt = F->arr.prompt,
                          .output = F->arr.output,
                          .target = F->arr.prompt,
                          .session = F->arr.session,
                          .pre = pre,
                          .hold = hold};
    if (L->cfg->prefix_caching && (rc = colo_prefix_copy(&r->pre, &F->arr.pre))) return rc;
    rc = ring_push(&L->waiting, id, false);
    colo_serving_queue_counter(t);
    return rc;
}

size_t colo_serving_llm_waiting(const colo_tenant_run_t *t)
{
    return t->llm->waiting.len;
}

/* Recompute: the request gives its blocks back and waits at the head of the queue; its prompt
 * and the tokens it generated are prefilled again (vLLM's default preemption). */
static void preempt(colo_tenant_run_t *t, int id)
{
    struct colo_llm_run *L = t->llm;
    struct llm_req *r = &L->req[id];
    kv_release(t, r);
    run_remove(L, id);
    r->target = r->prompt + r->generated;
    r->cached = 0;
    if (in_window(t->sim, t->sim->eq.now)) L->preemptions++;
    colo_serving_fail(t->sim, ring_push(&L->waiting, id, true));
}

/* A slot for the request's next token, preempting the latest-arrived running requests (never
 * one already in this iteration) while none is free; false when it was itself preempted. */
static bool decode_slot(colo_tenant_run_t *t, int id, size_t *end)
{
    struct colo_llm_run *L = t->llm;
    struct llm_req *r = &L->req[id];
    if (r->cached + 1 <= r->blocks * L->cfg->block_tokens) return true;
    while (L->free_blocks < 1) {
        int victim = L->running[L->n_running - 1];
        preempt(t, victim);
        if (victim == id) return false;
        (*end)--;
    }
    kv_take(t, r, 1);
    return true;
}

/* Admits the waiting requests at the head while they fit: sequences, the token budget, and
 * their whole prompt's blocks above the watermark. chunk: how much of each to prefill. */
static void admit(colo_tenant_run_t *t, int *budget, bool chunked)
{
    struct colo_llm_run *L = t->llm;
    const colo_llm_cfg_t *c = L->cfg;
    while (L->waiting.len && L->n_running<(size_t)c->max_num_seqs && * budget> 0) {
        int id = ring_front(&L->waiting);
        struct llm_req *r = &L->req[id];
        long long need = blocks_for(L, r->target), hit = 0, idle = 0;
        /* prefix caching: its leading blocks that are cached, short of its last token, which
         * must be computed to give its next one (vLLM v1/core/kv_cache_manager.py,
         * get_computed_blocks: max_cache_hit_length = num_tokens - 1); taking an idle one
         * takes a free block */
        if (c->prefix_caching)
            hit = colo_prefix_cache_match(&L->pc, &r->pre, c->block_tokens,
                                          (r->target - 1) / c->block_tokens, &idle);
        if (L->free_blocks - (need - hit) - idle < L->watermark_blocks) break;
        long long q = r->target - hit * c->block_tokens;
        if (q > *budget) {
            /* a whole request fits an iteration (colo_llm_cfg_resolve): else it would wait at
             * the head forever, and the queue behind it */
            COLO_CHECK(chunked || q <= c->max_num_batched_tokens,
                       "tenant %s: %lld tokens to prefill, %d an iteration", t->cfg->name, q,
                       c->max_num_batched_tokens);
            if (!chunked) break;
            q = *budget;
        }
        ring_pop(&L->waiting);
        if (c->prefix_caching && r->started < 0 && in_window(t->sim, t->sim->eq.now))
            colo_prefix_cache_count(&L->pc, r->prompt, c->block_tokens, hit); /* first admission */
        if (r->started < 0)
            r->started = t->sim->eq.now; /* its wait ends (not after a preemption) */
        if (hit) kv_hits(t, r, hit, idle);
        kv_take(t, r, need - hit);
        run_insert(L, id);
        r->chunk = (int)q;
        *budget -= (int)q;
    }
}

/* The next iteration's sequences into L->batch, and its shape into L->it. */
static void form_iteration(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    const colo_llm_cfg_t *c = L->cfg;
    const colo_llm_profile_t *p = c->profile;
    bool chunked = c->chunk_tokens > 0;
    int budget = chunked ? c->chunk_tokens : c->max_num_batched_tokens;
    for (size_t k = 0; k < L->n_running; k++)
        L->req[L->running[k]].chunk = 0, L->req[L->running[k]].decode = false;
    if (!chunked) admit(t, &budget, false); /* vLLM: new prompts first, alone */
    bool prefilling = false;
    for (size_t k = 0; k < L->n_running; k++)
        prefilling |= L->req[L->running[k]].chunk > 0;
    if (!prefilling) {
        /* decodes, oldest first (under chunking they spend the budget too) */
        size_t end = L->n_running;
        for (size_t k = 0; k < end && budget > 0; k++) {
            int id = L->running[k];
            struct llm_req *r = &L->req[id];
            if (r->cached < r->target) continue; /* a prefill in progress */
            if (!decode_slot(t, id, &end)) break;
            r->decode = true;
            budget--;
        }
        if (chunked) {
            for (size_t k = 0; k < L->n_running && budget > 0; k++) { /* prefills in progress */
                struct llm_req *r = &L->req[L->running[k]];
                if (r->cached >= r->target || r->decode) continue;
                long long q = r->target - r->cached;
                r->chunk = (int)(q < budget ? q : budget);
                budget -= r->chunk;
            }
            admit(t, &budget, true);
        }
    }
    memset(&L->it, 0, sizeof L->it);
    L->n_batch = 0;
    for (size_t k = 0; k < L->n_running; k++) {
        int id = L->running[k];
        struct llm_req *r = &L->req[id];
        if (r->chunk > 0)
            colo_llm_iter_prefill(&L->it, p, r->chunk, r->cached,
                                  r->cached + r->chunk == r->target);
        else if (r->decode)
            colo_llm_iter_decode(&L->it, r->cached);
        else
            continue;
        L->batch[L->n_batch++] = id;
        if (c->prefix_caching) /* its blocks full once this iteration is done, for others */
            colo_serving_fail(t->sim,
                              colo_prefix_cache_commit(&L->pc, &r->hold, &r->pre, c->block_tokens,
                                                       r->cached + (r->chunk > 0 ? r->chunk : 1)));
    }
}

const colo_trace_t *colo_serving_llm_trace(const colo_tenant_run_t *t)
{
    return &t->llm->iter;
}

void colo_serving_llm_work(const colo_tenant_run_t *t, size_t op, colo_kernel_work_t *w)
{
    *w = t->llm->works[op];
}

void colo_serving_llm_start(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    colo_sim_t *sim = t->sim;
    colo_stream_run_t *s = &t->streams[0];
    if (s->busy || t->down) return;
    form_iteration(t);
    if (!L->n_batch) return;
    colo_error_t err;
    colo_error_clear(&err);
    size_t n = 0;
    int rc = colo_llm_model_kernels(&L->model, &L->it, L->iter.ops, L->works, NULL, &n, &err);
    if (rc) {
        sim->err = err;
        colo_serving_fail(sim, rc);
        return;
    }
    L->iter.n_ops = L->iter.n_kernels = n;
    s->n_batch = 0;
    s->busy = true;
    t->busy_streams = 1;
    t->peak_busy = 1;
    s->batch_start = sim->eq.now;
    s->cur_op = 0;
    s->host_clock = sim->eq.now;
    s->after_sync = false;
    colo_serving_queue_counter(t);
    colo_serving_issue_op(s);
}

/* The iteration on the stream's timeline track. */
static void timeline_iteration(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    struct colo_llm_run *L = t->llm;
    colo_sim_t *sim = t->sim;
    if (!colo_timeline_wants(sim->tl, s->batch_start, sim->eq.now)) return;
    const char *kind = L->it.prefills && L->it.decodes ? "mixed"
                       : L->it.prefills                ? "prefill"
                                                       : "decode";
    char args[192];
    snprintf(args, sizeof args,
             "{\"tokens\":%d,\"prefills\":%d,\"decodes\":%d,\"kv_blocks_used\":%lld}", L->it.tokens,
             L->it.prefills, L->it.decodes, L->cfg->kv_blocks - L->free_blocks);
    colo_timeline_span(sim->tl, COLO_TL_TENANTS, colo_serving_stream_tid(s), kind, "iteration",
                       s->batch_start, sim->eq.now, args);
}

/* A request has its last token. */
static void complete(colo_tenant_run_t *t, int id)
{
    struct colo_llm_run *L = t->llm;
    const colo_llm_cfg_t *c = L->cfg;
    colo_sim_t *sim = t->sim;
    struct llm_req *r = &L->req[id];
    colo_time_t now = sim->eq.now;
    kv_release(t, r);
    run_remove(L, id);
    L->tokens_of_completed += (uint64_t)r->output;
    colo_time_t e2e = now - r->arrival, ttft = r->first - r->arrival;
    colo_time_t tpot = r->output > 1 ? (now - r->first) / (r->output - 1) : 0;
    bool met = (c->slo_ttft == 0 || ttft <= c->slo_ttft) &&
               (c->slo_tpot == 0 || r->output < 2 || tpot <= c->slo_tpot) &&
               (t->cfg->slo == 0 || e2e <= t->cfg->slo);
    t->done_all++;
    t->good_all += met;
    t->last_done = now;
    if (in_window(sim, now)) {
        t->finished_in_window++;
        t->good_in_window += met;
    }
    if (in_window(sim, r->arrival)) {
        t->completed++;
        t->queue_ns += (double)(r->started - r->arrival); /* waiting, as docs/results.md says */
        t->exec_ns += (double)(now - r->started);
        if (met) t->slo_met++;
        int rc = colo_samples_push(&t->latency, e2e);
        if (!rc) rc = colo_samples_push(&L->ttft, ttft);
        if (!rc && r->output > 1) rc = colo_samples_push(&L->tpot, tpot);
        colo_serving_fail(sim, rc);
    }
    if (t->lg)
        colo_serving_fail(sim, colo_loadgen_sample_done(&t->cfg->arrival.lg, t->lg, e2e, now));
    int32_t client = r->client;
    free_req(L, id);
    colo_serving_client_done(t, client);
}

void colo_serving_llm_iteration_done(colo_stream_run_t *s)
{
    colo_tenant_run_t *t = s->t;
    struct colo_llm_run *L = t->llm;
    colo_sim_t *sim = t->sim;
    colo_time_t now = sim->eq.now;
    bool w = in_window(sim, now);
    s->busy = false;
    t->busy_streams = 0;
    if (sim->tl) timeline_iteration(s);
    if (in_window(sim, s->batch_start)) {
        L->iterations++;
        L->prefill_iterations += L->it.prefills > 0;
        L->decode_iterations += L->it.decodes > 0;
        t->batches++;
        t->batched += L->n_batch;
    }
    for (size_t k = 0; k < L->n_batch; k++) {
        int id = L->batch[k];
        struct llm_req *r = &L->req[id];
        bool token = false;
        if (r->chunk > 0) {
            r->cached += r->chunk;
            if (w) L->prompt_tokens_window += (uint64_t)r->chunk;
            token = r->cached == r->target; /* the prefill's last chunk samples a token */
            r->chunk = 0;
        } else if (r->decode) {
            r->cached++;
            r->decode = false;
            token = true;
        }
        if (!token) continue;
        r->generated++;
        L->tokens_generated++;
        if (w) L->tokens_out_window++;
        if (r->first < 0) r->first = now;
        if (r->generated >= r->output) complete(t, id);
    }
    L->n_batch = 0;
    colo_serving_llm_start(t);
}

/* ---- faults ---- */

static void drop_req(colo_tenant_run_t *t, int id, colo_drop_reason_t why)
{
    struct colo_llm_run *L = t->llm;
    struct llm_req *r = &L->req[id];
    kv_release(t, r);
    if (r->running) run_remove(L, id);
    colo_serving_drop(t, r->arrival, why);
    L->tokens_of_dropped += (uint64_t)r->generated;
    int32_t client = r->client;
    free_req(L, id);
    colo_serving_client_done(t, client);
}

void colo_serving_llm_crash(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    L->n_batch = 0;
    while (L->n_running)
        drop_req(t, L->running[L->n_running - 1], COLO_DROP_FAULT);
    while (L->waiting.len)
        drop_req(t, ring_pop(&L->waiting), COLO_DROP_FAULT);
    if (L->cfg->prefix_caching) colo_prefix_cache_forget_idle(&L->pc); /* gone with it */
}

/* ---- set-up, figures ---- */

int colo_serving_llm_new(colo_tenant_run_t *t)
{
    const colo_llm_cfg_t *c = t->cfg->llm;
    struct colo_llm_run *L = colo_calloc(1, sizeof *L);
    if (!L) return COLO_ENOMEM;
    t->llm = L;
    L->cfg = c;
    colo_llm_model_init(&L->model, c->profile, c->profile_gpu, t->sim->sc->gpu, c->layer_groups);
    L->model.precision = c->precision;
    L->max_kernels = colo_llm_model_max_kernels(&L->model);
    L->iter.model = c->profile->model;
    L->iter.batch = 1;
    L->iter.gpu = t->sim->sc->gpu->name;
    L->iter.ops = colo_calloc(L->max_kernels, sizeof *L->iter.ops);
    L->works = colo_calloc(L->max_kernels, sizeof *L->works);
    L->running = colo_calloc((size_t)c->max_num_seqs + 1, sizeof *L->running);
    L->batch = colo_calloc((size_t)c->max_num_seqs + 1, sizeof *L->batch);
    L->free_blocks = c->kv_blocks;
    L->watermark_blocks = (long long)(c->watermark * (double)c->kv_blocks);
    L->kv_since = 0;
    L->ttft.limit = L->tpot.limit = t->sim->sc->exact_samples;
    if (!L->iter.ops || !L->works || !L->running || !L->batch) return COLO_ENOMEM;
    if (c->prefix_caching && colo_prefix_cache_init(&L->pc, c->kv_blocks)) return COLO_ENOMEM;
    return colo_prompts_run_init(&L->prompts, &c->prompts);
}

void colo_serving_llm_free(colo_tenant_run_t *t)
{
    struct colo_llm_run *L = t->llm;
    if (!L) return;
    for (size_t i = 0; i < L->n_req; i++) {
        colo_prefix_fini(&L->req[i].pre);
        colo_prefix_hold_fini(&L->req[i].hold);
    }
    colo_prefix_fini(&L->pending_pre);
    colo_prefix_fini(&L->now_pre);
    colo_prefix_fini(&L->arr.pre);
    colo_prompts_run_fini(&L->prompts);
    colo_prefix_cache_fini(&L->pc);
    colo_free(L->req);
    colo_free(L->free_ids);
    colo_free(L->waiting.v);
    colo_free(L->running);
    colo_free(L->batch);
    colo_free(L->iter.ops);
    colo_free(L->works);
    colo_samples_fini(&L->ttft);
    colo_samples_fini(&L->tpot);
    colo_free(L);
    t->llm = NULL;
}

void colo_serving_llm_check(const colo_tenant_run_t *t)
{
    const struct colo_llm_run *L = t->llm;
    long long held = 0; /* privately, and through the prefix cache's entries */
    for (size_t k = 0; k < L->n_running; k++)
        held += L->req[L->running[k]].blocks - (long long)L->req[L->running[k]].hold.n;
    if (L->cfg->prefix_caching) {
        held += L->pc.in_use;
        COLO_CHECK(L->pc.empty + L->pc.idle == L->free_blocks,
                   "tenant %s: prefix cache: %lld empty and %lld idle blocks, %lld free",
                   t->cfg->name, L->pc.empty, L->pc.idle, L->free_blocks);
    }
    COLO_CHECK(held + L->free_blocks == L->cfg->kv_blocks,
               "tenant %s: KV blocks held %lld + free %lld != %lld", t->cfg->name, held,
               L->free_blocks, L->cfg->kv_blocks);
    uint64_t in_flight = 0;
    for (size_t k = 0; k < L->n_running; k++)
        in_flight += (uint64_t)L->req[L->running[k]].generated;
    for (size_t k = 0; k < L->waiting.len; k++)
        in_flight +=
            (uint64_t)L->req[L->waiting.v[(L->waiting.head + k) % L->waiting.cap]].generated;
    COLO_CHECK(L->tokens_generated == L->tokens_of_completed + in_flight + L->tokens_of_dropped,
               "tenant %s: %llu tokens generated, %llu in completed requests and %llu in flight",
               t->cfg->name, (unsigned long long)L->tokens_generated,
               (unsigned long long)L->tokens_of_completed, (unsigned long long)in_flight);
}

uint64_t colo_serving_llm_in_flight(const colo_tenant_run_t *t)
{
    const struct colo_llm_run *L = t->llm;
    uint64_t n = 0;
    for (size_t k = 0; k < L->n_running; k++)
        n += in_window(t->sim, L->req[L->running[k]].arrival);
    for (size_t k = 0; k < L->waiting.len; k++)
        n +=
            in_window(t->sim, L->req[L->waiting.v[(L->waiting.head + k) % L->waiting.cap]].arrival);
    return n;
}

int colo_tenant_llm_stats(const colo_sim_t *sim, size_t i, colo_llm_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (i >= sim->n || !sim->t[i].llm) return COLO_EINVAL;
    const colo_tenant_run_t *t = &sim->t[i];
    struct colo_llm_run *L = t->llm;
    const colo_llm_cfg_t *c = L->cfg;
    if (colo_latency_summarise(&L->ttft, &out->ttft) ||
        colo_latency_summarise(&L->tpot, &out->tpot))
        return COLO_ENOMEM;
    double window = COLO_TO_S(sim->sc->duration - sim->sc->warmup);
    out->output_tokens_per_s = (double)L->tokens_out_window / window;
    out->prompt_tokens_per_s = (double)L->prompt_tokens_window / window;
    out->kv_utilisation_mean =
        (L->kv_integral + kv_pending(t)) /
        ((double)c->kv_blocks * (double)(sim->sc->duration - sim->sc->warmup));
    out->kv_utilisation_max = (double)kv_peak_to_now(t) / (double)c->kv_blocks;
    out->preemptions = L->preemptions;
    out->iterations = L->iterations;
    out->prefill_iterations = L->prefill_iterations;
    out->decode_iterations = L->decode_iterations;
    out->tokens_generated = L->tokens_generated;
    out->tokens_of_completed = L->tokens_of_completed;
    out->prefix_caching = c->prefix_caching;
    out->prefix_requests = L->pc.requests;
    out->prefix_prompt_blocks = L->pc.prompt_blocks;
    out->prefix_hit_blocks = L->pc.hit_blocks;
    out->prefix_prompt_tokens = L->pc.prompt_tokens;
    out->prefix_hit_tokens = L->pc.hit_tokens;
    out->prefix_evicted_blocks = L->pc.evicted;
    return 0;
}

/* ---- what a router may read (serving_internal.h) ---- */

long long colo_serving_llm_prefix_hit(const colo_tenant_run_t *replica,
                                      const colo_tenant_run_t *leader)
{
    const struct colo_llm_run *R = replica->llm, *A = leader->llm;
    if (!R || !A || !R->cfg->prefix_caching || !A->arr.drawn || !A->arr.pre.n) return 0;
    int b = R->cfg->block_tokens;
    return colo_prefix_cache_match(&R->pc, &A->arr.pre, b, (A->arr.prompt - 1) / b, NULL);
}

long long colo_serving_llm_prompt_blocks(const colo_tenant_run_t *leader)
{
    const struct colo_llm_run *A = leader->llm;
    return A && A->arr.drawn ? blocks_for(A, A->arr.prompt) : 0;
}

double colo_serving_llm_kv_usage(const colo_tenant_run_t *replica)
{
    const struct colo_llm_run *R = replica->llm;
    if (!R || R->cfg->kv_blocks < 1) return 0;
    return (double)(R->cfg->kv_blocks - R->free_blocks) / (double)R->cfg->kv_blocks;
}

long long colo_serving_llm_session(const colo_tenant_run_t *leader)
{
    const struct colo_llm_run *A = leader->llm;
    return A && A->arr.drawn ? A->arr.session : -1;
}

size_t colo_serving_llm_running(const colo_tenant_run_t *t)
{
    return t->llm->n_running;
}

const colo_samples_t *colo_serving_llm_samples(const colo_tenant_run_t *t, bool tpot)
{
    return tpot ? &t->llm->tpot : &t->llm->ttft;
}

const colo_prefix_t *colo_serving_llm_arriving_prefix(const colo_tenant_run_t *leader, int *b)
{
    const struct colo_llm_run *A = leader->llm;
    *b = A ? A->cfg->block_tokens : 0;
    return A && A->arr.drawn && A->cfg->prefix_caching ? &A->arr.pre : NULL;
}
