/* rng.h: independent GSL random streams, one per tenant, derived from the scenario seed. */
#ifndef COLO_RNG_H
#define COLO_RNG_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* Derives a stream seed from the scenario seed and a stream name (a tenant's name). Deriving
 * from the name, not the position, means adding or reordering tenants leaves the others'
 * streams unchanged. Pure function: splitmix64 over seed and the FNV-1a hash of the name. */
uint64_t colo_rng_derive(uint64_t seed, const char *name);

/* A new Mersenne Twister (gsl_rng_mt19937) stream seeded from colo_rng_derive(seed, name).
 * Returns NULL when out of memory. Free with gsl_rng_free. */
gsl_rng *colo_rng_new(uint64_t seed, const char *name);

#endif
