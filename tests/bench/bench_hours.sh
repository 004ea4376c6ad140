#!/bin/sh
# Benchmark (not a test): the hour-long runs under MPS, MIG and time-slicing, as heap steps per
# kernel: wall time over the kernels run, divided by one event-queue step at 10 pending
# (bench_event_queue, measured in the same run), for one or more builds.
#   sh tests/bench/bench_hours.sh [SECONDS] COLOSIM... [-- SET...]
# SECONDS: simulated seconds (default 3600, the hour); each COLOSIM is a build's binary; SETs
# (after --) are --set overrides for every run (fidelity.kernels=merged). Builds alternate, so
# drift on a shared machine falls on both. Needs /usr/bin/time, jq, and
# build/tests/bench_event_queue (or BENCH_EQ).
set -eu
secs=3600
case ${1:-} in [0-9]*) secs=$1; shift ;; esac
bins=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins="$bins $1"; shift; done
[ "${1:-}" = "--" ] && shift
sets=""
for s in "$@"; do sets="$sets --set $s"; done
here=$(cd "$(dirname "$0")" && pwd)
eq=${BENCH_EQ:-build/tests/bench_event_queue}
step=$("$eq" 5000000 | awk '$1 == 10 { printf "%.2f", 1e9 / $2 }')
echo "one event-queue step at 10 pending: $step ns"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| run | build | wall s | kernels | events | ns per kernel | heap steps per kernel |\n'
printf '|---|---|---:|---:|---:|---:|---:|\n'
for cfg in mps_hour_4tenants mig_hour_7x1g timeslice_hour_4tenants; do
    for b in $bins; do
        # shellcheck disable=SC2086
        /usr/bin/time -f "%e" -o "$tmp/t" "$b" run "$here/data/$cfg.cfg" -q -o "$tmp/r.json" \
            --set duration_s="$secs" $sets
        wall=$(tail -1 "$tmp/t")
        # the requests arriving in the window, 50 kernels each (the warmup's, 0.3 % of the hour,
        # are left out, and those in flight at the end count whole)
        jq -r --arg run "$cfg" --arg b "$b" --arg wall "$wall" --arg step "$step" '
            ([.tenants[].arrived] | add) as $req | ($req * 50) as $k |
            "| \($run) | \($b) | \($wall) | \($k) | \(.engine.events) | " +
            "\(($wall | tonumber) * 1e9 / $k * 10 | round / 10) | " +
            "\(($wall | tonumber) * 1e9 / $k / ($step | tonumber) * 100 | round / 100) |"' "$tmp/r.json"
    done
done
