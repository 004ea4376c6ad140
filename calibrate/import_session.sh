#!/usr/bin/env bash
# import_session.sh: turns what gpu_session.sh brought back into committed files:
#   models/calibrated/GPU.json                  the calibration (raw samples inside)
#   calibrate/results/GPU-DATE/                 logs, devinfo, nvidia-smi, latencies, ncu CSVs
#   traces/captured/GPU/MODEL_bBATCH.json       one inference per model and batch (the 10th
#                                               measured one), with Nsight Compute bytes at b8
# usage: calibrate/import_session.sh session.tar.gz
set -euo pipefail
tarball=$(readlink -f "${1:?usage: import_session.sh session.tar.gz}")
cd "$(dirname "$0")/.."
work=$(mktemp -d)
tar -C "$work" -xzf "$tarball"
cal=$(ls "$work"/calibrated-*.json | head -1)
gpu=$(basename "$cal" .json); gpu=${gpu#calibrated-}
date=$(date -u +%Y-%m-%d)
res=calibrate/results/$gpu-$date
mkdir -p "$res" "traces/captured/$gpu" models/calibrated
cp "$cal" "models/calibrated/$gpu.json"
cp "$work"/session.log "$work"/raw/*.json "$work"/raw/*.log "$work"/raw/*.txt "$res/" 2>/dev/null || true
rm -f "$res"/models.*.txt   # record files are large; the traces below keep what they hold
cp "$work"/ncu/*.csv "$res/" 2>/dev/null || true
for f in "$work"/raw/models.*.txt; do
    for m in resnet50 mobilenet_v3 efficientnet_b0 vit_b16 bert_base gpt2_decode; do
        for b in 1 8 32; do
            ncu=()
            [ "$b" = 8 ] && [ -s "$work/ncu/${m}_b8.csv" ] && ncu=(--ncu "$work/ncu/${m}_b8.csv")
            ./build/colosim import capture "$f" --annotation "colosim:infer $m b$b" \
                --occurrence 10 --model "$m" --batch "$b" --gpu "$gpu" "${ncu[@]}" \
                -o "traces/captured/$gpu/${m}_b$b.json" ||
            ./build/colosim import capture "$f" --annotation "colosim:infer $m b$b" \
                --occurrence 10 --model "$m" --batch "$b" --gpu "$gpu" \
                -o "traces/captured/$gpu/${m}_b$b.json" || true
        done
    done
done
./build/colosim gpus "$gpu" | head -20
