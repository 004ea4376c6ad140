/* errors.h: error codes (one X-macro table) and the input-error record colo_error_t. */
#ifndef COLO_ERRORS_H
#define COLO_ERRORS_H

#include <stddef.h>

/* name, message. Functions that can fail return 0 or one of the negative COLO_E* codes. */
#define COLO_ERRNO_MAP(X)                                                                          \
    X(NOMEM, "out of memory")                                                                      \
    X(INVAL, "invalid argument")                                                                   \
    X(NOENT, "no such file or entry")                                                              \
    X(IO, "input/output error")                                                                    \
    X(PARSE, "malformed input")                                                                    \
    X(RANGE, "value out of range")                                                                 \
    X(UNSUPPORTED, "not supported by this version")                                                \
    X(STATE, "invalid state")                                                                      \
    X(INTR, "interrupted by a signal")

/* clang-format off */
enum colo__errno_index {
#define COLO__X(name, msg) COLO__EIDX_##name,
    COLO_ERRNO_MAP(COLO__X)
#undef COLO__X
    COLO__EIDX_COUNT
};
/* clang-format on */

enum colo_errno {
    COLO_OK = 0,
#define COLO__X(name, msg) COLO_E##name = -1 - COLO__EIDX_##name,
    COLO_ERRNO_MAP(COLO__X)
#undef COLO__X
};

/* Message and symbolic name ("COLO_EINVAL") of a code; "unknown error" for others. */
const char *colo_strerror(int code);
const char *colo_err_name(int code);

/* An error in something a user gave: which file, which line (0 if not known), which key.
 * The first error set wins, as in Jansson's json_error_t. */
typedef struct colo_error {
    int code;         /* a COLO_E* code, 0 while no error is set */
    char source[512]; /* file name as the user gave it, or "--set" for a command-line override */
    int line;         /* 1-based, 0 when unknown */
    char key[256];    /* dotted key path, e.g. "tenants.[0].arrival.rate"; may be empty */
    char text[768];   /* what is wrong, in words */
} colo_error_t;

void colo_error_clear(colo_error_t *e);

/* Records an error unless one is already recorded. e may be NULL. Returns code, so callers can
 * write `return colo_error_set(err, COLO_EINVAL, ...)`. key may be NULL. */
int colo_error_set(colo_error_t *e, int code, const char *source, int line, const char *key,
                   const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Puts the formatted words before e's text (cut to fit), as context: "set \"x=1\": ". */
void colo_error_prefix(colo_error_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats "source:line: key: text" (parts that are unknown are left out) into buf. */
void colo_error_format(const colo_error_t *e, char *buf, size_t n);

#endif
