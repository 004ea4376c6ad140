#!/usr/bin/env bash
# Sweep benchmark (prints figures; not a test): a 200-point study on 1 core and on all cores,
# then on 1, 2 and 4 MPI ranks when colosim was built with MPI and mpirun is found; points per
# minute, speed-ups, and whether every run gave the same sweep.json.
# Usage: tests/bench/bench_sweep.sh [COLOSIM]
set -euo pipefail
colosim=${1:-./build/colosim}
study=$(dirname "$0")/study_200.cfg
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cores=$(nproc)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timed() { # name command... -> seconds
    local name=$1 t0 t1
    shift
    rm -rf "$out/$name"
    t0=$(date +%s.%N)
    "$@" -o "$out/$name" -q >/dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc -l
}
same() { cmp -s "$out/j1/sweep.json" "$out/$1/sweep.json" && echo identical || echo DIFFERENT; }
line() { # label seconds base-seconds name
    printf "%-22s %6.2f s  %7.0f points/min  speed-up %.2f  (results %s)\n" "$1" "$2" \
        "$(echo "12000 / $2" | bc -l)" "$(echo "$3 / $2" | bc -l)" "$(same "$4")"
}
t1=$(timed j1 "$colosim" sweep "$study" -j 1)
tn=$(timed jn "$colosim" sweep "$study" -j "$cores")
echo "200 points, this machine: $cores cores"
line "local, 1 core" "$t1" "$t1" j1
line "local, $cores cores" "$tn" "$t1" jn
if command -v mpirun >/dev/null && "$colosim" sweep --help | grep -q mpirun &&
    ldd "$colosim" | grep -q libmpi; then
    m1=$(timed m1 mpirun --oversubscribe -np 1 "$colosim" sweep "$study")
    line "MPI, 1 rank" "$m1" "$m1" m1
    for r in 2 4; do
        m=$(timed "m$r" mpirun --oversubscribe -np "$r" "$colosim" sweep "$study")
        line "MPI, $r ranks" "$m" "$m1" "m$r"
    done
else
    echo "MPI: colosim not built with MPI or no mpirun; MPI figures left out"
fi
