/* errors.c: error code names and messages, and the colo_error_t helpers. */
#include "errors.h"
#include "invariant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const messages[] = {
#define COLO__X(name, msg) msg,
    COLO_ERRNO_MAP(COLO__X)
#undef COLO__X
};

static const char *const names[] = {
#define COLO__X(name, msg) "COLO_E" #name,
    COLO_ERRNO_MAP(COLO__X)
#undef COLO__X
};

static int index_of(int code)
{
    int i = -1 - code;
    return (i >= 0 && i < COLO__EIDX_COUNT) ? i : -1;
}

const char *colo_strerror(int code)
{
    if (code == 0) return "success";
    int i = index_of(code);
    return i < 0 ? "unknown error" : messages[i];
}

const char *colo_err_name(int code)
{
    if (code == 0) return "COLO_OK";
    int i = index_of(code);
    return i < 0 ? "COLO_EUNKNOWN" : names[i];
}

void colo_error_clear(colo_error_t *e)
{
    if (e) memset(e, 0, sizeof *e);
}

int colo_error_set(colo_error_t *e, int code, const char *source, int line, const char *key,
                   const char *fmt, ...)
{
    if (!e || e->code != 0) return code;
    e->code = code ? code : COLO_EINVAL;
    snprintf(e->source, sizeof e->source, "%s", source ? source : "");
    e->line = line;
    snprintf(e->key, sizeof e->key, "%s", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->text, sizeof e->text, fmt, ap);
    va_end(ap);
    return code;
}

void colo_error_prefix(colo_error_t *e, const char *fmt, ...)
{
    if (!e) return;
    char text[sizeof e->text];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text) n = (int)sizeof text - 1;
    size_t rest = sizeof text - (size_t)n;
    memcpy(text + n, e->text, rest - 1); /* e->text is NUL-terminated within its size */
    text[sizeof text - 1] = '\0';
    memcpy(e->text, text, sizeof text);
}

void colo_error_format(const colo_error_t *e, char *buf, size_t n)
{
    char where[600] = "";
    if (e->source[0] && e->line > 0)
        snprintf(where, sizeof where, "%s:%d: ", e->source, e->line);
    else if (e->source[0])
        snprintf(where, sizeof where, "%s: ", e->source);
    if (e->key[0])
        snprintf(buf, n, "%s%s: %s", where, e->key, e->text);
    else
        snprintf(buf, n, "%s%s", where, e->text);
}

void colo_check_failed(const char *file, int line, const char *cond, const char *fmt, ...)
{
    fflush(stdout);
    fprintf(stderr,
            "colosim: internal error (a bug in colosim, not in the input; please report "
            "it with the command that ran): %s:%d: %s: ",
            file, line, cond);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}
