/* atomic_file.c: write to NAME.tmp.XXXXXX, fsync, rename over NAME. */
#include "atomic_file.h"
#include "alloc.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int colo_atomic_open(colo_atomic_file_t *af, const char *path, colo_error_t *err)
{
    memset(af, 0, sizeof af[0]);
    if (strcmp(path, "-") == 0) {
        af->f = stdout;
        return 0;
    }
    struct stat st;
    bool exists = stat(path, &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
        return colo_error_set(err, COLO_EIO, path, 0, NULL,
                              "is a folder; give a file name for the output");
    if (exists && !S_ISREG(st.st_mode)) {
        /* a device or a pipe (/dev/null, a FIFO): written in place, never replaced */
        if (!(af->path = colo_strdup(path)))
            return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
        if (!(af->f = fopen(path, "w"))) {
            int e = errno;
            colo_atomic_abort(af);
            return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open for writing: %s",
                                  strerror(e));
        }
        return 0;
    }
    size_t n = strlen(path);
    af->path = colo_strdup(path);
    af->tmp = colo_malloc(n + 16);
    if (!af->path || !af->tmp) {
        colo_atomic_abort(af);
        return colo_error_set(err, COLO_ENOMEM, path, 0, NULL, "out of memory");
    }
    memcpy(af->tmp, path, n);
    memcpy(af->tmp + n, ".tmp.XXXXXX", 12);
    int fd = mkstemp(af->tmp);
    if (fd < 0) {
        int e = errno;
        colo_free(af->tmp);
        af->tmp = NULL;
        colo_atomic_abort(af);
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot create output file: %s",
                              strerror(e));
    }
    fchmod(fd, 0644);
    af->f = fdopen(fd, "w");
    if (!af->f) {
        close(fd);
        colo_atomic_abort(af);
        return colo_error_set(err, COLO_EIO, path, 0, NULL, "cannot open output file");
    }
    return 0;
}

int colo_atomic_commit(colo_atomic_file_t *af, colo_error_t *err)
{
    if (!af->tmp && !af->path) { /* stdout */
        int bad = fflush(af->f) != 0 || ferror(af->f);
        af->f = NULL;
        return bad ? colo_error_set(err, COLO_EIO, "-", 0, NULL, "cannot write standard output")
                   : 0;
    }
    if (!af->tmp) { /* a device or a pipe, written in place */
        errno = 0;
        int bad = fflush(af->f) != 0 || ferror(af->f);
        int e = errno ? errno : EIO;
        if (fclose(af->f) != 0 && !bad) bad = 1, e = errno ? errno : EIO;
        af->f = NULL;
        if (bad) colo_error_set(err, COLO_EIO, af->path, 0, NULL, "cannot write: %s", strerror(e));
        colo_free(af->path);
        af->path = NULL;
        return bad ? COLO_EIO : 0;
    }
    int e = 0;
    if (fflush(af->f) != 0 || ferror(af->f)) e = errno ? errno : EIO;
    if (!e && fsync(fileno(af->f)) != 0 && errno != EINVAL) e = errno;
    if (fclose(af->f) != 0 && !e) e = errno ? errno : EIO;
    af->f = NULL;
    if (!e && rename(af->tmp, af->path) != 0) e = errno;
    if (e) {
        colo_error_set(err, COLO_EIO, af->path, 0, NULL, "cannot write output file: %s",
                       strerror(e));
        colo_atomic_abort(af);
        return COLO_EIO;
    }
    colo_free(af->tmp);
    colo_free(af->path);
    af->tmp = af->path = NULL;
    return 0;
}

void colo_atomic_abort(colo_atomic_file_t *af)
{
    if (af->f && af->f != stdout) fclose(af->f);
    af->f = NULL;
    if (af->tmp) unlink(af->tmp);
    colo_free(af->tmp);
    colo_free(af->path);
    af->tmp = af->path = NULL;
}
