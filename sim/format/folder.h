/* folder.h: the files of a folder whose names end in given suffixes. */
#ifndef COLO_FOLDER_H
#define COLO_FOLDER_H

#include "errors.h"

#include <stddef.h>

/* The paths (dir/NAME) of the files in dir whose names end in one of suffixes (NULL-terminated)
 * and do not start with '.', sorted by name so that nothing depends on the folder's order. *paths
 * is new (colo_folder_free), possibly empty. 0, COLO_ENOMEM, or COLO_EIO with err naming dir. */
int colo_folder_list(const char *dir, const char *const *suffixes, char ***paths, size_t *n,
                     colo_error_t *err);
void colo_folder_free(char **paths, size_t n);

#endif
