/* alloc.h: the project's allocation hooks, so tests can make the Nth allocation fail. */
#ifndef COLO_ALLOC_H
#define COLO_ALLOC_H

#include <stddef.h>

/* Same contracts as the C library functions; every colosim allocation goes through these. */
void *colo_malloc(size_t n);
void *colo_calloc(size_t count, size_t size);
void *colo_realloc(void *p, size_t n);
char *colo_strdup(const char *s);
void colo_free(void *p);

/* Grows *arr (of *cap elements of elem bytes) so it holds at least need elements, doubling.
 * Returns 0 or COLO_ENOMEM, leaving *arr and *cap untouched on failure. Amortised O(1): the
 * common case, room already there, is inline; colo_grow_slow reallocates. */
int colo_grow_slow(void **arr, size_t *cap, size_t need, size_t elem);
static inline int colo_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    return need <= *cap ? 0 : colo_grow_slow(arr, cap, need, elem);
}

/* Test hook: the nth allocation from now (1-based) and all after it fail; 0 disables. */
void colo_alloc_fail_after(long n);

/* Allocations requested so far through these functions (for tests that walk every one). */
unsigned long colo_alloc_count(void);

/* Allocations that returned NULL so far: lets a caller of a library that reports out-of-memory
 * as something else (Jansson's parser) tell what really happened. */
unsigned long colo_alloc_failures(void);

#endif
