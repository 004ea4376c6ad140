#!/usr/bin/env bash
# Converts Orion's published kernel profiles (shared/data/orion_kernel_profiles_*) into the
# committed traces: traces/README.md says what each is and why some rows are left out.
# Usage: traces/import_orion.sh [COLOSIM [DATA_DIR]]   (defaults: build/colosim, ../shared/data)
set -euo pipefail
cd "$(dirname "$0")/.."
colosim=${1:-build/colosim}
data=${2:-../shared/data}
v100=$data/orion_kernel_profiles_v100
h100=$data/orion_kernel_profiles_h100

# file  gpu  trace  model  batch  [--rows FIRST-LAST]
while read -r file gpu trace model batch rows; do
    [ -n "$file" ] || continue
    "$colosim" import orion "$file" --gpu "$gpu" --model "$model" --batch "$batch" \
        ${rows:+--rows "$rows"} -o "traces/$trace.json"
done <<LIST
$v100/resnet50_4_fwd.csv       v100-sxm2 resnet50_b4_v100        resnet50          4
$v100/resnet50_32_fwd.csv      v100-sxm2 resnet50_b32_v100       resnet50          32
$v100/resnet101_4_fwd.csv      v100-sxm2 resnet101_b4_v100       resnet101         4
$v100/mobilenetv2_4_fwd.csv    v100-sxm2 mobilenetv2_b4_v100     mobilenetv2       4
$v100/mobilenetv2_32_fwd.csv   v100-sxm2 mobilenetv2_b32_v100    mobilenetv2       32 1-205
$v100/efficientnet_4_fwd.csv   v100-sxm2 efficientnetv2m_b4_v100 efficientnet_v2_m 4
$v100/bert_2_fwd.csv           v100-sxm2 bert_b2_v100            bert              2
$v100/transformer_xl_4_fwd.csv v100-sxm2 transformer_xl_b4_v100  transformer_xl    4
$h100/resnet101_4_fwd.csv      h100-sxm  resnet101_b4_h100       resnet101         4
$h100/resnet101_8_fwd.csv      h100-sxm  resnet101_b8_h100       resnet101         8
$h100/mobilenet_4_fwd.csv      h100-sxm  mobilenetv2_b4_h100     mobilenetv2       4
$h100/mobilenet_16_fwd.csv     h100-sxm  mobilenetv2_b16_h100    mobilenetv2       16
$h100/transformer_inf_bs4.csv  h100-sxm  transformer_xl_b4_h100  transformer_xl    4 1-426
LIST
