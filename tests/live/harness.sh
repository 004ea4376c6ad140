#!/usr/bin/env bash
# The live-run executor end to end with the CPU stand-in (colosim live): processes, start
# barrier, results in the simulator's schema, faults as real crashes, real-program tenants,
# the MPS daemon stopped on every path, MIG refused without instances, SIGTERM leaving no
# results and no run folder. Stand-ins for nvidia-cuda-mps-control and nvidia-smi log what they
# are asked. Usage: harness.sh COLOSIM SOURCE_DIR WORK_DIR
set -u
colosim=$1 src=$2 work=$3
fx=$src/tests/fixtures/live/two_light.cfg
echo_tenant="sh $src/tests/fixtures/live/echo_tenant.sh"
rm -rf "$work" && mkdir -p "$work/tmp"
export TMPDIR=$work/tmp
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
jq_() { jq -r "$2" "$1"; }
# a process that runs (a zombie not yet reaped by whoever adopted it does not)
alive() { st=$(ps -o stat= -p "$1" 2>/dev/null); [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
leftovers() { [ -z "$(ls -A "$TMPDIR")" ] || fail "$1: run folder left behind: $(ls "$TMPDIR")"; }

# 1. a plain run: every request in the window served, latency at least the isolated time,
# results the simulator's compare reads
"$colosim" live "$fx" -q -o "$work/live.json"; rc=$?
[ $rc -eq 0 ] || fail "plain run exited $rc"
[ "$(jq_ "$work/live.json" '[.tenants[] | .completed == .arrived and .arrived > 10] | all')" = true ] ||
    fail "plain run: completed != arrived: $(jq -c '[.tenants[] | [.arrived, .completed]]' "$work/live.json")"
"$colosim" run "$fx" -q -o "$work/sim.json" || fail "simulation"
iso=$(jq_ "$work/sim.json" '.tenants[0].isolated_ms')
[ "$(jq_ "$work/live.json" ".tenants[0].latency_ms.p50 >= $iso * 0.999")" = true ] ||
    fail "latency below the isolated time $iso ms"
"$colosim" compare "$work/sim.json" "$work/live.json" > "$work/compare.txt" || fail "compare"
grep -q "throughput/s" "$work/compare.txt" || fail "compare printed no throughput"
leftovers "plain run"
# fits: one process at a time, all before the run's start, each on the whole GPU; non-MPS
# processes get an empty pipe folder (a system MPS daemon must not take them as clients)
[ "$(jq_ "$work/live.json" '[.live.processes[].fit] as $f | [range(1; $f | length) | $f[.].start_s >= $f[. - 1].end_s] + [$f[-1].end_s <= .live.run_start_s] | all')" = true ] ||
    fail "fits overlap or run into the start: $(jq -c '[.live.processes[].fit | [.start_s, .end_s]], .live.run_start_s' "$work/live.json")"
[ "$(jq_ "$work/live.json" '[.tenants[].fit | .placement == "whole GPU (132 SMs)" and .kernels > 0] | all')" = true ] ||
    fail "fit placement: $(jq -c '[.tenants[].fit]' "$work/live.json")"
[ "$(jq_ "$work/live.json" '[.live.processes[].environment | test("CUDA_MPS_PIPE_DIRECTORY=RUN/no-mps")] | all')" = true ] ||
    fail "time-sliced processes not pointed at an empty pipe folder: $(jq -c '[.live.processes[].environment]' "$work/live.json")"

# 2. a fault kills the tenant's process; the other tenant's results are kept; exit 0
"$colosim" live "${fx%/*}/fault.cfg" -q -o "$work/fault.json"; rc=$?
[ $rc -eq 0 ] || fail "fault run exited $rc"
jq_ "$work/fault.json" '.tenants[1].error' | grep -q "signal 9.*fault injected" ||
    fail "fault not recorded: $(jq_ "$work/fault.json" '.tenants[1].error')"
[ "$(jq_ "$work/fault.json" '.tenants[0].error == null and .tenants[0].completed > 10')" = true ] ||
    fail "the other tenant lost its results"
leftovers "fault run"

# 3. MPS: a private daemon started, each client's percentage passed, the daemon stopped even
# when a tenant crashes
export COLOSIM_MPS_CONTROL=$src/tests/live/fake_mps_control.sh FAKE_MPS_LOG=$work/mps.log
"$colosim" live "$fx" -q -o "$work/mps.json" --set sharing.mode=mps \
    --set tenants.[0].active_thread_percentage=30 \
    --set "tenants.[0].command=ENV_OUT=$work/env_a CRASH_AFTER=5 $echo_tenant"; rc=$?
[ $rc -eq 1 ] || fail "MPS run with a crashing command exited $rc, not 1"
grep -q '^start .*/mps-0/pipe log=.*/mps-0/log vis= pid=' "$work/mps.log" && grep -q '^quit .*/mps-0/pipe$' "$work/mps.log" ||
    fail "MPS daemon not started and stopped: $(cat "$work/mps.log")"
grep -q "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30 COLOSIM_TENANT=a CUDA_MPS_PIPE_DIRECTORY=.*/mps-0/pipe" "$work/env_a" ||
    fail "client percentage or pipe folder not passed: $(cat "$work/env_a")"
# the fit runs before the daemon, not as a client and without the cap; the run as a capped client
[ "$(jq_ "$work/mps.json" '.live.processes[1] | (.fit.environment | test("PIPE_DIRECTORY=RUN/no-mps -CUDA_MPS_ACTIVE")) and (.environment | test("PIPE_DIRECTORY=RUN/mps-0/pipe"))')" = true ] ||
    fail "MPS fit/run environments: $(jq -c '[.live.processes[1] | .fit.environment, .environment]' "$work/mps.json")"
[ "$(jq_ "$work/mps.json" '.live.processes[0].environment | test("ACTIVE_THREAD_PERCENTAGE=30")')" = true ] ||
    fail "MPS cap not in the run environment: $(jq_ "$work/mps.json" '.live.processes[0].environment')"
jq_ "$work/mps.json" '.tenants[0].error' | grep -q "exited mid-request" ||
    fail "command crash not recorded: $(jq_ "$work/mps.json" '.tenants[0].error')"
[ "$(jq_ "$work/mps.json" '.tenants[0].completed <= 5 and .tenants[1].completed > 10')" = true ] ||
    fail "MPS run: wrong counts"
leftovers "MPS run"

# 4. a real-program tenant: each request goes through it
"$colosim" live "$fx" -q -o "$work/cmd.json" --set "tenants.[1].command=$echo_tenant"; rc=$?
[ $rc -eq 0 ] || fail "command run exited $rc"
[ "$(jq_ "$work/cmd.json" '.tenants[1] | .completed == .arrived and .latency_ms.p50 >= 2.0')" = true ] ||
    fail "command tenant: $(jq -c '.tenants[1]' "$work/cmd.json")"

# 5. MIG: refused (exit 2, nothing written) without instances; with them, each tenant's process
# sees its instance
export COLOSIM_NVIDIA_SMI=$src/tests/live/fake_nvidia_smi.sh
mig=${fx%/*}/mig.cfg
FAKE_MIG="" "$colosim" live "$mig" -q -o "$work/mig.json" 2> "$work/mig.err"; rc=$?
[ $rc -eq 2 ] || fail "MIG without instances exited $rc, not 2"
grep -q "never changes MIG mode" "$work/mig.err" || fail "MIG refusal: $(cat "$work/mig.err")"
[ ! -e "$work/mig.json" ] || fail "MIG refusal wrote results"
FAKE_MIG="1g.10gb 3g.40gb 3g.40gb" "$colosim" live "$mig" -q -o "$work/mig.json" \
    --set "tenants.[1].command=ENV_OUT=$work/env_b $echo_tenant"; rc=$?
[ $rc -eq 0 ] || fail "MIG with instances exited $rc"
grep -q "CUDA_VISIBLE_DEVICES=MIG-00000002-" "$work/env_b" || fail "MIG instance: $(cat "$work/env_b")"
# MIG with MPS inside one instance: a daemon for that instance only, started with its MIG UUID
# and its own pipe folder; the time-sliced instance's process is no client
: > "$work/mps.log"
FAKE_MIG="3g.40gb 3g.40gb" "$colosim" live "$mig" -q -o "$work/migmps.json" \
    --set sharing.instances.[1].share=mps --set tenants.[1].active_thread_percentage=50; rc=$?
[ $rc -eq 0 ] || fail "MIG with MPS exited $rc"
[ "$(grep -c '^start' "$work/mps.log")" = 1 ] &&
    grep -q '^start .*/mps-0/pipe log=.*/mps-0/log vis=MIG-00000001-' "$work/mps.log" ||
    fail "MIG+MPS daemon: $(cat "$work/mps.log")"
[ "$(jq_ "$work/migmps.json" '(.live.processes[0].environment | test("PIPE_DIRECTORY=RUN/no-mps .*CUDA_VISIBLE_DEVICES=MIG-00000000-")) and (.live.processes[1].environment | test("PIPE_DIRECTORY=RUN/mps-0/pipe CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 .*CUDA_VISIBLE_DEVICES=MIG-00000001-"))')" = true ] ||
    fail "MIG+MPS environments: $(jq -c '[.live.processes[].environment]' "$work/migmps.json")"
[ "$(jq_ "$work/migmps.json" '[.tenants[].fit.placement] == ["MIG 3g.40gb (60 SMs)", "MIG 3g.40gb (60 SMs)"]')" = true ] ||
    fail "MIG fit placement: $(jq -c '[.tenants[].fit]' "$work/migmps.json")"
leftovers "MIG with MPS"

# compute mode: Exclusive_Process refuses time-slicing between processes (exit 2), lets MPS run
FAKE_COMPUTE_MODE=Exclusive_Process "$colosim" live "$fx" -q -o "$work/excl.json" 2> "$work/excl.err"; rc=$?
[ $rc -eq 2 ] && grep -q "Exclusive_Process" "$work/excl.err" && [ ! -e "$work/excl.json" ] ||
    fail "Exclusive_Process time-slicing: exit $rc, $(cat "$work/excl.err")"
FAKE_COMPUTE_MODE=Exclusive_Process "$colosim" live "$fx" -q -o "$work/excl.json" --set sharing.mode=mps; rc=$?
[ $rc -eq 0 ] || fail "Exclusive_Process with MPS exited $rc"
leftovers "compute mode"

# MPS static partitions: a -S daemon, one sm_partition per client of the simulator's SMs in
# chunks read from lspart, the ID in the client's CUDA_MPS_SM_PARTITION
: > "$work/mps.log"
"$colosim" live "$fx" -q -o "$work/static.json" --set sharing.mode=mps --set sharing.cuda=13.1 \
    --set sharing.static_partitions=true --set tenants.[0].sms=64 --set tenants.[1].sms=32; rc=$?
[ $rc -eq 0 ] || fail "static partitions exited $rc"
grep -q '^start -S ' "$work/mps.log" && grep -q '^sm_partition add GPU-00000000-0000-0000-0000-000000000000 8 ' "$work/mps.log" &&
    grep -q '^sm_partition add GPU-00000000-0000-0000-0000-000000000000 4 ' "$work/mps.log" ||
    fail "static partitions: $(cat "$work/mps.log")"
[ "$(jq_ "$work/static.json" '.live.processes[1].environment | test("CUDA_MPS_SM_PARTITION=GPU-00000000-0000-0000-0000-000000000000/PART1x4")')" = true ] ||
    fail "partition ID not given: $(jq -c '[.live.processes[].environment]' "$work/static.json")"
leftovers "static partitions"
unset COLOSIM_NVIDIA_SMI

# a daemon that will not quit: killed by the PID in its pid file, nothing left behind
: > "$work/mps.log"
FAKE_MPS_QUIT_FAIL=1 "$colosim" live "$fx" -q -o "$work/noquit.json" --set sharing.mode=mps 2> "$work/noquit.err"; rc=$?
pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$work/mps.log" | head -1)
[ $rc -eq 0 ] && grep -q "killed it" "$work/noquit.err" ||
    fail "daemon that would not quit: exit $rc, $(cat "$work/noquit.err")"
[ -n "$pid" ] && ! alive "$pid" || fail "daemon $pid left running"
leftovers "daemon that would not quit"
# ... and one with no pid file either: its folder is kept and the printed command points at it
: > "$work/mps.log"
FAKE_MPS_QUIT_FAIL=1 FAKE_MPS_NO_PIDFILE=1 "$colosim" live "$fx" -q -o "$work/noquit.json" \
    --set sharing.mode=mps 2> "$work/noquit.err"; rc=$?
kept=$(sed -n 's/.*CUDA_MPS_PIPE_DIRECTORY=\([^ ]*\) .*/\1/p' "$work/noquit.err")
[ -n "$kept" ] && [ -d "$kept" ] || fail "no pid file: the recovery path is gone: $(cat "$work/noquit.err")"
pkill -f "sleep 300" 2>/dev/null
rm -rf "$TMPDIR"/colosim-live-*

# 6. SIGTERM mid-run: exit 130, no results, daemon stopped, no run folder left
: > "$work/mps.log"
"$colosim" live "$fx" -o "$work/term.json" --set sharing.mode=mps --set duration_s=60 \
    2> "$work/term.err" &
pid=$!
for _ in $(seq 100); do grep -q running "$work/term.err" && break; sleep 0.1; done
kill -TERM $pid
wait $pid; rc=$?
[ $rc -eq 130 ] || fail "SIGTERM exited $rc, not 130"
[ ! -e "$work/term.json" ] || fail "SIGTERM left a result file"
grep -q "no results written" "$work/term.err" || fail "SIGTERM message: $(cat "$work/term.err")"
grep -q '^quit' "$work/mps.log" || fail "MPS daemon not stopped on SIGTERM"
pid=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' "$work/mps.log" | head -1)
[ -n "$pid" ] && ! alive "$pid" || fail "SIGTERM left the daemon $pid running"
leftovers "SIGTERM"
unset COLOSIM_MPS_CONTROL

# 7. an output folder that does not exist: a clear error naming it, exit 1
"$colosim" live "$fx" -q -o "$work/no/such/dir/out.json" 2> "$work/out.err"; rc=$?
[ $rc -eq 1 ] || fail "bad output path exited $rc"
grep -q "no/such/dir/out.json" "$work/out.err" || fail "bad output path: $(cat "$work/out.err")"

# 8. the dry run is the plan
"$colosim" live "$fx" --dry-run | grep -q "live plan for" || fail "dry run"

# 9. a process whose CUDA set-up fails (the stand-in's COLOSIM_LIVE_CPU_CUDA_ERROR): its fit
# fails, the reason is printed per process, nothing is run or written, exit 1
COLOSIM_LIVE_CPU_CUDA_ERROR=cudaErrorInsufficientDriver "$colosim" live "$fx" -q \
    -o "$work/nodrv.json" 2> "$work/nodrv.err"; rc=$?
[ $rc -eq 1 ] || fail "a failed fit exited $rc, not 1"
[ ! -e "$work/nodrv.json" ] || fail "a failed fit wrote results"
grep -q "process 0 (a) failed to fit its kernels: .*cudaErrorInsufficientDriver.*no NVIDIA driver" "$work/nodrv.err" &&
    grep -q "nothing was run" "$work/nodrv.err" || fail "failed fit message: $(cat "$work/nodrv.err")"
leftovers "failed fit"

# 10. an MPS client refused when the run starts: the reason in its tenants' errors (after how the
# process ended), exit 1, and the run folder kept for the daemon's log
export COLOSIM_MPS_CONTROL=$src/tests/live/fake_mps_control.sh FAKE_MPS_LOG=$work/mps2.log
COLOSIM_LIVE_CPU_CUDA_ERROR=cudaErrorMpsConnectionFailed:run "$colosim" live "$fx" -q \
    --set sharing.mode=mps -o "$work/refused.json" 2> "$work/refused.err"; rc=$?
unset COLOSIM_MPS_CONTROL
[ $rc -eq 1 ] || fail "a refused MPS client exited $rc, not 1"
jq_ "$work/refused.json" '.tenants[0].error' | grep -q "cudaErrorMpsConnectionFailed.*MPS daemon could not be reached.*mps-N/log.*(process exited with status 1)" ||
    fail "refused MPS client not recorded: $(jq_ "$work/refused.json" '.tenants[0].error')"
kept=$(sed -n 's/.*the run folder is kept for the MPS daemons. logs: \(.*\)\/mps-N\/log$/\1/p' "$work/refused.err")
[ -n "$kept" ] && [ -d "$kept/mps-0/log" ] || fail "run folder not kept: $(cat "$work/refused.err")"
rm -rf "$kept"

[ $fails -eq 0 ] && echo "live harness: all checks passed"
exit $((fails > 0))
