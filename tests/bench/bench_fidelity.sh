#!/bin/sh
# Benchmark (not a test): merged kernels against exact, on every shipped scenario.
#   sh tests/bench/bench_fidelity.sh [COLOSIM [TOLERANCE [SCENARIO...]]]
# Runs each scenario (default: scenarios/*.cfg) with fidelity.kernels = "exact" and "merged"
# (fidelity.tolerance = TOLERANCE, default 0.25), and prints per scenario: events and CPU time
# of both, their ratios, and the largest relative difference over its tenants of p50, p99 and
# throughput (merged against exact). Then the same over all scenarios (median and largest).
# Needs jq and /usr/bin/time.
set -eu
colosim=${1:-build/colosim}
tol=${2:-0.25}
[ $# -ge 2 ] && shift 2 || shift $#
[ $# -gt 0 ] || set -- scenarios/*.cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '| scenario | events exact | events merged | ratio | CPU s exact | CPU s merged | speed-up | max dp50 %% | max dp99 %% | max dthroughput %% |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n'
for f in "$@"; do
    n=$(basename "$f" .cfg)
    for mode in exact merged; do
        /usr/bin/time -f "%U" -o "$tmp/$mode.time" "$colosim" run "$f" -q -o "$tmp/$mode.json" \
            --set fidelity.kernels="$mode" --set fidelity.tolerance="$tol" 2>"$tmp/$mode.err" ||
            { echo "| $n | failed: $(head -1 "$tmp/$mode.err") |"; continue 2; }
    done
    jq -n --slurpfile e "$tmp/exact.json" --slurpfile m "$tmp/merged.json" \
        --arg name "$n" --arg te "$(tail -1 "$tmp/exact.time")" --arg tm "$(tail -1 "$tmp/merged.time")" '
        def rel(a; b): if (a == null or b == null or a == 0) then 0 else (((b - a) / a) | fabs) * 100 end;
        def worst(k): [range(0; $e[0].tenants | length) as $i |
            rel($e[0].tenants[$i] | k; $m[0].tenants[$i] | k)] | max // 0;
        ($e[0].engine.events) as $ee | ($m[0].engine.events) as $em |
        "| \($name) | \($ee) | \($em) | \((($em / $ee) * 1000 | round) / 1000) | \($te) | \($tm) | " +
        "\(if ($tm | tonumber) > 0 then ((($te | tonumber) / ($tm | tonumber)) * 100 | round) / 100 else "-" end) | " +
        "\(worst(.latency_ms.p50) * 10 | round / 10) | \(worst(.latency_ms.p99) * 10 | round / 10) | " +
        "\(worst(.throughput_rps) * 10 | round / 10) |"' -r | tee -a "$tmp/rows"
done
awk -F'|' 'BEGIN { n = 0 } NF > 10 && $3 ~ /^ *[0-9]+ *$/ { p50[n] = $9 + 0; p99[n] = $10 + 0; thr[n] = $11 + 0; n++ }
    function med(a, n,   i, j, t) { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++)
        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return n ? (n % 2 ? a[int(n / 2)] : (a[n / 2 - 1] + a[n / 2]) / 2) : 0 }
    function mx(a, n,   i, m) { m = 0; for (i = 0; i < n; i++) if (a[i] > m) m = a[i]; return m }
    END { printf "\n%d scenarios: worst tenant per scenario, median / largest: p50 %.1f / %.1f %%, p99 %.1f / %.1f %%, throughput %.1f / %.1f %%\n",
        n, med(p50, n), mx(p50, n), med(p99, n), mx(p99, n), med(thr, n), mx(thr, n) }' "$tmp/rows"
