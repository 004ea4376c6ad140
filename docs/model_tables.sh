#!/usr/bin/env bash
# Prints the tables of docs/model.md ("What the model predicts") from the committed traces:
# each trace alone on four GPUs, the real pairs (predicted against measured), A100-40GB MIG
# profiles and MPS percentages. Usage: docs/model_tables.sh [COLOSIM]   (default build/colosim)
set -euo pipefail
cd "$(dirname "$0")/.."
colosim=${1:-build/colosim}
traces=$(ls traces/*.json)

on() { # on TRACE GPU [ARGS...]: the --on table's rows as "place|sms|kernels|request|samples/s"
    local t=$1 g=$2; shift 2
    "$colosim" trace "$t" --on "$g" "$@" |
        awk '/^    place/ {on = 1; next} on && NF >= 6 {
                 n = NF; p = $1; for (i = 2; i <= n - 5; i++) p = p " " $i;
                 print p "|" $(n-4) "|" $(n-3) "|" $(n-2) "|" $(n-1) }'
}
field() { # field PLACE N[,M]: field N (and M, joined by '|') of the row of that place
    awk -F'|' -v p="$1" -v f="$2" '$1 == p {n = split(f, k, ","); s = $k[1];
        for (i = 2; i <= n; i++) s = s "|" $k[i]; print s}'; }
name() { basename "$1" .json; }

alone_table() { # alone_table TITLE GPU...: each trace alone on each GPU, one request at its batch
    local title=$1; shift
    echo "### $title (kernels ms / request ms)"
    echo
    echo "| trace | measured on | traced kernels ms | $(echo "$*" | sed 's/ / | /g') |"
    echo "|---|---|---:$(printf '|---:%.0s' "$@")|"
    for t in $traces; do
        row="| $(name "$t") | $(jq -r .gpu "$t") | $("$colosim" trace "$t" | awk '/ms of kernel time/ {print $3}')"
        for g in "$@"; do
            whole=$(on "$t" "$g" | field "whole GPU" 3,4)
            row="$row | ${whole/|/ / }"
        done
        echo "$row |"
    done
    echo
}
alone_table "Each trace alone, one request at its traced batch" v100-sxm2 a100-40gb h100-sxm h200
alone_table "Each trace on the GPUs people deploy inference on" tesla-t4 l4 a100-80gb-pcie h100-sxm

echo "### The real pairs: one trace predicted from the other (kernel time, ms)"
echo
echo "| predicted from | measured | predicted ms | measured ms | error |"
echo "|---|---|---:|---:|---:|"
while read -r a b; do
    [ -n "$a" ] || continue
    "$colosim" trace "traces/$a.json" --against "traces/$b.json" |
        awk -v a="$a" -v b="$b" '$1 == "all" {printf "| %s | %s | %s | %s | %s |\n", a, b, $2, $3, $4}'
done <<PAIRS
resnet101_b4_v100 resnet101_b4_h100
resnet101_b4_h100 resnet101_b4_v100
mobilenetv2_b4_v100 mobilenetv2_b4_h100
mobilenetv2_b4_h100 mobilenetv2_b4_v100
transformer_xl_b4_v100 transformer_xl_b4_h100
transformer_xl_b4_h100 transformer_xl_b4_v100
resnet50_b4_v100 resnet50_b32_v100
resnet50_b32_v100 resnet50_b4_v100
mobilenetv2_b4_v100 mobilenetv2_b32_v100
mobilenetv2_b32_v100 mobilenetv2_b4_v100
resnet101_b4_h100 resnet101_b8_h100
resnet101_b8_h100 resnet101_b4_h100
mobilenetv2_b4_h100 mobilenetv2_b16_h100
mobilenetv2_b16_h100 mobilenetv2_b4_h100
PAIRS
echo

profiles="MIG 1g.5gb|MIG 2g.10gb|MIG 3g.20gb|MIG 4g.20gb|MIG 7g.40gb"
mig_rows() { # mig_rows FIELD [ARGS...]: per trace, FIELD of each profile and its ratio to 7g
    local f=$1; shift
    for t in $traces; do
        rows=$(on "$t" a100-40gb --partitions "$@")
        full=$(echo "$rows" | field "MIG 7g.40gb" "$f")
        row="| $(name "$t")"
        IFS='|' read -ra ps <<< "$profiles"
        for p in "${ps[@]}"; do
            x=$(echo "$rows" | field "$p" "$f")
            row="$row | $x ($(awk -v x="$x" -v f="$full" 'BEGIN{printf "%.2f", x / f}'))"
        done
        echo "$row |"
    done
}

echo "### A100-40GB MIG: saturated throughput of one instance alone (samples/s at the traced batch; share of 7g)"
echo
echo "| trace | 1g.5gb (14 SMs, 0.14) | 2g.10gb (28, 0.29) | 3g.20gb (42, 0.43) | 4g.20gb (56, 0.57) | 7g.40gb (98, 1) |"
echo "|---|---:|---:|---:|---:|---:|"
mig_rows 5
echo

echo "### A100-40GB MIG: batch-1 latency of one request alone (ms; x 7g)"
echo
echo "| trace | 1g.5gb | 2g.10gb | 3g.20gb | 4g.20gb | 7g.40gb |"
echo "|---|---:|---:|---:|---:|---:|"
mig_rows 4 --batch 1
echo

echo "### A100-40GB MPS: one client alone under an active-thread percentage (request time at the traced batch, x 100 %)"
echo
echo "| trace | 10 % | 20 % | 30 % | 40 % | 50 % | 60 % | 70 % | 80 % | 90 % | 100 % (ms) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for t in $traces; do
    rows=$(on "$t" a100-40gb --partitions)
    full=$(echo "$rows" | field "MPS 100 %" 4)
    row="| $(name "$t")"
    for p in 10 20 30 40 50 60 70 80 90; do
        x=$(echo "$rows" | field "MPS $p %" 4)
        row="$row | $(awk -v x="$x" -v f="$full" 'BEGIN{printf "%.2f", x / f}')"
    done
    echo "$row | $full |"
done
