/* datadir.c: the data colosim ships (scenarios, traces), found by name when a path given does
 * not exist: in $COLOSIM_DATA_DIR, the installed share/colosim beside the program or library, the
 * source tree, then the configure-time prefix. The same order as the GPU descriptions' search
 * (models/gpu_catalog.c), so one installed prefix, moved anywhere, serves both. */
#define _GNU_SOURCE /* dladdr */
#include "datadir.h"
#include "errors.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Set by sim/CMakeLists.txt: the path from the installed program's folder (bin) and from the
 * installed library's (lib) to share/colosim, the source tree, and share/colosim under the
 * configure-time prefix. */
#ifndef COLO_DATADIR_FROM_BIN
#define COLO_DATADIR_FROM_BIN "../share/colosim"
#endif
#ifndef COLO_DATADIR_FROM_LIB
#define COLO_DATADIR_FROM_LIB "../share/colosim"
#endif
#ifndef COLO_DATADIR_SOURCE
#define COLO_DATADIR_SOURCE ""
#endif
#ifndef COLO_DATADIR_INSTALL
#define COLO_DATADIR_INSTALL ""
#endif

enum { PATH_LEN = 4200 };

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int colo_datadir_installed(char *buf, size_t n)
{
    char self[4096] = "";
    Dl_info info;
    if (dladdr((void *)colo_datadir_installed, &info) && info.dli_fname && info.dli_fname[0] == '/')
        snprintf(self, sizeof self, "%s", info.dli_fname);
    else {
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        self[len > 0 ? len : 0] = '\0';
    }
    buf[0] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) return COLO_ENOENT;
    *slash = '\0';
    static const char *const rel[] = {COLO_DATADIR_FROM_BIN, COLO_DATADIR_FROM_LIB};
    for (size_t k = 0; k < 2; k++) {
        char cand[PATH_LEN], real[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", self, rel[k]);
        if (is_dir(cand)) { /* its path tidied: PREFIX/share/..., not PREFIX/bin/../share/... */
            snprintf(buf, n, "%s", realpath(cand, real) ? real : cand);
            return 0;
        }
    }
    snprintf(buf, n, "%s/%s", self, rel[0]); /* the usual place, to name in a message */
    return COLO_ENOENT;
}

/* The data folders in search order (at most 4; empty ones left out): their count. */
static size_t data_dirs(char dirs[4][PATH_LEN])
{
    size_t k = 0;
    const char *env = getenv("COLOSIM_DATA_DIR");
    if (env && *env) snprintf(dirs[k++], PATH_LEN, "%s", env);
    if (colo_datadir_installed(dirs[k], PATH_LEN) == 0) k++;
    if (COLO_DATADIR_SOURCE[0]) snprintf(dirs[k++], PATH_LEN, "%s", COLO_DATADIR_SOURCE);
    if (COLO_DATADIR_INSTALL[0]) snprintf(dirs[k++], PATH_LEN, "%s", COLO_DATADIR_INSTALL);
    return k;
}

int colo_datadir_lookup(const char *name, const char *sub, char *buf, size_t n)
{
    if (!name[0] || name[0] == '/') return COLO_ENOENT;
    /* a scenario's "../traces/x.json" is the data folder's traces/x.json */
    while (strncmp(name, "./", 2) == 0 || strncmp(name, "../", 3) == 0)
        name += name[1] == '/' ? 2 : 3;
    if (!name[0]) return COLO_ENOENT;
    char dirs[4][PATH_LEN];
    size_t nd = data_dirs(dirs);
    for (size_t d = 0; d < nd; d++)
        for (int with_sub = 0; with_sub <= (sub && sub[0] ? 1 : 0); with_sub++) {
            int len = with_sub ? snprintf(buf, n, "%s/%s/%s", dirs[d], sub, name)
                               : snprintf(buf, n, "%s/%s", dirs[d], name);
            if (len > 0 && (size_t)len < n && is_file(buf)) return 0;
        }
    return COLO_ENOENT;
}

int colo_datadir_find(const char *name, const char *sub, char *buf, size_t n)
{
    if (name[0] == '/' || is_file(name)) {
        snprintf(buf, n, "%s", name);
        return is_file(name) ? 0 : COLO_ENOENT;
    }
    if (colo_datadir_lookup(name, sub, buf, n) == 0) return 0;
    snprintf(buf, n, "%s", name);
    return COLO_ENOENT;
}

void colo_datadir_search_path(char *buf, size_t n)
{
    char dirs[4][PATH_LEN];
    size_t nd = data_dirs(dirs), used = 0;
    buf[0] = '\0';
    for (size_t d = 0; d < nd && used < n; d++) {
        int len = snprintf(buf + used, n - used, "%s%s", d ? ", " : "", dirs[d]);
        if (len < 0) break;
        used += (size_t)len;
    }
}
