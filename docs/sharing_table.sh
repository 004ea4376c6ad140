#!/usr/bin/env bash
# Prints the table of docs/sharing.md ("What waits for what"): a 3 us kernel of 4 blocks at 200
# requests/s beside a background kernel of 8 waves that fills the GPU, in a closed loop, under
# each sharing mechanism, for background blocks of 10 us, 100 us and 1 ms, on an H100, a Jetson
# AGX Orin and (MIG) an A100. The small kernel's wait is its latency minus its time alone; the
# background's slowdown is its latency over its time alone on the whole GPU (what a partition
# costs it, too); a small tenant served at under 95 % of its arrivals is marked: its queue grows
# through the run, so its wait depends on how long the run is. Runs scenarios/small_beside_big_h100.cfg
# and scenarios/small_beside_big_mig_a100.cfg with --set. Usage: docs/sharing_table.sh [COLOSIM]
set -euo pipefail
cd "$(dirname "$0")/.."
colosim=${1:-build/colosim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

alone=0 # the background's time alone on the whole GPU, ms (from the first row of each block length)
row() { # row GPU LABEL BLOCKS SCENARIO SETTINGS...: one line of the table
    local gpu=$1 label=$2 blocks=$3 scenario=$4; shift 4
    local args=(--set "duration_s=4.0" --set "tenants.small.trace=../traces/interference/small_4_blocks_$gpu.json"
                --set "tenants.background.trace=../traces/interference/fill_${blocks}_blocks_$gpu.json")
    [ "$gpu" = h100 ] || args+=(--set "gpu=$(jq -r .gpu traces/interference/small_4_blocks_$gpu.json)")
    for s in "$@"; do args+=(--set "$s"); done
    "$colosim" run "$scenario" -q -o "$out/r.json" "${args[@]}"
    [ "$alone" != 0 ] || alone=$(jq '.tenants[] | select(.name == "background") | .isolated_ms' "$out/r.json")
    jq -r --arg gpu "$gpu" --arg mech "$label" --arg blocks "$blocks" --argjson alone "$alone" '
        (.tenants[] | select(.name == "small")) as $s | (.tenants[] | select(.name == "background")) as $b |
        (if $s.throughput_rps < 0.95 * 200 then " (queue grows: \($s.throughput_rps | round)/s served)" else "" end) as $q |
        "| \($gpu) | \($blocks) | \($mech) | \(($s.latency_ms.mean - $s.isolated_ms) * 1000 | round)\($q) | \(($s.latency_ms.p99 - $s.isolated_ms) * 1000 | round) | \((($b.latency_ms.mean / $alone - 1) * 100) | round) % |"' "$out/r.json"
}

sc=scenarios/small_beside_big_h100.cfg
echo "| GPU | background blocks | mechanism | small kernel's wait, mean us | p99 us | background slower by |"
echo "|---|---|---|---:|---:|---:|"
for gpu in h100 orin; do
    half=$([ $gpu = h100 ] && echo 66 || echo 8)
    green=$([ $gpu = h100 ] && echo 64 || echo 8) # Hopper: multiples of 8
    for blocks in 10us 100us 1ms; do
        alone=0
        row $gpu "MPS" $blocks $sc
        row $gpu "MPS, stream priorities" $blocks $sc scheduler.policy=stream_priority
        row $gpu "MPS, 50 % active threads each" $blocks $sc \
            tenants.small.active_thread_percentage=50 tenants.background.active_thread_percentage=50
        row $gpu "MPS, 50 % active threads, small only" $blocks $sc tenants.small.active_thread_percentage=50
        row $gpu "MPS static partitions $half+$half" $blocks $sc sharing.static_partitions=true \
            tenants.small.sms=$half tenants.background.sms=$half
        row $gpu "Green Contexts $green+$green" $blocks $sc sharing.mode=green \
            tenants.small.sms=$green tenants.background.sms=$green
        row $gpu "time-slicing" $blocks $sc sharing.mode=timeslice
        row $gpu "MPS, reserve scheduler" $blocks $sc scheduler.policy=reserve
    done
done
for blocks in 10us 100us 1ms; do
    alone=0
    row a100 "MPS" $blocks $sc gpu=a100-40gb
    row a100 "MIG 3g.20gb + 3g.20gb" $blocks scenarios/small_beside_big_mig_a100.cfg
done
