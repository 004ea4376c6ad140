#!/usr/bin/env bash
# Behaviour must not change under a refactor: runs colosim over every ready scenario (run,
# check, results JSON, CSV, timeline), --compare-modes, plan, a sweep, a search, the cluster
# example and its study, validate, gpus, trace, compare and the importers, and compares the
# SHA-256 of every output with a recorded manifest.
#
#   tests/same/same_outputs.sh check  COLOSIM [MANIFEST]   exit 1 and list what differs
#   tests/same/same_outputs.sh record COLOSIM [MANIFEST]   write the manifest anew
#
# MANIFEST defaults to tests/same/outputs.sha256 beside this script. Set SAME_KEEP=DIR to keep
# the outputs in DIR (compare two builds' outputs with diff -r). Outputs that need
# ../shared/data are made only when it is there; an entry whose output was not made is
# reported as skipped, not as a difference. Runs every command in one work folder, with the
# source tree reached through the link src/, so printed paths are the same on every machine.
# A change that is meant to change results re-records the manifest in the same commit.
set -euo pipefail
mode=${1:?usage: same_outputs.sh check|record COLOSIM [MANIFEST]}
colosim=$(realpath "${2:?usage: same_outputs.sh check|record COLOSIM [MANIFEST]}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
manifest=${3:-$here/outputs.sha256}
case $mode in check|record) ;; *) echo "same_outputs.sh: mode is check or record, not '$mode'" >&2; exit 2;; esac

work=${SAME_KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${SAME_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
cd "$work"
rm -rf src out
ln -s "$root" src
mkdir out
data=$root/../shared/data
jobs=$(nproc 2>/dev/null || echo 2)
export COLOSIM_GPU_PATH=src/models/gpus
# the source tree the binary was configured from (printed in its usage)
srcdir=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$(dirname "$colosim")/CMakeCache.txt" 2>/dev/null || true)
srcdir=${srcdir:-$root}

# One command: its standard output and error and its exit status go to out/NAME.txt.
c() {
    local name=$1; shift
    local rc=0
    "$colosim" "$@" > "out/$name.raw" 2>&1 || rc=$?
    # the binary names its source tree's GPU folder: the same on every clone once replaced
    sed "s|$srcdir|SRC|g" "out/$name.raw" > "out/$name.txt"
    rm "out/$name.raw"
    echo "exit $rc" >> "out/$name.txt"
}

# The studies take most of the time (the cluster sweep's interference-aware trials, 122 s of
# 251; the search's probes, 94 s): started first, beside everything else (their results are the
# same on any number of processes): 3 min 38 s where one after the other took 4 min 11 s, when
# ctest ran one test at a time (the README's test command now runs a test per core).
c sweep sweep src/scenarios/studies/p99_vs_load.cfg -o out/sweep -q -j 1 &
c search search src/scenarios/studies/capacity_by_mechanism.cfg -o out/search -q -j 1 &
c cluster_sweep sweep src/scenarios/studies/gpus_by_policy.cfg -o out/cluster_sweep -q -j "$jobs" &

# Each ready scenario: checked and run, its outputs its own files.
scenario() {
    local cfg=$1 stem
    stem=$(basename "$(dirname "$cfg")")_$(basename "$cfg" .cfg)
    c "check_$stem" check "$cfg"
    case $cfg in
        src/scenarios/cluster/*)
            c "run_$stem" run "$cfg" -o "out/run_$stem.json" ;;
        src/scenarios/validation/*)
            c "run_$stem" run "$cfg" -o "out/run_$stem.json" --csv "out/run_$stem.csv" ;;
        *)
            c "run_$stem" run "$cfg" -o "out/run_$stem.json" --csv "out/run_$stem.csv" \
                --timeline "out/run_$stem.timeline.json" ;;
    esac
}
for cfg in src/scenarios/*.cfg src/scenarios/cluster/*.cfg src/scenarios/validation/*.cfg; do
    scenario "$cfg"
done
c check_soak check src/scenarios/soak/soak_h100.cfg
c compare_modes run src/scenarios/compare_three_tenants_h100.cfg --compare-modes \
    -o out/compare_modes.json --csv out/compare_modes.csv
c run_seed_set run src/scenarios/mps_caps_h100.cfg --seed 7 --set duration_s=5 \
    --set tenants.resnet50.arrival.rate=400 -o out/run_seed_set.json
for cfg in mig_layout_h100 green_contexts_h100 mps_caps_h100 resnet50_bert_timeslice; do
    c "plan_$cfg" plan "src/scenarios/$cfg.cfg"
done
c compare compare out/run_scenarios_mps_caps_h100.json out/run_scenarios_mig_layout_h100.json

wait # the studies started first
rm -rf out/sweep/points out/search/search out/cluster_sweep/points

c validate validate src/validation -o out/validate.json
for t in run check plan live compare sweep search plot gpus import calibrate validate trace \
         llm nosuch; do
    c "help_$t" help "$t"
done
c help help
c no_command
c unknown_command frobnicate
c version version
c run_no_file run
c run_bad_option run --frobnicate
c gpus gpus
for g in h100-sxm a100-80gb orin-agx; do c "gpus_$g" gpus "$g"; done
c trace_resnet50 trace src/traces/resnet50_b4_v100.json --on h100-sxm,a100-80gb --partitions
c trace_classes trace src/traces/bert_b2_v100.json --classes
c trace_against trace src/traces/resnet101_b4_v100.json --against src/traces/resnet101_b4_h100.json
c trace_batch trace src/traces/mobilenetv2_b4_h100.json --on h100-sxm --batch 16 --cuda-graphs
c llm_transfer llm src/traces/llm/codellama-34b_a100.json --against src/traces/llm/codellama-34b_h100.json
c llm_attention llm src/traces/llm/validation/llama-3-8b_a100_attention.json
c import_capture import capture src/tests/fixtures/capture/two_inferences.txt \
    -o out/import_capture.json --model m
c import_vidur import vidur src/tests/fixtures/vidur/llama3_8b_a100_mlp.csv --gpu a100-80gb \
    --commit 7d47513 -o out/import_vidur.json
if [ -d "$data" ]; then
    ln -sfn "$data" shared
    orion=$(ls shared/orion_kernel_profiles_v100/*.csv 2>/dev/null | head -1 || true)
    [ -z "$orion" ] || c import_orion import orion "$orion" -o out/import_orion.json
    kineto=$(ls shared/hta_kineto_traces/*.json* 2>/dev/null | head -1 || true)
    [ -z "$kineto" ] || c import_kineto import kineto "$kineto" -o out/import_kineto.json
    gb=shared/gpu_benches
    [ ! -d "$gb" ] || c calibrate_gpu_benches calibrate import gpu-benches "$gb" --gpu h100-pcie \
        -o out/calibrate_gpu_benches.json
fi

# engine.events counts the events the engine popped, which its shortcuts exist to make fewer
# (docs/engine.md, "Fewer events than kernels"): every other byte stays the same
find out -type f -name '*.json' -exec sed -i -E 's/^( *)"events": [0-9]+/\1"events": "not compared"/' {} +
(cd out && find . -type f | LC_ALL=C sort | sed 's|^\./||' | xargs sha256sum) > outputs.now
if [ "$mode" = record ]; then
    cp outputs.now "$manifest"
    echo "same_outputs: recorded $(wc -l < outputs.now) outputs in $manifest"
    exit 0
fi
status=0 same=0 skipped=0
while read -r sum name; do
    now=$(awk -v n="$name" '$2 == n { print $1 }' outputs.now)
    if [ -z "$now" ]; then
        skipped=$((skipped + 1)); echo "skipped (not made here): $name"
    elif [ "$now" != "$sum" ]; then
        status=1; echo "DIFFERS: $name"
    else
        same=$((same + 1))
    fi
done < "$manifest"
while read -r sum name; do
    grep -q "  $name\$" "$manifest" || { status=1; echo "NEW (not in the manifest): $name"; }
done < outputs.now
echo "same_outputs: $same identical, $skipped skipped, status $status (work folder $work)"
exit $status
