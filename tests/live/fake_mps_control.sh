#!/bin/sh
# Stands in for nvidia-cuda-mps-control in the live harness's tests: logs how it was called
# (-d starts, "quit" on standard input stops) and the pipe folder it was given.
if [ "${1:-}" = "-d" ]; then
    echo "start $CUDA_MPS_PIPE_DIRECTORY" >> "$FAKE_MPS_LOG"
else
    read -r what
    echo "$what $CUDA_MPS_PIPE_DIRECTORY" >> "$FAKE_MPS_LOG"
fi
