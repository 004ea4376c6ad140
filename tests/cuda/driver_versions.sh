#!/usr/bin/env bash
# The driver entry points the CUDA tools load (X(fn, version) in their DRIVER_FUNCS lists) are
# each asked for at the newest version the installed cudaTypedefs.h names for them (issue 23: a
# function asked for at a version older than itself does not load). The compiler already
# refuses a version with no PFN typedef; this catches an older one that exists.
# Usage: driver_versions.sh CUDA_INCLUDE_DIR SOURCE...
set -u
td=
IFS=';' read -ra dirs <<< "$1"   # a CMake list
for d in "${dirs[@]}"; do [ -r "$d/cudaTypedefs.h" ] && { td=$d/cudaTypedefs.h; break; }; done
shift
[ -n "$td" ] || { echo "no cudaTypedefs.h among the CUDA include folders: skipped"; exit 77; }
fails=0 n=0
while read -r file fn ver; do
    n=$((n + 1))
    newest=$(grep -o "PFN_${fn}_v[0-9]*\b" "$td" | sed 's/.*_v//' | sort -n | tail -1)
    if [ -z "$newest" ]; then
        echo "FAIL: $file: $fn: no PFN_${fn}_v* in $td"; fails=$((fails + 1))
    elif [ "$ver" != "$newest" ]; then
        echo "FAIL: $file: $fn asked for at $ver; the headers' newest is PFN_${fn}_v$newest"
        fails=$((fails + 1))
    fi
done < <(for f in "$@"; do
    grep -oE '^\s*X\(cu[A-Za-z0-9_]+(, *[0-9]+)?\)' "$f" | sed -E "s/^\s*X\(([^,)]+)(, *([0-9]+))?\)/$(basename "$f") \1 \3/"
done)
[ "$n" -gt 0 ] || { echo "FAIL: no X(fn, version) entries found in $*"; exit 1; }
echo "$n driver entry points checked against $td: $fails wrong"
[ "$fails" -eq 0 ]
