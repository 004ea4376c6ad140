/* live_mps.c: the run's private MPS control daemons: start, static partitions, stop. */
#define _GNU_SOURCE /* pipe2 */
#include "live_run_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The MIG instance (MIG-...) daemon d serves, or NULL (the whole GPU). */
static const char *daemon_uuid(int d)
{
    for (size_t i = 0; colo_live_parent.plan && i < colo_live_parent.plan->n; i++)
        if (colo_live_parent.plan->t[i].daemon == d && colo_live_parent.procs &&
            colo_live_parent.plan->t[i].process < colo_live_parent.n)
            return colo_live_parent.procs[colo_live_parent.plan->t[i].process].uuid;
    return NULL;
}

/* Runs `CONTROL [arg]` for daemon d (its environment) with text on its standard input; its
 * standard output into out (if not NULL). The exit status, or -1. */
static int run_control(int d, const char *arg, const char *arg2, const char *input, char *out,
                       size_t out_len)
{
    char env[COLO_LIVE_ENV_MAX][COLO_LIVE_ENV_LEN];
    size_t n_env = colo_live_daemon_env(colo_live_parent.plan, d, colo_live_parent.run_dir,
                                        daemon_uuid(d), env);
    int in[2], o[2];
    if (pipe2(in, O_CLOEXEC)) return -1;
    if (pipe2(o, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        colo_live_apply_env(env, n_env);
        dup2(in[0], 0);
        if (out) dup2(o[1], 1);
        execlp(colo_live_parent.mps_control, colo_live_parent.mps_control, arg, arg2, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(o[1]);
    if (input && write(in[1], input, strlen(input)) < 0) {
    }
    close(in[1]);
    size_t got = 0;
    if (out) {
        ssize_t r;
        while (got + 1 < out_len && (r = read(o[0], out + got, out_len - 1 - got)) > 0)
            got += (size_t)r;
        out[got] = '\0';
    }
    close(o[0]);
    int st = 0;
    if (!colo_live_reap_within(pid, 10000, &st)) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The daemon's PID from the file it keeps in its pipe folder (NVIDIA MPS tools reference:
 * nvidia-cuda-mps-control.pid in CUDA_MPS_PIPE_DIRECTORY), or 0. */
static pid_t daemon_pid(int d)
{
    char pipe[4400], path[4500];
    colo_live_pipe_dir(colo_live_parent.run_dir, d, pipe, sizeof pipe);
    snprintf(path, sizeof path, "%s/nvidia-cuda-mps-control.pid", pipe);
    FILE *f = fopen(path, "r");
    long v = 0;
    if (f) {
        if (fscanf(f, "%ld", &v) != 1) v = 0;
        fclose(f);
    }
    return v > 1 ? (pid_t)v : 0;
}

/* True while pid runs (a zombie, which its parent has not reaped yet, does not). */
static bool pid_alive(pid_t pid)
{
    if (kill(pid, 0) != 0 && errno == ESRCH) return false;
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return true;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')'); /* "PID (COMM) STATE ..." */
    return !(close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z');
}

/* Stops every daemon this run started. Children are gone first (cleanup's order): a daemon told
 * to quit while its clients live waits for them. When `quit` fails, the daemon's PID (from its
 * pid file) is killed; when that cannot be done either, its folders are kept so that the command
 * printed to stop it still points at them. */
void colo_live_mps_stop(void)
{
    for (int d = 0;
         colo_live_parent.plan && d < colo_live_parent.plan->n_daemons && d < MAX_DAEMONS; d++) {
        if (!colo_live_parent.mps_running[d]) continue;
        colo_live_parent.mps_running[d] = false;
        if (run_control(d, NULL, NULL, "quit\n", NULL, 0) == 0) continue;
        pid_t pid = daemon_pid(d);
        bool gone = false;
        if (pid > 0 && kill(pid, SIGTERM) == 0) {
            for (int k = 0; k < 200 && !gone; k++) {
                gone = !pid_alive(pid);
                if (!gone) colo_live_sleep_ns(10000000);
            }
            if (!gone && kill(pid, SIGKILL) == 0) {
                colo_live_sleep_ns(100000000);
                gone = !pid_alive(pid);
            }
        }
        char pipe[4400];
        colo_live_pipe_dir(colo_live_parent.run_dir, d, pipe, sizeof pipe);
        if (gone) {
            fprintf(stderr, "colosim-live: the MPS daemon %d did not quit; killed it (pid %ld)\n",
                    d, (long)pid);
            continue;
        }
        colo_live_parent.keep_run_dir = true;
        fprintf(stderr,
                "colosim-live: could not stop the MPS daemon %d%s; its folders are kept in %s. "
                "Stop it with: echo quit | CUDA_MPS_PIPE_DIRECTORY=%s %s\n",
                d, pid > 0 ? "" : " (no pid file)", colo_live_parent.run_dir, pipe,
                colo_live_parent.mps_control);
    }
}

/* The SMs of one static-partition chunk, from `lspart` ("GPU-... - FREE USED FREE_SM USED_SM
 * -" for the device's line), or 0 when it cannot be read. */
static int chunk_sms(int d)
{
    char out[4096];
    if (run_control(d, NULL, NULL, "lspart\n", out, sizeof out) != 0) return 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        char id[128], dash[8];
        long fc, uc, fs, us;
        if (sscanf(line, "%127s %7s %ld %ld %ld %ld", id, dash, &fc, &uc, &fs, &us) == 6 &&
            strncmp(id, "GPU-", 4) == 0 && strcmp(dash, "-") == 0 && fc + uc > 0 &&
            (fs + us) % (fc + uc) == 0)
            return (int)((fs + us) / (fc + uc));
    }
    return 0;
}

int colo_live_mps_start(const colo_scenario_t *sc, const char *gpu_uuid, colo_error_t *err)
{
    const char *ctl = getenv("COLOSIM_MPS_CONTROL");
    colo_live_parent.mps_control = ctl && *ctl ? ctl : "nvidia-cuda-mps-control";
    for (int d = 0; d < colo_live_parent.plan->n_daemons; d++) {
        char dir[4400], sub[4500];
        snprintf(dir, sizeof dir, "%s/mps-%d", colo_live_parent.run_dir, d);
        snprintf(sub, sizeof sub, "%s/pipe", dir);
        if (mkdir(dir, 0700) || mkdir(sub, 0700))
            return colo_error_set(err, COLO_EIO, colo_live_parent.run_dir, 0, NULL,
                                  "cannot make the MPS folders");
        snprintf(sub, sizeof sub, "%s/log", dir);
        if (mkdir(sub, 0700))
            return colo_error_set(err, COLO_EIO, colo_live_parent.run_dir, 0, NULL,
                                  "cannot make the MPS folders");
        const colo_live_daemon_t *dm = &colo_live_parent.plan->daemons[d];
        /* MPS quick start, "Enabling static SM partitioning": nvidia-cuda-mps-control -d -S */
        int st = run_control(d, "-d", dm->static_partitions ? "-S" : NULL, NULL, NULL, 0);
        if (st != 0)
            return colo_error_set(
                err, COLO_EIO, colo_live_parent.mps_control, 0, NULL,
                "cannot start a private MPS control daemon (exit %d): is the "
                "compute mode EXCLUSIVE_PROCESS or DEFAULT, and no other "
                "daemon running for this user?%s",
                st, dm->static_partitions ? " (static partitions need CUDA 13.1)" : "");
        colo_live_parent.mps_running[d] = true;
        if (!dm->static_partitions) continue;
        /* one partition per client, of the SMs the simulator gave it */
        int chunk = chunk_sms(d);
        if (chunk <= 0)
            return colo_error_set(err, COLO_EIO, colo_live_parent.mps_control, 0, NULL,
                                  "cannot read the SMs of a static-partition chunk from lspart");
        const char *dev = dm->instance >= 0 ? daemon_uuid(d) : gpu_uuid;
        for (size_t i = 0; i < colo_live_parent.plan->n; i++) {
            const colo_live_tenant_t *t = &colo_live_parent.plan->t[i];
            if (t->daemon != d || !t->partition) continue;
            int chunks = (t->partition + chunk - 1) / chunk;
            if (chunks * chunk != t->partition)
                return colo_error_set(err, COLO_EUNSUPPORTED, sc->path, 0, sc->tenants[i].name,
                                      "a static partition of %d SMs: chunks here are of %d SMs, "
                                      "so the partition would have %d (the simulator's "
                                      "mps.sm_granularity in the GPU file differs)",
                                      t->partition, chunk, chunks * chunk);
            char cmd[256], out[1024];
            snprintf(cmd, sizeof cmd, "sm_partition add %s %d\n", dev ? dev : "0", chunks);
            char *id = NULL;
            if (run_control(d, NULL, NULL, cmd, out, sizeof out) == 0)
                for (char *w = strtok(out, " \n"); w && !id; w = strtok(NULL, " \n"))
                    if (strncmp(w, "GPU-", 4) == 0 || strncmp(w, "MIG-", 4) == 0)
                        if (strchr(w, '/')) id = w;
            if (!id)
                return colo_error_set(err, COLO_EIO, colo_live_parent.mps_control, 0,
                                      sc->tenants[i].name,
                                      "sm_partition add %s %d gave no partition ID", dev, chunks);
            snprintf(colo_live_parent.partition[t->process], sizeof colo_live_parent.partition[0],
                     "%s", id);
        }
    }
    return 0;
}
