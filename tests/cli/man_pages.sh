#!/usr/bin/env bash
# The man pages and bash completion (issue 27): colosim(1), generated from the program's help,
# renders without groff warnings and has every command; colosim-scenario(5) renders and names
# every top-level and tenant key the scenario reader accepts (the golden unknown-key messages
# list them); the completion offers the commands. Usage: man_pages.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
page1=$build/colosim.1 page5=$src/packaging/colosim-scenario.5
for p in "$page1" "$page5"; do
    [ -s "$p" ] || { echo "FAIL: $p missing"; exit 1; }
    if command -v groff > /dev/null; then
        w=$(groff -man -Tutf8 -ww "$p" 2>&1 > /dev/null)
        [ -z "$w" ] || { echo "FAIL: groff warns on $p: $w"; exit 1; }
    fi
done
for c in run check plan live sweep search plot compare gpus trace llm import calibrate validate; do
    grep -q "^\.SS $c\$" "$page1" || { echo "FAIL: colosim.1 lacks command $c"; exit 1; }
done
for err in unknown_key unknown_tenant_key; do
    keys=$(sed -n 's/.*(expected one of: \(.*\))$/\1/p' "$src/tests/golden/bad/$err.err" | tr -d ' ' | tr ',' ' ')
    for k in $keys; do
        grep -q "\\b$k\\b" "$page5" || { echo "FAIL: colosim-scenario.5 does not name '$k'"; exit 1; }
    done
done
source "$src/packaging/colosim.bash-completion"
COMP_WORDS=(colosim ru); COMP_CWORD=1; _colosim
[ "${COMPREPLY[*]}" = "run" ] || { echo "FAIL: completion of 'ru' gave '${COMPREPLY[*]}'"; exit 1; }
COMP_WORDS=(colosim import v); COMP_CWORD=2; _colosim
[ "${COMPREPLY[*]}" = "vidur" ] || { echo "FAIL: completion of 'import v' gave '${COMPREPLY[*]}'"; exit 1; }
echo "man_pages: colosim(1) and colosim-scenario(5) render and are complete; completion works"
