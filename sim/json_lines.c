/* json_lines.c: a structural scan of valid JSON that records where array elements start. */
#include "json_lines.h"
#include "alloc.h"
#include "errors.h"

#include <string.h>

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
        } else {
            while (sc->i < sc->len && !strchr(" \t\r\n,]}", sc->s[sc->i]))
                sc->i++;
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
