/* mix.h: what the two generators of the hostile mix share (mix.c: one-GPU scenarios of the
 * classic features, the runner and the checks; mix_more.c: LLM tenants, k8s, colours and
 * channels, fair PCIe, integers past 32 bits, cluster files and studies). */
#ifndef COLO_MIX_H
#define COLO_MIX_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct text {
    char buf[16384];
    size_t n;
};

/* Appends to t (cut at its size). */
void put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The generator's stream (splitmix64, seeded once): 0..n-1, percent, and numbers. */
int pick(int n);
bool chance(int percent);
double uniform(double lo, double hi);
double log_uniform(double lo, double hi);
bool fraction(double v);

/* An arrival group of any process (mix.c). */
void arrival(struct text *t, const char *src);

/* The first thing that does not hold in one GPU's results, in why; NULL when all holds. */
const char *check_results(json_t *res, char *why, size_t n);

/* A child's answer: ran and held, refused as bad input, or broke something. */
enum { RAN = 0, REFUSED = 3, BROKEN = 4 };

/* mix_more.c. Writes OUT/mooncake.jsonl, the Mooncake log the LLM tenants may replay. */
void mix_more_init(const char *out);
/* One scenario with the newer features: LLM tenants of every token distribution and replayed
 * logs, k8s, colours and channels, fair PCIe, integer keys past 32 bits. */
void mix_features(struct text *t, const char *src, const char *out);
/* One cluster file. */
void mix_cluster(struct text *t, const char *src);
/* One study file over a fixture; *search: run it as a search. */
void mix_study(struct text *t, const char *src, bool *search);
/* Runs the study at path (sweep or search) into out_dir and checks what it wrote: every
 * point's results, and a search's capacities within the range it probed. RAN, REFUSED or
 * BROKEN (with why). */
int mix_run_study(const char *path, bool search, const char *out_dir, char *why, size_t n);
/* The invariants of a cluster's results (each GPU's, and the services'). */
const char *check_cluster(json_t *res, char *why, size_t n);

#endif
