/* fuzz_common.c: scratch files and set-up for the fuzz targets (fuzz.h). */
#define _GNU_SOURCE /* nftw's FTW_DEPTH, FTW_PHYS */
#include "fuzz.h"
#include "alloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gsl/gsl_errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[4200]; /* TMP/colosim-fuzz-XXXXXX/a/b: fixtures resolve from here */
static char root[4096];    /* TMP/colosim-fuzz-XXXXXX */

const char *fuzz_src(const char *rel)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 4096, "%s/%s", COLO_TEST_SRC, rel);
    return b;
}

static void die(const char *what, const char *path)
{
    fprintf(stderr, "fuzz: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

static void remove_scratch(void)
{
    if (root[0]) nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Links every entry of the source folder rel into dir. */
static void link_all(const char *dir, const char *rel)
{
    const char *src = fuzz_src(rel);
    DIR *d = opendir(src);
    if (!d) die("cannot read", src);
    struct dirent *e;
    char from[8192], to[8192];
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(from, sizeof from, "%s/%s", src, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        if (symlink(from, to) != 0 && errno != EEXIST) die("cannot link", to);
    }
    closedir(d);
}

/* ROOT/traces and ROOT/a/traces link the project's traces, ROOT/a and ROOT/a/b hold links to
 * tests/fixtures' files: "x.json", "../x.json", "../traces/..." and "../../traces/..." all
 * resolve. */
static void make_scratch(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/colosim-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(root)) die("cannot make", root);
    atexit(remove_scratch);
    char p[4200];
    snprintf(p, sizeof p, "%s/traces", root);
    if (symlink(fuzz_src("traces"), p) != 0) die("cannot link", p);
    snprintf(p, sizeof p, "%s/a", root);
    if (mkdir(p, 0700) != 0) die("cannot make", p);
    snprintf(p, sizeof p, "%s/a/traces", root);
    if (symlink(fuzz_src("traces"), p) != 0) die("cannot link", p);
    snprintf(p, sizeof p, "%s/a", root);
    link_all(p, "tests/fixtures"); /* for tests/fixtures/cluster's "../tiny_h100.json" */
    snprintf(scratch, sizeof scratch, "%s/a/b", root);
    if (mkdir(scratch, 0700) != 0) die("cannot make", scratch);
    link_all(scratch, "tests/fixtures");
}

const char *fuzz_dir(void)
{
    if (!scratch[0]) make_scratch();
    return scratch;
}

const char *fuzz_file(const uint8_t *data, size_t size, const char *name)
{
    static char path[8192];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) die("cannot write", path);
    size_t done = 0;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("cannot write", path);
        done += (size_t)w;
    }
    if (close(fd) != 0) die("cannot write", path);
    return path;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    gsl_set_error_handler_off();
    json_set_alloc_funcs(colo_malloc, colo_free);
    if (fuzz_init) fuzz_init();
    return 0;
}
