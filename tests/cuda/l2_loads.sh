#!/usr/bin/env bash
# colosim-calibrate's L2 sweep reads through L2 only (issue 23): in the PTX of l2_read_kernel
# every global load is ld.global.cg (L1 bypassed), none is ld.global.nc or a plain, L1-cached
# ld.global. No GPU needed. Usage: l2_loads.sh NVCC SOURCE_DIR BUILD_DIR
set -u
nvcc=$1 src=$2 build=$3
ptx=$(mktemp --suffix=.ptx)
trap 'rm -f "$ptx"' EXIT
"$nvcc" -std=c++17 -arch=sm_90 -ptx -I"$src/sim/engine" -I"$src/sim/format" -I"$src/models" -I"$build/sim/engine" -I"$src/calibrate" \
    "$src/calibrate/calibrate_kernels.cu" -o "$ptx" 2>/dev/null || { echo "FAIL: nvcc -ptx"; exit 1; }
loads=$(awk '/\.entry .*l2_read_kernel/{f=1; next} /\.entry /{f=0} f && /ld\.global/' "$ptx")
[ -n "$loads" ] || { echo "FAIL: no l2_read_kernel loads in the PTX"; exit 1; }
echo "$loads"
if echo "$loads" | grep -v 'ld\.global\.cg' | grep -q .; then
    echo "FAIL: l2_read_kernel has loads that may hit L1"; exit 1
fi
echo "l2_read_kernel: every global load is ld.global.cg"
