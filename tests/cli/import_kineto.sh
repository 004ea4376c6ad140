#!/usr/bin/env bash
# colosim import kineto on a profile that is not one inference (tests/fixtures/kineto, derived
# from HTA's AlexNet trace): the warning on standard error with exit status 0 and the trace
# written; each of its three reasons, and none once the inner range is chosen with its gaps
# dropped; --gaps drop and cap:US in the trace and its provenance; --list-annotations (exit 0,
# nothing written); and the errors of tests/golden/bad/kineto/*.args: exit 2, the first line
# of standard error exactly the .err beside it, no output file.
# Usage: import_kineto.sh COLOSIM SOURCE_DIR OUT_DIR
set -euo pipefail
colosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") src=$2 out=$3
rm -rf "$out"
mkdir -p "$out/none"
out=$(cd "$out" && pwd)
cd "$src/tests/fixtures/kineto"
fix=alexnet_a100_trimmed.json
fail() {
    echo "FAIL: $*"
    exit 1
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }
lacks() { ! grep -qF -- "$2" "$1" || fail "$1 has: $2"; }
run0() { # run0 NAME ARGS...: import, exit 0, standard output and error kept
    local name=$1
    shift
    "$colosim" import kineto "$@" > "$out/$name.out" 2> "$out/$name.err" ||
        fail "$name: exit status $?, expected 0"
}

# the whole profile: weight uploads, warm-up and 12.9 s of host gaps as one request
run0 whole $fix -o "$out/whole.json"
[ -s "$out/whole.json" ] || fail "whole: no trace written"
has "$out/whole.err" "$fix: warning: the trace written may not be one inference"
has "$out/whole.err" "it holds 79 kernels (10.692 ms of kernel time) and 16 copies (244403360 bytes host to device, 0 device to host)"
has "$out/whole.err" "with 12919.219 ms of host gaps, the largest 7802.429 ms"
has "$out/whole.err" "- no --annotation: the whole profile is one request, though it marks 8 record_function ranges"
has "$out/whole.err" "- its host gaps, 12919.219 ms, are more than its kernels' time, 10.692 ms"
has "$out/whole.err" "     2       39  [param|pytorch.model.alex_net|0|0|0|measure|forward]"
has "$out/whole.err" "--list-annotations"
lacks "$out/whole.out" "warning"

# the outer "measure|forward" range holds the inner one of its own name
run0 outer $fix --annotation "measure|forward" -o "$out/outer.json"
has "$out/outer.err" "encloses 1 x '[param|clear_cache]', 1 x '[param|pytorch.model.alex_net|0|0|0|measure|forward]'"
lacks "$out/outer.err" "no --annotation"

# the inner one: only its host gaps (26.152 ms around 5.315 ms of kernels) are said
run0 inner $fix --annotation "measure|forward" --occurrence 2 -o "$out/inner.json"
has "$out/inner.err" "- its host gaps, 26.152 ms, are more than its kernels' time, 5.315 ms"
lacks "$out/inner.err" "encloses"
lacks "$out/inner.err" "no --annotation"

# --gaps drop: nothing to say; the trace has no host gaps and its provenance says why
run0 drop $fix --annotation "measure|forward" --occurrence 2 --gaps drop -o "$out/drop.json"
[ ! -s "$out/drop.err" ] || fail "drop: said $(cat "$out/drop.err")"
"$colosim" trace "$out/drop.json" > "$out/drop.trace"
lacks "$out/drop.trace" "host gaps    "
has "$out/drop.trace" "host_gaps    removed (--gaps drop): the profile had 26.152 ms between launches, the largest 14.865 ms"

# --gaps cap:50: each gap at most 50 us
run0 cap $fix --annotation "measure|forward" --occurrence 2 --gaps cap:50 -o "$out/cap.json"
[ ! -s "$out/cap.err" ] || fail "cap: said $(cat "$out/cap.err")"
"$colosim" trace "$out/cap.json" > "$out/cap.trace"
has "$out/cap.trace" "host gaps    1.372 ms in all between launches, the largest 0.050 ms"
has "$out/cap.trace" "host_gaps    each capped at 50 us (--gaps cap:50): 1.372 ms here, from 26.152 ms"

# --list-annotations: the table, exit 0, nothing written
(cd "$out/none" && "$colosim" import kineto "$src/tests/fixtures/kineto/$fix" --list-annotations) \
    > "$out/list.out" || fail "--list-annotations: exit status $?"
has "$out/list.out" "8 record_function ranges (user_annotation), 5 names, by first start"
grep -qE '^ +2 +39 +116\.034 +58\.017  \[param\|pytorch\.model\.alex_net\|0\|0\|0\|measure\|forward\]$' \
    "$out/list.out" || fail "--list-annotations: no measure|forward row in $(cat "$out/list.out")"
[ -z "$(ls -A "$out/none")" ] || fail "--list-annotations wrote $(ls -A "$out/none")"

# errors: exit 2, the expected message, nothing written
n=0
for args in "$src"/tests/golden/bad/kineto/*.args; do
    OUT=$out/none/out.json
    eval "set -- $(cat "$args")"
    rc=0
    "$colosim" import "$@" > /dev/null 2> "$out/error" || rc=$?
    [ "$rc" = 2 ] || fail "$(basename "$args"): exit status $rc, expected 2"
    [ "$(head -n 1 "$out/error")" = "$(cat "${args%.args}.err")" ] ||
        fail "$(basename "$args"): got '$(head -n 1 "$out/error")', expected '$(cat "${args%.args}.err")'"
    [ -z "$(ls -A "$out/none")" ] || fail "$(basename "$args"): left $(ls -A "$out/none")"
    n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "only $n error cases"
echo "import_kineto: warning, --gaps, --list-annotations and $n errors as expected"
