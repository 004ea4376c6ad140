/* rng.c: per-tenant GSL random streams. */
#include "rng.h"

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t fnv1a64(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t colo_rng_derive(uint64_t seed, const char *name)
{
    return splitmix64(splitmix64(seed) ^ fnv1a64(name));
}

gsl_rng *colo_rng_new(uint64_t seed, const char *name)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return NULL;
    /* mt19937 takes 32 bits of seed; fold the high half in so both halves matter. gsl uses its
     * default seed for 0, which would make that one stream equal to an unseeded generator. */
    uint64_t d = colo_rng_derive(seed, name);
    unsigned long s = (unsigned long)((d ^ (d >> 32)) & 0xffffffffu);
    gsl_rng_set(r, s ? s : 1);
    return r;
}
