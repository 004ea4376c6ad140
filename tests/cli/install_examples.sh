#!/usr/bin/env bash
# The installed library (issue 27): installs the build into a temporary prefix, moves the prefix,
# builds examples/ against it once with pkg-config and once with its CMake package, and runs
# both examples from another working directory; the library finds the moved prefix's GPU files.
# Usage: install_examples.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
mv "$work/prefix" "$work/moved"
p=$work/moved
for f in include/colosim/colosim.h lib/libcolosim.a lib/pkgconfig/colosim.pc \
         lib/cmake/colosim/colosimConfig.cmake share/man/man1/colosim.1 \
         share/man/man5/colosim-scenario.5 share/bash-completion/completions/colosim; do
    [ -e "$p/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
soname=$(objdump -p "$p/lib/libcolosim.so" | awk '/SONAME/ {print $2}')
[ "$soname" = "libcolosim.so.0" ] || { echo "FAIL: SONAME '$soname', expected libcolosim.so.0"; exit 1; }

# pkg-config
cp -r "$src/examples" "$work/ex-pc"
# as examples/README.md and the Makefile say: the path as a make variable
make -s -C "$work/ex-pc" PKG_CONFIG_PATH="$p/lib/pkgconfig" > "$work/make.log" 2>&1 ||
    { echo "FAIL: make with pkg-config"; cat "$work/make.log"; exit 1; }
# CMake package
cmake -S "$src/examples" -B "$work/ex-cmake" -DCMAKE_PREFIX_PATH="$p" > "$work/cmake.log" 2>&1 &&
    cmake --build "$work/ex-cmake" > "$work/cmake-build.log" 2>&1 ||
    { echo "FAIL: cmake with find_package(colosim)"; cat "$work/cmake.log" "$work/cmake-build.log"; exit 1; }

cd "$work"
for ex in "$work/ex-pc" "$work/ex-cmake"; do
    "$ex/embed" "$src/scenarios/resnet50_bert_timeslice.cfg" resnet50 duration_s=5 > embed.txt
    grep -q '^resnet50: [0-9]* completed, p99 ' embed.txt || { echo "FAIL: $ex/embed"; cat embed.txt; exit 1; }
    "$ex/lifo_scheduler" "$src/examples/lifo.cfg" > lifo.txt
    grep -q '^bert: p99 ' lifo.txt || { echo "FAIL: $ex/lifo_scheduler"; cat lifo.txt; exit 1; }
    # the plug-in built against the installed headers, loaded by the installed program by name
    "$p/bin/colosim" run "$src/examples/lifo.cfg" --plugin "$ex/liblifo_plugin.so" -q -o plug.json ||
        { echo "FAIL: $ex/liblifo_plugin.so"; exit 1; }
    [ "$(jq -r '.scenario.overrides | length' plug.json)" = 0 ] || { echo "FAIL: plug.json"; exit 1; }
done
# the library's GPU files are the moved prefix's (no source tree needed)
"$p/bin/colosim" gpus h100-sxm | grep -q "file *$(realpath "$p")/share/colosim/gpus/h100-sxm.cfg" ||
    { echo "FAIL: colosim gpus does not read the moved prefix"; exit 1; }
echo "install_examples: the examples and the plug-in built with pkg-config and with CMake against a moved prefix, and ran"
