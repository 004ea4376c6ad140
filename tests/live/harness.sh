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
grep -q '^start .*/mps-pipe$' "$work/mps.log" && grep -q '^quit .*/mps-pipe$' "$work/mps.log" ||
    fail "MPS daemon not started and stopped: $(cat "$work/mps.log")"
grep -q "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=30 COLOSIM_TENANT=a" "$work/env_a" ||
    fail "client percentage not passed: $(cat "$work/env_a")"
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
unset COLOSIM_NVIDIA_SMI

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
leftovers "SIGTERM"
unset COLOSIM_MPS_CONTROL

# 7. an output folder that does not exist: a clear error naming it, exit 1
"$colosim" live "$fx" -q -o "$work/no/such/dir/out.json" 2> "$work/out.err"; rc=$?
[ $rc -eq 1 ] || fail "bad output path exited $rc"
grep -q "no/such/dir/out.json" "$work/out.err" || fail "bad output path: $(cat "$work/out.err")"

# 8. the dry run is the plan
"$colosim" live "$fx" --dry-run | grep -q "live plan for" || fail "dry run"

[ $fails -eq 0 ] && echo "live harness: all checks passed"
exit $((fails > 0))
