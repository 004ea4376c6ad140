#!/usr/bin/env bash
# An installed colosim finds its data wherever its prefix is moved: installs the build into a
# temporary prefix, moves the prefix, and from another working directory checks that
# `colosim gpus` lists the GPUs from the moved prefix's share/colosim/gpus (with their
# calibration files) and that a scenario naming a GPU by name runs.
# Usage: install_relocated.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
mv "$work/prefix" "$work/moved"
cd "$work"
bin=$work/moved/bin/colosim
"$bin" gpus > gpus.txt
grep -q '^h100-sxm ' gpus.txt || { echo "FAIL: colosim gpus does not list h100-sxm"; cat gpus.txt; exit 1; }
"$bin" gpus a100-80gb > a100.txt
grep -q "file *$(realpath "$work/moved")/share/colosim/gpus/a100-80gb.cfg" a100.txt ||
    { echo "FAIL: a100-80gb not read from the moved prefix"; head -3 a100.txt; exit 1; }
grep -q "calibrated *$(realpath "$work/moved")/share/colosim/calibrated/a100-80gb.json" a100.txt ||
    { echo "FAIL: a100-80gb's calibration not read from the moved prefix"; head -3 a100.txt; exit 1; }
cp "$src/tests/fixtures/tiny_h100.json" .
sed 's|"tiny_h100.json"|"'"$work"'/tiny_h100.json"|' "$src/tests/fixtures/one_tenant.cfg" > s.cfg
"$bin" run s.cfg -q -o out.json
jq -e '.tenants[0].completed > 0' out.json > /dev/null || { echo "FAIL: the scenario did not run"; exit 1; }
echo "install_relocated: the moved prefix's colosim finds its GPUs and runs a scenario"
