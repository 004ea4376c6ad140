#!/usr/bin/env bash
# Regenerates models/calibrated/*.json from the published gpu-benches results (docs/calibration.md,
# "From published micro-benchmarks"): calibrate/import_gpu_benches.sh [DIR] [BUILD]
# DIR defaults to ../shared/data/gpu_benches (a byte-for-byte copy of te42kyfo/gpu-benches result
# files). Every file there is identical at upstream commit 1c36d50 except
# gpu-small-kernels/v100.txt, deleted upstream in 80b7719 and read at 20db037.
set -euo pipefail
cd "$(dirname "$0")/.." # paths are recorded in the files as given: keep them relative
dir="${1:-../shared/data/gpu_benches}"
colosim="${2:-build}/colosim"
for gpu in v100-sxm2 a100-40gb a100-80gb h100-pcie h200; do
    "$colosim" calibrate import gpu-benches "$dir" --gpu "$gpu" \
        -o "models/calibrated/$gpu.json" \
        --commit 1c36d509ee717dca9215c27135fa1e611bb03ed1 \
        --commit gpu-small-kernels/v100.txt=20db037db63e868f1825e8c49f7efba4c7cc6617
done
