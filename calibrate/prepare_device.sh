#!/usr/bin/env bash
# prepare_device.sh: copies what gpu_session.sh needs from build/ into .device/ (ignored by git)
# so that it can be carried to a GPU machine with no package registry: the CUDA tools (GSL,
# libconfig and Jansson linked statically), the capture library and libcupti. The simulator
# stays here: record files are turned into traces after they come back.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .device
ex=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$ex")"
grep -qx '/.device/' "$ex" 2>/dev/null || echo '/.device/' >>"$ex"
cp build/colosim-devinfo build/colosim-calibrate build/colosim-live build/libcolosim-capture.so \
   build/colosim-capture .device/
cupti=$(readlink -f /usr/local/cuda/lib64/libcupti.so 2>/dev/null || true)
[ -n "$cupti" ] && cp "$cupti" .device/ && ln -sf "$(basename "$cupti")" .device/libcupti.so
ldd .device/colosim-calibrate | grep -E "not found|gsl|config|jansson" || true
du -sh .device
