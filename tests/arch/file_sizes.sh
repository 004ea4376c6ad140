#!/usr/bin/env bash
# No source file of the repository over LIMIT lines (default 800): C, CUDA, headers, shell,
# Python and CMake files tracked by git (or, outside a git checkout, found under the tree).
# Exit 1 and one line per file over the limit.
#
#   tests/arch/file_sizes.sh [ROOT [LIMIT]]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
limit=${2:-800}
cd "$root"
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
    files=$(git ls-files -- '*.c' '*.h' '*.cu' '*.sh' '*.py' '*.cmake' 'CMakeLists.txt' '*/CMakeLists.txt')
else
    files=$(find . -path ./build -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \
        -o -name '*.sh' -o -name '*.py' -o -name '*.cmake' -o -name CMakeLists.txt \) -print |
        sed 's|^\./||')
fi
status=0 n=0 longest=0 longest_file=
for f in $files; do
    [ -f "$f" ] || continue
    lines=$(wc -l < "$f")
    n=$((n + 1))
    if [ "$lines" -gt "$longest" ]; then longest=$lines longest_file=$f; fi
    if [ "$lines" -gt "$limit" ]; then
        echo "$f: $lines lines (over $limit)"
        status=1
    fi
done
echo "file_sizes.sh: $n files, the longest $longest_file ($longest lines), limit $limit"
exit $status
