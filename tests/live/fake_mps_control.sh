#!/bin/sh
# Stands in for nvidia-cuda-mps-control in the live harness's tests. Logs how it was called and
# with which environment. "-d [-S]" starts a stand-in daemon (a sleeping process whose PID goes
# into the pipe folder's nvidia-cuda-mps-control.pid, as the real daemon's does); on standard
# input, "quit" stops it (FAKE_MPS_QUIT_FAIL=1: refuses, exit 1), "lspart" prints the device's
# chunks (8 SMs each, 132 SMs), "sm_partition add UUID N" prints a partition ID.
pidfile=$CUDA_MPS_PIPE_DIRECTORY/nvidia-cuda-mps-control.pid
if [ "${1:-}" = "-d" ]; then
    sleep 300 >/dev/null 2>&1 &
    [ -n "${FAKE_MPS_NO_PIDFILE:-}" ] || echo $! > "$pidfile"
    echo "start${2:+ $2} $CUDA_MPS_PIPE_DIRECTORY log=${CUDA_MPS_LOG_DIRECTORY:-} vis=${CUDA_VISIBLE_DEVICES:-} pid=$!" >> "$FAKE_MPS_LOG"
    exit 0
fi
read -r what args
echo "$what${args:+ $args} $CUDA_MPS_PIPE_DIRECTORY" >> "$FAKE_MPS_LOG"
case "$what" in
quit)
    [ "${FAKE_MPS_QUIT_FAIL:-}" = 1 ] && exit 1
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null && rm -f "$pidfile"
    exit 0 ;;
lspart)
    echo "GPU Partition free used free used clients"
    echo "chunk chunk SM SM"
    echo "GPU-00000000 - 16 0 128 0 -" ;;
sm_partition)
    set -- $args
    n=$(ls "$CUDA_MPS_PIPE_DIRECTORY" | grep -c '^part-')
    touch "$CUDA_MPS_PIPE_DIRECTORY/part-$n"
    echo "$2/PART${n}x$3" ;;
esac
exit 0
