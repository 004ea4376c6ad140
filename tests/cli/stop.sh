#!/usr/bin/env bash
# A run or a sweep stopped by SIGINT or SIGTERM leaves every output whole or absent, says so,
# and exits 128 + the signal; a stopped sweep resumes to the same result as an unstopped one.
# One killed by a signal it does not poll (SIGHUP) leaves no temporary file.
#   stop.sh COLOSIM SRC OUT
set -euo pipefail
colosim=$1; src=$2; out=$3
rm -rf "$out"; mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
no_temp_files() { # no half-written file anywhere under $1
    local left; left=$(find "$1" -name '*.tmp*' -o -name '.*.tmp' | head -5)
    [ -z "$left" ] || fail "temporary files left: $left"
}

# 1. A long run stopped by SIGTERM: no results, no CSV, no timeline, status 143.
"$colosim" run "$src/scenarios/resnet50_bert_timeslice.cfg" --set duration_s=3000 \
    -o "$out/run.json" --csv "$out/run.csv" --timeline "$out/run.tl.json" 2> "$out/run.err" &
pid=$!
sleep 1
kill -TERM $pid 2>/dev/null || true # it may have finished already
status=0; wait $pid || status=$?
cat "$out/run.err"
if [ $status -eq 143 ]; then
    grep -q "stopped by SIGTERM before the run finished; nothing was written" "$out/run.err" ||
        fail "run: no message"
    for f in run.json run.csv run.tl.json; do [ ! -e "$out/$f" ] || fail "run: $f written"; done
elif [ $status -eq 0 ]; then
    echo "note: the run finished before the signal (a very fast machine)"
else
    fail "run: exit status $status"
fi
no_temp_files "$out"

# 2. SIGHUP (a closed terminal), which a run does not poll: it dies of the signal, but the
#    timeline it was writing is removed, not left as run.tl.json.tmp.XXXXXX, and it says so.
"$colosim" run "$src/scenarios/resnet50_bert_timeslice.cfg" --set duration_s=3000 \
    -o "$out/hup.json" --timeline "$out/hup.tl.json" 2> "$out/hup.err" &
pid=$!
for _ in $(seq 100); do # until the timeline's temporary file exists
    ls "$out"/hup.tl.json.tmp.* > /dev/null 2>&1 && break
    sleep 0.1
done
kill -HUP $pid 2>/dev/null || true
status=0; wait $pid || status=$?
cat "$out/hup.err"
if [ $status -eq 129 ]; then
    grep -q "stopped by SIGHUP while writing; its unfinished output was removed" "$out/hup.err" ||
        fail "SIGHUP: no message"
    for f in hup.json hup.tl.json; do [ ! -e "$out/$f" ] || fail "SIGHUP: $f written"; done
elif [ $status -ne 0 ]; then
    fail "SIGHUP: exit status $status"
fi
no_temp_files "$out"

# 3. A sweep stopped by SIGINT: the points written are whole, the rest absent; resumed, it
#    ends with the same sweep.json as a sweep that was never stopped.
"$colosim" sweep "$src/tests/fixtures/study_stop.cfg" -o "$out/ref" -j 2 -q
"$colosim" sweep "$src/tests/fixtures/study_stop.cfg" -o "$out/stopped" -j 2 -q \
    2> "$out/sweep.err" &
pid=$!
# the signal once the first points are written (so it lands part-way on any machine)
for _ in $(seq 600); do
    [ "$(ls "$out/stopped/points" 2>/dev/null | wc -l)" -ge 2 ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
done
kill -INT $pid 2>/dev/null || true
status=0; wait $pid || status=$?
cat "$out/sweep.err"
n=$(ls "$out/stopped/points" 2>/dev/null | wc -l)
if [ $status -eq 130 ]; then
    grep -q "stopped by SIGINT: $n of 16 points are written" "$out/sweep.err" ||
        fail "sweep: the message does not say $n of 16"
    [ ! -e "$out/stopped/sweep.json" ] || fail "sweep: summary written though stopped"
elif [ $status -ne 0 ]; then
    fail "sweep: exit status $status"
fi
no_temp_files "$out/stopped"
for f in "$out"/stopped/points/*.json; do
    [ -e "$f" ] || continue
    jq -e '.point != null and (.results != null or .error != null)' "$f" > /dev/null ||
        fail "sweep: $f is not a whole point"
    jq -e '.error == null' "$f" > /dev/null || fail "sweep: $f records the interruption as an error"
done
"$colosim" sweep "$src/tests/fixtures/study_stop.cfg" -o "$out/stopped" -j 2 -q
cmp "$out/ref/sweep.json" "$out/stopped/sweep.json" || fail "resumed sweep differs"
echo "stopped after $n of 16 points; resumed to the same sweep.json"

# 4. Issue 22: a scenario that is a FIFO with no writer, and a replayed log that never ends
#    (/dev/zero: refused at its first NUL byte; a FIFO fed forever: stopped by the signal).
abs_src=$(cd "$src" && pwd)
mkfifo "$out/scenario.fifo"
"$colosim" run "$out/scenario.fifo" -q 2> "$out/fifo.err" &
pid=$!
sleep 1
kill -INT $pid 2>/dev/null || true
status=0; wait $pid || status=$?
[ $status -eq 130 ] || fail "FIFO scenario: exit status $status, not 130: $(cat "$out/fifo.err")"
sed "s#file = \"[^\"]*\"#file = \"$out/log.fifo\"#" "$src/scenarios/azure_replay_two_tenants_h100.cfg" |
    sed "s#\"\.\./traces#\"$abs_src/traces#g" > "$out/replay.cfg"
mkfifo "$out/log.fifo"
yes '' > "$out/log.fifo" 2> /dev/null & # empty lines, forever: skipped, and never an arrival
feeder=$!
"$colosim" run "$out/replay.cfg" -q 2> "$out/replay.err" &
pid=$!
sleep 1
kill -TERM $pid 2>/dev/null || true
status=0; wait $pid || status=$?
kill $feeder 2> /dev/null || true
[ $status -eq 143 ] || fail "endless log: exit status $status: $(cat "$out/replay.err")"
sed "s#file = \"[^\"]*\"#file = \"/dev/zero\"#" "$out/replay.cfg" > "$out/zero.cfg"
status=0; timeout 20 "$colosim" run "$out/zero.cfg" -q 2> "$out/zero.err" || status=$?
[ $status -eq 2 ] && grep -q "/dev/zero:1: a NUL byte: not a text file" "$out/zero.err" ||
    fail "/dev/zero log: exit status $status: $(cat "$out/zero.err")"
# a log on a FIFO whose writer pauses: what it has is read (fread waited for a whole block)
rm -f "$out/log.fifo"; mkfifo "$out/log.fifo"
cat > "$out/pause.cfg" <<EOF2
gpu = "h100-sxm"; duration_s = 2.0; warmup_s = 0.0; sharing = { mode = "mps"; };
tenants = ( { name = "a"; trace = "$abs_src/traces/resnet50_b4_v100.json";
  arrival = { process = "replay"; file = "$out/log.fifo"; format = "azure"; }; } );
EOF2
(head -300 "$abs_src/traces/arrivals/azure_llm_2023_conv_first20min.csv"; sleep 20) \
    > "$out/log.fifo" 2> /dev/null &
feeder=$!
status=0; timeout 10 "$colosim" run "$out/pause.cfg" -q 2> "$out/pause.err" || status=$?
kill $feeder 2> /dev/null || true
[ $status -eq 0 ] || fail "paused FIFO log: exit status $status: $(cat "$out/pause.err")"
echo "a FIFO scenario and endless logs stop; a paused FIFO log is read"
