#!/usr/bin/env bash
# A run whose timeline cannot be written (/dev/full: a full disk) says which file and why, exits 1
# and leaves neither its results nor its CSV; one whose results cannot be written takes back the
# timeline it had committed (issue 40: the message was uninitialised bytes, the other outputs
# were left half done), and past a file-size limit it says so instead of dying of SIGXFSZ.
# Usage: outputs_whole.sh COLOSIM SRC
set -euo pipefail
colosim=$1; src=$2
[ -w /dev/full ] || { echo "no /dev/full here: skipped"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
args=("$src/scenarios/mps_caps_h100.cfg" --set duration_s=3 --set warmup_s=1)
set +e
"$colosim" run "${args[@]}" -o out.json --csv out.csv --timeline /dev/full 2> err.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "exit $rc, expected 1"; cat err.txt; exit 1; }
grep -qxF "/dev/full: cannot write the timeline: No space left on device" err.txt ||
    { echo "message:"; cat err.txt; exit 1; }
[ ! -e out.json ] && [ ! -e out.csv ] || { echo "outputs left: $(ls)"; exit 1; }
set +e
"$colosim" run "${args[@]}" -o /dev/full --timeline tl.json -q 2> err2.txt
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "exit $rc, expected 1"; cat err2.txt; exit 1; }
[ ! -e tl.json ] || { echo "the timeline was left although the results failed"; exit 1; }
grep -q "/dev/full: cannot write: No space left on device" err2.txt || { cat err2.txt; exit 1; }
ls -A | grep -v '^err' | grep -q . && { echo "files left: $(ls -A)"; exit 1; }
# past a file-size limit (ulimit -f) it used to die of SIGXFSZ, silent, leaving *.tmp.* files
set +e
(ulimit -f 4; "$colosim" run "${args[@]}" -o out.json --timeline tl.json -q 2> err3.txt)
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "under ulimit -f: exit $rc, expected 1"; cat err3.txt; exit 1; }
grep -q "File too large" err3.txt || { cat err3.txt; exit 1; }
ls -A | grep -v '^err' | grep -q . && { echo "files left under ulimit -f: $(ls -A)"; exit 1; }
echo "outputs are written whole or not at all"
