/* test_study.c: study files, sweeps (identical on 1 or many cores, resumed after an
 * interruption) and the SLO capacity search (a capacity known by hand, monotone in the SLO). */
#include "helpers.h"
#include "study.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TestSuite(study, .init = test_init);

static colo_study_t *load(const char *rel)
{
    colo_study_t *s;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_study_load(src_path(rel), &s, &err), 0, "%s: %s", rel, err.text);
    return s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *b = malloc((size_t)n + 1);
    cr_assert_eq(fread(b, 1, (size_t)n, f), (size_t)n);
    b[n] = '\0';
    fclose(f);
    return b;
}

static const char *tmpdir(const char *name)
{
    static char buf[4][512];
    static int k;
    char *b = buf[k++ % 4];
    snprintf(b, 512, "/tmp/colosim-test-%d-%s", (int)getpid(), name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", b);
    cr_assert_eq(system(cmd), 0);
    return b;
}

Test(study, grid_points_in_row_major_order)
{
    colo_study_t *s = load("tests/fixtures/study_small.cfg");
    cr_assert_eq(colo_study_n_points(s), 6);
    cr_assert_str_eq(s->axes[1].values[1], "0.04");
    char **sets;
    size_t n;
    cr_assert_eq(colo_study_point(s, 4, &sets, &n), 0);
    cr_assert_eq(n, 4);
    cr_assert_str_eq(sets[0], "duration_s=0.5");
    cr_assert_str_eq(sets[2], "sharing.mode=mps");
    cr_assert_str_eq(sets[3], "load_scale=0.04");
    colo_study_point_free(sets, n);
    cr_assert(strstr(s->out_dir, "tests/fixtures/study_small.out"), "%s", s->out_dir);
    cr_assert_str_eq(s->plot.by, "sharing.mode");
    colo_study_free(s);
}

Test(study, bad_studies_name_file_line_and_key)
{
    static const struct {
        const char *text, *key, *what;
        int line;
    } cases[] = {
        {"scenario = \"x.cfg\";\ngrid = ( { key = \"seed\"; } );\n", "grid.[0]", "values", 2},
        {"scenario = \"x.cfg\";\ngrid = ( { key = \"seed\"; values = [1]; bogus = 2; } );\n",
         "grid.[0].bogus", "unknown key", 2},
        {"scenario = \"x.cfg\";\nset = [ \"duration_s\" ];\n", "set.[0]", "key=value", 2},
        {"scenario = \"x.cfg\";\ngrid = ( { key = \"load_scale\"; values = [1.0]; } );\n"
         "search = { key = \"load_scale\"; };\n",
         "search.key", "also an axis", 3},
        {"scenario = \"x.cfg\";\nsearch = { lo = 2.0; hi = 1.0; };\n", "search.hi", "above lo", 2},
        /* the midpoint of two neighbouring doubles is one of them: it would bisect forever */
        {"scenario = \"x.cfg\";\nsearch = { lo = 1.0; hi = 2.0;\n tolerance = 1e-17; };\n",
         "search.tolerance", "what a double can tell apart", 3},
        {"grid = ( );\n", "scenario", "missing", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = tmpdir("bad.cfg");
        FILE *f = fopen(path, "w");
        fputs(cases[i].text, f);
        fclose(f);
        colo_study_t *s = NULL;
        colo_error_t err;
        colo_error_clear(&err);
        cr_expect_lt(colo_study_load(path, &s, &err), 0, "case %zu loaded", i);
        cr_expect_str_eq(err.key, cases[i].key, "case %zu: %s", i, err.text);
        cr_expect(strstr(err.text, cases[i].what), "case %zu: %s", i, err.text);
        if (cases[i].line) cr_expect_eq(err.line, cases[i].line, "case %zu", i);
        cr_expect_str_eq(err.source, path);
        remove(path);
    }
}

/* The requirement: the same result set on 1 core and on several. */
Test(study, sweep_is_identical_on_one_or_several_cores, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_small.cfg");
    const char *a = tmpdir("sweep1"), *b = tmpdir("sweep3");
    colo_error_t err;
    colo_error_clear(&err);
    colo_sweep_opts_t o1 = {.jobs = 1, .quiet = true, .out_dir = a};
    colo_sweep_opts_t o3 = {.jobs = 3, .quiet = true, .out_dir = b};
    cr_assert_eq(colo_sweep_run(s, &o1, &err), 0, "%s", err.text);
    cr_assert_eq(colo_sweep_run(s, &o3, &err), 0, "%s", err.text);
    char pa[600], pb[600];
    const char *files[] = {"sweep.json", "sweep.csv"};
    for (int k = 0; k < 2; k++) {
        snprintf(pa, sizeof pa, "%s/%s", a, files[k]);
        snprintf(pb, sizeof pb, "%s/%s", b, files[k]);
        char *x = slurp(pa), *y = slurp(pb);
        cr_assert_str_eq(x, y, "%s differs", files[k]);
        free(x);
        free(y);
    }
    /* 6 points x 2 tenants + header, and the load axis shows in the throughput */
    snprintf(pa, sizeof pa, "%s/sweep.csv", a);
    char *csv = slurp(pa);
    size_t lines = 0;
    for (char *c = csv; *c; c++)
        lines += *c == '\n';
    cr_assert_eq(lines, 13);
    cr_assert(strncmp(csv, "point,sharing.mode,load_scale,tenant,", 37) == 0, "%.60s", csv);
    free(csv);
    colo_study_free(s);
}

/* A point whose file is gone is run again; finished ones are not touched. */
Test(study, sweep_resumes_where_it_stopped, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_small.cfg");
    const char *d = tmpdir("resume");
    colo_error_t err;
    colo_error_clear(&err);
    colo_sweep_opts_t o = {.jobs = 2, .quiet = true, .out_dir = d};
    cr_assert_eq(colo_sweep_run(s, &o, &err), 0, "%s", err.text);
    char p0[600], p3[600], all[600];
    snprintf(p0, sizeof p0, "%s/points/000000.json", d);
    snprintf(p3, sizeof p3, "%s/points/000003.json", d);
    snprintf(all, sizeof all, "%s/sweep.json", d);
    char *before = slurp(all);
    struct stat s0;
    cr_assert_eq(stat(p0, &s0), 0);
    cr_assert_eq(remove(p3), 0);
    /* a stale point (other overrides) is redone too */
    sleep(1);
    cr_assert_eq(colo_sweep_run(s, &o, &err), 0, "%s", err.text);
    struct stat s0b, s3;
    cr_assert_eq(stat(p0, &s0b), 0);
    cr_assert_eq(stat(p3, &s3), 0, "point 3 was not run again");
    cr_assert_eq(s0.st_mtime, s0b.st_mtime, "point 0 was run again");
    cr_assert_eq(s0.st_ino, s0b.st_ino, "point 0 was rewritten");
    char *after = slurp(all);
    cr_assert_str_eq(before, after);
    free(before);
    free(after);
    colo_study_free(s);
}

/* Constant arrivals at 100/s x load_scale: the SLO holds while a request ends before the next
 * arrives, so the capacity is 1 / (100/s x the tenant's time alone). A looser SLO lets a
 * backlog build first, so capacity never shrinks as the SLO grows. */
Test(study, search_finds_the_capacity_by_hand_and_is_monotone_in_the_slo, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_search_one.cfg");
    s->search.replications = 3; /* and each replication's own capacity (seeds 1, 2, 3) */
    test_run_t r = run_scenario(src_path("tests/fixtures/search_one.cfg"), NULL, 0);
    double alone_s = COLO_TO_S(r.sim->t[0].isolated);
    run_free(&r);
    double expected = 1.0 / (100.0 * alone_s);
    double cap[3];
    for (size_t i = 0; i < 3; i++) {
        char **sets;
        size_t n;
        cr_assert_eq(colo_study_point(s, i, &sets, &n), 0);
        bool lo_fails, hi_passes;
        colo_error_t err;
        colo_error_clear(&err);
        double reps[16] = {0};
        cr_assert_leq(s->search.replications, 16);
        cr_assert_eq(
            colo_search_point(s, sets, n, &cap[i], &lo_fails, &hi_passes, NULL, reps, NULL, &err),
            0, "%s", err.text);
        cr_assert(!lo_fails && !hi_passes, "point %zu not bracketed", i);
        /* constant arrivals: every seed sees the same run, so each replication's own bisection
         * finds the same capacity, within the tolerance */
        for (int k = 0; k < s->search.replications; k++)
            cr_expect(fabs(reps[k] - cap[i]) <= s->search.tolerance * cap[i] * 1.0001,
                      "point %zu, replication %d: %g against %g", i, k, reps[k], cap[i]);
        colo_study_point_free(sets, n);
    }
    for (size_t i = 0; i < 2; i++)
        cr_expect_float_eq(cap[i], expected, 0.005 * expected, "SLO point %zu: %g vs %g", i, cap[i],
                           expected);
    cr_expect_leq(cap[0], cap[1]);
    cr_expect_leq(cap[1], cap[2]);
    cr_expect_gt(cap[2], expected, "a 50 ms SLO tolerates a backlog");
    colo_study_free(s);
}

/* Issue 22: a replication without arrivals for a tenant has no attainment (null); it was left
 * out of the sum but counted in the divisor, so three perfect replications of six averaged 0.5
 * and the search "failed even at lo". Now the mean is over the replications that have one. */
Test(study, replications_without_arrivals_do_not_fail_a_search, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_search_sparse.cfg");
    char **sets;
    size_t n;
    cr_assert_eq(colo_study_point(s, 0, &sets, &n), 0);
    bool lo_fails, hi_passes;
    double cap;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_search_point(s, sets, n, &cap, &lo_fails, &hi_passes, NULL, NULL, NULL, &err),
                 0, "%s", err.text);
    cr_assert(!lo_fails, "every request that arrives meets the SLO");
    cr_assert(hi_passes);
    colo_study_point_free(sets, n);
    colo_study_free(s);
}

/* The study file's own mistakes (issue 40): refused before any point runs, at the study's line,
 * and not reported per point as "--set:N" (nothing was given with --set) with exit 0. */
Test(study, mistakes_in_the_study_itself_are_refused_at_its_line, .timeout = 120)
{
    static const struct {
        const char *body; /* after scenario = "..."; on line 1 */
        bool search, at_load;
        int line;
        const char *key, *what;
    } cases[] = {
        {"set = [ \"duration_s=0.5\",\n \"warmup_sx=0.1\" ];\ngrid = ( { key = \"seed\"; values "
         "= [1]; } );\n",
         false, false, 3, "warmup_sx", "set \"warmup_sx=0.1\": unknown key"},
        {"set = [ \"duration_s=0.5\" ];\nsearch = { key = \"seed\"; lo = 1.0; hi = 4.0; };\n", true,
         false, 3, "seed", "search \"seed=1.0\": must be an integer"},
        {"set = [ \"duration_s=0.5\" ];\nsearch = { key = \"gpu\"; lo = 1.0; hi = 4.0; };\n", true,
         false, 3, "gpu", "unknown GPU"},
        {"grid = ( { key = \"seed\"; values = [1]; },\n { key = \"seed\"; values = [2]; } );\n",
         false, true, 3, "grid.[1].key", "is also an axis (line 2)"},
        {"set = [ \"seed=3\" ];\ngrid = ( { key = \"seed\"; values = [1]; } );\n", false, true, 3,
         "grid.[0].key", "is also in set (line 2)"},
        {"list = { keys = [ \"seed\", \"seed\" ]; points = ( (1, 2) ); };\n", false, true, 2,
         "list.keys.[1]", "is also an axis"},
    };
    const char *scn = src_path("tests/fixtures/two_tenants.cfg");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *path = tmpdir("mistake.cfg"), *out = tmpdir("mistake.out");
        FILE *f = fopen(path, "w");
        fprintf(f, "scenario = \"%s\";\n%s", scn, cases[i].body);
        fclose(f);
        colo_study_t *s = NULL;
        colo_error_t err;
        colo_error_clear(&err);
        int rc = colo_study_load(path, &s, &err);
        if (!cases[i].at_load) {
            cr_assert_eq(rc, 0, "case %zu: %s", i, err.text);
            colo_sweep_opts_t o = {.jobs = 1, .quiet = true, .out_dir = out};
            rc = cases[i].search ? colo_search_run(s, &o, &err) : colo_sweep_run(s, &o, &err);
            struct stat st;
            cr_expect_neq(stat(out, &st), 0, "case %zu: nothing is written", i);
        }
        cr_expect_lt(rc, 0, "case %zu was not refused", i);
        cr_expect_str_eq(err.source, path, "case %zu: %s", i, err.text);
        cr_expect_eq(err.line, cases[i].line, "case %zu: %s", i, err.text);
        cr_expect_str_eq(err.key, cases[i].key, "case %zu: %s", i, err.text);
        cr_expect(strstr(err.text, cases[i].what), "case %zu: %s", i, err.text);
        colo_study_free(s);
        remove(path);
    }
}

/* A study naming itself as its scenario; and a point that cannot run beside one that can: run,
 * with its error blamed on the study's line. */
Test(study, a_study_is_not_its_own_scenario_and_one_bad_value_fails_one_point, .timeout = 120)
{
    const char *path = tmpdir("self.cfg"), *out = tmpdir("self.out");
    FILE *f = fopen(path, "w");
    fprintf(f, "scenario = \"%s\";\ngrid = ( { key = \"seed\"; values = [1]; } );\n",
            strrchr(path, '/') + 1);
    fclose(f);
    colo_study_t *s = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_study_load(path, &s, &err), 0, "%s", err.text);
    colo_sweep_opts_t o = {.jobs = 1, .quiet = true, .out_dir = out};
    cr_expect_lt(colo_sweep_run(s, &o, &err), 0);
    cr_expect_eq(err.line, 1);
    cr_expect_str_eq(err.key, "scenario");
    cr_expect(strstr(err.text, "names this study itself"), "%s", err.text);
    colo_study_free(s);

    f = fopen(path, "w");
    fprintf(f,
            "scenario = \"%s\";\nset = [ \"duration_s=0.2\", \"warmup_s=0.05\" ];\n"
            "grid = ( { key = \"gpu\";\n values = [ \"h100-sxm\", \"no-such-gpu\" ]; } );\n",
            src_path("tests/fixtures/two_tenants.cfg"));
    fclose(f);
    colo_error_clear(&err);
    cr_assert_eq(colo_study_load(path, &s, &err), 0, "%s", err.text);
    cr_assert_eq(colo_sweep_run(s, &o, &err), 0, "%s", err.text);
    char p[600];
    snprintf(p, sizeof p, "%s/sweep.json", out);
    char *doc = slurp(p);
    char want[700];
    snprintf(want, sizeof want, "%s:3: gpu: grid \\\"gpu=no-such-gpu\\\": unknown GPU", path);
    cr_expect(strstr(doc, want), "%s not in %.2000s", want, doc);
    cr_expect(!strstr(doc, "--set"), "%.2000s", doc);
    free(doc);
    colo_study_free(s);
    remove(path);
}

/* "How many fit" (issue 41): a search over a count bisects to the largest integer that meets
 * the goal; a count the GPU cannot hold (more memory than it has) fails rather than ending the
 * search; the capacity is also given in requests/s. */
Test(study, a_search_over_copies_finds_the_largest_count_that_fits, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_copies.cfg");
    cr_assert(s->search.integer, "lo = 1 and hi = 20 written as integers: a count");
    const char *out = tmpdir("copies.out");
    colo_sweep_opts_t o = {.jobs = 1, .quiet = true, .out_dir = out};
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_search_run(s, &o, &err), 0, "%s", err.text);
    char p[600];
    snprintf(p, sizeof p, "%s/search.json", out);
    json_t *doc = json_load_file(p, 0, NULL);
    cr_assert_not_null(doc);
    json_t *pt = json_array_get(json_object_get(doc, "points"), 0);
    cr_assert_null(json_object_get(pt, "error"), "%s", json_dumps(pt, 0));
    cr_expect_eq(json_number_value(json_object_get(pt, "capacity")), 8.0);
    cr_expect_eq(json_number_value(json_object_get(pt, "capacity_rps")), 800.0);
    cr_expect_str_eq(json_string_value(json_object_get(pt, "bracket")), "found");
    json_decref(doc);
    colo_study_free(s);
}

/* One rule for the headline and the replications (issue 41): the headline is where the
 * attainment pooled over the replications meets the goal, each replication's own capacity
 * where its own does, so the headline lies among them; every value tried is recorded with its
 * requests and Wilson bounds. */
Test(study, the_headline_capacity_lies_among_the_replications_own, .timeout = 120)
{
    colo_study_t *s = load("tests/fixtures/study_llm_agree.cfg");
    char **sets;
    size_t n;
    cr_assert_eq(colo_study_point(s, 0, &sets, &n), 0);
    double cap, reps[2];
    bool lo_fails, hi_passes;
    json_t *probes = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(
        colo_search_point(s, sets, n, &cap, &lo_fails, &hi_passes, NULL, reps, &probes, &err), 0,
        "%s", err.text);
    cr_assert(!lo_fails && !hi_passes);
    cr_expect_geq(cap, fmin(reps[0], reps[1]) * (1 - 1e-9), "headline %g, replications %g and %g",
                  cap, reps[0], reps[1]);
    cr_expect_leq(cap, fmax(reps[0], reps[1]) * (1 + 1e-9), "headline %g, replications %g and %g",
                  cap, reps[0], reps[1]);
    cr_assert_gt(json_array_size(probes), 3);
    size_t i, lengthened = 0;
    json_t *p;
    json_array_foreach(probes, i, p)
    {
        double a = json_number_value(json_object_get(p, "attainment"));
        double lo = json_number_value(json_object_get(p, "lower"));
        double hi = json_number_value(json_object_get(p, "upper"));
        cr_expect(lo <= a + 1e-12 && a <= hi + 1e-12, "probe %zu: %g not in [%g, %g]", i, a, lo,
                  hi);
        /* lengthened where undecided: more seeds until decided or max_replications spent */
        json_int_t runs = json_integer_value(json_object_get(p, "runs"));
        bool undecided = strstr(json_string_value(json_object_get(p, "verdict")), "undecided");
        cr_expect(runs >= 2 && runs <= s->search.max_replications, "probe %zu: %lld runs", i,
                  (long long)runs);
        cr_expect(!undecided || runs == s->search.max_replications,
                  "probe %zu undecided after %lld of %d runs", i, (long long)runs,
                  s->search.max_replications);
        lengthened += runs > 2;
    }
    cr_expect_eq(s->search.max_replications, 8, "4 x replications unless given");
    cr_expect_gt(lengthened, 0,
                 "no value was lengthened: the trap case has values 2 runs cannot "
                 "decide");
    json_decref(probes);
    colo_study_point_free(sets, n);
    colo_study_free(s);
}
