/* json_lines.c: a structural scan of valid JSON that records where array elements start. */
#include "json_lines.h"
#include "alloc.h"
#include "atomic_file.h"
#include "errors.h"
#include "stop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int colo_check_input_file(const char *path, colo_error_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return colo_error_set(err, errno == ENOENT ? COLO_ENOENT : COLO_EIO, path, 0, NULL,
                              "cannot open: %s", strerror(errno));
    if (S_ISDIR(st.st_mode))
        return colo_error_set(err, COLO_EINVAL, path, 0, NULL, "a folder, not a file");
    return 0;
}

int colo_text_nul_error(const char *path, const char *buf, size_t len, colo_error_t *err)
{
    const char *nul = memchr(buf, '\0', len);
    if (!nul) return 0;
    int line = 1;
    for (const char *p = buf; p < nul; p++)
        line += *p == '\n';
    return colo_error_set(err, COLO_EPARSE, path, line, NULL, "a NUL byte: not a text file");
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0 when it is not one: no
 * overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!k || k > n) return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
    if (c == 0xED && p[1] > 0x9F) return 0; /* surrogate */
    if (c == 0xF0 && p[1] < 0x90) return 0; /* overlong */
    if (c == 0xF4 && p[1] > 0x8F) return 0; /* past U+10FFFF */
    return k;
}

/* The offset of the first byte of p[0, n) that does not begin valid UTF-8, or n. */
static size_t utf8_bad(const unsigned char *p, size_t n)
{
    size_t i = 0, k;
    while (i < n && (k = p[i] < 0x80 ? 1 : utf8_seq(p + i, n - i)))
        i += k;
    return i;
}

int colo_text_utf8_error(const char *path, const char *buf, size_t len, colo_error_t *err)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t bad = utf8_bad(p, len);
    if (bad == len) return 0;
    int line = 1;
    size_t col = 1; /* characters: what comes before is valid, one lead byte each */
    for (size_t i = 0; i < bad; i++) {
        if (p[i] == '\n') {
            line++;
            col = 1;
        } else if ((p[i] & 0xC0) != 0x80) {
            col++;
        }
    }
    return colo_error_set(err, COLO_EPARSE, path, line, NULL,
                          "not UTF-8: byte 0x%02X in column %zu (colosim reads UTF-8 text: its "
                          "results are JSON)",
                          p[bad], col);
}

int colo_path_utf8_error(const char *path, colo_error_t *err)
{
    size_t n = strlen(path), bad = utf8_bad((const unsigned char *)path, n);
    if (bad == n) return 0;
    return colo_error_set(err, COLO_EINVAL, path, 0, NULL,
                          "the path is not UTF-8 (byte 0x%02X): results name it in JSON, which "
                          "must be; rename the file or folder",
                          (unsigned char)path[bad]);
}

int colo_text_open(const char *path, FILE **f, char **mem, colo_error_t *err)
{
    size_t len;
    *f = NULL;
    *mem = NULL;
    int rc = colo_read_file(path, mem, &len, err);
    if (!rc) rc = colo_text_utf8_error(path, *mem, len, err);
    if (!rc && !(*f = fmemopen(*mem, len, "r")))
        rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    if (rc) {
        colo_free(*mem);
        *mem = NULL;
    }
    return rc;
}

static int read_file(const char *path, char **buf, size_t *len, bool stoppable, colo_error_t *err)
{
    int rc = colo_check_input_file(path, err);
    if (rc) return rc;
    if (stoppable && colo_stop_requested()) /* a signal ended an earlier wait: no more reads */
        return colo_error_set(err, COLO_EINTR, path, 0, NULL, "interrupted");
    FILE *f = fopen(path, "rb"); /* a FIFO waits here for its writer: a signal ends the wait */
    if (!f && errno == EINTR && stoppable && colo_stop_requested())
        return colo_error_set(err, COLO_EINTR, path, 0, NULL, "interrupted while opening");
    if (!f)
        return colo_error_set(err, errno == ENOENT ? COLO_ENOENT : COLO_EIO, path, 0, NULL,
                              "cannot open: %s", strerror(errno));
    /* A regular file is read into one buffer of its size (+1, so that the read that meets the
     * end needs no more room); a pipe or a file that grows meanwhile is read 64 KiB at a time.
     * Each piece is checked as it comes: a NUL byte ends the read (text files only come here,
     * and /dev/zero would never end), so does SIGINT or SIGTERM (a FIFO's read returns EINTR). */
    struct stat st;
    size_t first = 65536;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
        (unsigned long long)st.st_size < SIZE_MAX / 2)
        first = (size_t)st.st_size + 1;
    size_t cap = 0, n = 0;
    char *b = NULL;
    for (;;) {
        if (n == cap && colo_grow((void **)&b, &cap, n ? n + 65536 : first, 1)) {
            rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
            break;
        }
        size_t got = fread(b + n, 1, cap - n > 65536 ? 65536 : cap - n, f);
        if (got && memchr(b + n, '\0', got)) {
            rc = colo_text_nul_error(path, b, n + got, err);
            break;
        }
        n += got;
        if (stoppable && colo_stop_requested()) {
            rc = colo_error_set(err, COLO_EINTR, path, 0, NULL, "interrupted while reading");
            break;
        }
        if (got == 0) {
            if (ferror(f))
                rc = colo_error_set(err, COLO_EIO, path, 0, NULL, "read error: %s",
                                    strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        colo_free(b);
        return rc;
    }
    *buf = b;
    *len = n;
    return 0;
}

int colo_read_file(const char *path, char **buf, size_t *len, colo_error_t *err)
{
    return read_file(path, buf, len, true, err);
}

int colo_read_own_file(const char *path, char **buf, size_t *len, colo_error_t *err)
{
    return read_file(path, buf, len, false, err);
}

int colo_json_parse(const char *buf, size_t len, size_t flags, const char *path, json_t **root,
                    colo_error_t *err)
{
    json_error_t jerr;
    unsigned long failed_before = colo_alloc_failures();
    *root = json_loadb(buf, len, flags, &jerr);
    if (*root) return 0;
    /* Jansson reports some allocation failures as syntax errors. */
    if (json_error_code(&jerr) == json_error_out_of_memory ||
        colo_alloc_failures() != failed_before)
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    return colo_error_set(err, COLO_EPARSE, path, jerr.line > 0 ? jerr.line : 0, NULL,
                          "JSON error: %s", jerr.text);
}

int colo_json_read_file(const char *path, json_t **root, char **text, size_t *len,
                        colo_error_t *err)
{
    *root = NULL;
    *text = NULL;
    char *buf = NULL;
    size_t n = 0;
    int rc = colo_read_file(path, &buf, &n, err);
    if (rc) return rc;
    json_t *doc;
    if ((rc = colo_json_parse(buf, n, JSON_REJECT_DUPLICATES, path, &doc, err))) {
        colo_free(buf);
        return rc;
    }
    *root = doc;
    *text = buf;
    *len = n;
    return 0;
}

struct scan {
    const char *s;
    size_t len, i;
    int line;
};

static void skip_ws(struct scan *sc)
{
    while (sc->i < sc->len) {
        char c = sc->s[sc->i];
        if (c == '\n')
            sc->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            break;
        sc->i++;
    }
}

/* At an opening quote: advances past the string; returns its start (after the quote). */
static size_t skip_string(struct scan *sc)
{
    size_t start = ++sc->i;
    while (sc->i < sc->len && sc->s[sc->i] != '"') {
        if (sc->s[sc->i] == '\\') sc->i++;
        sc->i++;
    }
    sc->i++;
    return start;
}

/* Skips one value of any kind (strings, nesting), counting lines. */
static void skip_value(struct scan *sc)
{
    int depth = 0;
    do {
        skip_ws(sc);
        if (sc->i >= sc->len) return;
        char c = sc->s[sc->i];
        if (c == '"') {
            skip_string(sc);
        } else if (c == '{' || c == '[') {
            depth++;
            sc->i++;
        } else if (c == '}' || c == ']') {
            depth--;
            sc->i++;
        } else if (c == ',' || c == ':') {
            sc->i++;
        } else { /* a number, true, false, null: to the next delimiter, and at least one byte,
                  * so that a byte no value starts with (a NUL) cannot stall the scan */
            do
                sc->i++;
            while (sc->i < sc->len && !(sc->s[sc->i] && strchr(" \t\r\n,]}", sc->s[sc->i])));
        }
    } while (depth > 0 && sc->i < sc->len);
}

/* Moves sc to the value of top-level member key; returns the line of the key, or 0. */
static int find_member(struct scan *sc, const char *key)
{
    size_t klen = strlen(key);
    skip_ws(sc);
    if (sc->i >= sc->len || sc->s[sc->i] != '{') return 0;
    sc->i++;
    for (;;) {
        skip_ws(sc);
        if (sc->i >= sc->len || sc->s[sc->i] != '"') return 0;
        int line = sc->line;
        size_t ks = skip_string(sc);
        int match = (sc->i - 1 - ks == klen) && memcmp(sc->s + ks, key, klen) == 0;
        skip_ws(sc);
        sc->i++; /* ':' */
        skip_ws(sc);
        if (match) return line;
        skip_value(sc);
        skip_ws(sc);
        if (sc->i >= sc->len || sc->s[sc->i] != ',') return 0;
        sc->i++;
    }
}

int colo_json_key_line(const char *text, size_t len, const char *key)
{
    struct scan sc = {text, len, 0, 1};
    return find_member(&sc, key);
}

int colo_json_element_lines(const char *text, size_t len, const char *key, int **lines, size_t *n)
{
    struct scan sc = {text, len, 0, 1};
    size_t cap = 0;
    *lines = NULL;
    *n = 0;
    if (!find_member(&sc, key) || sc.i >= len || text[sc.i] != '[') return COLO_ENOENT;
    sc.i++;
    for (;;) {
        skip_ws(&sc);
        if (sc.i >= len || text[sc.i] == ']') return 0;
        if (colo_grow((void **)lines, &cap, *n + 1, sizeof **lines)) {
            colo_free(*lines);
            *lines = NULL;
            *n = 0;
            return COLO_ENOMEM;
        }
        (*lines)[(*n)++] = sc.line;
        skip_value(&sc);
        skip_ws(&sc);
        if (sc.i < len && text[sc.i] == ',') sc.i++;
    }
}

int colo_json_element_verror(colo_error_t *err, int code, const char *path, const char *array,
                             size_t i, const int *lines, size_t n_lines, const char *member,
                             const char *fmt, va_list ap)
{
    char key[160], text[512];
    if (member)
        snprintf(key, sizeof key, "%s[%zu].%s", array, i, member);
    else
        snprintf(key, sizeof key, "%s[%zu]", array, i);
    vsnprintf(text, sizeof text, fmt, ap);
    int line = (lines && i < n_lines) ? lines[i] : 0;
    return colo_error_set(err, code, path, line, key, "%s", text);
}

const char *colo_json_unknown_key(json_t *obj, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v)
    {
        const char *const *a = allowed;
        while (*a && strcmp(*a, k) != 0)
            a++;
        if (!*a) return k;
    }
    return NULL;
}

int colo_json_write_file(json_t *doc, size_t flags, const char *path, const char *message,
                         colo_error_t *err)
{
    colo_atomic_file_t af;
    int rc = colo_atomic_open(&af, path, err);
    if (rc) return rc;
    errno = 0;
    if (json_dumpf(doc, af.f, flags) || fputc('\n', af.f) == EOF) {
        int e = errno; /* a write that failed says why (a full disk), as the commit would */
        colo_atomic_abort(&af);
        if (e) return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot write: %s", strerror(e));
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "%s", message);
    }
    return colo_atomic_commit(&af, err);
}
