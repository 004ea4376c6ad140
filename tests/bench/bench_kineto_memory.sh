#!/usr/bin/env bash
# Peak memory and wall time of `colosim import kineto` on a 141 MB profile (HTA's AlexNet trace
# repeated, tests/bench/make_big_kineto.py, written to /tmp and not kept), plain and gzipped,
# whole and with one annotation, for each colosim given (e.g. a build from before a change and
# one from after). Prints a table; figures, not a pass/fail test.
# Usage: tests/bench/bench_kineto_memory.sh [COLOSIM...]   (default build/colosim)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -gt 0 ] || set -- "$here/../../build/colosim"
tmp=$(mktemp -d /tmp/colosim-kineto-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/make_big_kineto.py" "$tmp/big.json" 141
gzip -1 -k "$tmp/big.json"
printf '%-40s %-13s %-12s %10s %12s\n' "colosim" "input" "selection" "wall s" "peak RSS KB"
for colosim in "$@"; do
    for input in big.json big.json.gz; do
        for sel in whole annotation; do
            args=()
            [ "$sel" = whole ] || args=(--annotation "measure|forward" --occurrence 2)
            /usr/bin/time -o "$tmp/time" -f "%e %M" "$colosim" import kineto "$tmp/$input" \
                "${args[@]}" -o "$tmp/out.json" > /dev/null 2>&1
            read -r wall rss < "$tmp/time"
            printf '%-40s %-13s %-12s %10s %12s\n' "$colosim" "$input" "$sel" "$wall" "$rss"
        done
    done
done
