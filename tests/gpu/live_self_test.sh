#!/usr/bin/env bash
# colosim-live --self-test on a small scenario: every trace replayed alone by fitted synthetic
# kernels. Exit 77 (skipped) without a GPU; 3 (goal missed) fails the test with the report.
set -u
live=$1 devinfo=$2 scenario=$3
"$devinfo" > /dev/null 2>&1
[ $? -eq 77 ] && exit 77
"$live" "$scenario" --self-test
