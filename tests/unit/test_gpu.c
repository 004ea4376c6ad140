/* test_gpu.c: the GPU descriptions load, hold the documented facts, and bad files are refused. */
#include "gpu.h"
#include "gpu_catalog.h"
#include "helpers.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(gpu, .init = test_init);

Test(gpu, every_shipped_description_loads)
{
    static const char *const expected[] = {"a100-40gb",
                                           "a100-80gb",
                                           "a100-80gb-pcie",
                                           "a100-pcie-40gb",
                                           "h100-pcie",
                                           "h100-sxm",
                                           "h200",
                                           "jetson-agx-thor",
                                           "l4",
                                           "orin-agx",
                                           "rtx-6000-ada",
                                           "rtx-a6000",
                                           "tesla-p100-pcie",
                                           "tesla-p4",
                                           "tesla-t4",
                                           "v100-pcie-32gb",
                                           "v100-sxm2"};
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
        /* NeuSight's device names (its device_configs "Device") and nvidia-smi's */
        {"Tesla T4", 15.0, 40, "tesla-t4"},
        {"Tesla P4", 8.0, 20, "tesla-p4"},
        {"Tesla P40", 24.0, 30, NULL},
        {"Tesla P100-PCIE-16GB", 16.0, 56, "tesla-p100-pcie"},
        {"Tesla P100-PCIE-12GB", 12.0, 56, NULL}, /* 3 HBM2 stacks, 549 GB/s */
        {"Tesla V100-PCIE-32GB", 32.0, 80, "v100-pcie-32gb"},
        {"Tesla V100S-PCIE-32GB", 32.0, 80, NULL},
        {"NVIDIA A100-PCIE-40GB", 39.4, 108, "a100-pcie-40gb"}, /* 40339 MiB */
        {"NVIDIA A100 80GB PCIe", 80.0, 108, "a100-80gb-pcie"}, /* 81920 MiB */
        {"NVIDIA L4", 22.0, 58, "l4"},
        {"NVIDIA L40S", 44.4, 142, NULL},
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

/* The seven PCIe boards (NeuSight's training GPUs and their successors): each file loads, and the
 * peaks it derives are the datasheet's to 1 %: FP32 as colo_gpu_math_rate x SMs, DRAM as
 * colo_gpu_dram_rate / achievable_fraction, and the FP16 rate (tensor cores, or the P100's half2
 * CUDA cores). Datasheet figures as each file's header cites them. */
static void expect_near(double got, double want, double tol, const char *what, const char *gpu)
{
    cr_expect(got > want * (1 - tol) && got < want * (1 + tol), "%s %s: %.4g, datasheet %.4g", gpu,
              what, got, want);
}

Test(gpu, pcie_boards_match_their_datasheets)
{
    static const struct {
        const char *name, *cc;
        int sms;
        double fp32_tflops, fp16_tflops, gbps, tol; /* fp16 0: runs as FP32 */
    } boards[] = {
        {"tesla-t4", "7.5", 40, 8.1, 65.0, 320.0, 0.01},
        /* NVIDIA rounds the P4's 2560 x 2 x 1.063 GHz = 5.44 TFLOPS up to 5.5 (its 21.8 INT8 TOPS,
         * checked below, is the same clock's) */
        {"tesla-p4", "6.1", 20, 5.5, 0, 192.0, 0.011},
        {"tesla-p100-pcie", "6.0", 56, 9.3, 18.7, 732.0, 0.01},
        {"v100-pcie-32gb", "7.0", 80, 14.0, 112.0, 900.0, 0.01},
        {"a100-pcie-40gb", "8.0", 108, 19.5, 312.0, 1555.0, 0.01},
        {"a100-80gb-pcie", "8.0", 108, 19.5, 312.0, 1935.0, 0.01},
        {"l4", "8.9", 58, 30.3, 121.0, 300.0, 0.01},
    };
    for (size_t i = 0; i < sizeof boards / sizeof *boards; i++) {
        colo_gpu_t *g = open_gpu(boards[i].name);
        cr_expect_str_eq(g->compute_capability, boards[i].cc, "%s", boards[i].name);
        cr_expect_eq(g->sm.count, boards[i].sms, "%s", boards[i].name);
        expect_near(colo_gpu_math_rate(g, COLO_MATH_FP32) * g->sm.count / 1e3,
                    boards[i].fp32_tflops, boards[i].tol, "FP32 TFLOPS", boards[i].name);
        expect_near(colo_gpu_dram_rate(g) / g->memory.achievable_fraction, boards[i].gbps, 0.01,
                    "DRAM GB/s", boards[i].name);
        if (boards[i].fp16_tflops > 0)
            expect_near(colo_gpu_math_rate(g, COLO_MATH_FP16) * g->sm.count / 1e3,
                        boards[i].fp16_tflops, 0.01, "FP16 TFLOPS", boards[i].name);
        else
            cr_expect_eq(colo_gpu_math_runs_as(g, COLO_MATH_FP16), COLO_MATH_FP32, "%s",
                         boards[i].name);
        cr_expect_leq(g->memory.achievable_fraction, 1.0);
        cr_expect_eq(g->mig.supported, strstr(boards[i].name, "a100") != NULL, "%s: MIG",
                     boards[i].name);
        cr_expect_eq(g->mps.volta, boards[i].cc[0] >= '7', "%s: Volta MPS from CC 7.0",
                     boards[i].name);
        cr_expect(g->green.supported, "%s: Green Contexts (CUDA 12.4 driver API: CC 6.X up)",
                  boards[i].name);
        colo_gpu_free(g);
    }
    /* the math classes the architectures lack fall back; the ones they have keep their rates */
    colo_gpu_t *t4 = open_gpu("tesla-t4"), *p4 = open_gpu("tesla-p4"),
               *p100 = open_gpu("tesla-p100-pcie"), *l4 = open_gpu("l4");
    cr_expect_eq(colo_gpu_math_runs_as(t4, COLO_MATH_BF16), COLO_MATH_FP32, "no BF16 on Turing");
    cr_expect_eq(colo_gpu_math_runs_as(t4, COLO_MATH_TF32), COLO_MATH_FP32, "no TF32 on Turing");
    expect_near(colo_gpu_math_rate(t4, COLO_MATH_INT8) * 40 / 1e3, 130.0, 0.01, "INT8 TOPS", "T4");
    expect_near(colo_gpu_math_rate(p4, COLO_MATH_INT8) * 20 / 1e3, 21.8, 0.01, "INT8 TOPS", "P4");
    cr_expect_eq(colo_gpu_math_runs_as(p4, COLO_MATH_FP8), COLO_MATH_FP32);
    cr_expect_eq(colo_gpu_math_runs_as(p100, COLO_MATH_INT8), COLO_MATH_FP16, "no INT8 on GP100");
    expect_near(colo_gpu_math_rate(p100, COLO_MATH_FP64) * 56 / 1e3, 4.7, 0.01, "FP64", "P100");
    expect_near(colo_gpu_math_rate(l4, COLO_MATH_FP8) * 58 / 1e3, 242.0, 0.01, "FP8 TFLOPS", "L4");
    cr_expect_eq(p4->mps.max_clients, 16, "pre-Volta MPS: 16 clients");
    cr_expect_eq(p100->green.min_sms, 1, "CC 6.X: Green Contexts from 1 SM");
    cr_expect_eq(t4->green.min_sms, 2, "CC 7.X: 2 SMs");
    cr_expect_eq(l4->green.min_sms, 4, "CC 8.X: 4 SMs");
    cr_expect_eq(t4->sm.max_threads, 1024, "CC 7.5: 1024 threads per SM");
    cr_expect_eq(p4->sm.max_shared_per_block, 48 * 1024, "CC 6.1: 48 KB per block");
    colo_gpu_free(t4);
    colo_gpu_free(p4);
    colo_gpu_free(p100);
    colo_gpu_free(l4);
}

static void scenario_fails_with(const char *path, const char *const *sets, size_t n,
                                const char *const *parts)
{
    const char *msg = scenario_load_error(path, sets, n);
    for (size_t i = 0; parts[i]; i++)
        cr_expect(strstr(msg, parts[i]), "'%s' not in: %s", parts[i], msg);
}

/* A scenario that asks pre-Volta MPS for a per-client SM limit, or Green Contexts of a GPU without
 * them, is refused with the GPU file and the key that says so. */
Test(gpu, mechanisms_the_gpu_lacks_are_refused)
{
    const char *caps = src_path("scenarios/mps_caps_h100.cfg");
    const char *on_p100[] = {"gpu=tesla-p100-pcie"};
    const char *const cap_msg[] = {"active_thread_percentage", "Volta MPS", "mps.volta = false",
                                   "tesla-p100-pcie.cfg", NULL};
    scenario_fails_with(caps, on_p100, 1, cap_msg);
    const char *uncapped[] = {"gpu=tesla-p100-pcie", "tenants.bert.active_thread_percentage=100"};
    colo_error_t err;
    colo_error_clear(&err);
    colo_scenario_t *sc = NULL;
    cr_expect_eq(colo_scenario_load(caps, uncapped, 2, &sc, &err), 0,
                 "pre-Volta MPS without limits runs: %s", err.text);
    colo_scenario_free(sc);
    const char *static_p100[] = {"gpu=tesla-p100-pcie", "sharing.cuda=13.1",
                                 "sharing.static_partitions=true",
                                 "tenants.bert.active_thread_percentage=100"};
    const char *const static_msg[] = {"static_partitions", "mps.volta = false",
                                      "tesla-p100-pcie.cfg", NULL};
    scenario_fails_with(caps, static_p100, 4, static_msg);

    /* a copy of tesla-t4.cfg that says it has no Green Contexts */
    char dir[] = "/tmp/colo_test_gpu_XXXXXX", file[256], text[16384];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/tesla-t4.cfg", dir);
    FILE *in = fopen(src_path("models/gpus/tesla-t4.cfg"), "r");
    cr_assert_not_null(in);
    size_t len = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[len] = '\0';
    char *green = strstr(text, "green = {");
    cr_assert_not_null(green);
    FILE *out = fopen(file, "w");
    cr_assert_not_null(out);
    fprintf(out, "%.*sgreen = {\n  supported = false;%s", (int)(green - text), text,
            green + strlen("green = {"));
    fclose(out);
    colo_gpu_t *g = NULL;
    cr_assert_eq(colo_gpu_load(file, &g, &err), 0, "%s", err.text);
    cr_expect_not(g->green.supported);
    cr_expect(g->mps.volta, "absent: true");
    colo_gpu_free(g);
    char gpu_set[300];
    snprintf(gpu_set, sizeof gpu_set, "gpu=%s", file);
    const char *green_sets[] = {gpu_set, "tenants.resnet50.sms=8", "tenants.transformer_xl.sms=16"};
    const char *const green_msg[] = {"sharing.mode", "no Green Contexts", "green.supported = false",
                                     file, NULL};
    scenario_fails_with(src_path("scenarios/green_contexts_h100.cfg"), green_sets, 3, green_msg);
    remove(file);
    rmdir(dir);
}
