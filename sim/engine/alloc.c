/* alloc.c: allocation wrappers with failure injection for tests. */
#include "alloc.h"
#include "errors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long fail_countdown; /* 0: never fail */
static unsigned long n_allocs, n_failed;

static void *counted(void *p)
{
    if (!p) n_failed++;
    return p;
}

static int should_fail(void)
{
    n_allocs++;
    if (fail_countdown <= 0) return 0;
    if (fail_countdown == 1) return 1; /* stays at 1: every later allocation fails too */
    fail_countdown--;
    return 0;
}

void colo_alloc_fail_after(long n)
{
    fail_countdown = n;
}

unsigned long colo_alloc_count(void)
{
    return n_allocs;
}

unsigned long colo_alloc_failures(void)
{
    return n_failed;
}

void *colo_malloc(size_t n)
{
    return counted(should_fail() ? NULL : malloc(n ? n : 1));
}

void *colo_calloc(size_t count, size_t size)
{
    return counted(should_fail() ? NULL : calloc(count ? count : 1, size ? size : 1));
}

void *colo_realloc(void *p, size_t n)
{
    return counted(should_fail() ? NULL : realloc(p, n ? n : 1));
}

char *colo_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = colo_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void colo_free(void *p)
{
    free(p);
}

int colo_grow_slow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem) return COLO_ENOMEM;
        ncap *= 2;
    }
    void *p = colo_realloc(*arr, ncap * elem);
    if (!p) return COLO_ENOMEM;
    *arr = p;
    *cap = ncap;
    return 0;
}
