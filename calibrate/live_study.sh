#!/usr/bin/env bash
# live_study.sh: the validation study's live half (docs/validation.md), in one device call:
# colosim-live --self-test on the study's traces, then every scenario of scenarios/validation/
# live, each with the same seed and overrides the simulation will use. MIG scenarios are refused
# (exit 2, recorded) where no instances exist; PyTorch scenarios need python3 with torch.
#   (device) bash calibrate/live_study.sh OUTDIR [SCENARIO ...]     # carry: .device
# Writes OUTDIR/live/NAME.json (+ .log), OUTDIR/self_test.txt, OUTDIR/study.log; back here,
# calibrate/validation_report.sh OUTDIR/live simulates each and prints the table.
# LIVE=path/to/binary overrides colosim-live (LIVE="build/colosim live" BACKEND=cpu checks the
# script on a machine without a GPU). It never changes the card's settings.
set -uo pipefail
out=${1:?usage: live_study.sh OUTDIR [SCENARIO ...]}
shift
bin=${COLOSIM_DEVICE_BIN:-.device}
live=${LIVE:-$bin/colosim-live}
backend=${BACKEND:-cuda}
duration=${DURATION_S:-10}
export COLOSIM_GPU_PATH=$PWD/models/gpus
mkdir -p "$out/live"
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$out/study.log"; }
gpu=${GPU:-}
if [ -z "$gpu" ]; then
    name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
    # the GPU file of this device, as colosim itself tells it (name, memory and SM count)
    gpu=$("$bin/colosim-calibrate" --guess-gpu 2>>"$out/study.log") || {
        log "no GPU file for '${name:-?}': give GPU=NAME (colosim gpus lists them)"
        exit 2
    }
fi
log "gpu description $gpu (${name:-no nvidia-smi}), backend $backend, ${duration} s per scenario"
{ date -u +%Y-%m-%dT%H:%M:%SZ; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu,compute_mode,mig.mode.current --format=csv; } \
    >"$out/device.txt" 2>&1
if [ $# -eq 0 ]; then set -- scenarios/validation/*.cfg; fi
if [ "$backend" = cuda ]; then
    log "self-test"
    timeout 180 $live scenarios/validation/mps_saturating_4.cfg --set gpu=$gpu --self-test \
        >"$out/self_test.txt" 2>&1
    echo "self-test exit $?" | tee -a "$out/study.log"
fi
for s in "$@"; do
    n=$(basename "$s" .cfg)
    if grep -q 'command = "python3' "$s" && ! python3 -c 'import torch' 2>/dev/null; then
        log "$n: skipped (no python3 with torch)"
        continue
    fi
    log "$n"
    timeout $((duration + 120)) $live "$s" --backend "$backend" --set gpu=$gpu \
        --set duration_s=$duration -q -o "$out/live/$n.json" >"$out/live/$n.log" 2>&1
    echo "$n exit $?" | tee -a "$out/study.log"
done
ls -la "$out/live" | tail -n +2 | wc -l | xargs echo "files:" | tee -a "$out/study.log"
