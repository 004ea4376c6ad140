/* test_import_neusight.c: NeuSight's single-op tables (rows cut from the published data in
 * tests/fixtures/neusight, MIT), the work of each op from its shape, bad tables, and the kernel
 * check across GPUs: a prediction for a GPU never reads that GPU's measurements. */
#include "helpers.h"
#include "import_neusight.h"
#include "kernel_check.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(import_neusight, .init = test_init);

static colo_ns_table_t *read_ok(const char *file)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/tests/fixtures/neusight/%s", COLO_TEST_SRC, file);
    colo_error_t err;
    colo_error_clear(&err);
    colo_ns_table_t *t = NULL;
    int rc = colo_ns_read(p, &t, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    return t;
}

Test(import_neusight, reads_a_bmm_table_as_published)
{
    colo_ns_table_t *t = read_ok("bmm__Tesla_T4.csv");
    cr_assert_eq(t->op, COLO_NS_BMM);
    cr_assert_str_eq(t->device, "Tesla T4");
    cr_assert_eq(t->n, 13);
    /* its first row is the table's shortest op: volta_sgemm_128x32_nn, grid 1 x 1 x 1 */
    const colo_ns_row_t *r = &t->rows[0];
    cr_assert_eq(r->line, 2);
    cr_assert(strstr(r->kernel, "sgemm") != NULL, "%s", r->kernel);
    cr_assert(r->latency_ns > 20e3 && r->latency_ns < 40e3, "%g", r->latency_ns);
    for (size_t i = 0; i < t->n; i++) {
        cr_assert(t->rows[i].grid[0] >= 1 && t->rows[i].block[0] >= 1);
        cr_assert(t->rows[i].shape[0] >= 1 && t->rows[i].shape[3] >= 1);
        cr_assert_eq(t->rows[i].n_kernels, 1);
    }
    colo_ns_table_free(t);
}

Test(import_neusight, conv_ops_list_their_kernels)
{
    colo_ns_table_t *t = read_ok("conv__Tesla_V100-PCIE-32GB.csv");
    cr_assert_eq(t->op, COLO_NS_CONV);
    size_t several = 0;
    for (size_t i = 0; i < t->n; i++)
        several += t->rows[i].n_kernels > 1;
    cr_assert_gt(several, 0, "cuDNN's convolutions launch transforms beside their GEMM");
    colo_ns_table_free(t);
}

Test(import_neusight, work_from_the_shape)
{
    long long bmm[COLO_NS_SHAPE] = {2, 3, 5, 7}; /* a[2,3,5] x b[2,5,7] */
    cr_assert_float_eq(colo_ns_flops(COLO_NS_BMM, bmm), 2.0 * 2 * 3 * 5 * 7, 1e-9);
    cr_assert_float_eq(colo_ns_bytes(COLO_NS_BMM, bmm), 4.0 * 2 * (3 * 5 + 5 * 7 + 3 * 7), 1e-9);
    long long lin[COLO_NS_SHAPE] = {1, 10, 20, 30}; /* x[1,10,20] -> y[1,10,30] */
    cr_assert_float_eq(colo_ns_bytes(COLO_NS_LINEAR, lin), 4.0 * (200 + 600 + 30 + 300), 1e-9);
    /* 3x3, stride 1, padding 1 keeps 32 x 32 */
    long long conv[COLO_NS_SHAPE] = {2, 16, 32, 3, 32, 1, 1};
    cr_assert_float_eq(colo_ns_flops(COLO_NS_CONV, conv), 2.0 * 2 * 32 * 32 * 32 * 16 * 9, 1e-6);
    long long v[COLO_NS_SHAPE] = {8, 1000};
    cr_assert_float_eq(colo_ns_bytes(COLO_NS_ADD, v), 4.0 * 3 * 8000, 1e-9);
    cr_assert_float_eq(colo_ns_bytes(COLO_NS_RELU, v), 4.0 * 2 * 8000, 1e-9);
    cr_assert_eq(colo_ns_op_class(COLO_NS_LINEAR), COLO_NS_GEMM);
    cr_assert_eq(colo_ns_op_class(COLO_NS_LN), COLO_NS_ROWS);
    cr_assert_eq(colo_ns_op_class(COLO_NS_GELU), COLO_NS_ELEMENTWISE);
}

Test(import_neusight, a_row_becomes_a_kernel)
{
    colo_ns_table_t *t = read_ok("add__Tesla_T4.csv");
    colo_op_t op;
    colo_ns_row_op(t, &t->rows[1], &op);
    cr_assert_eq(op.kclass, COLO_KCLASS_MEMORY);
    cr_assert_eq(op.duration, colo_time_from_ns(t->rows[1].latency_ns));
    cr_assert_float_eq(op.dram_bytes, colo_ns_bytes(COLO_NS_ADD, t->rows[1].shape), 1e-6);
    colo_ns_table_free(t);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void read_bad(const char *text, int line, const char *key)
{
    char p[] = "/tmp/colo_ns_XXXXXX";
    int fd = mkstemp(p);
    cr_assert(fd >= 0);
    close(fd);
    write_file(p, text);
    colo_error_t err;
    colo_error_clear(&err);
    colo_ns_table_t *t = NULL;
    int rc = colo_ns_read(p, &t, &err);
    unlink(p);
    cr_assert_lt(rc, 0, "accepted:\n%s", text);
    cr_assert_null(t);
    cr_assert_eq(err.line, line, "line %d, not %d: %s", err.line, line, err.text);
    if (key) cr_assert_str_eq(err.key, key, "%s", err.text);
}

#define HEAD                                                                                       \
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,"    \
    "Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,B,H\n"

Test(import_neusight, bad_tables_name_line_and_column)
{
    read_bad(HEAD "add,abc,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4,8\n", 2, "Latency");
    read_bad(HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,0,1,1,128,1,1,cu121,4,8\n", 2, "Grid x");
    read_bad(HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,2048,1,1,cu121,4,8\n", 2, "Block x");
    read_bad(HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,70000,1,128,1,1,cu121,4,8\n", 2, "Grid y");
    read_bad(HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,1,1,128,cu121,4,8\n", 2, "Block z");
    read_bad(HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4,8\n"
                  "add,0.1,Tesla P4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4,8\n",
             3, "Device");
    read_bad(HEAD "matmul,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4,8\n", 2, "OPName");
    read_bad("OPName,Latency,Device,Kernel Name,Grid x,Grid y,Grid z,Block x,Block y,B,H\n", 1,
             "Block z");
    read_bad("OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,"
             "Blocks per SM,Grid x,Grid y,Grid z,Block x,Block y,Block z,CUDA Version,B\n"
             "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4\n",
             1, "H");
    read_bad(HEAD, 1, NULL); /* no rows */
}

Test(import_neusight, a_blank_first_line_and_a_byte_order_mark_are_read_past)
{
    char p[] = "/tmp/colo_ns_XXXXXX";
    int fd = mkstemp(p);
    cr_assert(fd >= 0);
    close(fd);
    write_file(p, "\n\xEF\xBB\xBF" HEAD "add,0.1,Tesla T4,p2.1.0,8902,k,1,1,1,1,1,128,1,1,cu121,4,8\n");
    colo_error_t err;
    colo_error_clear(&err);
    colo_ns_table_t *t = NULL;
    int rc = colo_ns_read(p, &t, &err);
    unlink(p);
    cr_assert_eq(rc, 0, "%s", err.text);
    cr_assert_eq(t->n, 1);
    cr_assert_eq(t->rows[0].line, 3);
    colo_ns_table_free(t);
}

Test(import_neusight, host_bound_ops_are_left_out)
{
    cr_assert_lt(colo_kcheck_kernel_ns(70e3, 25e3), 0);
    cr_assert_float_eq(colo_kcheck_kernel_ns(100e3, 25e3), 87.5e3, 1e-6);
    cr_assert_str_eq(colo_kcheck_gpu_of("Tesla T4"), "tesla-t4");
    cr_assert_null(colo_kcheck_gpu_of("Tesla K80"));
}

static colo_kcheck_t *check(const char *dir)
{
    colo_error_t err;
    colo_error_clear(&err);
    colo_kcheck_t *k = NULL;
    int rc = colo_kcheck_run(dir, &k, &err);
    cr_assert_eq(rc, 0, "%s", err.text);
    return k;
}

/* Copies the fixture tables into a temporary folder, every latency of the V100's tables times
 * f (their shortest too, so the same ops stay comparable). */
static void copy_scaled(const char *dir, double f)
{
    static const char *const ops[] = {"bmm", "linear", "conv", "softmax", "ln", "add", "gelu"};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (int v100 = 0; v100 < 2; v100++) {
            char name[128], in[4096], out[4096], line[16384];
            snprintf(name, sizeof name, "%s__%s.csv", ops[o],
                     v100 ? "Tesla_V100-PCIE-32GB" : "Tesla_T4");
            snprintf(in, sizeof in, "%s/tests/fixtures/neusight/%s", COLO_TEST_SRC, name);
            snprintf(out, sizeof out, "%s/%s", dir, name);
            FILE *a = fopen(in, "r"), *b = fopen(out, "w");
            cr_assert(a && b);
            int n = 0;
            while (fgets(line, sizeof line, a)) {
                char *c1 = strchr(line, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
                if (n++ == 0 || !v100 || !c2) {
                    fputs(line, b);
                    continue;
                }
                *c1 = '\0';
                fprintf(b, "%s,%.17g%s", line, strtod(c1 + 1, NULL) * f, c2);
            }
            fclose(a);
            fclose(b);
        }
}

Test(import_neusight, a_gpus_own_measurements_never_reach_its_prediction)
{
    char d1[] = "/tmp/colo_ns1_XXXXXX", d2[] = "/tmp/colo_ns2_XXXXXX";
    cr_assert(mkdtemp(d1) && mkdtemp(d2));
    copy_scaled(d1, 1.0);
    copy_scaled(d2, 2.0);
    colo_kcheck_t *a = check(d1), *b = check(d2);
    cr_assert_eq(a->n_gpus, 2);
    size_t t4 = strcmp(a->gpu[0], "tesla-t4") == 0 ? 0 : 1, v = 1 - t4;
    cr_assert_str_eq(b->gpu[t4], "tesla-t4");
    size_t compared = 0;
    for (int c = 0; c < COLO_NS_CLASSES; c++) {
        const colo_kcell_t *x = &a->cell[t4][v][c], *y = &b->cell[t4][v][c];
        cr_assert_eq(x->n, y->n);
        compared += x->n;
        for (size_t i = 0; i < x->n; i++) {
            /* the V100's times doubled: the prediction for it is the same, the error not */
            cr_assert_float_eq(x->picks[i].pred_ns, y->picks[i].pred_ns, 1e-9);
            cr_assert_float_eq(y->picks[i].dst_ns, 2 * x->picks[i].dst_ns,
                               1e-3 * y->picks[i].dst_ns);
        }
        /* and the other way, the prediction from the V100 doubles with its times */
        const colo_kcell_t *p = &a->cell[v][t4][c], *q = &b->cell[v][t4][c];
        cr_assert_eq(p->n, q->n);
        for (size_t i = 0; i < p->n; i++)
            cr_assert(q->picks[i].pred_ns > 1.5 * p->picks[i].pred_ns);
    }
    cr_assert_gt(compared, 20, "the fixture's ops are GPU-bound on both GPUs");
    colo_kcheck_free(a);
    colo_kcheck_free(b);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", d1, d2);
    cr_assert_eq(system(cmd), 0);
}
