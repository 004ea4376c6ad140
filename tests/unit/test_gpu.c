/* test_gpu.c: the GPU descriptions load, hold the documented facts, and bad files are refused. */
#include "gpu.h"
#include "gpu_catalog.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(gpu, .init = test_init);

Test(gpu, every_shipped_description_loads)
{
    static const char *const expected[] = {
        "a100-40gb",       "a100-80gb", "h100-pcie",    "h100-sxm",  "h200",
        "jetson-agx-thor", "orin-agx",  "rtx-6000-ada", "rtx-a6000", "v100-sxm2"};
    const size_t n_expected = sizeof expected / sizeof *expected;
    char **names;
    size_t n;
    cr_assert_eq(colo_gpu_names(&names, &n), 0);
    cr_assert_geq(n, n_expected);
    for (size_t i = 0; i < n_expected; i++) {
        int found = 0;
        for (size_t k = 0; k < n; k++)
            found |= strcmp(names[k], expected[i]) == 0;
        cr_expect(found, "%s missing from colo_gpu_names", expected[i]);
        colo_gpu_t *g = open_gpu(expected[i]);
        cr_expect_str_eq(g->name, expected[i], "the name key must match the file name");
        colo_gpu_free(g);
    }
    colo_gpu_names_free(names, n);
}

Test(gpu, hopper_facts_and_mig_table)
{
    colo_gpu_t *g = open_gpu("h100-sxm");
    cr_assert_eq(g->sm.count, 132);
    cr_assert_eq(g->l2.bytes, 52428800);
    cr_assert_eq(g->timeslice.default_ns, 1024000);
    cr_assert_eq(g->green.alignment, 8);
    cr_assert(g->mig.supported);
    cr_assert_eq(g->mig.n_profiles, 7);
    const colo_mig_profile_t *p3 = colo_gpu_mig_profile(g, "3g.40gb");
    cr_assert(p3);
    cr_assert_eq(p3->sms, 60, "H100 3g has 60 SMs, not 3/7 of 132");
    cr_assert_eq(p3->n_placements, 2);
    cr_assert_eq(p3->placements[0], 0);
    cr_assert_eq(p3->placements[1], 4);
    const colo_mig_profile_t *p1 = colo_gpu_mig_profile(g, "1g.10gb");
    cr_assert_eq(p1->sms * 7, 112, "7 x 1g leaves 20 of 132 SMs unused");
    cr_assert_eq(colo_gpu_mig_profile(g, "7g.80gb")->sms, 132);
    cr_assert_null(colo_gpu_mig_profile(g, "5g.50gb"));
    colo_gpu_free(g);
}

Test(gpu, ampere_mig_tops_out_at_98_sms)
{
    colo_gpu_t *g = open_gpu("a100-40gb");
    cr_assert_eq(g->sm.count, 108);
    cr_assert_eq(colo_gpu_mig_profile(g, "7g.40gb")->sms, 98);
    cr_assert_eq(colo_gpu_mig_profile(g, "1g.10gb")->memory_slices, 2);
    colo_gpu_free(g);
}

Test(gpu, no_mig_on_orin_and_v100)
{
    colo_gpu_t *o = open_gpu("orin-agx"), *v = open_gpu("v100-sxm2");
    cr_assert_not(o->mig.supported);
    cr_assert(o->integrated);
    cr_assert_eq(o->sm.max_threads, 1536);
    cr_assert_not(v->mig.supported);
    cr_assert_eq(v->sm.count, 80);
    colo_gpu_free(o);
    colo_gpu_free(v);
}

/* The workstation boards and Thor (issue 38): per-SM limits of their compute capabilities, no MIG
 * in their files (Thor has MIG, but its profile table was not sourced), Tegra/8.x Green Context
 * granularity of 2 SMs. */
Test(gpu, workstation_boards_and_thor)
{
    colo_gpu_t *a = open_gpu("rtx-a6000"), *d = open_gpu("rtx-6000-ada"),
               *t = open_gpu("jetson-agx-thor");
    cr_assert_eq(a->sm.count, 84);
    cr_assert_eq(a->sm.max_blocks, 16, "CC 8.6: 16 blocks per SM");
    cr_assert_eq(d->sm.count, 142);
    cr_assert_eq(d->sm.max_blocks, 24, "CC 8.9: 24 blocks per SM");
    cr_assert_eq(a->sm.max_threads, 1536);
    cr_assert_eq(d->sm.max_threads, 1536);
    cr_assert_str_eq(t->compute_capability, "11.0");
    cr_assert(t->integrated);
    cr_assert_eq(t->sm.count, 20);
    cr_assert_eq(t->sm.shared_bytes, 228 * 1024);
    cr_assert_not(a->mig.supported);
    cr_assert_not(d->mig.supported);
    cr_assert_not(t->mig.supported);
    cr_assert_eq(t->green.alignment, 2, "all Tegra SoC: multiples of 2");
    /* 84 x 1800 MHz x 128 lanes x 2 = 38.7 TFLOPS; 142 x 2505 MHz x 256 = 91.1 */
    cr_assert_float_eq(colo_gpu_sm_fp32_rate(a) * 84, 38707.2, 1e-6);
    cr_assert_float_eq(colo_gpu_sm_fp32_rate(d) * 142, 91061.76, 1e-6);
    colo_gpu_free(a);
    colo_gpu_free(d);
    colo_gpu_free(t);
}

Test(gpu, rates_follow_the_datasheet)
{
    colo_gpu_t *g = open_gpu("h100-sxm");
    /* 1980 MHz x 128 lanes x 2 = 506.88 FLOP/ns per SM; x 132 = 66.9 TFLOPS */
    cr_assert_float_eq(colo_gpu_sm_fp32_rate(g), 506.88, 1e-9);
    cr_assert_float_eq(colo_gpu_dram_rate(g), 3352.0 * 0.88, 1e-9);
    colo_gpu_free(g);
}

Test(gpu, a_path_works_as_a_name)
{
    colo_gpu_t *g = open_gpu(src_path("models/gpus/v100-sxm2.cfg"));
    cr_assert_str_eq(g->name, "v100-sxm2");
    colo_gpu_free(g);
}

Test(gpu, unknown_name_lists_the_known_ones)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_gpu_t *g;
    cr_assert_eq(colo_gpu_open("h900", NULL, NULL, &g, "s.cfg", 3, "gpu", &err), COLO_ENOENT);
    cr_assert_null(g);
    cr_assert_eq(err.line, 3);
    cr_assert(strstr(err.text, "unknown GPU 'h900'"));
    cr_assert(strstr(err.text, "h100-sxm"), "the message lists the known GPUs: %s", err.text);
}

static int load_gpu(const char *file, colo_error_t *err)
{
    colo_gpu_t *g = NULL;
    int rc = colo_gpu_load(file, &g, err);
    cr_expect_null(g, "nothing is returned on failure");
    colo_gpu_free(g);
    return rc;
}

static void check_bad_gpu(const char *dir, const char *stem)
{
    expect_golden_error(dir, stem, "cfg", load_gpu);
}

Test(gpu, bad_descriptions_give_the_expected_error)
{
    size_t n = for_each_file(src_path("tests/fixtures/gpus_bad"), "cfg", check_bad_gpu);
    cr_assert_geq(n, 6);
}

/* A device is told to be each GPU file's: by the file's own full name, memory and SMs, and by the
 * names CUDA reports for the real boards (issue 23: an A100 run became "unknown" and an H100
 * PCIe "h100-sxm"). Reported names and SM counts as the research notes cite them: nvidia-smi
 * and deviceQuery outputs in public issues (docs/calibration.md, "Which GPU file"). */
Test(gpu, every_gpu_file_is_guessed_from_its_device)
{
    char **names;
    size_t n;
    cr_assert_eq(colo_gpu_names(&names, &n), 0);
    cr_assert_gt(n, 5);
    for (size_t i = 0; i < n; i++) {
        colo_gpu_t *g;
        colo_error_t err;
        colo_error_clear(&err);
        cr_assert_eq(colo_gpu_open(names[i], NULL, "none", &g, "test", 0, NULL, &err), 0, "%s",
                     err.text);
        const char *got = colo_gpu_guess(g->full_name, g->memory.size_gib, g->sm.count);
        cr_expect(got && strcmp(got, g->name) == 0, "%s (%s, %g GiB, %d SMs) guessed as %s",
                  g->name, g->full_name, g->memory.size_gib, g->sm.count, got ? got : "none");
        colo_gpu_free(g);
    }
    colo_gpu_names_free(names, n);
    static const struct {
        const char *reported;
        double gib;
        int sms;
        const char *file;
    } boards[] = {
        {"NVIDIA A100-SXM4-40GB", 39.4, 108, "a100-40gb"},
        {"NVIDIA A100-SXM4-80GB", 79.2, 108, "a100-80gb"},
        {"NVIDIA H100 80GB HBM3", 79.1, 132, "h100-sxm"},
        {"NVIDIA H100 PCIe", 79.1, 114, "h100-pcie"},
        {"NVIDIA H200", 139.8, 132, "h200"},
        {"Tesla V100-SXM2-16GB", 15.8, 80, "v100-sxm2"},
        {"NVIDIA RTX A6000", 0, 84, "rtx-a6000"}, /* memory as reported not found: 0 */
        {"NVIDIA RTX 6000 Ada Generation", 47.99, 142, "rtx-6000-ada"}, /* nvidia-smi: 49,140 MiB */
        {"NVIDIA Thor", 0, 20, "jetson-agx-thor"},
        {"NVIDIA H100 NVL", 93.1, 132, NULL}, /* no file of its own */
        {"NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 0, 0, NULL},
        {"NVIDIA Thor", 0, 14, NULL}, /* a Thor module with fewer SMs than the T5000 */
    };
    for (size_t i = 0; i < sizeof boards / sizeof *boards; i++) {
        const char *got = colo_gpu_guess(boards[i].reported, boards[i].gib, boards[i].sms);
        if (!boards[i].file)
            cr_expect_null(got, "%s guessed as %s", boards[i].reported, got);
        else
            cr_expect(got && strcmp(got, boards[i].file) == 0, "%s guessed as %s",
                      boards[i].reported, got ? got : "none");
    }
}
