/* test_rng.c: per-tenant random streams derived from the seed and the tenant's name. */
#include "rng.h"

#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>

static void draws(uint64_t seed, const char *name, unsigned long out[8])
{
    gsl_rng *r = colo_rng_new(seed, name);
    cr_assert(r);
    for (int i = 0; i < 8; i++)
        out[i] = gsl_rng_get(r);
    gsl_rng_free(r);
}

Test(rng, same_seed_and_name_give_the_same_stream)
{
    unsigned long a[8], b[8];
    draws(1, "resnet", a);
    draws(1, "resnet", b);
    cr_assert_arr_eq(a, b, sizeof a);
}

Test(rng, other_names_and_seeds_give_other_streams)
{
    unsigned long a[8], b[8], c[8];
    draws(1, "resnet", a);
    draws(1, "bert", b);
    draws(2, "resnet", c);
    cr_assert_arr_neq(a, b, sizeof a);
    cr_assert_arr_neq(a, c, sizeof a);
}

Test(rng, derivation_depends_on_nothing_but_seed_and_name)
{
    uint64_t x = colo_rng_derive(7, "a");
    (void)colo_rng_derive(7, "b"); /* another tenant's stream changes nothing */
    cr_assert_eq(colo_rng_derive(7, "a"), x);
    cr_assert_neq(colo_rng_derive(7, "a"), colo_rng_derive(8, "a"));
    cr_assert_neq(colo_rng_derive(0, ""), 0);
}
