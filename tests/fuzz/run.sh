#!/usr/bin/env bash
# Runs one fuzz target on its seed corpus (README in this folder).
#   run.sh BUILD TARGET [libFuzzer options]   fuzz (a COLOSIM_FUZZ build): e.g. -runs=5000 for a
#                                             smoke run, -max_total_time=3600 -fork=2 for a long one
#   run.sh --replay BUILD TARGET              run every seed and saved crash once (any build)
# Seeds are assembled afresh in BUILD/fuzz/seeds/TARGET from the project's fixtures and, where
# present, ../shared/data; what the fuzzer finds grows BUILD/fuzz/corpus/TARGET; crashing inputs
# land in BUILD/fuzz/crashes/TARGET/ (copy them into regressions/TARGET/ with the fix).
set -euo pipefail
replay=0
if [ "${1:-}" = --replay ]; then replay=1; shift; fi
[ $# -ge 2 ] || { echo "usage: run.sh [--replay] BUILD TARGET [libFuzzer options]" >&2; exit 2; }
build=$(cd "$1" && pwd); target=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
data=$src/../shared/data
bin=$build/tests/fuzz/fuzz_$target
[ -x "$bin" ] || { echo "run.sh: no fuzz target $bin (build it first)" >&2; exit 2; }

# The targets write each input to a scratch file: on tmpfs that is about ten times faster.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

seeds=$build/fuzz/seeds/$target
rm -rf "$seeds"; mkdir -p "$seeds" "$build/fuzz/corpus/$target" "$build/fuzz/crashes/$target"
n=0
add() { # add FILE...: copies each existing file into the seeds (name made unique)
    for f in "$@"; do
        [ -f "$f" ] || continue
        n=$((n + 1)); cp "$f" "$seeds/$(printf %03d $n)-$(basename "$f")"
    done
}
head_of() { # head_of LINES FILE...: the first lines of each existing file
    local lines=$1; shift
    for f in "$@"; do
        [ -f "$f" ] || continue
        n=$((n + 1)); head -n "$lines" "$f" > "$seeds/$(printf %03d $n)-$(basename "$f")"
    done
}
max_len=16384
case $target in
scenario)
    add "$src"/tests/fixtures/*.cfg "$src"/tests/fixtures/cluster/*.cfg "$src"/scenarios/*.cfg \
        "$src"/scenarios/*/*.cfg "$src"/tests/golden/bad/*.cfg ;;
trace)
    add "$src"/traces/*.json "$src"/tests/fixtures/*.json "$src"/tests/fixtures/traces_bad/*.json
    max_len=70000 ;;
kineto)
    # each trace both unzipped (the JSON reader) and as published, gzip (zlib's path: a flipped
    # byte or a cut stream must be an error, issue 22); the target reads either, as the importer
    for f in "$data"/hta_kineto_traces/*.json.gz; do
        [ -f "$f" ] || continue
        n=$((n + 1)); gzip -dc "$f" > "$seeds/$(printf %03d $n)-$(basename "$f" .gz)"
    done
    add "$data"/hta_kineto_traces/*.json.gz "$here"/seeds/kineto/*
    max_len=65536 ;;
orion)
    add "$data"/orion_kernel_profiles_v100/*.csv "$data"/orion_kernel_profiles_h100/*.csv ;;
vidur)
    add "$src"/tests/fixtures/vidur/*.csv ;;
llm)
    add "$src"/traces/llm/*.json "$here"/seeds/llm/*
    max_len=200000 ;;
nsys)
    add "$here"/seeds/nsys/*
    max_len=32768 ;;
capture)
    add "$src"/tests/fixtures/capture/*.txt "$src"/traces/captured/*/*.txt ;;
ncu)
    add "$src"/tests/fixtures/capture/*.csv ;;
azure)
    head_of 300 "$src"/traces/arrivals/*.csv "$data"/azure_llm_2023/*.csv
    add "$src"/tests/golden/bad/llm_empty_output.csv ;;
mooncake)
    head_of 300 "$data"/mooncake_fast25/*.jsonl
    add "$src"/tests/golden/bad/mooncake_malformed.jsonl ;;
calibration)
    add "$src"/tests/fixtures/calibrated/*.json "$src"/tests/fixtures/calibration_bad/*.json \
        "$src"/models/calibrated/*.json ;;
results)
    # results of small runs of the project's own scenarios, made with this build's colosim
    colosim=$build/colosim
    if [ -x "$colosim" ]; then
        for cfg in two_tenants only_a sharing; do
            "$colosim" run "$src/tests/fixtures/$cfg.cfg" --set duration_s=0.5 --set warmup_s=0.1 -q \
                -o "$seeds/run-$cfg.json" >/dev/null 2>&1 || true
        done
        "$colosim" run "$src/tests/fixtures/two_tenants.cfg" --compare-modes --set duration_s=0.5 \
            --set warmup_s=0.1 -q -o "$seeds/modes.json" >/dev/null 2>&1 || true
    fi
    add "$here"/seeds/results/*
    max_len=65536 ;;
gpu)
    add "$src"/models/gpus/*.cfg "$src"/tests/fixtures/gpus_bad/*.cfg ;;
study)
    add "$src"/scenarios/studies/*.cfg "$src"/tests/fixtures/study*.cfg "$here"/seeds/study/* ;;
cluster)
    add "$src"/tests/fixtures/cluster/*.cfg "$src"/scenarios/cluster/*.cfg "$here"/seeds/cluster/* ;;
gpu_benches)
    # the first byte picks the benchmark, in COLO_GB_KINDS order
    k=0
    for kind in gpu-stream gpu-l2-cache gpu-cache gpu-latency gpu-small-kernels gpu-roofline gpu-strides; do
        for f in "$data"/gpu_benches/$kind/*.txt; do
            [ -f "$f" ] || continue
            n=$((n + 1))
            { printf "\\$(printf %03o $k)"; cat "$f"; } > "$seeds/$(printf %03d $n)-$kind-$(basename "$f")"
        done
        k=$((k + 1))
    done ;;
validate)
    add "$src"/validation/*.cfg ;;
*)
    echo "run.sh: unknown target '$target'" >&2; exit 2 ;;
esac
regress=$here/regressions/$target
if [ -z "$(ls -A "$seeds")" ]; then
    # only the data beside the repository seeds these targets: without it a replay has only the
    # saved regressions to run, and none at all is a skip (CTest's 77), not a failure
    if [ $replay = 1 ] && [ ! -d "$data" ]; then
        if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
            echo "run.sh: $data is absent: replaying $target's saved regressions only"
            exec "$bin" "$regress"
        fi
        echo "run.sh: skipped: $target's seeds are in $data, which is absent" >&2
        exit 77
    fi
    echo "run.sh: no seeds for $target" >&2
    exit 1
fi

# libconfig 1.5 (Debian 12) leaks a string token when a file has a syntax error after it
# (hyperrealm/libconfig#142, fixed in 1.7.3): not ours to fix, and only on files it refuses.
export LSAN_OPTIONS="suppressions=$here/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

dirs=("$seeds")
[ -d "$regress" ] && dirs+=("$regress")
if [ $replay = 1 ]; then
    exec "$bin" "${dirs[@]}"
fi
exec "$bin" -max_len=$max_len -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/crashes/$target/" "$@" "$build/fuzz/corpus/$target" "${dirs[@]}"
