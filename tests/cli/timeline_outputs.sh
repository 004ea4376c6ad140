#!/usr/bin/env bash
# colosim run --timeline (issue 41, part 7): a window starting at or past the end of the run is
# refused naming --timeline-window and the run's length, exit 2, nothing written; a name ending
# .json.gz gives a gzip file of a JSON document whose flows match ("s" and "f" by id and
# category) and whose request spans and flows are there; a timeline estimated over 100 MB is
# announced on stderr before the run, and not with -q.
# Usage: timeline_outputs.sh COLOSIM SRC
set -euo pipefail
colosim=$1; src=$2
command -v jq >/dev/null || { echo "no jq: skipped"; exit 0; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
scenario=$src/scenarios/resnet50_bert_timeslice.cfg
fail() { echo "$*"; ls -A; exit 1; }

for window in 30:31 45.5:50; do
    set +e
    "$colosim" run "$scenario" -q -o out.json --timeline tl.json --timeline-window "$window" 2> err.txt
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "window $window: exit $rc, expected 2"
    start=${window%%:*}
    grep -qxF -- "--timeline-window: START $start s is at or past the end of the run (duration_s = 30 s): the timeline would hold nothing; give a START below 30" err.txt ||
        fail "window $window: message: $(cat err.txt)"
    [ -z "$(ls -A | grep -v '^err.txt$')" ] || fail "window $window: files written"
done

"$colosim" run "$scenario" -q --timeline tl.json.gz --timeline-window 2:2.2 2> err.txt
[ ! -s err.txt ] || fail "a small gzipped timeline said: $(cat err.txt)"
gzip -t tl.json.gz || fail "not a gzip file"
zcat tl.json.gz | jq -e '
  .traceEvents as $e
  | ([$e[] | select(.ph == "s") | [.id, .cat]] | sort) as $s
  | ([$e[] | select(.ph == "f") | [.id, .cat]] | sort) as $f
  | ($s | length) > 0 and $s == $f
    and ([$e[] | select(.ph == "X" and .pid == 5 and .cat == "request")] | length) > 0
    and .otherData.flows == ($s | length)' > /dev/null || fail "flows or requests wrong"
ls -A | grep -q 'tmp' && fail "temporary files left"

# 5 s of ResNet-50's ~180 kernels per request at 200/s: some 180,000 kernels, over 100 MB
"$colosim" run "$scenario" -q --timeline /dev/null --timeline-window 2:7 2> quiet.txt
[ ! -s quiet.txt ] || fail "-q still said: $(cat quiet.txt)"
"$colosim" run "$scenario" --timeline /dev/null --timeline-window 2:7 > out.txt 2> err.txt
grep -q "^colosim: the timeline will be about [0-9]* MB (some .* kernels in its 5 s window" err.txt ||
    fail "no size note: $(cat err.txt)"
echo "ok"
