#!/usr/bin/env bash
# Cost per event against the number of kernels running at once (issue 28): N tenants under MPS,
# each a closed loop of one client that sends its next request as soon as one returns, so N
# kernels (of tests/bench/data/synthetic50_h100.json) always run together on an H100. Prints
# CPU seconds, events and ns per event for N = 1, 4, 16, 48 (or the Ns given after COLOSIM).
# Figures, not a pass/fail test; best of three runs each.
# Usage: tests/bench/bench_concurrency.sh [COLOSIM [N...]]   (default build/colosim 1 4 16 48)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
colosim=$(realpath "${1:-$here/../../build/colosim}")
shift || true
[ $# -gt 0 ] || set -- 1 4 16 48
seconds=${BENCH_SECONDS:-10}
tmp=$(mktemp -d /tmp/colosim-bench-concurrency.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf '%6s %10s %12s %10s\n' "kernels" "cpu s" "events" "ns/event"
for n in "$@"; do
    cfg=$tmp/mps_$n.cfg
    {
        echo "gpu = \"h100-sxm\"; seed = 1; duration_s = $seconds; warmup_s = 0.5;"
        echo "sharing = { mode = \"mps\"; cuda = \"13.0\"; };"
        echo "tenants = ("
        for i in $(seq 1 "$n"); do
            sep=","; [ "$i" -eq "$n" ] && sep=""
            echo "  { name = \"t$i\"; trace = \"$here/data/synthetic50_h100.json\";"
            echo "    arrival = { process = \"closed\"; clients = 1; }; memory_gib = 0.5; }$sep"
        done
        echo ");"
    } > "$cfg"
    best=
    for _ in 1 2 3; do
        /usr/bin/time -o "$tmp/time" -f "%U" "$colosim" run "$cfg" -q -o "$tmp/r.json"
        t=$(cat "$tmp/time")
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
    done
    events=$(jq '.engine.events' "$tmp/r.json")
    awk -v n="$n" -v t="$best" -v e="$events" 'BEGIN { printf "%6d %10.2f %12d %10.0f\n", n, t, e, t / e * 1e9 }'
done
