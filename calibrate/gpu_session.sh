#!/usr/bin/env bash
# gpu_session.sh: everything issue 7 measures on a GPU, in one call (about 8 minutes), for a
# machine that has a driver, Python with PyTorch and (optionally) Nsight Compute, but no package
# registry. Build here first, then carry the binaries:
#   cmake -S . -B build && cmake --build build --parallel && calibrate/prepare_device.sh
#   (device) bash calibrate/gpu_session.sh OUTDIR        # carry: .device
# Writes OUTDIR/session.tar.gz (raw outputs, record files, calibration, logs). Back here,
# calibrate/import_session.sh turns the record files into traces.
# It never changes the card's settings.
set -uo pipefail
out=${1:?usage: gpu_session.sh OUTDIR}
bin=${COLOSIM_DEVICE_BIN:-.device}
work=$(mktemp -d)
mkdir -p "$work/raw" "$work/ncu"
export COLOSIM_GPU_PATH=$PWD/models/gpus PYTHONUNBUFFERED=1
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$work/session.log"; }

log "device"
{ date -u +%Y-%m-%dT%H:%M:%SZ; uname -a; nvidia-smi; nvidia-smi -q; } >"$work/raw/nvidia-smi.txt" 2>&1
"$bin/colosim-devinfo" >"$work/raw/devinfo.json" 2>>"$work/session.log"
# the GPU file of this device, as colosim itself tells it (name, memory and SM count)
gpu=$("$bin/colosim-calibrate" --guess-gpu 2>>"$work/session.log") || gpu=unknown
log "gpu description: $gpu"

log "calibration"
timeout 300 "$bin/colosim-calibrate" --gpu "$gpu" -o "$work/calibrated-$gpu.json" 2>"$work/raw/calibrate.log"
echo "colosim-calibrate exit $?" | tee -a "$work/session.log"

log "capture: 6 models x batch 1, 8, 32, fp16"
timeout 240 "$bin/colosim-capture" --records "$work/raw/models.%p.txt" -- \
    python3 calibrate/capture_models.py --iters 20 --warmup 10 >"$work/raw/models_latency.txt" 2>"$work/raw/capture.log"
echo "capture exit $?" | tee -a "$work/session.log"
if command -v ncu >/dev/null; then
    log "Nsight Compute bytes, batch 8 (one inference each)"
    for m in resnet50 mobilenet_v3 efficientnet_b0 vit_b16 bert_base gpt2_decode; do
        timeout 60 ncu --csv --clock-control none --print-kernel-base mangled \
            --nvtx --nvtx-include "colosim:infer $m b8/" \
            --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum \
            python3 calibrate/capture_models.py --models "$m" --batches 8 --iters 1 --warmup 2 \
            >"$work/ncu/${m}_b8.csv" 2>>"$work/session.log"
        echo "ncu $m exit $?" >>"$work/session.log"
    done
fi

log "pack"
tar -C "$work" -czf "$out/session.tar.gz" . && cp "$work/session.log" "$out/session.log"
cp "$work/calibrated-$gpu.json" "$out/" 2>/dev/null
cat "$work/raw/models_latency.txt" 2>/dev/null
ls -la "$out"
