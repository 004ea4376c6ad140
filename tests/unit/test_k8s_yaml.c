/* test_k8s_yaml.c: the Kubernetes device plugin's config file (k8s.plugin_config, issue 41
 * part 8): the reader, and scenarios that give the same runs as the keys written out. The
 * refusals through the command are golden cases (tests/golden/bad/k8s_yaml_*). */
#include "helpers.h"
#include "k8s_yaml.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(k8s_yaml, .init = test_init);

/* Writes text to a new temporary file; its path in a static buffer. */
static const char *yaml_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/colosim-k8s-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Reads text as a plugin config: 0 or the code, the error formatted into msg. */
static int read_yaml(const char *text, colo_k8s_plugin_t *pc, char *msg, size_t n)
{
    const char *path = yaml_file(text);
    colo_error_t err;
    colo_error_clear(&err);
    int rc = colo_k8s_plugin_read(path, pc, &err);
    if (rc) {
        snprintf(err.source, sizeof err.source, "F"); /* the temporary name varies */
        colo_error_format(&err, msg, n);
    }
    unlink(path);
    return rc;
}

Test(k8s_yaml, reads_the_gpu_resource_among_others_in_flow_or_block_style)
{
    colo_k8s_plugin_t pc;
    char msg[1024];
    int rc = read_yaml("version: v1\n"
                       "flags: {migStrategy: mixed, failOnInitError: true}\n"
                       "sharing:\n"
                       "  mps:\n"
                       "    renameByDefault: yes\n"
                       "    resources:\n"
                       "    - name: nvidia.com/mig-1g.10gb\n"
                       "      replicas: 2\n"
                       "    - {name: nvidia.com/gpu, replicas: 8, devices: all}\n",
                       &pc, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert(pc.mps);
    cr_assert_eq(pc.replicas, 8);
    cr_assert_eq(pc.sharing_line, 5); /* where the mapping under mps: starts */
    cr_assert_eq(pc.replicas_line, 9);
    cr_assert_str_eq(pc.replicas_key, "sharing.mps.resources[1].replicas");
    rc = read_yaml("sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 3}]}}\n",
                   &pc, msg, sizeof msg);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert(!pc.mps);
    cr_assert_eq(pc.replicas, 3);
    cr_assert_str_eq(pc.sharing_key, "sharing.timeSlicing");
}

Test(k8s_yaml, refuses_what_does_not_say_how_to_share)
{
    static const struct {
        const char *yaml, *msg;
    } bad[] = {
        {"", "F: empty: the device plugin's config says how it shares (sharing.timeSlicing or "
             "sharing.mps)"},
        {"version: v2\nsharing: {mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}}\n",
         "F:1: version: 'v2': the plugin's config version is v1"},
        {"version: v1\n", "F:1: sharing: missing: the device plugin shares a GPU by "
                          "sharing.timeSlicing or sharing.mps"},
        {"sharing:\n  mps: {resources: [{name: nvidia.com/gpu, replicas: 2}]}\n"
         "  mps: {resources: [{name: nvidia.com/gpu, replicas: 3}]}\n",
         "F:3: sharing: mps is given twice (lines 2 and 3)"},
        {"sharing: {timeSlicing: {resources: []}}\n",
         "F:1: sharing.timeSlicing.resources: empty: the plugin shares the resources listed here "
         "(- name: nvidia.com/gpu, replicas: N)"},
        {"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 0}]}}\n",
         "F:1: sharing.timeSlicing.resources[0].replicas: '0': a positive integer (how many pods "
         "share each GPU)"},
        {"sharing: {timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: 2}, "
         "{name: nvidia.com/gpu, replicas: 3}]}}\n",
         "F:1: sharing.timeSlicing.resources[1].replicas: nvidia.com/gpu is listed twice "
         "(resources[0] and [1]): give it once"},
        {"sharing: {timeslicing: {}}\n",
         "F:1: sharing: unknown key 'timeslicing' (the plugin's keys here: timeSlicing, mps)"},
        {"sharing:\n  mps:\n    failRequestsGreaterThanOne: maybe\n",
         "F:3: sharing.mps.failRequestsGreaterThanOne: 'maybe': true or false"},
        {"- a list\n", "F:1: (top level): a list here, where the plugin's config has a mapping"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        colo_k8s_plugin_t pc;
        char msg[1024] = "";
        cr_assert_neq(read_yaml(bad[i].yaml, &pc, msg, sizeof msg), 0, "case %zu read", i);
        cr_assert_str_eq(msg, bad[i].msg, "case %zu", i);
    }
}

/* A folder, or a file far larger than any plugin config, is refused without reading it all. */
Test(k8s_yaml, refuses_a_folder_and_a_huge_file)
{
    colo_k8s_plugin_t pc;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_k8s_plugin_read("/tmp", &pc, &err), COLO_EIO);
    cr_assert_str_eq(err.text, "Is a directory");
    size_t n = (2u << 20) + 1;
    char *big = malloc(n);
    memset(big, '#', n - 1); /* one long comment: valid YAML, were it read to the end */
    big[n - 1] = '\0';
    const char *path = yaml_file(big);
    free(big);
    colo_error_clear(&err);
    cr_assert_eq(colo_k8s_plugin_read(path, &pc, &err), COLO_EINVAL);
    cr_assert_str_eq(err.text, "larger than 1 MiB: not a device plugin config");
    unlink(path);
}

/* The run of a scenario; its tenants' results (new reference). */
static json_t *tenants_of(const char *path, const char *const *sets, size_t n)
{
    test_run_t r = run_scenario(path, sets, n);
    json_t *t = json_incref(json_object_get(r.results, "tenants"));
    cr_assert(json_array_size(t) == 4);
    run_free(&r);
    return t;
}

/* k8s.plugin_config gives the same sharing and replicas, so the same run, as writing them. */
Test(k8s_yaml, a_plugin_config_runs_as_the_keys_written_out)
{
    const char *ts[] = {"duration_s=4", "k8s={ sharing = \"time-slicing\"; replicas = 4; }"};
    json_t *a = tenants_of(src_path("scenarios/k8s_plugin_timeslicing_h100.cfg"), ts, 1);
    json_t *b = tenants_of(src_path("scenarios/k8s_plugin_timeslicing_h100.cfg"), ts, 2);
    cr_assert(json_equal(a, b), "time-slicing: the plugin's file and the keys differ");
    json_decref(a);
    json_decref(b);
    /* MPS: the plugin's file in place of k8s_mps_replicas_h100.cfg's keys; its pods get the
     * same thread cap and memory limit */
    const char *yaml = yaml_file("version: v1\nsharing:\n  mps:\n    resources:\n"
                                 "    - name: nvidia.com/gpu\n      replicas: 4\n");
    char set[128];
    snprintf(set, sizeof set, "k8s={ plugin_config = \"%s\"; }", yaml);
    const char *mps[] = {"duration_s=4", set};
    const char *path = src_path("scenarios/k8s_mps_replicas_h100.cfg");
    colo_scenario_t *sc = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    cr_assert_eq(colo_scenario_load(path, mps, 2, &sc, &err), 0, "%s", err.text);
    cr_assert(sc->k8s.on && sc->k8s.mps && sc->k8s.replicas == 4);
    cr_assert_eq(sc->tenants[0].active_thread_percentage, 25);
    colo_scenario_free(sc);
    a = tenants_of(path, mps, 1);
    b = tenants_of(path, mps, 2);
    cr_assert(json_equal(a, b), "MPS: the plugin's file and the keys differ");
    json_decref(a);
    json_decref(b);
    unlink(yaml);
}
