/* folder.c: a folder's files by suffix, sorted. */
#include "folder.h"
#include "alloc.h"
#include "cfg.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool ends_in(const char *name, const char *const *suffixes)
{
    size_t len = strlen(name);
    for (size_t k = 0; suffixes[k]; k++) {
        size_t s = strlen(suffixes[k]);
        if (len > s && strcmp(name + len - s, suffixes[k]) == 0) return true;
    }
    return false;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int colo_folder_list(const char *dir, const char *const *suffixes, char ***paths, size_t *n,
                     colo_error_t *err)
{
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return colo_error_set(err, COLO_EIO, dir, 0, NULL, "cannot open the folder: %s",
                              strerror(errno));
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; !rc && (e = readdir(d));) {
        if (e->d_name[0] == '.' || !ends_in(e->d_name, suffixes)) continue;
        if (colo_grow((void **)paths, &cap, *n + 1, sizeof **paths) ||
            colo_path_join(dir, e->d_name, &(*paths)[*n]))
            rc = COLO_ENOMEM;
        else
            ++*n;
    }
    closedir(d);
    if (rc) {
        colo_folder_free(*paths, *n);
        *paths = NULL;
        *n = 0;
        return rc;
    }
    qsort(*paths, *n, sizeof **paths, by_name);
    return 0;
}

void colo_folder_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        colo_free(paths[i]);
    colo_free(paths);
}
