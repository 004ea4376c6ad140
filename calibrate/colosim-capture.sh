#!/usr/bin/env bash
# colosim-capture: records the GPU work of any CUDA program with libcolosim-capture.so (CUPTI)
# and, with --range, turns each marked inference into a colosim trace (docs/capture.md).
set -euo pipefail
usage() {
    cat <<'USAGE'
usage: colosim-capture [--records FILE] [--range TEXT --traces DIR [--model NAME] [--batch N]
                       [--gpu NAME]] -- COMMAND [ARGS...]
Runs COMMAND with CUPTI activity recording (kernels with launch shapes, copies, API calls and
NVTX ranges) into FILE (default colosim-capture.<pid>.txt). With --range, then runs
`colosim import capture FILE --annotation TEXT --all -o DIR`: one trace per NVTX range whose
name contains TEXT, e.g. one per inference that the program wraps in
torch.cuda.nvtx.range_push("colosim:infer") ... range_pop().
USAGE
}
here=$(cd "$(dirname "$0")" && pwd)
records="" range="" traces="" imp=()
while [ $# -gt 0 ]; do
    case $1 in
        --records) records=$2; shift 2 ;;
        --range) range=$2; shift 2 ;;
        --traces) traces=$2; shift 2 ;;
        --model|--batch|--gpu) imp+=("$1" "$2"); shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        *) echo "colosim-capture: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "colosim-capture: no command after --" >&2; usage >&2; exit 2; }
if [ -n "$range" ] && [ -z "$traces" ]; then
    echo "colosim-capture: --range needs --traces DIR" >&2; exit 2
fi
lib=""
for d in "$here" "$here/../lib" "$here/../lib64"; do
    [ -f "$d/libcolosim-capture.so" ] && lib="$d/libcolosim-capture.so" && break
done
[ -n "$lib" ] || { echo "colosim-capture: libcolosim-capture.so not found beside $0" >&2; exit 2; }
# NVTX ranges reach CUPTI only when NVTX injects libcupti itself.
cupti=""
for c in "$(dirname "$lib")"/libcupti.so* ${CUDA_HOME:-/usr/local/cuda}/lib64/libcupti.so* \
         /usr/local/cuda/extras/CUPTI/lib64/libcupti.so*; do
    [ -f "$c" ] && cupti=$c && break
done
[ -n "$records" ] || records="colosim-capture.%p.txt"
export CUDA_INJECTION64_PATH=$lib COLOSIM_CAPTURE_OUT=$records
[ -n "$cupti" ] && export NVTX_INJECTION64_PATH=$cupti
[ -n "$cupti" ] || echo "colosim-capture: no libcupti found for NVTX; ranges will be missing" >&2
status=0
"$@" || status=$?
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH
[ $status -eq 0 ] || { echo "colosim-capture: the command exited $status" >&2; exit $status; }
if [ -n "$range" ]; then
    colosim=$here/colosim
    [ -x "$colosim" ] || colosim=colosim
    for f in ${records//%p/*}; do
        "$colosim" import capture "$f" --annotation "$range" --all -o "$traces" "${imp[@]}"
    done
fi
