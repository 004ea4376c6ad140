/* cfg.c: strict libconfig reading with file:line:key errors and --set overrides. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cfg.h"
#include "cfg_internal.h"
#include <ctype.h>
#include "alloc.h"
#include "invariant.h"
#include "json_lines.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void free_hook(void *p)
{
    colo_free(p);
}

/* Where the quote opens on the line l of len bytes (its newline not counted) when the line is
 * an @include, or NULL: one reading of the line for checking includes and rewriting them. */
static const char *include_quote(const char *l, size_t len)
{
    const char *end = l + len, *p = l;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if ((size_t)(end - p) < 8 || memcmp(p, "@include", 8) != 0) return NULL;
    const char *q = p + 8;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    return q < end && *q == '"' ? q : NULL;
}

/* What libconfig 1.5 cannot be trusted with, checked first: an @include of something that is not
 * a regular file (reading a folder makes its scanner call exit()), and text that is not UTF-8
 * (the results are JSON; a NUL byte colo_read_file has refused already). Follows the includes as
 * libconfig does, every name relative to dir, down to its own limit of 10 levels. */
static int check_text(const char *path, const char *dir, int depth, colo_error_t *err);

static int check_buffer(const char *path, const char *buf, size_t len, const char *dir, int depth,
                        colo_error_t *err)
{
    int rc = 0;
    int line = 1;
    for (size_t i = 0; i < len && !rc; line++) {
        size_t eol = i;
        while (eol < len && buf[eol] != '\n')
            eol++;
        const char *open = include_quote(buf + i, eol - i);
        const char *close = open ? memchr(open + 1, '"', (size_t)(buf + eol - open - 1)) : NULL;
        if (close && depth < 10) {
            const char *name = open + 1;
            int n = (int)(close - name);
            char full[8192];
            struct stat st;
            bool absolute = *name == '/';
            if (absolute)
                snprintf(full, sizeof full, "%.*s", n, name);
            else
                snprintf(full, sizeof full, "%s/%.*s", dir, n, name);
            if (absolute && depth > 0) /* libconfig would join it to the scenario's folder */
                rc = colo_error_set(err, COLO_EINVAL, path, line, "@include",
                                    "'%.*s': an included file's @include is relative to the "
                                    "scenario's folder, not an absolute path",
                                    n, name);
            else if (stat(full, &st) != 0)
                rc = colo_error_set(err, COLO_ENOENT, path, line, "@include",
                                    "cannot open '%.*s': %s", n, name, strerror(errno));
            else if (!S_ISREG(st.st_mode))
                rc = colo_error_set(err, COLO_EINVAL, path, line, "@include",
                                    "'%.*s' is not a file", n, name);
            else
                rc = check_text(full, dir, depth + 1, err);
        }
        i = eol + 1;
    }
    if (!rc) rc = colo_text_utf8_error(path, buf, len, err);
    if (!rc && depth > 0) rc = colo_cfg_check_integers(path, buf, len, NULL, err);
    return rc;
}

static int check_text(const char *path, const char *dir, int depth, colo_error_t *err)
{
    char *buf;
    size_t len;
    int rc = colo_read_file(path, &buf, &len, err);
    if (rc) return rc;
    rc = check_buffer(path, buf, len, dir, depth, err);
    colo_free(buf);
    return rc;
}

/* What was read from pipes and devices, by path: they give their bytes only once. */
static struct piped {
    char *path, *text;
    size_t len;
} piped[8];
static size_t n_piped;
static pthread_mutex_t piped_lock = PTHREAD_MUTEX_INITIALIZER;

/* The text of path, NUL-terminated, into *text (colo_free). */
static int read_text(const char *path, char **text, size_t *len, colo_error_t *err)
{
    struct stat st;
    bool pipe_like = stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
    int rc = 0;
    if (pipe_like) {
        pthread_mutex_lock(&piped_lock);
        for (size_t i = 0; i < n_piped; i++)
            if (strcmp(piped[i].path, path) == 0) {
                if ((*text = colo_malloc(piped[i].len + 1))) {
                    memcpy(*text, piped[i].text, piped[i].len + 1);
                    *len = piped[i].len;
                } else {
                    rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
                }
                pthread_mutex_unlock(&piped_lock);
                return rc;
            }
    }
    char *buf = NULL;
    rc = colo_read_file(path, &buf, len, err);
    char *t = rc ? NULL : colo_realloc(buf, *len + 1);
    if (!rc && !t) {
        colo_free(buf);
        rc = colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    if (!rc) {
        t[*len] = '\0';
        *text = t;
        if (pipe_like && n_piped < sizeof piped / sizeof *piped) {
            char *p = colo_strdup(path), *copy = colo_malloc(*len + 1);
            if (p && copy) {
                memcpy(copy, t, *len + 1);
                piped[n_piped++] = (struct piped){p, copy, *len};
            } else {
                colo_free(p);
                colo_free(copy);
            }
        }
    }
    if (pipe_like) pthread_mutex_unlock(&piped_lock);
    return rc;
}

/* The opening quote of an @include of an absolute path on the line, or NULL. */
static const char *absolute_include(const char *l, size_t len)
{
    const char *q = include_quote(l, len);
    return q && q + 1 < l + len && q[1] == '/' ? q : NULL;
}

/* libconfig 1.5 joins every @include to the include folder, an absolute path too ("dir//abs").
 * The scenario's own absolute includes are rewritten to climb from that folder to the root
 * first: dir/../../abs (as many ".." as the folder's real path is deep; ".." is physical, as the
 * real path is). Lines keep their numbers. *out is text itself when nothing changed. */
static int absolute_includes(const char *path, const char *text, const char *dir, char **out,
                             colo_error_t *err)
{
    *out = (char *)text;
    if (!strstr(text, "@include")) return 0;
    size_t n_abs = 0, total = strlen(text);
    for (const char *l = text; *l;) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l);
        n_abs += absolute_include(l, len) != NULL;
        l += len + (eol ? 1 : 0);
    }
    if (!n_abs) return 0;
    char real[PATH_MAX];
    if (!realpath(dir, real))
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot resolve its folder: %s",
                              strerror(errno));
    size_t depth = 0;
    for (const char *c = real; *c; c++)
        depth += *c == '/' && c[1];
    size_t size = total + n_abs * depth * 3 + 1;
    char *o = colo_malloc(size);
    if (!o) return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    char *w = o;
    for (const char *l = text; *l;) {
        const char *eol = strchr(l, '\n');
        size_t len = eol ? (size_t)(eol - l) : strlen(l), with_nl = len + (eol ? 1 : 0);
        const char *q = absolute_include(l, len);
        if (q) {
            size_t head = (size_t)(q + 1 - l); /* up to and with the opening quote */
            memcpy(w, l, head);
            w += head;
            for (size_t i = 0; i < depth; i++, w += 3)
                memcpy(w, "../", 3);
            memcpy(w, q + 2, with_nl - head - 1); /* the rest, without the path's leading '/' */
            w += with_nl - head - 1;
        } else {
            memcpy(w, l, with_nl);
            w += with_nl;
        }
        l += with_nl;
    }
    *w = '\0';
    COLO_CHECK((size_t)(w - o) < size, "rewritten includes overran their buffer");
    *out = o;
    return 0;
}

int colo_cfg_read_file(config_t *cfg, const char *path, colo_error_t *err)
{
    config_set_destructor(cfg, free_hook);
    /* @include "x.cfg" resolves against the including file's folder, not the working one */
    char dir[4096];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    config_set_include_dir(cfg, dir);
    /* the file is read once here (a big file need not be read twice); a pipe (/dev/stdin) is
     * read once per process: a run reads its scenario more than once */
    char *text;
    size_t len;
    int rc = read_text(path, &text, &len, err);
    if (rc) return rc;
    rc = check_buffer(path, text, len, dir, 0, err);
    if (!rc) rc = colo_path_utf8_error(path, err);
    char *wide = NULL;
    if (!rc) rc = colo_cfg_check_integers(path, text, len, &wide, err);
    if (!rc && wide) { /* integers beyond 32 bits read as --set reads them */
        colo_free(text);
        text = wide;
        len = strlen(text);
    }
    char *parsed = text;
    if (!rc) rc = absolute_includes(path, text, dir, &parsed, err);
    if (!rc && config_read_string(cfg, parsed) != CONFIG_TRUE) {
        const char *what = config_error_text(cfg), *file = config_error_file(cfg);
        char abs_name[PATH_MAX];
        if (file && parsed != text && strncmp(file, "../", 3) == 0) { /* one we rewrote */
            while (strncmp(file, "../", 3) == 0)
                file += 3;
            snprintf(abs_name, sizeof abs_name, "/%s", file);
            file = abs_name;
        }
        rc = colo_error_set(err, COLO_EPARSE, file ? file : path, config_error_line(cfg), NULL,
                            "%s", what ? what : "syntax error");
    }
    if (parsed != text) colo_free(parsed);
    colo_free(text);
    return rc;
}

void colo_cfg_path(const config_setting_t *s, char *buf, size_t n)
{
    const config_setting_t *chain[64];
    size_t depth = 0;
    for (; s && !config_setting_is_root(s) && depth < 64; s = config_setting_parent(s))
        chain[depth++] = s;
    size_t used = 0;
    buf[0] = '\0';
    while (depth-- > 0 && used < n) {
        const config_setting_t *c = chain[depth];
        const char *sep = used ? "." : "";
        int w;
        if (config_setting_name(c))
            w = snprintf(buf + used, n - used, "%s%s", sep, config_setting_name(c));
        else
            w = snprintf(buf + used, n - used, "%s[%d]", sep, config_setting_index(c));
        if (w < 0) break;
        used += (size_t)w;
    }
}

static int verror_at(const colo_cfg_reader_t *r, const config_setting_t *s, const char *member,
                     int code, const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
static int verror_at(const colo_cfg_reader_t *r, const config_setting_t *s, const char *member,
                     int code, const char *fmt, va_list ap)
{
    if (!r->err || r->err->code) return code;
    char key[256], text[768];
    colo_cfg_path(s, key, sizeof key);
    if (member) {
        size_t k = strlen(key);
        snprintf(key + k, sizeof key - k, "%s%s", k ? "." : "", member);
    }
    vsnprintf(text, sizeof text, fmt, ap);
    const char *source;
    int line;
    colo_cfg_location(r, s, &source, &line);
    /* An error the file's line did not cause alone: its group holds a value a --set wrote (a
     * process changed to one that needs other keys). Say which. */
    const config_setting_t *g = !s || config_setting_get_hook(s)       ? NULL
                                : member || config_setting_is_group(s) ? s
                                                                       : config_setting_parent(s);
    int n = g && config_setting_is_group(g) ? config_setting_length(g) : 0;
    size_t used = strlen(text);
    const char *sep = " (this group was changed by --set:";
    for (int i = 0; i < n && used < sizeof text; i++) {
        const struct override_mark *m =
            config_setting_get_hook(config_setting_get_elem(g, (unsigned)i));
        if (!m) continue;
        int w = snprintf(text + used, sizeof text - used, "%s%d", sep, m->index);
        if (w > 0) used += (size_t)w;
        sep = ", --set:";
    }
    if (*sep == ',' && used < sizeof text) snprintf(text + used, sizeof text - used, ")");
    return colo_error_set(r->err, code, source, line, key, "%s", text);
}

void colo_cfg_location(const colo_cfg_reader_t *r, const config_setting_t *s, const char **source,
                       int *line)
{
    const struct override_mark *m = s ? config_setting_get_hook(s) : NULL;
    const char *file = s ? config_setting_source_file(s) : NULL;
    *source = m ? "--set" : file ? file : r->source;
    *line = m ? m->index : s ? (int)config_setting_source_line(s) : 0;
}

int colo_cfg_error(const colo_cfg_reader_t *r, const config_setting_t *s, int code, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verror_at(r, s, NULL, code, fmt, ap);
    va_end(ap);
    return rc;
}

/* An error about a member that is absent: located at its group. */
static int error_member(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                        int code, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static int error_member(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                        int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verror_at(r, g, name, code, fmt, ap);
    va_end(ap);
    return rc;
}

int colo_cfg_check_keys(const colo_cfg_reader_t *r, const config_setting_t *s,
                        const char *const *allowed)
{
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        const config_setting_t *m = config_setting_get_elem(s, (unsigned)i);
        const char *name = config_setting_name(m);
        if (!name) continue;
        int known = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, name) == 0) known = 1;
        if (known) continue;
        char list[512] = "";
        size_t used = 0;
        for (const char *const *a = allowed; *a && used < sizeof list; a++) {
            int w = snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", *a);
            if (w > 0) used += (size_t)w;
        }
        return colo_cfg_error(r, m, COLO_EINVAL, "unknown key (expected one of: %s)", list);
    }
    return 0;
}

static const char *type_name(int type)
{
    switch (type) {
    case CONFIG_TYPE_GROUP:
        return "a group { ... }";
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64:
        return "an integer";
    case CONFIG_TYPE_FLOAT:
        return "a number";
    case CONFIG_TYPE_STRING:
        return "a string";
    case CONFIG_TYPE_BOOL:
        return "true or false";
    case CONFIG_TYPE_ARRAY:
        return "an array [ ... ]";
    case CONFIG_TYPE_LIST:
        return "a list ( ... )";
    default:
        return "a value";
    }
}

/* Finds member name; returns 1 if absent and optional, error if absent and required. */
static int lookup(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                  int flags, config_setting_t **out)
{
    *out = g ? config_setting_get_member(g, name) : NULL;
    if (*out) return 0;
    if (flags & COLO_CFG_REQUIRED)
        return error_member(r, g, name, COLO_EINVAL, "missing (this key is required)");
    return 1;
}

static int check_sign(const colo_cfg_reader_t *r, const config_setting_t *s, int flags, double v,
                      const char *text)
{
    if ((flags & COLO_CFG_POSITIVE) && !(v > 0))
        return colo_cfg_error(r, s, COLO_ERANGE, "must be greater than 0 (got %s)", text);
    if ((flags & COLO_CFG_NONNEG) && !(v >= 0))
        return colo_cfg_error(r, s, COLO_ERANGE, "must not be negative (got %s)", text);
    return 0;
}

int colo_cfg_int(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name, int flags,
                 long long *out)
{
    config_setting_t *s;
    int rc = lookup(r, g, name, flags, &s);
    if (rc) return rc;
    int t = config_setting_type(s);
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return colo_cfg_error(r, s, COLO_EINVAL, "must be an integer, not %s", type_name(t));
    long long v = config_setting_get_int64(s);
    char text[32];
    snprintf(text, sizeof text, "%lld", v);
    rc = check_sign(r, s, flags, (double)v, text);
    if (rc) return rc;
    *out = v;
    return 0;
}

int colo_cfg_double(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                    int flags, double *out)
{
    config_setting_t *s;
    int rc = lookup(r, g, name, flags, &s);
    if (rc) return rc;
    int t = config_setting_type(s);
    double v;
    if (t == CONFIG_TYPE_FLOAT)
        v = config_setting_get_float(s);
    else if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        v = (double)config_setting_get_int64(s);
    else
        return colo_cfg_error(r, s, COLO_EINVAL, "must be a number, not %s", type_name(t));
    if (!isfinite(v)) return colo_cfg_error(r, s, COLO_ERANGE, "must be a finite number");
    char text[40];
    snprintf(text, sizeof text, "%g", v);
    rc = check_sign(r, s, flags, v, text);
    if (rc) return rc;
    *out = v;
    return 0;
}

int colo_cfg_ms(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name, int flags,
                double max_ms, double *ms, colo_time_t *ns)
{
    double v;
    int rc = colo_cfg_double(r, g, name, flags, &v);
    if (rc) return rc;
    const config_setting_t *s = config_setting_get_member(g, name);
    if (v > max_ms) return colo_cfg_error(r, s, COLO_ERANGE, "too large");
    colo_time_t t = colo_time_from_ns(v * 1e6);
    if (v > 0 && t < 1)
        return colo_cfg_error(r, s, COLO_ERANGE,
                              "%g ms is below the simulator's resolution of 1 ns", v);
    *ms = v;
    *ns = t;
    return 0;
}

int colo_cfg_string(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                    int flags, const char **out)
{
    config_setting_t *s;
    int rc = lookup(r, g, name, flags, &s);
    if (rc) return rc;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return colo_cfg_error(r, s, COLO_EINVAL, "must be a string, not %s",
                              type_name(config_setting_type(s)));
    const char *v = config_setting_get_string(s);
    if (!v || !v[0]) return colo_cfg_error(r, s, COLO_EINVAL, "must not be empty");
    *out = v;
    return 0;
}

int colo_cfg_bool(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                  int flags, bool *out)
{
    config_setting_t *s;
    int rc = lookup(r, g, name, flags, &s);
    if (rc) return rc;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return colo_cfg_error(r, s, COLO_EINVAL, "must be true or false, not %s",
                              type_name(config_setting_type(s)));
    *out = config_setting_get_bool(s) != 0;
    return 0;
}

int colo_cfg_aggregate(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                       int flags, int type, const config_setting_t **out)
{
    config_setting_t *s;
    *out = NULL;
    int rc = lookup(r, g, name, flags, &s);
    if (rc) return rc;
    int t = config_setting_type(s);
    int ok = (type == CONFIG_TYPE_GROUP) ? t == CONFIG_TYPE_GROUP
                                         : (t == CONFIG_TYPE_LIST || t == CONFIG_TYPE_ARRAY);
    if (!ok)
        return colo_cfg_error(r, s, COLO_EINVAL, "must be %s, not %s", type_name(type),
                              type_name(t));
    *out = s;
    return 0;
}

/* ---- --set overrides ---- */

static int parse_ll(const char *s, long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x)) return -1;
    *v = x;
    return 0;
}

/* Finds a child of an aggregate by one path component. */
static config_setting_t *child(config_setting_t *s, const char *comp)
{
    if (config_setting_is_group(s)) return config_setting_get_member(s, comp);
    long long idx;
    char num[32];
    size_t len = strlen(comp);
    if (comp[0] == '[' && len > 2 && comp[len - 1] == ']' && len - 2 < sizeof num) {
        memcpy(num, comp + 1, len - 2);
        num[len - 2] = '\0';
        comp = num;
    }
    if (parse_ll(comp, &idx) == 0)
        return (idx >= 0 && idx < config_setting_length(s))
                   ? config_setting_get_elem(s, (unsigned)idx)
                   : NULL;
    int n = config_setting_length(s);
    for (int i = 0; i < n; i++) {
        config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
        const char *nm;
        if (config_setting_is_group(e) && config_setting_lookup_string(e, "name", &nm) &&
            strcmp(nm, comp) == 0)
            return e;
    }
    return NULL;
}

/* Sets scalar s (or creates member name in group parent when s is NULL) from text. */
static int assign(config_setting_t *parent, config_setting_t *s, const char *name,
                  const char *value, int index, const char *key, colo_error_t *err)
{
    long long iv = 0;
    double fv = 0;
    int is_int = parse_ll(value, &iv) == 0;
    int is_num = is_int || parse_double(value, &fv) == 0;
    if (is_int) fv = (double)iv;
    int is_bool = strcmp(value, "true") == 0 || strcmp(value, "false") == 0;

    int want;
    if (s) {
        int t = config_setting_type(s);
        if (!config_setting_is_scalar(s))
            return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                                  "is %s; --set only sets single values", type_name(t));
        if (t == CONFIG_TYPE_STRING)
            want = CONFIG_TYPE_STRING;
        else if (t == CONFIG_TYPE_BOOL) {
            if (!is_bool)
                return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                                      "expects true or false, got '%s'", value);
            want = CONFIG_TYPE_BOOL;
        } else {
            if (!is_num)
                return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                                      "expects a number, got '%s'", value);
            want = !is_int                                                    ? CONFIG_TYPE_FLOAT
                   : (t == CONFIG_TYPE_INT && (iv < INT_MIN || iv > INT_MAX)) ? CONFIG_TYPE_INT64
                                                                              : t;
        }
        if (want != t) {
            /* Change kind (e.g. integer -> float): only members of groups can be replaced. */
            if (!config_setting_is_group(parent) || !name)
                return colo_error_set(err, COLO_EINVAL, "--set", index, key, "expects %s here",
                                      type_name(t));
            config_setting_remove(parent, name);
            s = NULL;
        }
    } else {
        want = is_bool  ? CONFIG_TYPE_BOOL
               : is_int ? CONFIG_TYPE_INT64
               : is_num ? CONFIG_TYPE_FLOAT
                        : CONFIG_TYPE_STRING;
    }
    if (!s) {
        if (!config_setting_is_group(parent))
            return colo_error_set(err, COLO_EINVAL, "--set", index, key, "no such element to set");
        s = config_setting_add(parent, name, want);
        if (!s) return colo_error_set(err, COLO_EINVAL, "--set", index, key, "cannot create key");
    }
    int ok;
    switch (want) {
    case CONFIG_TYPE_BOOL:
        ok = config_setting_set_bool(s, strcmp(value, "true") == 0);
        break;
    case CONFIG_TYPE_INT64:
        ok = config_setting_set_int64(s, iv);
        break;
    case CONFIG_TYPE_INT:
        ok = config_setting_set_int(s, (int)iv);
        break;
    case CONFIG_TYPE_FLOAT:
        ok = config_setting_set_float(s, fv);
        break;
    default:
        ok = config_setting_set_string(s, value);
        break;
    }
    if (!ok) return colo_error_set(err, COLO_EINVAL, "--set", index, key, "cannot set value");
    struct override_mark *m = config_setting_get_hook(s);
    if (!m) {
        m = colo_malloc(sizeof *m);
        if (!m) return colo_error_set(err, COLO_ENOMEM, "--set", index, key, "out of memory");
        config_setting_set_hook(s, m);
    }
    m->index = index;
    return 0;
}

/* Marks s, and everything under it, as written by --set number index (colo_cfg_location). */
static int mark_set(config_setting_t *s, int index)
{
    struct override_mark *m = config_setting_get_hook(s);
    if (!m) {
        if (!(m = colo_malloc(sizeof *m))) return COLO_ENOMEM;
        config_setting_set_hook(s, m);
    }
    m->index = index;
    int n = config_setting_is_aggregate(s) ? config_setting_length(s) : 0;
    for (int i = 0; i < n; i++)
        if (mark_set(config_setting_get_elem(s, (unsigned)i), index)) return COLO_ENOMEM;
    return 0;
}

/* Copies src's value (and, for groups, lists and arrays, its members) into dst, made with the
 * same type. 0 or COLO_ENOMEM. */
static int copy_setting(config_setting_t *dst, const config_setting_t *src)
{
    switch (config_setting_type(src)) {
    case CONFIG_TYPE_INT:
        return config_setting_set_int(dst, config_setting_get_int(src)) ? 0 : COLO_ENOMEM;
    case CONFIG_TYPE_INT64:
        return config_setting_set_int64(dst, config_setting_get_int64(src)) ? 0 : COLO_ENOMEM;
    case CONFIG_TYPE_FLOAT:
        return config_setting_set_float(dst, config_setting_get_float(src)) ? 0 : COLO_ENOMEM;
    case CONFIG_TYPE_BOOL:
        return config_setting_set_bool(dst, config_setting_get_bool(src)) ? 0 : COLO_ENOMEM;
    case CONFIG_TYPE_STRING:
        return config_setting_set_string(dst, config_setting_get_string(src)) ? 0 : COLO_ENOMEM;
    default:
        break;
    }
    int n = config_setting_length(src);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(src, (unsigned)i);
        config_setting_t *d =
            config_setting_add(dst, config_setting_name(e), config_setting_type(e));
        if (!d || copy_setting(d, e)) return COLO_ENOMEM;
    }
    return 0;
}

/* --set KEY={ ... } (or ( ... ), [ ... ]): the whole group, list or array at KEY replaced by
 * the value written in libconfig's syntax, e.g. an arrival process switched with its keys. */
static int assign_aggregate(config_setting_t *parent, config_setting_t *s, const char *name,
                            const char *value, int index, const char *key, colo_error_t *err)
{
    if (!config_setting_is_group(parent) || !name)
        return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                              "a whole group replaces a member of a group only");
    (void)s;
    size_t n = strlen(value) + 16;
    char *text = colo_malloc(n);
    if (!text) return COLO_ENOMEM;
    snprintf(text, n, "v = %s;", value);
    config_t tmp;
    config_init(&tmp);
    int ok = config_read_string(&tmp, text);
    colo_free(text);
    if (!ok) {
        int rc = colo_error_set(err, COLO_EINVAL, "--set", index, key, "%s in '%s'",
                                config_error_text(&tmp), value);
        config_destroy(&tmp);
        return rc;
    }
    const config_setting_t *v = config_setting_get_member(config_root_setting(&tmp), "v");
    if (config_setting_get_member(parent, name)) config_setting_remove(parent, name);
    config_setting_t *d = config_setting_add(parent, name, config_setting_type(v));
    int rc = d ? copy_setting(d, v) : COLO_ENOMEM;
    if (!rc) rc = mark_set(d, index);
    config_destroy(&tmp);
    return rc ? colo_error_set(err, rc, "--set", index, key, "out of memory") : 0;
}

int colo_cfg_override(config_t *cfg, const char *assignment, int index, colo_error_t *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return colo_error_set(err, COLO_EINVAL, "--set", index, NULL,
                              "expected key=value, got '%s'", assignment);
    size_t klen = (size_t)(eq - assignment);
    char key[256];
    if (klen >= sizeof key)
        return colo_error_set(err, COLO_EINVAL, "--set", index, NULL, "key too long");
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    const char *value = eq + 1;
    /* the results are JSON: text that is not UTF-8 is refused here, as it is in files */
    colo_error_t u;
    colo_error_clear(&u);
    if (colo_text_utf8_error("--set", assignment, strlen(assignment), &u))
        return colo_error_set(err, COLO_EINVAL, "--set", index, key, "%s", u.text);

    char path[256];
    memcpy(path, key, klen + 1);
    config_setting_t *cur = config_root_setting(cfg);
    char *save = NULL;
    char *comp = strtok_r(path, ".", &save);
    while (comp) {
        char *next = strtok_r(NULL, ".", &save);
        if (!config_setting_is_aggregate(cur))
            return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                                  "'%s' is not a group or list", comp);
        config_setting_t *c = child(cur, comp);
        if (!next && strchr("{([", value[0]))
            return assign_aggregate(cur, c, comp, value, index, key, err);
        if (!next) return assign(cur, c, comp, value, index, key, err);
        if (!c && config_setting_is_group(cur) && comp[0] != '[') {
            /* a group the file lacks: made, as a key the file lacks is */
            if (!(c = config_setting_add(cur, comp, CONFIG_TYPE_GROUP)) || mark_set(c, index))
                return colo_error_set(err, COLO_EINVAL, "--set", index, key,
                                      "cannot create group '%s'", comp);
        }
        if (!c)
            return colo_error_set(err, COLO_EINVAL, "--set", index, key, "no such key '%s'", comp);
        cur = c;
        comp = next;
    }
    return colo_error_set(err, COLO_EINVAL, "--set", index, NULL, "empty key");
}

int colo_path_join(const char *dir, const char *rel, char **out)
{
    size_t n = strlen(dir) + strlen(rel) + 2;
    *out = colo_malloc(n);
    if (!*out) return COLO_ENOMEM;
    if (rel[0] == '/' || !dir[0])
        snprintf(*out, n, "%s", rel);
    else
        snprintf(*out, n, "%s/%s", dir, rel);
    return 0;
}
