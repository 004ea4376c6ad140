/* k8s_yaml.c: NVIDIA's device plugin config file, loaded whole with libyaml's document API and
 * walked along the few paths colosim reads. */
#include "k8s_yaml.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct reader {
    yaml_document_t *doc;
    const char *path;
    colo_error_t *err;
} reader_t;

/* An error at node n (its line; none for NULL) under key path key. Returns code. */
__attribute__((format(printf, 5, 6))) static int
fail(const reader_t *r, const yaml_node_t *n, int code, const char *key, const char *fmt, ...)
{
    char text[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return colo_error_set(r->err, code, r->path, n ? (int)n->start_mark.line + 1 : 0, key, "%s",
                          text);
}

/* A node's kind in words, for messages. */
static const char *kind(const yaml_node_t *n)
{
    return !n                              ? "nothing"
           : n->type == YAML_MAPPING_NODE  ? "a mapping"
           : n->type == YAML_SEQUENCE_NODE ? "a list"
                                           : "a scalar";
}

/* A scalar's text, NULL for other nodes. Borrowed from the document. */
static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The value of mapping map's member named name in *out (NULL when absent): an error when the
 * name is given twice (YAML forbids it; libyaml does not check). key: map's key path. */
static int member(const reader_t *r, yaml_node_t *map, const char *key, const char *name,
                  yaml_node_t **out)
{
    const yaml_node_t *first = NULL;
    *out = NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        const char *s = scalar(k);
        if (!s || strcmp(s, name) != 0) continue;
        if (first)
            return fail(r, k, COLO_EINVAL, key, "%s is given twice (lines %d and %d)", name,
                        (int)first->start_mark.line + 1, (int)k->start_mark.line + 1);
        first = k;
        *out = yaml_document_get_node(r->doc, p->value);
    }
    return 0;
}

/* Refuses a member of mapping map (key path key) not named in allowed (NULL-terminated). */
static int known_keys(const reader_t *r, yaml_node_t *map, const char *key,
                      const char *const *allowed)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(r->doc, p->key);
        const char *s = scalar(k);
        size_t i = 0;
        while (s && allowed[i] && strcmp(s, allowed[i]) != 0)
            i++;
        if (s && allowed[i]) continue;
        char list[200] = "";
        for (size_t j = 0; allowed[j]; j++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", j ? ", " : "",
                     allowed[j]);
        return fail(r, k, COLO_EINVAL, key, "unknown key %s%s%s (the plugin's keys here: %s)",
                    s ? "'" : "", s ? s : kind(k), s ? "'" : "", list);
    }
    return 0;
}

/* A node that must be a mapping (or a list, with list true), at key path key. */
static int want(const reader_t *r, const yaml_node_t *n, const char *key, bool list)
{
    yaml_node_type_t t = list ? YAML_SEQUENCE_NODE : YAML_MAPPING_NODE;
    if (n && n->type == t) return 0;
    return fail(r, n, COLO_EINVAL, key, "%s here, where the plugin's config has %s", kind(n),
                list ? "a list" : "a mapping");
}

/* An optional boolean flag of the plugin (YAML 1.1's spellings, as its Go reader takes them). */
static int flag(const reader_t *r, yaml_node_t *map, const char *key, const char *name)
{
    static const char *const bools[] = {"true", "false", "True", "False", "TRUE", "FALSE",
                                        "yes",  "no",    "on",   "off",   NULL};
    char path[128];
    snprintf(path, sizeof path, "%s.%s", key, name);
    yaml_node_t *v;
    int rc = member(r, map, key, name, &v);
    if (rc || !v) return rc;
    const char *s = scalar(v);
    for (size_t i = 0; s && bools[i]; i++)
        if (strcmp(s, bools[i]) == 0) return 0;
    return fail(r, v, COLO_EINVAL, path, "%s%s%s: true or false", s ? "'" : "", s ? s : kind(v),
                s ? "'" : "");
}

/* replicas of one resource: a plain (unquoted) decimal integer > 0, as the plugin's reader
 * takes it (a quoted "4" is a string there). */
static int replicas(const reader_t *r, const yaml_node_t *v, const char *key, long long *out)
{
    const char *s = scalar(v);
    char *end = NULL;
    errno = 0;
    long long n = s && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && *s != '+'
                      ? strtoll(s, &end, 10)
                      : 0;
    if (s && v->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return fail(r, v, COLO_EINVAL, key,
                    "\"%s\" is quoted, a string: the plugin takes a number (replicas: %s)", s, s);
    if (!end || end == s || *end || errno || n <= 0)
        return fail(r, v, COLO_EINVAL, key,
                    "%s%s%s: a positive integer (how many pods share each GPU)", s ? "'" : "",
                    s ? s : kind(v), s ? "'" : "");
    *out = n;
    return 0;
}

/* The resources list of sharing.timeSlicing or sharing.mps (key path key): nvidia.com/gpu's
 * replicas into out; every entry checked. */
static int resources(const reader_t *r, yaml_node_t *how, const char *key, colo_k8s_plugin_t *out)
{
    static const char *const keys[] = {"name", "rename", "devices", "replicas", NULL};
    char path[48], item[80], found[300] = "";
    snprintf(path, sizeof path, "%s.resources", key);
    yaml_node_t *list;
    int rc = member(r, how, key, "resources", &list);
    if (rc) return rc;
    if (!list)
        return fail(r, how, COLO_EINVAL, path,
                    "missing: the plugin shares the resources listed here (- name: nvidia.com/gpu, "
                    "replicas: N)");
    if ((rc = want(r, list, path, true))) return rc;
    int gpu = -1;
    size_t n = 0;
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++, n++) {
        yaml_node_t *e = yaml_document_get_node(r->doc, *it), *name, *reps;
        snprintf(item, sizeof item, "%s[%zu]", path, n);
        if ((rc = want(r, e, item, false)) || (rc = known_keys(r, e, item, keys)) ||
            (rc = member(r, e, item, "name", &name)) ||
            (rc = member(r, e, item, "replicas", &reps)))
            return rc;
        char sub[112];
        snprintf(sub, sizeof sub, "%s.name", item);
        if (!scalar(name) || !*scalar(name))
            return fail(r, name ? name : e, COLO_EINVAL, sub,
                        "%s: a resource name such as "
                        "nvidia.com/gpu",
                        name ? kind(name) : "missing");
        snprintf(sub, sizeof sub, "%s.replicas", item);
        if (!reps) return fail(r, e, COLO_EINVAL, sub, "missing: how many pods share each GPU");
        long long v = 0;
        if ((rc = replicas(r, reps, sub, &v))) return rc;
        const char *nm = scalar(name);
        snprintf(found + strlen(found), sizeof found - strlen(found), "%s%s", n ? ", " : "", nm);
        if (strcmp(nm, "nvidia.com/gpu") != 0) continue;
        if (gpu >= 0)
            return fail(r, name, COLO_EINVAL, sub,
                        "nvidia.com/gpu is listed twice (resources[%d] and [%zu]): give it once",
                        gpu, n);
        gpu = (int)n;
        out->replicas = v;
        out->replicas_line = (int)reps->start_mark.line + 1;
        snprintf(out->replicas_key, sizeof out->replicas_key, "%s", sub);
    }
    if (n == 0)
        return fail(r, list, COLO_EINVAL, path,
                    "empty: the plugin shares the resources listed here (- name: nvidia.com/gpu, "
                    "replicas: N)");
    if (gpu < 0)
        return fail(r, list, COLO_EINVAL, path,
                    "no nvidia.com/gpu among the resources (found: %s): colosim simulates one "
                    "whole GPU shared as nvidia.com/gpu",
                    found);
    return 0;
}

/* The document's sharing section into out. */
static int walk(const reader_t *r, colo_k8s_plugin_t *out)
{
    static const char *const sharing_keys[] = {"timeSlicing", "mps", NULL};
    static const char *const how_keys[] = {"renameByDefault", "failRequestsGreaterThanOne",
                                           "resources", "strategy", NULL};
    yaml_node_t *root = yaml_document_get_root_node(r->doc), *version, *sharing, *ts, *mps;
    if (!root)
        return fail(r, NULL, COLO_EINVAL, NULL,
                    "empty: the device plugin's config says how it shares (sharing.timeSlicing "
                    "or sharing.mps)");
    int rc;
    if ((rc = want(r, root, "(top level)", false)) ||
        (rc = member(r, root, "", "version", &version)) ||
        (rc = member(r, root, "", "sharing", &sharing)))
        return rc;
    if (version && (!scalar(version) || strcmp(scalar(version), "v1") != 0))
        return fail(r, version, COLO_EINVAL, "version", "%s%s%s: the plugin's config version is v1",
                    scalar(version) ? "'" : "", scalar(version) ? scalar(version) : kind(version),
                    scalar(version) ? "'" : "");
    if (!sharing)
        return fail(r, root, COLO_EINVAL, "sharing",
                    "missing: the device plugin shares a GPU by sharing.timeSlicing or "
                    "sharing.mps");
    if ((rc = want(r, sharing, "sharing", false)) ||
        (rc = known_keys(r, sharing, "sharing", sharing_keys)) ||
        (rc = member(r, sharing, "sharing", "timeSlicing", &ts)) ||
        (rc = member(r, sharing, "sharing", "mps", &mps)))
        return rc;
    if (ts && mps)
        return fail(r, mps, COLO_EINVAL, "sharing",
                    "both timeSlicing (line %d) and mps (line %d): the plugin shares a GPU one "
                    "way (it would take mps); keep one",
                    (int)ts->start_mark.line + 1, (int)mps->start_mark.line + 1);
    if (!ts && !mps)
        return fail(r, sharing, COLO_EINVAL, "sharing",
                    "neither timeSlicing nor mps: say how "
                    "the plugin shares the GPU");
    yaml_node_t *how = mps ? mps : ts;
    out->mps = mps != NULL;
    snprintf(out->sharing_key, sizeof out->sharing_key, "sharing.%s", mps ? "mps" : "timeSlicing");
    out->sharing_line = (int)how->start_mark.line + 1;
    const char *key = out->sharing_key;
    if ((rc = want(r, how, key, false)) || (rc = known_keys(r, how, key, how_keys)) ||
        (rc = flag(r, how, key, "renameByDefault")) ||
        (rc = flag(r, how, key, "failRequestsGreaterThanOne")))
        return rc;
    return resources(r, how, key, out);
}

/* A plugin config is a few hundred bytes; past this the file is something else (a device, a
 * log named by mistake), refused before libyaml holds it all in memory. */
#define K8S_YAML_MAX (1 << 20)

struct input {
    FILE *f;
    size_t total;
    bool too_long;
};

/* libyaml's read handler: the file, up to K8S_YAML_MAX bytes (0 from it is an input error). */
static int read_some(void *data, unsigned char *buf, size_t size, size_t *got)
{
    struct input *in = data;
    *got = fread(buf, 1, size, in->f);
    in->total += *got;
    if (in->total > K8S_YAML_MAX) in->too_long = true;
    return !ferror(in->f) && !in->too_long;
}

int colo_k8s_plugin_read(const char *path, colo_k8s_plugin_t *out, colo_error_t *err)
{
    *out = (colo_k8s_plugin_t){0};
    snprintf(out->file, sizeof out->file, "%s", path);
    FILE *f = fopen(path, "rb");
    if (!f) return colo_error_set(err, COLO_EIO, path, 0, NULL, "%s", strerror(errno));
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser)) {
        fclose(f);
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    struct input in = {f, 0, false};
    yaml_parser_set_input(&parser, read_some, &in);
    int rc;
    errno = 0;
    if (!yaml_parser_load(&parser, &doc) && (in.too_long || ferror(f))) {
        rc = in.too_long ? colo_error_set(err, COLO_EINVAL, path, 0, NULL,
                                          "larger than 1 MiB: not a device plugin config")
                         : colo_error_set(err, COLO_EIO, path, 0, NULL, "%s",
                                          strerror(errno ? errno : EIO));
    } else if (parser.error != YAML_NO_ERROR) {
        rc = parser.error == YAML_MEMORY_ERROR ? COLO_ENOMEM : COLO_EPARSE;
        const yaml_mark_t *m = parser.problem ? &parser.problem_mark : &parser.context_mark;
        if (parser.error == YAML_READER_ERROR) /* libyaml gives a byte offset only */
            colo_error_set(err, rc, path, 0, NULL, "malformed YAML: %s (byte %zu)",
                           parser.problem ? parser.problem : "cannot be read",
                           parser.problem_offset + 1);
        else
            colo_error_set(
                err, rc, path, (int)m->line + 1, NULL, "malformed YAML: %s%s%s (column %d)%s",
                parser.problem ? parser.problem : "cannot be read", parser.context ? ", " : "",
                parser.context ? parser.context : "", (int)m->column + 1,
                parser.problem && strstr(parser.problem, "cannot start any token")
                    ? "; YAML indents with spaces, not tabs"
                    : "");
    } else {
        reader_t r = {&doc, path, err};
        rc = walk(&r, out);
        yaml_document_delete(&doc);
        yaml_document_t more; /* the plugin reads one document: a second is refused */
        if (!rc && yaml_parser_load(&parser, &more)) {
            yaml_node_t *root = yaml_document_get_root_node(&more);
            if (root)
                rc = colo_error_set(err, COLO_EINVAL, path, (int)root->start_mark.line + 1, NULL,
                                    "a second YAML document: the device plugin would read the "
                                    "first and ignore it; leave one");
            yaml_document_delete(&more);
        }
    }
    yaml_parser_delete(&parser);
    fclose(f);
    return rc;
}
