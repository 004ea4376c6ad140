/* Output files whole or absent: a command killed while writing leaves no temporary file. Each
 * case forks a child that writes and is then killed, and looks at what the child left. */
#include "atomic_file.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/colosim-atomic-XXXXXX";
static char err_path[64]; /* the child's stderr, outside dir */

static void make_dir(void)
{
    strcpy(dir, "/tmp/colosim-atomic-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(err_path, sizeof err_path, "%s.err", dir);
}

static void remove_dir(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[512];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    if (d) closedir(d);
    rmdir(dir);
    unlink(err_path);
}

/* The names in dir, sorted and joined by spaces ("" when empty). */
static const char *listing(void)
{
    static char out[1024];
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    cr_assert_geq(n, 0);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0) {
            if (out[0]) strcat(out, " ");
            strncat(out, names[i]->d_name, sizeof out - strlen(out) - 2);
        }
        free(names[i]);
    }
    free(names);
    return out;
}

static void open_in_dir(colo_atomic_file_t *af, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    colo_error_t err = {0};
    if (colo_atomic_open(af, path, &err) != 0) _exit(100);
    fputs("{\"half\": ", af->f);
    fflush(af->f);
}

/* Ends what open_in_dir began and commits it: 0 or the commit's error code. */
static int finish(colo_atomic_file_t *af)
{
    fputs("1}\n", af->f);
    colo_error_t err = {0};
    return colo_atomic_commit(af, &err);
}

/* Runs body in a child with stderr in err_path; returns its wait status. */
static int in_child(void (*body)(void))
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) _exit(101);
        body();
        _exit(0);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    return status;
}

static void killed_while_writing(void)
{
    colo_atomic_remove_on_signal();
    colo_atomic_file_t a, b;
    open_in_dir(&a, "results.json");
    open_in_dir(&b, "timeline.json");
    static char other[512]; /* written by someone else, as gnuplot writes a plot */
    snprintf(other, sizeof other, "%s/plot.svg.tmp", dir);
    colo_atomic_track(other);
    FILE *f = fopen(other, "w");
    if (!f || fclose(f) != 0) _exit(106);
    raise(SIGTERM);
}

Test(atomic_file, killed_while_writing_leaves_nothing, .init = make_dir, .fini = remove_dir)
{
    int status = in_child(killed_while_writing);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
    cr_expect_str_eq(listing(), "");
    cr_expect_str_eq(read_text(err_path),
                     "colosim: stopped by SIGTERM while writing; its unfinished outputs were "
                     "removed");
}

static void killed_after_one_commit(void)
{
    colo_atomic_remove_on_signal();
    colo_atomic_file_t a, b;
    open_in_dir(&a, "results.json");
    open_in_dir(&b, "results.csv");
    if (finish(&a) != 0) _exit(102);
    raise(SIGINT);
}

Test(atomic_file, a_committed_output_stays_whole, .init = make_dir, .fini = remove_dir)
{
    int status = in_child(killed_after_one_commit);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %#x", status);
    cr_expect_str_eq(listing(), "results.json");
    char path[512];
    snprintf(path, sizeof path, "%s/results.json", dir);
    cr_expect_str_eq(read_text(path), "{\"half\": 1}");
    cr_expect_str_eq(read_text(err_path),
                     "colosim: stopped by SIGINT while writing; its unfinished output was "
                     "removed");
}

/* A child forked by a writer inherits the list of its files but does not remove them. */
static void parent_of_killed_child(void)
{
    colo_atomic_remove_on_signal();
    colo_atomic_file_t a;
    open_in_dir(&a, "sweep.json");
    pid_t pid = fork();
    if (pid == 0) raise(SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGTERM) _exit(103);
    _exit(finish(&a) == 0 ? 0 : 104);
}

Test(atomic_file, a_forked_child_leaves_its_parents_files, .init = make_dir, .fini = remove_dir)
{
    int status = in_child(parent_of_killed_child);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    cr_expect_str_eq(listing(), "sweep.json");
    cr_expect_str_eq(read_text(err_path), "");
}

/* A signal ignored by whoever started the command (nohup) stays ignored. */
static void ignoring_sighup(void)
{
    signal(SIGHUP, SIG_IGN);
    colo_atomic_remove_on_signal();
    colo_atomic_file_t a;
    open_in_dir(&a, "results.json");
    raise(SIGHUP);
    _exit(finish(&a) == 0 ? 0 : 105);
}

Test(atomic_file, an_ignored_signal_stays_ignored, .init = make_dir, .fini = remove_dir)
{
    int status = in_child(ignoring_sighup);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
    cr_expect_str_eq(listing(), "results.json");
}
