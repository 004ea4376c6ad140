#!/usr/bin/env bash
# The layers of docs/architecture.md, checked over the #include "..." lines of every C/CUDA file
# under sim/ and models/: a file may include headers of its own layer and of the layers below
# it, never of a layer above or of a sibling (study and live). Exit 1 and one line per include
# that breaks this (FILE:LINE: includes HEADER (layer) from layer L); exit 2 when a header
# cannot be found.
#
#   tests/arch/layers.sh [ROOT]      ROOT: the source tree (default: this script's)
#
# The CMake targets enforce the same through include directories (sim/CMakeLists.txt); this
# check also catches a header reached through a relative path, and says what is wrong.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

# layer of a path under the tree (into $layer), and its rank (into $rank); study and live share
# a rank but not headers. (No subshells: a fork per include made the check take most of a
# minute.)
layer_of() {
    case $1 in
        sim/colosim.h) layer=api ;;
        sim/engine/*) layer=engine ;;
        sim/format/*) layer=format ;;
        models/*) layer=models ;;
        sim/serving/*) layer=serving ;;
        sim/io/*) layer=io ;;
        sim/fleet/*) layer=fleet ;;
        sim/study/*) layer=study ;;
        sim/live/*) layer=live ;;
        sim/cli/*) layer=cli ;;
        *) layer=unknown ;;
    esac
}
rank_of() {
    case $1 in
        engine) rank=0 ;; format) rank=1 ;; models) rank=2 ;; serving) rank=3 ;; io) rank=4 ;;
        fleet) rank=5 ;; study | live) rank=6 ;; api) rank=7 ;; cli) rank=8 ;; *) rank=99 ;;
    esac
}

# every header by file name (the build's include folders make names unique) and by path
declare -A where
while IFS= read -r h; do
    b=${h##*/}
    if [ -n "${where[$b]:-}" ]; then
        echo "layers.sh: two headers named $b: ${where[$b]} and $h" >&2
        exit 2
    fi
    where[$b]=$h
done < <(find sim models -name '*.h' -o -name '*.h.in' | sed 's/\.in$//' | LC_ALL=C sort)

status=0
checked=0
declare -A uses # "module used-module": one module includes the other's header
while IFS= read -r f; do
    layer_of "$f"
    from=$layer
    [ "$from" != unknown ] || { echo "$f: in no layer (docs/architecture.md)" >&2; status=1; continue; }
    rank_of "$from"
    rf=$rank
    mf=${f##*/}
    mf=${mf%%.*} # its module: the file name without its extensions
    while IFS=: read -r line inc; do
        name=${inc##*/}
        target=${where[$name]:-}
        # a relative include (sched/list.h) is found beside the including file
        if [ -z "$target" ] || [ "$inc" != "$name" ]; then
            rel=$(realpath -m --relative-to=. "$(dirname "$f")/$inc")
            [ -f "$rel" ] && target=$rel
        fi
        if [ -z "$target" ]; then
            echo "$f:$line: includes \"$inc\", which is not a header of the tree" >&2
            exit 2
        fi
        mt=${target##*/}
        mt=${mt%%.*}
        [ "$mf" = "$mt" ] || uses["$mf $mt"]=1
        layer_of "$target"
        to=$layer
        rank_of "$to"
        rt=$rank
        checked=$((checked + 1))
        if [ "$rt" -gt "$rf" ] || { [ "$rt" -eq "$rf" ] && [ "$to" != "$from" ]; }; then
            echo "$f:$line: includes $target (layer $to) from layer $from"
            status=1
        fi
    done < <(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
             sed -E 's/^([0-9]+):.*"([^"]+)".*/\1:\2/')
done < <(find sim models -name '*.c' -o -name '*.h' -o -name '*.cu' | LC_ALL=C sort)
# No two modules use each other (models/gpu.c and calibration.c did): one depends on the other.
# A module and its X_internal.h share one module's code; layout is a step of reading a scenario.
for pair in "${!uses[@]}"; do
    read -r a b <<< "$pair"
    [[ "$a" < "$b" ]] || continue
    [ -n "${uses["$b $a"]:-}" ] || continue
    case "$a $b" in "$b"_internal" $b" | "$a $a"_internal | "layout scenario") continue ;; esac
    echo "modules $a and $b include each other's headers: one should depend on the other"
    status=1
done
if [ $status -eq 0 ]; then
    echo "layers.sh: $checked includes, none from a lower layer to a higher one or a sibling," \
        "no two modules using each other"
fi
exit $status
