/* chrome_trace.c: a Chrome Trace Event file read event by event, through zlib and Jansson.
 * Jansson has no streaming parser: the top level is walked here, each value's extent found by
 * its brackets and quotes, and that extent alone given to Jansson, which checks it. */
#include "chrome_trace.h"
#include "alloc.h"
#include "json_lines.h"
#include "stop.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

#define CHUNK (1u << 20)
/* The largest value read whole: one event, or a member beside traceEvents. A profile's events
 * are small (the longest name in HTA's A100 profiles is 5,123 bytes); one of 256 MiB, a name
 * that a 0.26 MB gzip expands to, took 42 s and 1 GB before it was refused. */
#define MAX_VALUE (16u << 20)
#define MAX_DEPTH 2048 /* Jansson's JSON_PARSER_MAX_DEPTH: found here first, with its words */

struct rd {
    gzFile f;
    const char *path;
    colo_error_t *err;
    char *buf;
    size_t cap, len, pos; /* buf[pos, len): read and not yet consumed */
    int line;             /* of buf[pos] */
    bool eof;
    char *wrap; /* one value inside PAD ... "]" for Jansson (value()) */
    size_t wrap_cap;
};

/* Jansson 2.14's lexer ignores a failed allocation while it saves a token's bytes, then asserts
 * that the byte it puts back is the last one saved (load.c, lex_unget_unsave): an abort when
 * memory runs out as a number of 16 or more characters is read, the length at which its token
 * buffer first grows, and Kineto's timestamps have 16 digits. Each value is parsed as the
 * second element of [PAD_STRING, VALUE], whose 64-byte string grows the buffer first (or fails
 * cleanly): a number shorter than 64 characters never grows it. */
#define PAD "[\"................................................................\","

static int lines_in(const char *s, size_t n)
{
    int k = 0;
    for (const char *e = s + n; s < e; s++)
        k += *s == '\n';
    return k;
}

/* Reads one more chunk after buf[len], first moving the unconsumed bytes to the front (offsets
 * from pos stay valid). 1 when bytes came, 0 at the end of the file, or a negative code. A
 * corrupt or cut gzip stream is an error in zlib's words, copied before the stream is closed. */
static int more(struct rd *r)
{
    if (r->eof) return 0;
    if (r->pos) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    if (colo_grow((void **)&r->buf, &r->cap, r->len + CHUNK, 1))
        return colo_error_set(r->err, COLO_ENOMEM, r->path, 0, NULL, "out of memory");
    if (colo_stop_requested())
        return colo_error_set(r->err, COLO_EINTR, r->path, 0, NULL, "interrupted");
    int got = gzread(r->f, r->buf + r->len, CHUNK);
    int zerr = Z_OK;
    const char *msg = got <= 0 ? gzerror(r->f, &zerr) : NULL;
    if (got < 0 || (got == 0 && zerr != Z_OK)) {
        size_t pl = strlen(r->path); /* zlib's message starts with the path: said once */
        if (msg && strncmp(msg, r->path, pl) == 0 && strncmp(msg + pl, ": ", 2) == 0) msg += pl + 2;
        return colo_error_set(r->err, COLO_EPARSE, r->path, 0, NULL, "cannot decompress: %s",
                              msg && *msg ? msg : "gzip error");
    }
    if (got == 0) {
        r->eof = true;
        return 0;
    }
    const char *nul = memchr(r->buf + r->len, '\0', (size_t)got); /* JSON holds none */
    if (nul)
        return colo_error_set(r->err, COLO_EPARSE, r->path,
                              r->line + lines_in(r->buf + r->pos, (size_t)(nul - r->buf) - r->pos),
                              NULL, "a NUL byte: not a text file");
    r->len += (size_t)got;
    return 1;
}

/* The byte at pos + k into *c, reading on as needed; -1 at the end of the file. */
static int at(struct rd *r, size_t k, int *c)
{
    while (r->pos + k >= r->len) {
        int rc = more(r);
        if (rc < 0) return rc;
        if (rc == 0) {
            *c = -1;
            return 0;
        }
    }
    *c = (unsigned char)r->buf[r->pos + k];
    return 0;
}

/* Skips white space; *c is the next byte, or -1 at the end of the file. */
static int ws(struct rd *r, int *c)
{
    for (;;) {
        int rc = at(r, 0, c);
        if (rc) return rc;
        if (*c == '\n')
            r->line++;
        else if (*c != ' ' && *c != '\t' && *c != '\r')
            return 0;
        r->pos++;
    }
}

static int syntax(const struct rd *r, int c, const char *what)
{
    if (c < 0)
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->line, NULL,
                              "JSON error: unexpected end of file");
    if (c >= 0x20 && c < 0x7f)
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->line, NULL,
                              "JSON error: %s near '%c'", what, c);
    return colo_error_set(r->err, COLO_EPARSE, r->path, r->line, NULL, "JSON error: %s", what);
}

/* The length of the JSON value at pos into *n and the lines it spans into *nl, read in as
 * needed: a string to its closing quote, an object or array to its closing bracket (brackets
 * counted, not matched: Jansson checks that), a scalar to the next delimiter. */
static int extent(struct rd *r, size_t *n, int *nl)
{
    int c, rc = at(r, 0, &c), depth = 0;
    bool str = false, esc = false;
    size_t k = 0;
    *nl = 0;
    if (rc) return rc;
    if (c < 0) return syntax(r, c, "");
    if (c != '"' && c != '{' && c != '[') {
        for (;; k++) {
            if ((rc = at(r, k, &c))) return rc;
            if (c < 0 || strchr(",]} \t\r\n:", c)) break;
        }
        *n = k;
        return k ? 0 : syntax(r, c, "a value expected");
    }
    for (;; k++) {
        if (k == MAX_VALUE) /* before reading on: a value held whole is bounded */
            return colo_error_set(r->err, COLO_EPARSE, r->path, r->line, NULL,
                                  "a value of more than %u MiB starts here: not an event of a "
                                  "profile",
                                  MAX_VALUE >> 20);
        if (r->pos + k >= r->len && (rc = at(r, k, &c))) return rc;
        if (r->pos + k >= r->len)
            return colo_error_set(r->err, COLO_EPARSE, r->path, r->line + *nl, NULL,
                                  "JSON error: unexpected end of file");
        c = (unsigned char)r->buf[r->pos + k];
        if (c == '\n') ++*nl;
        if (str) {
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"') {
                str = false;
                if (depth == 0) break;
            }
        } else if (c == '"') {
            str = true;
        } else if (c == '{' || c == '[') {
            if (++depth > MAX_DEPTH)
                return colo_error_set(r->err, COLO_EPARSE, r->path, r->line + *nl, NULL,
                                      "JSON error: maximum parsing depth reached");
        } else if ((c == '}' || c == ']') && --depth == 0) {
            break;
        }
    }
    *n = k + 1;
    return 0;
}

/* The value at pos, parsed by Jansson into *out (new); pos and line move past it. */
static int value(struct rd *r, json_t **out)
{
    size_t n = 0;
    int nl = 0, rc = extent(r, &n, &nl);
    if (rc) return rc;
    if (n > INT_MAX) /* Jansson counts in an int */
        return colo_error_set(r->err, COLO_EPARSE, r->path, r->line, NULL,
                              "JSON error: a value of 2 GiB or more");
    json_error_t je;
    unsigned long failed_before = colo_alloc_failures();
    size_t pad = sizeof PAD - 1;
    if (colo_grow((void **)&r->wrap, &r->wrap_cap, pad + n + 1, 1))
        return colo_error_set(r->err, COLO_ENOMEM, r->path, 0, NULL, "out of memory");
    memcpy(r->wrap, PAD, pad);
    memcpy(r->wrap + pad, r->buf + r->pos, n);
    r->wrap[pad + n] = ']';
    json_t *both = json_loadb(r->wrap, pad + n + 1, 0, &je);
    *out = json_incref(json_array_get(both, 1));
    json_decref(both);
    if (!*out) { /* Jansson reports some allocation failures as syntax errors */
        if (json_error_code(&je) == json_error_out_of_memory ||
            colo_alloc_failures() != failed_before)
            return colo_error_set(r->err, COLO_ENOMEM, r->path, 0, NULL, "out of memory");
        return colo_error_set(r->err, COLO_EPARSE, r->path,
                              r->line + (je.line > 1 ? je.line - 1 : 0), NULL, "JSON error: %s",
                              je.text);
    }
    r->pos += n;
    r->line += nl;
    return 0;
}

/* Nothing but white space may follow the document; reading to the end also checks the gzip
 * stream's CRC. */
static int trailing(struct rd *r)
{
    int c, rc = ws(r, &c);
    if (rc) return rc;
    return c < 0 ? 0 : syntax(r, c, "end of file expected");
}

/* The elements of the array at pos, each handed to on_event. */
static int events_array(struct rd *r, colo_chrome_event_fn on_event, void *ctx)
{
    int c, rc;
    r->pos++; /* [ */
    if ((rc = ws(r, &c))) return rc;
    if (c == ']') {
        r->pos++;
        return 0;
    }
    for (size_t i = 0;; i++) {
        int line = r->line;
        json_t *e;
        if ((rc = value(r, &e))) return rc;
        rc = on_event ? on_event(ctx, e, i, line) : 0;
        json_decref(e);
        if (rc || (rc = ws(r, &c))) return rc;
        if (c == ']') {
            r->pos++;
            return 0;
        }
        if (c != ',') return syntax(r, c, "',' or ']' expected");
        r->pos++;
        if ((rc = ws(r, &c))) return rc;
    }
}

static int document(struct rd *r, colo_chrome_member_fn on_member, colo_chrome_event_fn on_event,
                    void *ctx, bool *events)
{
    int c, rc = ws(r, &c);
    if (rc) return rc;
    if (c != '{') { /* checked as JSON, then found to hold no events */
        json_t *v;
        if ((rc = value(r, &v))) return rc;
        json_decref(v);
        return trailing(r);
    }
    r->pos++;
    if ((rc = ws(r, &c))) return rc;
    if (c == '}') {
        r->pos++;
        return trailing(r);
    }
    for (;;) {
        json_t *k;
        if (c != '"') return syntax(r, c, "a member's name expected");
        if ((rc = value(r, &k))) return rc;
        const char *key = json_string_value(k);
        if (!(rc = ws(r, &c)) && c != ':') rc = syntax(r, c, "':' expected");
        if (!rc) {
            r->pos++;
            rc = ws(r, &c);
        }
        if (!rc && c == '[' && !strcmp(key, "traceEvents")) {
            if (*events)
                rc = colo_error_set(r->err, COLO_EPARSE, r->path, r->line, "traceEvents",
                                    "given twice");
            else
                rc = events_array(r, on_event, ctx);
            *events = true;
        } else if (!rc) {
            int line = r->line;
            json_t *v = NULL;
            if (!(rc = value(r, &v)) && on_member) rc = on_member(ctx, key, v, line);
            json_decref(v);
        }
        json_decref(k);
        if (rc || (rc = ws(r, &c))) return rc;
        if (c == '}') {
            r->pos++;
            return trailing(r);
        }
        if (c != ',') return syntax(r, c, "',' or '}' expected");
        r->pos++;
        if ((rc = ws(r, &c))) return rc;
    }
}

int colo_chrome_read(const char *path, colo_chrome_member_fn on_member,
                     colo_chrome_event_fn on_event, void *ctx, bool *events, colo_error_t *err)
{
    *events = false;
    int rc = colo_check_input_file(path, err);
    if (rc) return rc;
    struct rd r = {.path = path, .err = err, .line = 1};
    errno = 0;
    r.f = gzopen(path, "rb"); /* zlib reads a plain file unchanged */
    if (!r.f)
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open: %s",
                              errno ? strerror(errno) : "out of memory");
    rc = document(&r, on_member, on_event, ctx, events);
    gzclose(r.f);
    colo_free(r.buf);
    colo_free(r.wrap);
    return rc;
}
