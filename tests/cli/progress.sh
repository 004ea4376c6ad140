#!/usr/bin/env bash
# A long run shows its progress on a terminal and nothing of it when piped (issue 41): under a
# pseudo-terminal (script(1)) the line "simulated ... s per second, ETA" appears on standard
# error and is cleared before the table; piped, the output has no carriage return at all.
# Usage: progress.sh COLOSIM SOURCE_DIR
set -euo pipefail
colosim=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v script > /dev/null || { echo "no script(1): skipped"; exit 77; }
# a run of about 2.5 s of this build (a sanitizer build is ten times slower): the line shows
# after 1 s
t0=$(date +%s.%N)
$colosim run "$src/scenarios/resnet50_bert_timeslice.cfg" --set duration_s=100 -q -o /dev/null
t1=$(date +%s.%N)
dur=$(awk -v a="$t0" -v b="$t1" 'BEGIN { d = int(250 / (b - a)); print (d < 20 ? 20 : d) }')
run="$colosim run $src/scenarios/resnet50_bert_timeslice.cfg --set duration_s=$dur"
script -qec "$run" /dev/null > "$work/tty.txt"
grep -q "simulated [0-9.]* of at most $((dur + 10)).0 s (.*), .* s per second, ETA [0-9]*:[0-9][0-9]" \
    "$work/tty.txt" || { echo "FAIL: no progress on a terminal"; head -c 600 "$work/tty.txt"; exit 1; }
grep -q $'\r\033\[K' "$work/tty.txt" || { echo "FAIL: the progress line is not cleared"; exit 1; }
$run > "$work/piped.txt" 2>&1
if grep -q $'\r' "$work/piped.txt"; then echo "FAIL: progress written to a pipe"; exit 1; fi
grep -q '^resnet50 ' "$work/piped.txt" || { echo "FAIL: no table"; exit 1; }
echo "progress: shown and cleared on a terminal, absent when piped"
