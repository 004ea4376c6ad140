/* atomic_file.c: write to NAME.tmp.XXXXXX, fsync, rename over NAME. */
#include "atomic_file.h"
#include "alloc.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary files this process is writing, for the signal handler to remove. Slots are
 * atomics (lock-free pointers and ints on the targets we build for), so the handler may read
 * them at any point; each slot carries its writer's pid, because a forked child inherits the
 * list but must not remove its parent's files. More files than slots are written untracked. */
#define COLO_TRACKED 64
static char *_Atomic tracked[COLO_TRACKED];
static _Atomic pid_t tracked_pid[COLO_TRACKED];

static char claimed; /* a slot's pointer while its pid is being set */

void colo_atomic_track(char *tmp)
{
    for (int i = 0; i < COLO_TRACKED; i++) {
        char *expected = NULL;
        if (atomic_compare_exchange_strong(&tracked[i], &expected, &claimed)) {
            atomic_store(&tracked_pid[i], getpid());
            atomic_store(&tracked[i], tmp);
            return;
        }
    }
}

void colo_atomic_untrack(const char *tmp)
{
    for (int i = 0; i < COLO_TRACKED; i++)
        if (atomic_load(&tracked[i]) == tmp) atomic_store(&tracked[i], NULL);
}

static void say(const char *s)
{
    ssize_t w = write(STDERR_FILENO, s, strlen(s));
    (void)w;
}

static void remove_and_die(int sig)
{
    pid_t self = getpid();
    int removed = 0;
    for (int i = 0; i < COLO_TRACKED; i++) {
        char *t = atomic_load(&tracked[i]);
        if (t && t != &claimed && atomic_load(&tracked_pid[i]) == self && unlink(t) == 0) removed++;
    }
    if (removed) {
        say("colosim: stopped by ");
        say(sig == SIGINT    ? "SIGINT"
            : sig == SIGTERM ? "SIGTERM"
            : sig == SIGHUP  ? "SIGHUP"
            : sig == SIGPIPE ? "SIGPIPE"
                             : "a signal");
        say(removed == 1 ? " while writing; its unfinished output was removed\n"
                         : " while writing; its unfinished outputs were removed\n");
    }
    signal(sig, SIG_DFL);
    raise(sig); /* blocked while the handler runs: delivered, with its default action, on return */
}

void colo_atomic_remove_on_signal(void)
{
    static const int sigs[] = {SIGHUP, SIGINT, SIGTERM, SIGPIPE};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_and_die;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal ignored by whoever started us (nohup, a shell's &) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
    }
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG instead of killing the process:
     * the output is then refused as any failed write is, its temporary file removed */
    signal(SIGXFSZ, SIG_IGN);
}

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
    colo_atomic_track(af->tmp);
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
    colo_atomic_untrack(af->tmp); /* after the rename: a signal before it still removes the file */
    colo_free(af->tmp);
    colo_free(af->path);
    af->tmp = af->path = NULL;
    return 0;
}

void colo_atomic_abort(colo_atomic_file_t *af)
{
    if (af->f && af->f != stdout) fclose(af->f);
    af->f = NULL;
    if (af->tmp) {
        unlink(af->tmp);
        colo_atomic_untrack(af->tmp);
    }
    colo_free(af->tmp);
    colo_free(af->path);
    af->tmp = af->path = NULL;
}
