#!/usr/bin/env bash
# Plug-ins by name (issue 41): a shared object built outside the core registers a scheduler and
# an arrival process that run, check, a scenario's plugins = [...] and a sweep then name; its
# parameters take --set; loader errors name the plug-in and say why.
# Usage: plugins.sh COLOSIM SOURCE_DIR PLUGIN.so NO_INIT.so REFUSES.so
set -euo pipefail
colosim=$1 src=$2 plugin=$3 no_init=$4 refuses=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# without the plug-in its names are unknown
if "$colosim" run "$src/examples/lifo.cfg" -q -o "$work/x.json" 2> "$work/err"; then
    fail "lifo ran without its plug-in"
fi
grep -q "lifo" "$work/err" || fail "no mention of lifo: $(cat "$work/err")"

# --plugin on run, its scheduler's parameter by --set
"$colosim" run "$src/examples/lifo.cfg" --plugin "$plugin" --set scheduler.slots=2 -q -o "$work/run.json"
[ "$(jq -r '.tenants | length' "$work/run.json")" = 2 ] || fail "run with --plugin"
jq -e '.tenants[0].completed > 100' "$work/run.json" > /dev/null || fail "nothing completed"

# a scenario's plugins = [...] (relative to its folder), its arrival process and gap_ms by --set
cp "$plugin" "$work/liblifo_plugin.so"
sed -e 's|^scheduler = .*|plugins = ["liblifo_plugin.so"];\nscheduler = { policy = "lifo"; slots = 1; };|' \
    -e 's|"../traces/|"'"$src"'/traces/|g' \
    -e 's|arrival = { process = "poisson"; rate = 150.0; };|arrival = { process = "every"; gap_ms = 5.0; };|' \
    "$src/examples/lifo.cfg" > "$work/with_plugins.cfg"
"$colosim" check "$work/with_plugins.cfg" > /dev/null || fail "check with plugins = [...]"
"$colosim" run "$work/with_plugins.cfg" --set tenants.resnet50.arrival.gap_ms=4 -q -o "$work/p.json"
# 4.5 s of window at one request every 4 ms: 1125 arrivals, exactly
[ "$(jq '.tenants[0].arrived' "$work/p.json")" = 1125 ] ||
    fail "the plug-in's arrival process: $(jq '.tenants[0].arrived' "$work/p.json") arrivals, not 1125"

# a sweep naming it, the plug-in given once on the command line
cp "$src/examples/lifo_sweep.cfg" "$src/examples/lifo.cfg" "$work/"
sed -i 's|"../traces/|"'"$src"'/traces/|g' "$work/lifo.cfg"
"$colosim" sweep "$work/lifo_sweep.cfg" --plugin "$plugin" -o "$work/sw" -q -j 2
[ "$(jq '[.points[] | select(.error == null)] | length' "$work/sw/sweep.json")" = 6 ] ||
    fail "sweep: not every point ran"
jq -e '[.points[] | select(.values["scheduler.policy"] == "lifo" and .results.tenants[0].completed > 0)]
       | length == 3' "$work/sw/sweep.json" > /dev/null || fail "sweep: no lifo points"

# loader errors: the file, and why
for bad in "$work/none.so" "$no_init" "$refuses"; do
    if "$colosim" run "$src/examples/lifo.cfg" --plugin "$bad" -q -o "$work/y.json" 2> "$work/err"; then
        fail "--plugin $bad was accepted"
    fi
    [ ! -e "$work/y.json" ] || fail "output written after a plug-in error"
    grep -q -- "--plugin: .*$(basename "$bad")" "$work/err" || fail "message: $(cat "$work/err")"
done
grep -q "colosim_plugin_init" "$work/err" || fail "refused init not explained: $(cat "$work/err")"
echo "plugins: run, check, plugins = [...], --set on its keys, a sweep, and three refusals"
