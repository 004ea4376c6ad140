/* cfg_copy.c: a copy of a libconfig setting that keeps where it was written (cfg.h). */
#include "cfg.h"
#include "alloc.h"
#include "cfg_internal.h"
#include "errors.h"

#include <string.h>

int colo_cfg_copy_setting(config_setting_t *parent, const config_setting_t *src)
{
    int type = config_setting_type(src);
    const char *name = config_setting_is_group(parent) ? config_setting_name(src) : NULL;
    config_setting_t *d = config_setting_add(parent, name, type);
    if (!d) return COLO_ENOMEM;
    /* its file and line, and the --set that wrote it: errors in the copy point at the original */
    d->line = src->line;
    d->file = src->file;
    const struct override_mark *m = config_setting_get_hook(src);
    if (m) {
        struct override_mark *c = colo_malloc(sizeof *c);
        if (!c) return COLO_ENOMEM;
        *c = *m;
        config_setting_set_hook(d, c);
    }
    int ok = CONFIG_TRUE;
    switch (type) {
    case CONFIG_TYPE_GROUP:
    case CONFIG_TYPE_LIST:
    case CONFIG_TYPE_ARRAY:
        for (int i = 0; i < config_setting_length(src); i++) {
            int rc = colo_cfg_copy_setting(d, config_setting_get_elem(src, (unsigned)i));
            if (rc) return rc;
        }
        break;
    case CONFIG_TYPE_INT:
        ok = config_setting_set_int(d, config_setting_get_int(src));
        break;
    case CONFIG_TYPE_INT64:
        ok = config_setting_set_int64(d, config_setting_get_int64(src));
        break;
    case CONFIG_TYPE_FLOAT:
        ok = config_setting_set_float(d, config_setting_get_float(src));
        break;
    case CONFIG_TYPE_STRING:
        ok = config_setting_set_string(d, config_setting_get_string(src));
        break;
    case CONFIG_TYPE_BOOL:
        ok = config_setting_set_bool(d, config_setting_get_bool(src));
        break;
    default:
        break;
    }
    return ok == CONFIG_TRUE ? 0 : COLO_ENOMEM;
}
