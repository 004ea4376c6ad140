#!/usr/bin/env bash
# host_session.sh: what issue 43 measures on a GPU (host time per inference, CUDA graphs, matrix
# rates per precision, host cores shared by processes, an MPS SM cap on host-bound and GPU-bound
# work), then colosim-calibrate's rates and two live scenarios, in one call of about 8 minutes.
# Needs python3 with PyTorch and torchvision (transformers for BERT); the CUDA tools as
# calibrate/prepare_device.sh leaves them in .device/ (optional).
#   (device) bash calibrate/host_session.sh OUTDIR         # carry: .device
# Writes OUTDIR/host_session.tar.gz (every JSON-lines file, log and trace) and OUTDIR/summary.txt.
# It never changes the card's settings; the MPS daemon it starts (private pipe folder) it stops.
set -uo pipefail
out=${1:?usage: host_session.sh OUTDIR}
bin=${COLOSIM_DEVICE_BIN:-.device}
work=$(mktemp -d)
t0=$(date +%s)
left() { echo $((${DEADLINE_S:-500} - ($(date +%s) - t0))); }
export PYTHONUNBUFFERED=1 COLOSIM_GPU_PATH=$PWD/models/gpus
log() { echo "== $(date -u +%H:%M:%S) +$(($(date +%s) - t0))s $*" | tee -a "$work/summary.txt"; }
# every part is optional: a failed one is logged and the next runs
part() { local s=$1; shift; timeout "$s" "$@" 2>&1 | tee -a "$work/summary.txt"; echo "exit ${PIPESTATUS[0]}" | tee -a "$work/summary.txt"; }

log "device"
{ date -u +%Y-%m-%dT%H:%M:%SZ; uname -a; nvidia-smi; lscpu; nproc; nvidia-smi -q; } >"$work/device.txt" 2>&1
grep -m1 "Model name" "$work/device.txt" | tee -a "$work/summary.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,compute_mode,mig.mode.current --format=csv 2>&1 | tee -a "$work/summary.txt"

log "matrix rates per precision"
part 60 python3 calibrate/host_precision.py gemm -o "$work/gemm.jsonl"

log "models: eager, enqueue and CUDA graphs"
part 200 python3 calibrate/host_precision.py models --budget-s 140 --trace-dir "$work" -o "$work/models.jsonl"

log "host cores shared by processes"
part 75 python3 calibrate/host_contention.py cores -o "$work/cores.jsonl"

log "MPS SM caps"
ctl=$(command -v nvidia-cuda-mps-control)
if [ -n "$ctl" ]; then
    export CUDA_MPS_PIPE_DIRECTORY=$work/mps/pipe CUDA_MPS_LOG_DIRECTORY=$work/mps/log
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    stop_mps() {
        echo quit | "$ctl" 2>/dev/null
        for _ in $(seq 50); do pgrep -f nvidia-cuda-mps >/dev/null || break; sleep 0.2; done
        [ -f "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid" ] &&
            kill "$(cat "$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid")" 2>/dev/null
        pkill -f nvidia-cuda-mps-server 2>/dev/null
    }
    trap stop_mps EXIT
    if "$ctl" -d; then
        for pct in 100 20 14; do
            CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=$pct part 45 python3 calibrate/host_contention.py cap --label "mps $pct" -o "$work/cap.jsonl"
        done
        stop_mps
        trap - EXIT
    else
        log "MPS daemon did not start"
    fi
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    cp -r "$work/mps/log" "$work/mps_log" 2>/dev/null
else
    log "no nvidia-cuda-mps-control"
fi
part 45 python3 calibrate/host_contention.py cap --label "no mps" -o "$work/cap.jsonl"

if [ -x "$bin/colosim-calibrate" ]; then
    gpu=$("$bin/colosim-calibrate" --guess-gpu 2>>"$work/summary.txt") || gpu=h200
    log "colosim-calibrate ($gpu), $(left) s left"
    s=$(left); [ "$s" -gt 150 ] && s=150
    if [ "$s" -gt 30 ]; then
        part "$s" "$bin/colosim-calibrate" --gpu "$gpu" --repeats 3 --only fp32,tensor,dram,l2,launch,pcie \
            -o "$work/calibrated-$gpu.json"
    fi
    for sc in ts_saturating_3 mps_saturating_4; do
        s=$(left)
        [ "$s" -lt 40 ] && { log "live $sc skipped: $s s left"; continue; }
        log "live $sc"
        part $((s > 90 ? 90 : s)) "$bin/colosim-live" "scenarios/validation/$sc.cfg" --set gpu=$gpu \
            --set duration_s=6 -q -o "$work/live_$sc.json"
    done
fi

log "pack"
gzip -f "$work"/*_kineto.json 2>/dev/null
cp "$work/summary.txt" "$out/summary.txt"
tar -C "$work" -czf "$out/host_session.tar.gz" . && ls -la "$out"
