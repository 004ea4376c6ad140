#!/bin/sh
# Stands in for nvidia-smi in the live harness's tests: -L lists one GPU and the MIG instances
# named in FAKE_MIG ("3g.40gb 2g.20gb ..."); --query-gpu=compute_mode prints FAKE_COMPUTE_MODE
# (default "Default").
case "$*" in
*compute_mode*) echo "${FAKE_COMPUTE_MODE:-Default}"; exit 0 ;;
esac
echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-00000000-0000-0000-0000-000000000000)"
i=0
for p in ${FAKE_MIG:-}; do
    echo "  MIG $p      Device  $i: (UUID: MIG-0000000$i-aaaa-bbbb-cccc-000000000000)"
    i=$((i + 1))
done
