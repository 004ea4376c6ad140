/* test_validate.c: the validation suite: case files are read strictly, cases compute their
 * ratio and error, --check catches a case that got worse, and --markdown keeps the page. */
#include "helpers.h"
#include "validate.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(validate, .init = test_init);

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

static void setup_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/colosim-val-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void clean(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -r %s", dir);
    cr_assert_eq(system(cmd), 0);
}

/* A source with cases whose traces are the committed ones. */
static void put_suite(const char *cases)
{
    char text[8192];
    snprintf(text, sizeof text,
             "source = { name = \"T\"; cite = \"test\"; };\n"
             "cases = (\n%s\n);\n", cases);
    put("t.cfg", text);
}

static const char *trace(const char *name)
{
    return src_path(name);
}

static colo_vsuite_t *load_ok(void)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_vsuite_t *s = NULL;
    cr_assert_eq(colo_vsuite_load(dir, &s, &err), 0, "%s", err.text);
    cr_assert_eq(colo_vsuite_run(s, &err), 0, "%s", err.text);
    return s;
}

static void expect_load_error(const char *want)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_vsuite_t *s = NULL;
    int rc = colo_vsuite_load(dir, &s, &err);
    if (!rc) rc = colo_vsuite_run(s, &err);
    colo_vsuite_free(s);
    cr_assert_neq(rc, 0, "accepted (%s)", want);
    char got[1024];
    colo_error_format(&err, got, sizeof got);
    cr_expect(strstr(got, want), "got '%s', expected '%s'", got, want);
}

Test(validate, a_case_divides_two_runs_and_reports_its_error)
{
    setup_dir();
    char cases[2048];
    /* the V100 trace against itself at twice the batch is what colosim trace --batch says */
    snprintf(cases, sizeof cases,
             "{ id = \"a.same\"; category = \"alone\"; what = \"w\"; published = 2.0; from = \"f\";\n"
             "  trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\";\n"
             "  over = { }; },\n"
             "{ id = \"a.batch\"; category = \"batch\"; what = \"w\"; published = 1.0; from = \"f\";\n"
             "  trace = \"%s\"; gpu = \"v100-sxm2\"; batch = 8; metric = \"request_ms\";\n"
             "  over = { batch = 0; }; },\n"
             "{ id = \"a.scenario\"; category = \"mps\"; what = \"w\"; published = 1.0; from = \"f\";\n"
             "  scenario = \"%s\"; set = [\"tenants.a.active_thread_percentage=10\"];\n"
             "  metric = \"tenants.a.latency_ms.mean\";\n"
             "  over = { set = [\"tenants.a.active_thread_percentage=100\"]; }; }",
             trace("traces/resnet50_b4_v100.json"), trace("traces/resnet50_b4_v100.json"),
             src_path("validation/scenarios/mps.cfg"));
    put_suite(cases);
    colo_vsuite_t *s = load_ok();
    cr_assert_eq(s->n_cases, 3);
    cr_expect_float_eq(s->cases[0].predicted, 1.0, 1e-12, "a run over itself");
    cr_expect_float_eq(s->cases[0].error, -0.5, 1e-12, "(1 - 2) / 2");
    cr_expect_gt(s->cases[1].predicted, 1.0, "batch 8 takes longer than batch 4");
    cr_expect_lt(s->cases[1].predicted, 2.0, "and less than twice as long");
    cr_expect_gt(s->cases[2].predicted, 1.5, "10 %% of the SMs is slower than all of them");
    cr_expect_eq(s->runs, 2, "two distinct simulations");
    size_t n;
    cr_expect_gt(fabs(s->cases[2].error), 0.5);
    cr_expect_lt(fabs(s->cases[1].error), 0.5);
    cr_expect_float_eq(colo_vsuite_median(s, false, &n), 0.5, 1e-12, "the middle of three");
    cr_expect_eq(n, 3);
    colo_vsuite_free(s);
    clean();
}

Test(validate, case_files_are_read_strictly)
{
    setup_dir();
    const char *t = trace("traces/resnet50_b4_v100.json");
    char c[1024];
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"nowhere\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; }", t);
    put_suite(c);
    expect_load_error("t.cfg:3: cases.[0].category: 'nowhere': one of alone");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; "
                          "colour = 1; }", t);
    put_suite(c);
    expect_load_error("cases.[0].colour: unknown key");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = -1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; }", t);
    put_suite(c);
    expect_load_error("cases.[0].published");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; metric = \"request_ms\"; }");
    put_suite(c);
    expect_load_error("needs scenario = \"FILE\"");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"p99\"; }", t);
    put_suite(c);
    expect_load_error("'p99': a trace run gives kernels_ms, request_ms or samples_per_s");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; },\n"
                          "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; }",
             t, t);
    put_suite(c);
    expect_load_error("'x' is already the id of a case");
    /* an override the run refuses names the case, its line and entry, and what went wrong */
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"mps\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; scenario = \"%s\"; set = [\"tenants.a.flavour=1\"]; "
                          "metric = \"tenants.a.latency_ms.mean\"; }",
             src_path("validation/scenarios/mps.cfg"));
    put_suite(c);
    expect_load_error("t.cfg:3: set[0] (case x): tenants.[0].flavour: unknown key");
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"mps\"; what = \"w\"; published = 1.0; "
                          "from = \"f\"; scenario = \"%s\"; metric = \"tenants.b.latency_ms.mean\"; }",
             src_path("validation/scenarios/mps.cfg"));
    put_suite(c);
    expect_load_error("metric (case x): 'tenants.b.latency_ms.mean': no element named 'b' (here: a)");
    /* the metric's own line, and what a group holds */
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"mps\"; what = \"w\"; published = 1.0;\n"
                          "from = \"f\"; scenario = \"%s\";\n metric = \"tenants.a.latency_ms\"; }",
             src_path("validation/scenarios/mps.cfg"));
    put_suite(c);
    expect_load_error("t.cfg:5: metric (case x): 'tenants.a.latency_ms': names a group, not a "
                      "number: add one of its parts (here: mean");
    clean();
}

static void write_record(double error, const char *id)
{
    char text[512];
    snprintf(text, sizeof text, "{\"colosim_validation\": 1, \"cases\": [{\"id\": \"%s\", \"error\": %g}]}",
             id, error);
    put("recorded.json", text);
}

Test(validate, check_fails_a_case_that_got_worse_or_is_not_recorded)
{
    setup_dir();
    char c[1024];
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 2.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; "
                          "over = { }; }",
             trace("traces/resnet50_b4_v100.json"));
    put_suite(c); /* predicted 1, error -50 % */
    colo_vsuite_t *s = load_ok();
    char rec[256];
    snprintf(rec, sizeof rec, "%s/recorded.json", dir);
    colo_error_t err;
    FILE *devnull = fopen("/dev/null", "w");
    write_record(-0.5, "x");
    cr_expect_eq(colo_vsuite_check(s, rec, 0.01, devnull, &err), 0, "as recorded");
    write_record(-0.495, "x");
    cr_expect_eq(colo_vsuite_check(s, rec, 0.01, devnull, &err), 0, "within one point");
    write_record(-0.48, "x");
    cr_expect_eq(colo_vsuite_check(s, rec, 0.01, devnull, &err), 1, "two points worse");
    write_record(-0.5, "y");
    cr_expect_eq(colo_vsuite_check(s, rec, 0.01, devnull, &err), 2,
                 "x is not recorded and y is gone");
    put("recorded.json", "{\"cases\": 3}");
    cr_expect_lt(colo_vsuite_check(s, rec, 0.01, devnull, &err), 0, "not a record");
    fclose(devnull);
    colo_vsuite_free(s);
    /* above 50 % without a cause fails the check */
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"w\"; published = 3.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; "
                          "over = { }; }",
             trace("traces/resnet50_b4_v100.json"));
    put_suite(c); /* predicted 1, error -67 % */
    s = load_ok();
    write_record(-0.6667, "x");
    devnull = fopen("/dev/null", "w");
    cr_expect_eq(colo_vsuite_check(s, rec, 0.01, devnull, &err), 1, "no cause stated");
    fclose(devnull);
    colo_vsuite_free(s);
    clean();
}

Test(validate, markdown_replaces_only_the_table_between_its_marks)
{
    setup_dir();
    char c[1024];
    snprintf(c, sizeof c, "{ id = \"x\"; category = \"alone\"; what = \"a | b\"; published = 2.0; "
                          "from = \"f\"; trace = \"%s\"; gpu = \"v100-sxm2\"; metric = \"request_ms\"; "
                          "over = { }; }",
             trace("traces/resnet50_b4_v100.json"));
    put_suite(c);
    colo_vsuite_t *s = load_ok();
    put("page.md", "# Before\n\n<!-- colosim validate: begin -->\nold\n<!-- colosim validate: end -->\n"
                   "\nAfter.\n");
    char md[256];
    snprintf(md, sizeof md, "%s/page.md", dir);
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_vsuite_markdown(s, md, &err), 0, "%s", err.text);
    const char *text = read_text(md);
    cr_expect(strncmp(text, "# Before\n", 9) == 0);
    cr_expect(strstr(text, "\nAfter."), "the rest stays");
    cr_expect_null(strstr(text, "old"));
    cr_expect(strstr(text, "| `x` | alone | T | a \\| b | 2 | 1 | -50.0 % |"), "%s", text);
    cr_expect(strstr(text, "Median absolute error over the 1 validation cases: 50.0 %"));
    put("page.md", "# No marks\n");
    cr_expect_neq(colo_vsuite_markdown(s, md, &err), 0);
    cr_expect(strstr(read_text(md), "# No marks"), "a page without marks is left alone");
    colo_vsuite_free(s);
    clean();
}
