#!/usr/bin/env bash
# Simulated seconds per wall second of the two-Llama-3-8B MPS scenario
# (scenarios/llm_two_llama_h100.cfg) at its own load (2 requests/s per tenant) and at 4x and 8x,
# 600 s of arrivals each, on one core. Prints a table; times, not a pass/fail test.
# Usage: tests/bench/bench_llm.sh [COLOSIM]   (default build/colosim)
set -euo pipefail
cd "$(dirname "$0")/../.."
colosim=${1:-build/colosim}
cfg=scenarios/llm_two_llama_h100.cfg
printf '%-10s %10s %12s %12s %14s\n' "load" "req/s" "simulated s" "wall s" "sim s / wall s"
for scale in 1 4 8; do
    out=$(mktemp)
    start=$(date +%s.%N)
    taskset -c 0 "$colosim" run "$cfg" --set duration_s=600 --set warmup_s=30 --set drain_s=60 \
        --set load_scale=$scale -o "$out" -q
    end=$(date +%s.%N)
    python3 - "$out" "$scale" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sc = d["scenario"]
sim = sc["duration_s"] + sc["drain_s"]
wall = float(sys.argv[4]) - float(sys.argv[3])
rps = sum(t["throughput_rps"] for t in d["tenants"])
print("%-10s %10.1f %12.0f %12.3f %14.0f" % ("x" + sys.argv[2], rps, sim, wall, sim / wall))
PY
    rm -f "$out"
done
