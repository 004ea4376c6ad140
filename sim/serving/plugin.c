/* plugin.c: plug-ins by name (plugin.h): dlopen, then the plug-in's own registration. */
#define _GNU_SOURCE /* realpath's PATH_MAX */
#include "plugin.h"
#include "alloc.h"
#include "simtime.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A plug-in may call the C99 inline functions of the headers it includes without inlining them
 * (built without optimisation): their external definitions must be in the program, which links
 * them only when one of its own calls is not inlined. This reference keeps them. */
__attribute__((used)) static colo_time_t (*const keep_time_from_ns)(double) = colo_time_from_ns;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char **loaded; /* real paths of the plug-ins loaded, never unloaded */
static int *init_rc;  /* and what their colosim_plugin_init returned (nonzero: it failed) */
static size_t n_loaded, cap_loaded, cap_rc;

/* Loads real (a resolved path) unless it is loaded; the lock is held. */
static int load_locked(const char *real, const char *path, const char *source, int line,
                       const char *key, colo_error_t *err)
{
    for (size_t i = 0; i < n_loaded; i++) /* once per file: its init is not run again */
        if (strcmp(loaded[i], real) == 0)
            return init_rc[i] ? colo_error_set(err, COLO_EINVAL, source, line, key,
                                               "plug-in '%s': its colosim_plugin_init(%d) "
                                               "returned %d when it was loaded",
                                               path, COLO_PLUGIN_ABI, init_rc[i])
                              : 0;
    if (colo_grow((void **)&loaded, &cap_loaded, n_loaded + 1, sizeof *loaded) ||
        colo_grow((void **)&init_rc, &cap_rc, n_loaded + 1, sizeof *init_rc))
        return colo_error_set(err, COLO_ENOMEM, source, line, key, "out of memory");
    char *keep = colo_strdup(real);
    if (!keep) return colo_error_set(err, COLO_ENOMEM, source, line, key, "out of memory");
    /* its symbols stay its own; it finds colosim's in the program (exported) or the library */
    void *h = dlopen(real, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        colo_free(keep);
        return colo_error_set(err, COLO_EINVAL, source, line, key,
                              "plug-in '%s' cannot be loaded: %s", path, dlerror());
    }
    colo_plugin_init_fn init;
    void *sym = dlsym(h, "colosim_plugin_init");
    memcpy(&init, &sym, sizeof init); /* POSIX: a function's address as an object pointer */
    if (!sym) {
        dlclose(h);
        colo_free(keep);
        return colo_error_set(err, COLO_EINVAL, source, line, key,
                              "plug-in '%s' has no colosim_plugin_init: a plug-in exports "
                              "int colosim_plugin_init(int abi) (docs/embedding.md)",
                              path);
    }
    int rc = init(COLO_PLUGIN_ABI);
    init_rc[n_loaded] = rc;
    loaded[n_loaded++] = keep; /* even when its init failed: it may have registered some ops */
    if (rc) {
        return colo_error_set(err, COLO_EINVAL, source, line, key,
                              "plug-in '%s': its colosim_plugin_init(%d) returned %d (built for "
                              "another colosim, or a scheduler or arrival process name it "
                              "registers is taken)",
                              path, COLO_PLUGIN_ABI, rc);
    }
    return 0;
}

int colo_plugin_load(const char *path, const char *source, int line, const char *key,
                     colo_error_t *err)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return colo_error_set(err, COLO_ENOENT, source, line, key, "no plug-in '%s': %s", path,
                              strerror(errno));
    pthread_mutex_lock(&lock);
    int rc = load_locked(real, path, source, line, key, err);
    pthread_mutex_unlock(&lock);
    return rc;
}

void colo_plugin_names(char *buf, size_t n)
{
    size_t used = 0;
    if (n) buf[0] = '\0';
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_loaded && used < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", loaded[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    pthread_mutex_unlock(&lock);
}
