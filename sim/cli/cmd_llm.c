/* cmd_llm.c: colosim llm: an LLM profile's iterations through the hardware model, on its own GPU
 * or another, against another GPU's profile of the same model, and its attention rows (when it
 * has them) against colosim's attention rule. */
#include "allreduce.h"
#include "cli.h"
#include "gpu_catalog.h"
#include "kernel_model.h"
#include "llm_model.h"
#include "llm_profile.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_llm[] =
    "usage: colosim llm PROFILE.json [--on GPU] [--against PROFILE.json] [--all]\n"
    "\n"
    "One iteration of PROFILE's model at each token count: the profile's summed operator times\n"
    "(all layers, on the GPU it was measured on) and colosim's kernels for them alone on --on GPU\n"
    "(default: the profile's own). --against names a profile of the same model measured on the\n"
    "--on GPU: the table gives its times and colosim's error, with the median and largest error\n"
    "over every token count both profiles hold (docs/llm.md, \"Validation\"). --all prints every\n"
    "token count instead of powers of two.\n"
    "\n"
    "When PROFILE has attention rows (colosim import vidur --attention), colosim's attention rule\n"
    "is compared with each row, prefill and decode, on the profile's GPU.\n"
    "\n"
    "A profile measured at tensor parallelism k > 1 is one rank's; a second table gives what its\n"
    "prefill iterations cost on a rank of --on GPU, all kernels, with the share of the two\n"
    "all-reduces per layer (docs/llm.md, \"Tensor parallelism\").\n";

/* Time of the iteration's profiled operators on m's target, and the profile's own sum, ms. */
static int iteration(const colo_llm_model_t *m, int t, colo_kernel_work_t *w, bool *prof,
                     double *model_ms, double *profile_ms, colo_error_t *err)
{
    colo_llm_iter_t it;
    memset(&it, 0, sizeof it);
    colo_llm_iter_prefill(&it, m->prof, t, 0, false);
    size_t n;
    int rc = colo_llm_model_kernels(m, &it, NULL, w, prof, &n, err);
    *model_ms = 0;
    for (size_t k = 0; k < n && !rc; k++)
        if (prof[k]) *model_ms += (double)colo_kernel_duration(&w[k], m->dst) / 1e6;
    *profile_ms = 0;
    for (int op = 0; op < COLO_LLM_OPS; op++)
        *profile_ms += colo_llm_profile_ms(m->prof, (colo_llm_op_t)op, t) * m->prof->layers;
    return rc;
}

static bool has_tokens(const colo_llm_profile_t *p, int t)
{
    for (size_t k = 0; k < p->n_tokens; k++)
        if (p->tokens[k] == t) return true;
    return false;
}

static bool pow2(int t)
{
    return (t & (t - 1)) == 0;
}

static void summary(const char *what, double *e, size_t n)
{
    if (!n) return;
    double *a = malloc(n * sizeof *a);
    if (!a) return;
    for (size_t k = 0; k < n; k++)
        a[k] = fabs(e[k]);
    gsl_sort(a, 1, n);
    gsl_sort(e, 1, n);
    printf("%s: %zu points, |error| median %.1f %%, p90 %.1f %%, max %.1f %%; signed median "
           "%+.1f %%\n",
           what, n, 100 * gsl_stats_median_from_sorted_data(a, 1, n),
           100 * gsl_stats_quantile_from_sorted_data(a, 1, n, 0.9), 100 * a[n - 1],
           100 * gsl_stats_median_from_sorted_data(e, 1, n));
    free(a);
}

/* The attention kernel of a one-row iteration, one layer, on the profile's GPU: ms. */
static double attention_ms(const colo_llm_model_t *m, const colo_llm_iter_t *it,
                           colo_kernel_work_t *w, colo_op_t *ops, bool *prof)
{
    size_t n;
    colo_error_t err;
    if (colo_llm_model_kernels(m, it, ops, w, prof, &n, &err)) return -1;
    for (size_t k = 0; k < n; k++)
        if (strncmp(ops[k].name, "llm_attention", 13) == 0)
            return (double)colo_kernel_duration(&w[k], m->dst) / 1e6;
    return -1;
}

/* A tensor-parallel profile: each power-of-two prefill's kernels on a rank of m's target, and
 * the share of its all-reduces. */
static void tp_table(const colo_llm_model_t *m, bool all)
{
    const colo_llm_profile_t *p = m->prof;
    size_t cap = colo_llm_model_max_kernels(m);
    colo_kernel_work_t *w = calloc(cap, sizeof *w);
    colo_op_t *ops = calloc(cap, sizeof *ops);
    if (!w || !ops) goto out;
    colo_allreduce_t ar;
    colo_allreduce(m->dst, m->tp, 0, &ar);
    printf("\ntensor parallelism %d: one rank of %d %s GPUs, all-reduces over %s at %.0f GB/s "
           "sustained\n",
           m->tp, m->tp, m->dst->name, ar.link == COLO_LINK_NVLINK ? "NVLink" : "PCIe",
           ar.bus_gbps);
    printf("%8s %14s %14s %8s\n", "tokens", "iteration ms", "all-reduce ms", "share");
    for (size_t k = 0; k < p->n_tokens; k++) {
        int t = p->tokens[k];
        if (!all && !pow2(t)) continue;
        colo_llm_iter_t it;
        memset(&it, 0, sizeof it);
        colo_llm_iter_prefill(&it, p, t, 0, true);
        size_t n;
        colo_error_t err;
        if (colo_llm_model_kernels(m, &it, ops, w, NULL, &n, &err)) break;
        double total = 0, reduce = 0;
        for (size_t i = 0; i < n; i++) {
            double ms = (double)colo_kernel_duration(&w[i], m->dst) / 1e6;
            total += ms;
            if (strncmp(ops[i].name, "llm_allreduce", 13) == 0) reduce += ms;
        }
        printf("%8d %14.4f %14.4f %7.1f%%\n", t, total, reduce, 100 * reduce / total);
    }
out:
    free(w);
    free(ops);
}

static void attention(const colo_llm_profile_t *p, const colo_gpu_t *g)
{
    if (!p->n_prefill && !p->n_decode) return;
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, g, g, p->layers); /* one kernel per layer */
    size_t cap = colo_llm_model_max_kernels(&m);
    colo_kernel_work_t *w = calloc(cap, sizeof *w);
    colo_op_t *ops = calloc(cap, sizeof *ops);
    bool *prof = calloc(cap, sizeof *prof);
    size_t most = p->n_prefill > p->n_decode ? p->n_prefill : p->n_decode;
    double *e = calloc(most ? most : 1, sizeof *e);
    if (!w || !ops || !prof || !e) goto out;
    printf("\nattention, one layer on %s: colosim's rule (docs/llm.md) against the profile's "
           "rows\n",
           g->name);
    for (int kind = 0; kind < 2; kind++) {
        size_t n = kind ? p->n_decode : p->n_prefill, ne = 0;
        printf("  %-8s %8s %8s %10s %10s %8s\n", kind ? "decode" : "prefill",
               kind ? "batch" : "kv", kind ? "kv" : "chunk", "measured", "colosim", "error");
        for (size_t i = 0; i < n; i++) {
            const double *row = kind ? p->decode[i] : p->prefill[i];
            colo_llm_iter_t it;
            memset(&it, 0, sizeof it);
            if (kind) {
                for (int b = 0; b < (int)row[0]; b++)
                    colo_llm_iter_decode(&it, (long long)row[1]);
                it.samples = 0;
            } else {
                colo_llm_iter_prefill(&it, p, (int)row[1], (long long)row[0], false);
            }
            if (it.tokens < 1 || it.tokens > colo_llm_profile_max_tokens(p) || row[2] <= 0)
                continue;
            double got = attention_ms(&m, &it, w, ops, prof);
            if (got < 0) continue;
            e[ne++] = got / row[2] - 1;
            if (i % (n / 8 + 1) == 0)
                printf("  %-8s %8.0f %8.0f %10.4f %10.4f %+7.1f%%\n", "", row[0], row[1], row[2],
                       got, 100 * (got / row[2] - 1));
        }
        summary(kind ? "  decode attention" : "  prefill attention", e, ne);
    }
out:
    free(w);
    free(ops);
    free(prof);
    free(e);
}

static int cmd_llm(int argc, char **argv)
{
    const char *file = NULL, *on = NULL, *against = NULL;
    bool all = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_llm, stdout);
            return 0;
        } else if (strcmp(argv[i], "--on") == 0 && i + 1 < argc) {
            on = argv[++i];
        } else if (strcmp(argv[i], "--against") == 0 && i + 1 < argc) {
            against = argv[++i];
        } else if (strcmp(argv[i], "--all") == 0) {
            all = true;
        } else if (strcmp(argv[i], "--on") == 0 || strcmp(argv[i], "--against") == 0) {
            return colo_cli_usage_error(usage_llm, "option %s needs a value", argv[i]);
        } else if (argv[i][0] == '-' || file) {
            return colo_cli_usage_error(usage_llm, "unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file) return colo_cli_usage_error(usage_llm, "give an LLM profile");
    colo_error_t err;
    colo_error_clear(&err);
    colo_llm_profile_t *p = NULL, *q = NULL;
    colo_gpu_t *src = NULL, *dst = NULL;
    int rc = colo_llm_profile_load(file, &p, &err);
    if (!rc) rc = colo_gpu_open(p->gpu, NULL, NULL, &src, file, p->gpu_line, "gpu", &err);
    if (!rc && against) rc = colo_llm_profile_load(against, &q, &err);
    if (!rc && q && (q->layers != p->layers || q->hidden != p->hidden ||
                     q->mlp_hidden != p->mlp_hidden || q->q_heads != p->q_heads))
        rc = colo_error_set(&err, COLO_EINVAL, against, 0, "dims",
                            "another model than %s's (%s)", file, p->model);
    if (!rc && !on && q) on = q->gpu;
    if (!rc && q && strcmp(on, q->gpu) != 0)
        rc = colo_error_set(&err, COLO_EINVAL, against, q->gpu_line, "gpu",
                            "measured on %s, not on --on %s", q->gpu, on);
    if (!rc) rc = colo_gpu_open(on ? on : p->gpu, NULL, NULL, &dst, "--on", 0, NULL, &err);
    if (rc) {
        colo_cli_print_error(&err);
        colo_llm_profile_free(p);
        colo_llm_profile_free(q);
        colo_gpu_free(src);
        return colo_cli_exit_for(rc);
    }
    colo_llm_model_t m;
    colo_llm_model_init(&m, p, src, dst, 1);
    size_t cap = colo_llm_model_max_kernels(&m);
    colo_kernel_work_t *w = calloc(cap, sizeof *w);
    bool *prof = calloc(cap, sizeof *prof);
    double *e = calloc(p->n_tokens, sizeof *e);
    size_t ne = 0;
    int status = w && prof && e ? 0 : 1;
    printf("%s (%d layers), profiled on %s; its operators, all layers, alone on %s\n", p->model,
           p->layers, p->gpu, dst->name);
    printf("%8s %12s %12s", "tokens", "profile ms", "colosim ms");
    if (q) printf(" %14s %8s", "measured ms", "error");
    printf("\n");
    for (size_t k = 0; k < p->n_tokens && !status; k++) {
        int t = p->tokens[k];
        double got, own;
        if (iteration(&m, t, w, prof, &got, &own, &err)) {
            colo_cli_print_error(&err);
            status = 1;
            break;
        }
        double want = 0;
        bool cmp = q && has_tokens(q, t);
        if (cmp) {
            for (int op = 0; op < COLO_LLM_OPS; op++)
                want += colo_llm_profile_ms(q, (colo_llm_op_t)op, t) * q->layers;
            e[ne++] = got / want - 1;
        }
        if (!all && !pow2(t)) continue;
        printf("%8d %12.4f %12.4f", t, own, got);
        if (cmp) printf(" %14.4f %+7.1f%%", want, 100 * (got / want - 1));
        printf("\n");
    }
    if (q && !status) summary("\niterations against the measured profile", e, ne);
    if (!status && m.tp > 1) tp_table(&m, all);
    if (!status) attention(p, src);
    free(w);
    free(prof);
    free(e);
    colo_llm_profile_free(p);
    colo_llm_profile_free(q);
    colo_gpu_free(src);
    colo_gpu_free(dst);
    return status;
}

const colo_cli_command_t colo_cli_llm = {"llm", usage_llm, cmd_llm, false};
