#!/usr/bin/env bash
# The figures of `colosim plot`, read from the gnuplot scripts it writes for the fixtures in
# tests/fixtures/plot/ (a sweep, a search and a run whose numbers are chosen below): titles in
# words that name the GPU and the scenario (no file path), the key outside the data, one y range
# for every panel, overloaded points as a series of their own, each series its own dash and
# point type, capacity bars grouped by GPU with brackets and value labels, and the CDF's SLO.
# A stand-in gnuplot keeps each script, so this runs without gnuplot; where gnuplot is
# installed, the same figures are then drawn by it, with no warning.
#   plot_figures.sh COLOSIM SRC OUT
set -euo pipefail
colosim=$(realpath "$1"); src=$(realpath "$2"); out=$3
rm -rf "$out"; mkdir -p "$out"; out=$(realpath "$out")
fail() { echo "FAIL: $*" >&2; exit 1; }
has() { grep -qF -- "$2" "$1" || fail "$(basename "$1"): no '$2'"; }
hasnt() { ! grep -qF -- "$2" "$1" || fail "$(basename "$1"): '$2' should not be there"; }
block() { # FILE NAME ROWS: data block $NAME holds exactly ROWS (one per line)
    local got; got=$(sed -n "/^\\\$$2 << EOD\$/,/^EOD\$/p" "$1" | sed '1d;$d')
    [ "$got" = "$3" ] || fail "$(basename "$1"): block \$$2 is '$got', not '$3'"
}
no_path() { # the titles name no file
    ! grep -E '^set (label 90|title|multiplot)' "$1" | grep -qE 'fixtures|\.cfg|\.json' ||
        fail "$(basename "$1"): a file path in a title"
}
cd "$src" # the fixtures name tests/fixtures/two_tenants.cfg from here
export COLOSIM_GPU_PATH="$src/models/gpus"
fx=tests/fixtures/plot

# gnuplot's stand-in: keeps the script as BASE.EXT.gp and writes an empty figure
cat > "$out/gnuplot" <<'EOF'
script=$(cat)
to=$(printf '%s\n' "$script" | sed -n "s/^set output '\(.*\)'$/\1/p" | head -1)
printf '%s\n' "$script" > "${to%.tmp}.gp"
: > "$to"
EOF
export COLOSIM_GNUPLOT="bash $out/gnuplot"

# 1. A sweep: p99 of two services (SLOs 15 and 100 ms) against load, by mechanism; the batch
# service at 2x under time-slicing left 7 requests unfinished (p99 15000 ms).
"$colosim" plot sweep $fx/sweep.json -o "$out/sweep" > /dev/null
s=$out/sweep.svg.gp
has "$s" 'set label 901 "p99 latency against load, by sharing mechanism"'
has "$s" 'Two test services on one H100 — H100 SXM5 80GB HBM3; 9 s measured after 1 s warm-up'
no_path "$s"
has "$s" 'set xlabel "load (x the scenario'"'"'s arrival rates)"'
has "$s" 'title "time-slicing"'
has "$s" 'title "MPS"'
# the key is drawn once, above the panels; the panels have none
has "$s" 'unset key'
has "$s" 'set key at screen 0.5,'
[ "$(grep -c '^set key' "$s")" = 1 ] || fail "sweep: more than one key"
# one y range for both panels: 4 ms to 15000 ms on whole decades
[ "$(grep -c '^set yrange' "$s")" = 2 ] || fail "sweep: a y range per panel" # + the key's [0:1]
has "$s" 'set yrange [1:100000]'
# the overloaded point, a series of its own in the batch panel only, and named in the key
# (timeslice at 2x left 7 requests; MPS at 2x completed 270 of its 400 requests within the
# window: 32 % short; the others' 399.6 of 400 are not)
block "$s" o1 "$(printf '2 15000\n2 900')"
hasnt "$s" '$o0'
has "$s" '$o1 using 1:2 with points ls 90 notitle'
has "$s" "title 'overloaded (its queue grew)'"
# each service's SLO, drawn and named
has "$s" '15 with lines ls 91'
has "$s" '100 with lines ls 91'
has "$s" 'set label 1 "SLO\n15 ms"'
# series told apart by dash and point type, not only by colour
has "$s" 'set style line 1 lc rgb '"'"'#0072B2'"'"' dt 1 lw 3.20 pt 7'
has "$s" 'set style line 2 lc rgb '"'"'#D55E00'"'"' dt (14,6) lw 2.60 pt 5'

# 1b. LLM tenants (issue 41): TTFT p99 against load with each service's slo_ttft_ms as its SLO
# line, and output tokens/s with none (two Llama-3-8B services, 10 s runs, trimmed).
"$colosim" plot sweep $fx/llm_sweep.json --x load_scale --by sharing.mode --y ttft_p99 \
    -o "$out/ttft" > /dev/null
has "$out/ttft.svg.gp" 'set label 901 "Time to first token p99 against load, by sharing mechanism"'
has "$out/ttft.svg.gp" '500 with lines ls 91'
has "$out/ttft.svg.gp" 'set label 1 "SLO\n500 ms"'
"$colosim" plot sweep $fx/llm_sweep.json --x load_scale --by sharing.mode --y tpot_p99 \
    -o "$out/tpot" > /dev/null
has "$out/tpot.svg.gp" '50 with lines ls 91'
"$colosim" plot sweep $fx/llm_sweep.json --x load_scale --by sharing.mode --y tokens_per_s \
    -o "$out/tokens" > /dev/null
has "$out/tokens.svg.gp" 'output tokens/s'
hasnt "$out/tokens.svg.gp" 'with lines ls 91 notitle'

# 2. The same sweep's SLO attainment: the 99 % goal line, one linear range for both panels.
"$colosim" plot sweep $fx/sweep.json --y slo_attainment -o "$out/attain" > /dev/null
a=$out/attain.svg.gp
has "$a" 'set label 901 "Requests within SLO against load, by sharing mechanism"'
has "$a" "title '99 % of requests within SLO'"
has "$a" 'set yrange [98.9792:100.04]'

# 3. A search: two GPUs x two mechanisms; one point below lo, one that cannot run.
"$colosim" plot search $fx/search.json -o "$out/search" > /dev/null
c=$out/search.svg.gp
has "$c" 'set label 901 "Capacity: the highest load meeting every SLO for 99 % of requests"'
has "$c" 'set label 902 "two'
has "$c" '95 % lower confidence bound over 3 replications; 9 s measured after 1 s warm-up'
no_path "$c"
# grouped by GPU, named in words on the axis; the mechanisms in the key, outside the data
has "$c" 'set xtics scale 0 ("H100 SXM5 80GB HBM3" 0.5, "H200 SXM5 141GB HBM3e" 3.5)'
has "$c" 'set key outside right top'
has "$c" 'bar(g, s) = g * 3 + s'
# x group, capacity, whisker from and to (a file without replications' capacities: the
# bisection's bracket, +2 %), value label, series
has "$c" '0 0.5 0.5 0.51 "0.500" 0'
has "$c" '0 1.06 1.06 1.0812 "1.06" 1'
has "$c" '1 0.05 0.05 0.05 "< 0.05" 0'
has "$c" '1 0 0 0 "cannot run" 1'
has "$c" 'with vectors heads'
has "$c" 'title "bisection bracket (+2 %)"'
# as colosim search writes them: each replication's own capacity and the CI of their mean
if command -v jq > /dev/null; then
    jq '.points |= map(if .capacity then .replications = {capacities: [.capacity], mean: .capacity,
        ci: [.capacity * 0.9, .capacity * 1.2], ci_level: 0.95} else . end)' $fx/search.json \
        > "$out/search_ci.json"
    "$colosim" plot search "$out/search_ci.json" -o "$out/search_ci" > /dev/null
    has "$out/search_ci.svg.gp" '0 0.5 0.45 0.6 "0.500" 0'
    has "$out/search_ci.svg.gp" "title \"replications' capacities, 95 % CI\""
fi
has "$c" 'with labels offset 0,0.8'

# 4. A run's latency distribution: front meets 95 % within 15 ms; batch 20 % within 100 ms,
# 12 of 400 requests left at the end.
"$colosim" plot cdf $fx/run.json -o "$out/cdf" > /dev/null
d=$out/cdf.svg.gp
has "$d" 'set label 901 "Latency distribution of each service, from its percentiles"'
has "$d" 'MPS, load x2, H100 SXM5 80GB HBM3; 9 s measured after 1 s warm-up; latencies exact'
no_path "$d"
has "$d" 'set arrow from 15, graph 0 to 15, graph 1 nohead ls 91'
has "$d" "set label 'SLO 15 ms'"
has "$d" "set label 'SLO 100 ms'"
block "$d" s0 '15 1.30103' # 95 % within: -log10(1 - 0.95) on the tail axis
has "$d" 'title "front: 95.0 % within 15 ms"'
has "$d" 'title "batch: 20.0 % within 100 ms, 12 of 400 left at end"'
has "$d" '$o1 using 1:2 with points ls 90'
hasnt "$d" '$o0 using'
has "$d" 'set key outside right top'
# results that carry the distribution (latency_ms.cdf, as colosim run writes them): the curve is
# drawn from it, every point, as a line
if command -v jq > /dev/null; then
jq '.tenants[0].latency_ms.cdf = [[1,0],[2,0.5],[3,0.9],[4,0.99],[5,1]]' $fx/run.json > "$out/run_cdf.json"
jq '.tenants[1].latency_ms.cdf = [[20,0],[50,0.5],[90,0.9],[200,0.99],[300,1]]' "$out/run_cdf.json" > "$out/run_cdf2.json"
"$colosim" plot cdf "$out/run_cdf2.json" -o "$out/cdf2" > /dev/null
d=$out/cdf2.svg.gp
has "$d" 'set label 901 "Latency distribution of each service"'
block "$d" d0 "$(printf '1 0\n2 0.30103\n3 1\n4 2\n5 3.5')"
has "$d" '$d0 using 1:2 with lines ls 1'
fi

# 5. gnuplot itself, where installed: every figure drawn, no warning (an empty series warns).
unset COLOSIM_GNUPLOT
if command -v gnuplot > /dev/null; then
    for fig in "sweep $fx/sweep.json" "sweep $fx/sweep.json --y slo_attainment" \
        "search $fx/search.json" "cdf $fx/run.json"; do
        # shellcheck disable=SC2086
        "$colosim" plot $fig -o "$out/real" > /dev/null 2> "$out/real.err" ||
            fail "gnuplot: plot $fig: $(cat "$out/real.err")"
        ! grep -qi warning "$out/real.err" || fail "gnuplot: plot $fig: $(cat "$out/real.err")"
        head -c 8 "$out/real.png" | grep -q PNG || fail "plot $fig: no PNG"
        grep -q '<svg' "$out/real.svg" || fail "plot $fig: no SVG"
    done
else
    echo "note: gnuplot is not installed; the scripts were checked, not drawn"
fi
echo "plot_figures: ok"
