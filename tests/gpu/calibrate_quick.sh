#!/usr/bin/env bash
# colosim-calibrate --quick, then colosim gpus with the file it wrote as the GPU's calibration:
# the tool's output must be a calibration file the simulator accepts. Exit 77 (no GPU) passes
# through, so CTest marks the test skipped.
set -u
cal=$1 colosim=$2 out=$3
"$cal" --quick -o "$out"
rc=$?
[ $rc -eq 77 ] && exit 77
if [ $rc -ne 0 ] && [ $rc -ne 3 ]; then echo "colosim-calibrate exited $rc" >&2; exit 1; fi
gpu=$(sed -n 's/^  "gpu": "\(.*\)",$/\1/p' "$out")
"$colosim" gpus "$gpu" --calibration "$out" || { echo "colosim refused the calibration it wrote" >&2; exit 1; }
