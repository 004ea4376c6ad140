#!/usr/bin/env bash
# validation_report.sh: the validation study's table (docs/validation.md) from live results.
# For each LIVE_DIR/NAME.json, simulates scenarios/validation/NAME.cfg with the seed and
# overrides the live run recorded, writes LIVE_DIR/NAME.sim.json and NAME.compare.txt
# (colosim compare), and prints one markdown row per tenant (predicted vs measured p50, p99,
# throughput, and the errors), then the median absolute errors against the round's goals.
#   calibrate/validation_report.sh LIVE_DIR [COLOSIM]
set -euo pipefail
dir=${1:?usage: validation_report.sh LIVE_DIR [COLOSIM]}
colosim=${2:-./build/colosim}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
echo "| scenario | mechanism | tenant | p50 sim | p50 live | err | p99 sim | p99 live | err | tput sim | tput live | err |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
for live in "$dir"/*.json; do
    case "$live" in *.sim.json) continue ;; esac
    n=$(basename "$live" .json)
    sets=()
    while IFS= read -r s; do sets+=(--set "$s"); done < <(jq -r '.scenario.overrides[]' "$live")
    "$colosim" run "scenarios/validation/$n.cfg" "${sets[@]}" -q -o "$dir/$n.sim.json"
    "$colosim" compare "$dir/$n.sim.json" "$live" >"$dir/$n.compare.txt"
    jq -r --slurpfile sim "$dir/$n.sim.json" --arg n "$n" '
        def err(a; b): if a > 0 then (b - a) / a * 100 else 0 end;
        .scenario.sharing.mode as $mode |
        .tenants[] as $t |
        ($sim[0].tenants[] | select(.name == $t.name)) as $s |
        if $t.error != null or $t.completed == 0 then
            "| \($n) | \($mode) | \($t.name) | failed: \($t.error // "no requests") |||||||||"
        else
            [$n, $mode, $t.name,
             $s.latency_ms.p50, $t.latency_ms.p50, err($t.latency_ms.p50; $s.latency_ms.p50),
             $s.latency_ms.p99, $t.latency_ms.p99, err($t.latency_ms.p99; $s.latency_ms.p99),
             $s.throughput_rps, $t.throughput_rps, err($t.throughput_rps; $s.throughput_rps)]
            | "| \(.[0]) | \(.[1]) | \(.[2]) | \(.[3]*100|round/100) | \(.[4]*100|round/100) | \(.[5]|round)% | \(.[6]*100|round/100) | \(.[7]*100|round/100) | \(.[8]|round)% | \(.[9]*10|round/10) | \(.[10]*10|round/10) | \(.[11]|round)% |"
        end' "$live" | tee -a "$rows"
done
# errors are (sim - live) / live: positive when the simulator predicts more than was measured
awk -F'|' 'BEGIN { n = 0 } $5 ~ /[0-9]/ && $7 ~ /%/ {
        gsub(/[ %]/, "", $7); gsub(/[ %]/, "", $10); gsub(/[ %]/, "", $13);
        e1 = $7 + 0; e2 = $10 + 0; e3 = $13 + 0
        p50[n] = e1 < 0 ? -e1 : e1; p99[n] = e2 < 0 ? -e2 : e2; tp[n] = e3 < 0 ? -e3 : e3; n++ }
    function median(a, n,   i, j, t) {
        for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2 }
    END { if (!n) { print "\nno tenant measured"; exit }
          printf "\n%d tenants: median |error| p50 %.1f %% (goal 10), p99 %.1f %% (goal 15), throughput %.1f %% (goal 5)\n",
                 n, median(p50, n), median(p99, n), median(tp, n) }' "$rows"
