/* live_nvidia_smi.c: what the parent asks nvidia-smi: MIG instances, compute mode, GPU UUID. */
#include "live_run_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* `nvidia-smi ARGS` (or $COLOSIM_NVIDIA_SMI), its standard output to read; pclose it. */
static FILE *smi_open(const char *args)
{
    const char *smi = getenv("COLOSIM_NVIDIA_SMI");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", smi && *smi ? smi : "nvidia-smi", args);
    return popen(cmd, "r");
}

/* MIG instances of the machine, as `nvidia-smi -L` lists them: "  MIG 3g.40gb Device 0: (UUID:
 * MIG-...)". Fills profile/uuid pairs; returns how many, or -1 when nvidia-smi cannot run. */
static int mig_instances(char prof[][32], char uuid[][96], int max)
{
    FILE *f = smi_open("-L");
    if (!f) return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        const char *m = strstr(line, "MIG ");
        const char *u = strstr(line, "UUID: MIG-");
        if (!m || !u) continue;
        if (sscanf(m + 4, "%31s", prof[n]) != 1) continue;
        if (sscanf(u + 6, "%95[^) \n]", uuid[n]) != 1) continue;
        n++;
    }
    int st = pclose(f);
    return st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) == 127 ? -1 : n;
}

/* Gives each planned MIG process an instance of its profile. 0, or an exit status after saying
 * why. */
int colo_live_assign_mig(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                         struct colo_live_proc *procs, char prof[][32], char uuid[][96],
                         const char *prog)
{
    int n = mig_instances(prof, uuid, MAX_PROCS);
    if (n <= 0) {
        fprintf(stderr,
                "%s: %s: the scenario needs MIG instances and this GPU has none%s. colosim never "
                "changes MIG mode or creates instances: an administrator can (nvidia-smi mig "
                "-cgi ... -C); then run again, or simulate MIG with colosim run\n",
                prog, sc->path, n < 0 ? " (nvidia-smi -L did not run)" : "");
        return EXIT_INPUT;
    }
    /* each instance of the scenario's layout gets a machine instance of its profile; the
     * processes of its tenants all use that one */
    bool used[MAX_PROCS] = {false};
    for (size_t k = 0; k < sc->sharing.n_instances; k++) {
        const colo_mig_instance_t *in = &sc->sharing.instances[k];
        const char *got = NULL;
        for (int m = 0; m < n && !got; m++)
            if (!used[m] && strcmp(prof[m], in->profile->name) == 0) {
                used[m] = true;
                got = uuid[m];
            }
        if (!got) {
            fprintf(stderr,
                    "%s: %s: instance %s needs a free MIG instance of profile %s and the GPU has "
                    "none left (nvidia-smi -L lists them); colosim never creates instances\n",
                    prog, sc->path, in->name, in->profile->name);
            return EXIT_INPUT;
        }
        for (size_t i = 0; i < plan->n; i++)
            if (sc->tenants[i].instance == k) procs[plan->t[i].process].uuid = got;
    }
    return 0;
}

/* Runs `nvidia-smi ARGS` (or $COLOSIM_NVIDIA_SMI); its first line of output into out. 0 or -1. */
static int smi_first_line(const char *args, char *out, size_t len)
{
    FILE *f = smi_open(args);
    if (!f) return -1;
    out[0] = '\0';
    if (fgets(out, (int)len, f)) out[strcspn(out, "\r\n")] = '\0';
    while (fgetc(f) != EOF) {
    }
    int st = pclose(f);
    return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && out[0] ? 0 : -1;
}

void colo_live_first_gpu_uuid(char *out, size_t len)
{
    char line[512];
    const char *u;
    out[0] = '\0';
    if (smi_first_line("-L", line, sizeof line) == 0 && (u = strstr(line, "UUID: GPU-")))
        snprintf(out, len, "%.*s", (int)strcspn(u + 6, ") \n"), u + 6);
}

/* EXCLUSIVE_PROCESS lets one process hold the GPU: time-slicing between processes fails (a
 * second context gets CUDA_ERROR_DEVICE_UNAVAILABLE) and only MPS clients share it; PROHIBITED
 * lets none. 0, or an exit status after saying why. */
int colo_live_check_compute_mode(const colo_scenario_t *sc, const colo_live_plan_t *plan,
                                 const char *prog)
{
    char mode[128];
    if (smi_first_line("--query-gpu=compute_mode --format=csv,noheader", mode, sizeof mode)) {
        fprintf(stderr, "%s: warning: cannot read the GPU's compute mode (nvidia-smi)\n", prog);
        return 0;
    }
    if (strcmp(mode, "Prohibited") == 0) {
        fprintf(stderr,
                "%s: %s: the GPU's compute mode is Prohibited: no process may use it "
                "(colosim never changes it)\n",
                prog, sc->path);
        return EXIT_INPUT;
    }
    if (strcmp(mode, "Exclusive_Process") == 0 && !plan->mps_daemon && plan->n_processes > 1) {
        fprintf(stderr,
                "%s: %s: the GPU's compute mode is Exclusive_Process: only one process may use "
                "it, and this %s run needs %d at once. An administrator can set Default "
                "(nvidia-smi -c DEFAULT); colosim never changes it\n",
                prog, sc->path, colo_share_mode_name(plan->mode), plan->n_processes);
        return EXIT_INPUT;
    }
    return 0;
}
