#!/usr/bin/env bash
# A study's sweep gives the same bytes on 1 core, on all cores and on 4 MPI ranks (with 1 and
# 2 points at a time per rank), and resumes under MPI like locally.
# Usage: mpi_sweep.sh COLOSIM MPIEXEC STUDY WORKDIR
set -euo pipefail
colosim=$1 mpiexec=$2 study=$3 work=$4
rm -rf "$work"
mkdir -p "$work"
# CI runs as root; OpenMPI refuses root unless told twice.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Under AddressSanitizer, OpenMPI's own start-up allocations (in plugins it unloads, so they
# cannot be suppressed by name) would be reported as leaks at exit: leak checks stay on for the
# local runs and are off for the ranks.
mpi=(env "ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0" "$mpiexec" --oversubscribe -np 4)

"$colosim" sweep "$study" -j 1 -o "$work/one" -q
"$colosim" sweep "$study" -o "$work/all" -q
"${mpi[@]}" "$colosim" sweep "$study" -o "$work/mpi" -q
"${mpi[@]}" "$colosim" sweep "$study" -j 2 -o "$work/mpi2" -q
for d in all mpi mpi2; do
    for f in sweep.json sweep.csv; do
        cmp "$work/one/$f" "$work/$d/$f" || { echo "FAIL: $d/$f differs from the 1-core run" >&2; exit 1; }
    done
done
n=$(ls "$work/mpi/points" | wc -l)
[ "$n" -eq 6 ] || { echo "FAIL: $n point files, expected 6" >&2; exit 1; }

# Resume: only the removed point is run again; the others keep their inode and mtime.
keep=$(stat -c '%i %Y' "$work/mpi/points/000000.json")
rm "$work/mpi/points/000004.json"
"${mpi[@]}" "$colosim" sweep "$study" -o "$work/mpi" 2>"$work/resume.err" >/dev/null
grep -q "5 of 6 points were already done" "$work/resume.err" || { echo "FAIL: resume message" >&2; cat "$work/resume.err" >&2; exit 1; }
[ "$(stat -c '%i %Y' "$work/mpi/points/000000.json")" = "$keep" ] || { echo "FAIL: a finished point was rewritten" >&2; exit 1; }
cmp "$work/one/sweep.json" "$work/mpi/sweep.json" || { echo "FAIL: resumed result differs" >&2; exit 1; }

# Rank 0 alone reports a folder it cannot write; every rank stops, non-zero status.
mkdir -p "$work/ro" && touch "$work/ro/file"
if "${mpi[@]}" "$colosim" sweep "$study" -o "$work/ro/file/sub" -q 2>"$work/ro.err"; then
    echo "FAIL: an unwritable output folder was accepted" >&2; exit 1
fi
grep -q "cannot make the folder" "$work/ro.err" || { echo "FAIL: no clear message" >&2; cat "$work/ro.err" >&2; exit 1; }

# Search runs under MPI as well, with the same answer.
"$colosim" search "$(dirname "$study")/study_search_one.cfg" -o "$work/s1" -q
"${mpi[@]}" "$colosim" search "$(dirname "$study")/study_search_one.cfg" -o "$work/s4" -q
cmp "$work/s1/search.json" "$work/s4/search.json" || { echo "FAIL: search differs under MPI" >&2; exit 1; }
echo "mpi sweep: identical on 1 core, all cores and 4 ranks; resumes; search identical"
