/* cfg_int.c: integer literals in configuration text, as libconfig 1.5 should read them. */
#include "alloc.h"
#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libconfig 1.5 reads an integer written beyond 32 bits without its L suffix as the wrapped 32-bit
 * value (4294967297 as 1, 2147483648 as -2147483648), and one beyond 64 bits as the largest
 * 64-bit integer. The key before a literal, for messages: the last name before '=' or ':' on
 * its line, or "value". */
static void key_before(const char *line, const char *at, char *key, size_t n)
{
    const char *eq = NULL;
    for (const char *p = line; p < at; p++)
        if (*p == '=' || *p == ':') eq = p;
    const char *e = eq;
    while (e && e > line && isspace((unsigned char)e[-1]))
        e--;
    const char *b = e;
    while (b && b > line && (isalnum((unsigned char)b[-1]) || b[-1] == '_' || b[-1] == '-'))
        b--;
    if (b && e > b)
        snprintf(key, n, "%.*s", (int)(e - b), b);
    else
        snprintf(key, n, "value");
}

/* Walks the text as libconfig's scanner does (strings, # and // and C comments) and looks at
 * every integer literal: one beyond 64 bits is an error; one beyond 32 bits without L is widened
 * (an L inserted, so that a file reads as --set does) when out is given, an error otherwise (an
 * included file, which libconfig reads itself). *out is NULL when nothing changed. */
int colo_cfg_check_integers(const char *path, const char *buf, size_t len, char **out,
                            colo_error_t *err)
{
    size_t cap = 0, used = 0, from = 0;
    char *o = NULL;
    int line = 1;
    const char *line_start = buf;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n') {
            line++;
            line_start = buf + i + 1;
            continue;
        }
        if (c == '"') { /* a string, with its escapes */
            for (i++; i < len && buf[i] != '"'; i++) {
                if (buf[i] == '\\' && i + 1 < len) i++;
                if (buf[i] == '\n') line++, line_start = buf + i + 1;
            }
            continue;
        }
        if (c == '#' || (c == '/' && i + 1 < len && buf[i + 1] == '/')) {
            while (i + 1 < len && buf[i + 1] != '\n')
                i++;
            continue;
        }
        if (c == '/' && i + 1 < len && buf[i + 1] == '*') {
            for (i += 2; i + 1 < len && !(buf[i] == '*' && buf[i + 1] == '/'); i++)
                if (buf[i] == '\n') line++, line_start = buf + i + 1;
            i++;
            continue;
        }
        bool sign = (c == '-' || c == '+') && i + 1 < len && isdigit((unsigned char)buf[i + 1]);
        if (!isdigit((unsigned char)c) && !sign) continue;
        if (i > 0 && (isalnum((unsigned char)buf[i - 1]) || buf[i - 1] == '_' ||
                      buf[i - 1] == '.')) { /* inside a name or a number already passed */
            while (i + 1 < len && (isalnum((unsigned char)buf[i + 1]) || buf[i + 1] == '_'))
                i++;
            continue;
        }
        size_t start = i, j = i + (sign ? 1 : 0);
        bool hex = j + 1 < len && buf[j] == '0' && (buf[j + 1] == 'x' || buf[j + 1] == 'X');
        size_t digits = hex ? j + 2 : j;
        size_t k = digits;
        while (k < len && (hex ? isxdigit((unsigned char)buf[k]) : isdigit((unsigned char)buf[k])))
            k++;
        i = k - 1;
        if (k < len && (buf[k] == '.' || buf[k] == 'e' || buf[k] == 'E' ||
                        isalpha((unsigned char)buf[k]) || buf[k] == '_')) {
            bool has_l = buf[k] == 'L' && (k + 1 >= len || !isalnum((unsigned char)buf[k + 1]));
            if (!has_l) { /* a float, or a name: not an integer literal */
                while (i + 1 < len && (isalnum((unsigned char)buf[i + 1]) || buf[i + 1] == '.' ||
                                       buf[i + 1] == '_' ||
                                       ((buf[i + 1] == '-' || buf[i + 1] == '+') &&
                                        (buf[i] == 'e' || buf[i] == 'E'))))
                    i++;
                continue;
            }
        }
        if (k == digits) continue;
        bool has_l = k < len && buf[k] == 'L';
        char tok[64];
        snprintf(tok, sizeof tok, "%.*s", (int)(k - start), buf + start);
        errno = 0;
        long long v =
            hex ? (long long)strtoull(tok + (sign ? 1 : 0), NULL, 16) : strtoll(tok, NULL, 10);
        bool over64 = errno == ERANGE || k - start > 40 ||
                      (hex && (k - digits > 16 ||
                               (unsigned long long)strtoull(tok + (sign ? 1 : 0), NULL, 16) >
                                   (unsigned long long)LLONG_MAX));
        if (hex && sign && tok[0] == '-') v = -v;
        char key[64];
        if (over64) {
            key_before(line_start, buf + start, key, sizeof key);
            colo_free(o);
            return colo_error_set(err, COLO_ERANGE, path, line, key,
                                  "%s is beyond a 64-bit integer (at most 9223372036854775807)",
                                  tok);
        }
        if (has_l || (v >= INT_MIN && v <= INT_MAX && !(hex && v > INT_MAX))) continue;
        if (!out) {
            key_before(line_start, buf + start, key, sizeof key);
            return colo_error_set(err, COLO_ERANGE, path, line, key,
                                  "%s does not fit in 32 bits, and libconfig reads it as %d in an "
                                  "included file: write %sL",
                                  tok, (int)(unsigned)v, tok);
        }
        size_t need = used + (k - from) + 2 + (len - k) + 1;
        if (need > cap) {
            cap = need + len / 4 + 64;
            char *no = colo_realloc(o, cap);
            if (!no) {
                colo_free(o);
                return COLO_ENOMEM;
            }
            o = no;
        }
        memcpy(o + used, buf + from, k - from);
        used += k - from;
        o[used++] = 'L';
        from = k;
    }
    if (out && o) {
        char *no = colo_realloc(o, used + (len - from) + 1);
        if (!no) {
            colo_free(o);
            return COLO_ENOMEM;
        }
        o = no;
        memcpy(o + used, buf + from, len - from);
        o[used + len - from] = '\0';
        *out = o;
    } else if (out) {
        *out = NULL;
    }
    return 0;
}
