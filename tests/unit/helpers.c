/* helpers.c: shared set-up for the Criterion tests. */
#include "helpers.h"
#include "alloc.h"
#include "gpu_catalog.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void test_init(void)
{
    gsl_set_error_handler_off();
    json_set_alloc_funcs(colo_malloc, colo_free);
}

const char *src_path(const char *rel)
{
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, 4096, "%s/%s", COLO_TEST_SRC, rel);
    return b;
}

colo_gpu_t *open_gpu(const char *name)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *g = NULL;
    int rc = colo_gpu_open(name, NULL, "none", &g, "test", 0, NULL, &err);
    cr_assert_eq(rc, 0, "%s: %s", name, err.text);
    return g;
}

const char *read_text(const char *path)
{
    static char buf[8192];
    FILE *f = fopen(path, "r");
    cr_assert(f, "cannot open %s", path);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    return buf;
}

test_run_t run_scenario_tl(const char *path, const char *const *sets, size_t n, double a,
                           double b)
{
    test_run_t r = {0};
    colo_error_t err;
    colo_error_clear(&err);
    char msg[2048];
    int rc = colo_scenario_load(path, sets, n, &r.sc, &err);
    colo_error_format(&err, msg, sizeof msg);
    cr_assert_eq(rc, 0, "loading %s: %s", path, msg);
    cr_assert_eq(colo_sim_new(r.sc, &r.sim, &err), 0);
    char tl_path[] = "/tmp/colosim-timeline-XXXXXX";
    colo_timeline_t tl;
    if (b > a) {
        int fd = mkstemp(tl_path);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_eq(colo_timeline_open(&tl, tl_path, colo_time_from_ns(a * 1e9),
                                        colo_time_from_ns(b * 1e9), &err),
                     0);
        cr_assert_eq(colo_sim_set_timeline(r.sim, &tl), 0);
    }
    cr_assert_eq(colo_sim_run(r.sim, &err), 0);
    if (b > a) {
        cr_assert_eq(colo_timeline_close(&tl, true, &err), 0);
        json_error_t je;
        r.timeline = json_load_file(tl_path, 0, &je);
        cr_assert_not_null(r.timeline, "%s: the timeline is not JSON: line %d: %s", path, je.line,
                           je.text);
        unlink(tl_path);
    }
    r.results = colo_results_json(r.sim, sets, n);
    cr_assert(r.results);
    return r;
}

const char *scenario_load_error(const char *path, const char *const *sets, size_t n)
{
    static char msg[2048];
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc = NULL;
    cr_assert_lt(colo_scenario_load(path, sets, n, &sc, &err), 0, "%s loaded", path);
    cr_assert_null(sc);
    colo_error_format(&err, msg, sizeof msg);
    return msg;
}

test_run_t run_scenario(const char *path, const char *const *sets, size_t n)
{
    return run_scenario_tl(path, sets, n, 0, 0);
}

void run_free(test_run_t *r)
{
    json_decref(r->results);
    json_decref(r->timeline);
    colo_sim_free(r->sim);
    colo_scenario_free(r->sc);
    memset(r, 0, sizeof *r);
}

json_t *result_tenant(const test_run_t *r, size_t i)
{
    json_t *t = json_array_get(json_object_get(r->results, "tenants"), i);
    cr_assert(t, "no tenant %zu in results", i);
    return t;
}

double result_num(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    cr_assert(json_is_number(v), "key %s is not a number", key);
    return json_number_value(v);
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t for_each_file(const char *dir, const char *ext,
                     void (*fn)(const char *dir, const char *stem))
{
    DIR *d = opendir(dir);
    cr_assert(d, "cannot open directory %s", dir);
    char *names[512];
    size_t n = 0, elen = strlen(ext);
    struct dirent *e;
    while ((e = readdir(d)) && n < 512) {
        size_t len = strlen(e->d_name);
        if (len > elen + 1 && e->d_name[len - elen - 1] == '.' &&
            strcmp(e->d_name + len - elen, ext) == 0) {
            names[n] = strdup(e->d_name);
            names[n][len - elen - 1] = '\0';
            n++;
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp);
    for (size_t i = 0; i < n; i++) {
        fn(dir, names[i]);
        free(names[i]);
    }
    return n;
}

void expect_golden_error(const char *dir, const char *stem, const char *ext, golden_loader load)
{
    char file[256], exp[4096], got[2048];
    snprintf(file, sizeof file, "%s.%s", stem, ext);
    snprintf(exp, sizeof exp, "%s/%s.err", dir, stem);
    cr_assert_eq(chdir(dir), 0);
    colo_error_t err;
    colo_error_clear(&err);
    cr_expect_lt(load(file, &err), 0, "%s loaded but should not", file);
    colo_error_format(&err, got, sizeof got);
    cr_expect_str_eq(got, read_text(exp), "%s", file);
}

colo_llm_profile_t *load_llm_profile(const char *rel)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_llm_profile_t *p = NULL;
    cr_assert_eq(colo_llm_profile_load(src_path(rel), &p, &err), 0, "%s", err.text);
    return p;
}
