/* cfg.h: strict reading of libconfig files: typed getters, unknown-key checks, --set overrides,
 * and errors that name the file, line and key of the offending setting. */
#ifndef COLO_CFG_H
#define COLO_CFG_H

#include "errors.h"
#include "simtime.h"

#include <libconfig.h>
#include <stdbool.h>

/* Where errors go and which file name they carry. Both borrowed. */
typedef struct colo_cfg_reader {
    const char *source;
    colo_error_t *err;
} colo_cfg_reader_t;

/* Flags for the typed getters. */
enum {
    COLO_CFG_REQUIRED = 1 << 0, /* absent is an error */
    COLO_CFG_POSITIVE = 1 << 1, /* value > 0 */
    COLO_CFG_NONNEG = 1 << 2,   /* value >= 0 */
};

/* A time in milliseconds (flags as colo_cfg_double) into *ms and *ns: at most max_ms ("too
 * large"); given and positive, at least the simulator's 1 ns, since a shorter one rounds to 0,
 * which keys such as SLOs read as "none". 0, 1 when absent (*ms and *ns untouched), or an error
 * at the key. */
int colo_cfg_ms(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name, int flags,
                double max_ms, double *ms, colo_time_t *ns);

/* Integer literals of configuration text (outside strings and comments): libconfig 1.5 reads one
 * beyond 32 bits without its L as the wrapped value and one beyond 64 bits as the largest. One
 * beyond 64 bits is an error (err names path, the line and the key before it); one beyond 32
 * bits without L gets its L in a copy of the text (*out, new; NULL when nothing changed) or,
 * when out is NULL (an included file libconfig reads itself), is an error. O(len). */
int colo_cfg_check_integers(const char *path, const char *buf, size_t len, char **out,
                            colo_error_t *err);

/* Reads path into cfg (caller-owned, config_init done). On a syntax or I/O error fills err with
 * the file and line and returns COLO_EPARSE or COLO_EIO. */
int colo_cfg_read_file(config_t *cfg, const char *path, colo_error_t *err);

/* rel joined to dir (as written when rel is absolute or dir is empty) in a new string *out
 * (colo_free). 0 or COLO_ENOMEM. For the relative paths of scenario and study files. */
int colo_path_join(const char *dir, const char *rel, char **out);

/* Writes the libconfig path of s ("tenants.[1].arrival.rate") into buf. */
void colo_cfg_path(const config_setting_t *s, char *buf, size_t n);

/* Records an error at setting s: its file and line, or the --set argument that last set it. */
int colo_cfg_error(const colo_cfg_reader_t *r, const config_setting_t *s, int code, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

/* Where setting s came from: the file and line, or "--set" and the override's index. */
void colo_cfg_location(const colo_cfg_reader_t *r, const config_setting_t *s, const char **source,
                       int *line);

/* Fails with "unknown key" for any member of group s not named in allowed (NULL-terminated). */
int colo_cfg_check_keys(const colo_cfg_reader_t *r, const config_setting_t *s,
                        const char *const *allowed);

/* Typed getters for member name of group g. Return 0 when found and valid (value in *out),
 * 1 when absent and optional (*out untouched), or a negative code with the error recorded.
 * Numbers may be written as integers or floats; NaN and infinity are refused. Strings are
 * borrowed from the config. */
int colo_cfg_int(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name, int flags,
                 long long *out);
int colo_cfg_double(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                    int flags, double *out);
int colo_cfg_string(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                    int flags, const char **out);
int colo_cfg_bool(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                  int flags, bool *out);
/* A member that must be a group (or, with list=true, a list or array). NULL when absent. */
int colo_cfg_aggregate(const colo_cfg_reader_t *r, const config_setting_t *g, const char *name,
                       int flags, int type, const config_setting_t **out);

/* Applies one "key.path=value" override (the index-th --set, 1-based) to a loaded config.
 * The path uses libconfig syntax; a list element is "[N]", "N", or the value of its "name"
 * member (tenants.resnet.arrival.rate). An existing scalar keeps its kind (numbers may switch
 * between integer and float); a missing last key is created with a type guessed from the value,
 * so a misspelt key is then reported as unknown by the loader. Errors use source "--set". */
int colo_cfg_override(config_t *cfg, const char *assignment, int index, colo_error_t *err);

/* A copy of src added to parent (under src's name when parent is a group), deep, keeping the
 * file, line and --set mark of every setting, so that errors in the copy point at what the user
 * wrote. 0 or COLO_ENOMEM. */
int colo_cfg_copy_setting(config_setting_t *parent, const config_setting_t *src);

#endif
