#!/usr/bin/env bash
# Sweep benchmark (prints figures; not a test): a 200-point study on 1 core and on all cores,
# points per minute and the speed-up. Usage: tests/bench/bench_sweep.sh [COLOSIM]
set -euo pipefail
colosim=${1:-./build/colosim}
study=$(dirname "$0")/study_200.cfg
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cores=$(nproc)
run() { # jobs -> seconds
    rm -rf "$out/j$1"
    local t0 t1
    t0=$(date +%s.%N)
    "$colosim" sweep "$study" -j "$1" -o "$out/j$1" -q >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
t1=$(run 1)
tn=$(run "$cores")
cmp -s "$out/j1/sweep.json" "$out/j$cores/sweep.json" && same=identical || same=DIFFERENT
printf "200 points, 1 core:  %6.2f s  %7.0f points/min\n" "$t1" "$(echo "12000 / $t1" | bc -l)"
printf "200 points, %d cores: %6.2f s  %7.0f points/min  speed-up %.2f  (results %s)\n" \
    "$cores" "$tn" "$(echo "12000 / $tn" | bc -l)" "$(echo "$t1 / $tn" | bc -l)" "$same"
