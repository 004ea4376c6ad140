#!/usr/bin/env bash
# Prints the table of docs/model.md "Host and precision together": each committed vision trace at
# batch 1, 4 and 32 on an A100-80GB and an H100 SXM, at FP32/TF32 (PyTorch's defaults), FP16 and
# INT8, issued by eager PyTorch, a CUDA graph or a C++ runtime: one request alone on 7g.80gb
# (ms) and its time on 1g.10gb over that. Usage: docs/host_tables.sh [COLOSIM]
set -euo pipefail
cd "$(dirname "$0")/.."
colosim=${1:-build/colosim}
traces="traces/resnet50_b4_v100.json traces/resnet101_b4_h100.json traces/mobilenetv2_b4_h100.json
        traces/efficientnetv2m_b4_v100.json traces/alexnet_fwd_a100.json"

mig() { # mig TRACE GPU BATCH FRAMEWORK [--precision P]: "7g ms|1g over 7g"
    local t=$1 g=$2 b=$3 f=$4; shift 4
    "$colosim" trace "$t" --on "$g" --partitions --batch "$b" --framework "$f" "$@" |
        awk '$1 == "MIG" && $2 == "7g.80gb" {s = $5} $1 == "MIG" && $2 == "1g.10gb" {o = $5}
             END {printf "%.2f|%.2f", s, o / s}'
}
for g in a100-80gb h100-sxm; do
    echo "#### $g: one request alone on 7g.80gb (ms), and x on 1g.10gb"
    echo
    echo "| trace | batch | precision | eager ms | x 1g | graphs ms | x 1g | C++ runtime ms | x 1g |"
    echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
    for t in $traces; do
        for b in 1 4 32; do
            for p in fp32 fp16 int8; do
                args=()
                [ "$p" != fp32 ] && args=(--precision "$p")
                row="| $(basename "$t" .json) | $b | $([ "$p" = fp32 ] && echo "FP32/TF32" || echo "${p^^}")"
                for f in pytorch_eager cuda_graphs tensorrt; do
                    v=$(mig "$t" "$g" "$b" "$f" "${args[@]}")
                    row="$row | ${v%|*} | ${v#*|}"
                done
                echo "$row |"
            done
        done
    done
    echo
done
