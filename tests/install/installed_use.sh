#!/usr/bin/env bash
# The installed colosim used from outside the source tree (issue 41, parts 9 and 10): installs the
# build into TMP/a, moves it to TMP/b, and from another folder
#   - checks every header is under include/colosim/ and that a program including
#     <colosim/colosim.h> builds with only TMP/b/include on the path (and with pkg-config), beside
#     a user's own errors.h;
#   - builds a small C program against the moved prefix that finds a shipped scenario by name
#     (colo_datadir_find) in the moved share/colosim, runs it with an override and prints a p99;
#   - runs the installed `colosim run NAME.cfg` and `colosim run scenarios/NAME.cfg`, and a copy
#     of a shipped scenario whose ../traces/ paths are found in the installed data;
#   - checks the man page holds no path of the build machine;
#   - runs a Python script with PYTHONPATH at the moved prefix: a scenario by name with an
#     override, its results equal to `colosim run -o`'s, errors, to_dataframe; and the source
#     tree's python/ package with COLOSIM_LIBRARY.
# Exit 77 (skipped) after the C parts when python3 is missing.
# Usage: installed_use.sh BUILD_DIR SOURCE_DIR CC PKG_CONFIG
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) cc=$3 pkgconfig=${4:-pkg-config}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset COLOSIM_DATA_DIR COLOSIM_GPU_PATH COLOSIM_LIBRARY

cmake --install "$build" --prefix "$work/a" > "$work/install.log"
mv "$work/a" "$work/b"
p=$(realpath "$work/b")
mkdir "$work/elsewhere"
cd "$work/elsewhere"

# --- headers: only include/colosim/, found with only PREFIX/include on the path
top=$(find "$p/include" -mindepth 1 -maxdepth 1 ! -name colosim)
[ -z "$top" ] || fail "installed outside include/colosim/: $top"
for f in share/colosim/scenarios/resnet50_bert_timeslice.cfg share/colosim/scenarios/studies/p99_vs_load.cfg \
         share/colosim/scenarios/cluster/inference_fleet.cfg share/colosim/traces/bert_b2_v100.json \
         share/doc/colosim/embedding.md share/doc/colosim/python.md share/doc/colosim/img/p99_vs_load.png; do
    [ -f "$p/$f" ] || fail "$f not installed"
done
mkdir myinc
cat > myinc/errors.h << 'EOF'
#define USERS_OWN_ERRORS_H 1
EOF
cat > use.c << 'EOF'
/* a program using the installed library: a shipped scenario by name, with an override */
#include <colosim/colosim.h>
#include <errors.h> /* the user's own, not colosim's */

#include <stdio.h>
#include <string.h>

#ifndef USERS_OWN_ERRORS_H
#error "colosim's errors.h hides the user's own"
#endif

int main(void)
{
    char path[4200];
    if (colo_datadir_find("resnet50_bert_timeslice.cfg", "scenarios", path, sizeof path))
        return fprintf(stderr, "not found: %s\n", path), 1;
    const char *sets[] = {"duration_s=3", "tenants.resnet50.arrival.rate=300.0"};
    colo_scenario_t *sc = NULL;
    colo_sim_t *sim = NULL;
    colo_error_t err;
    colo_error_clear(&err);
    if (colo_scenario_load(path, sets, 2, &sc, &err) || colo_sim_new(sc, &sim, &err) ||
        colo_sim_run(sim, &err)) {
        char m[2048];
        colo_error_format(&err, m, sizeof m);
        return fprintf(stderr, "%s\n", m), 1;
    }
    long i = colo_sim_tenant_find(sim, "resnet50");
    colo_run_stats_t st;
    if (i < 0 || colo_sim_tenant_stats(sim, (size_t)i, &st)) return 1;
    char *text = colo_results_json_text(sim, sets, 2);
    int ok = text && strstr(text, "\"tenants.resnet50.arrival.rate=300.0\"") != NULL;
    colo_results_text_free(text);
    printf("scenario %s\nresnet50 completed %llu p99 %.3f ms json %s\n", path, st.completed,
           st.p99_ms, ok ? "ok" : "bad");
    colo_sim_free(sim);
    colo_scenario_free(sc);
    return ok && st.completed > 0 ? 0 : 1;
}
EOF
# only PREFIX/include (and the system's folders, for GSL, libconfig and Jansson)
"$cc" -std=c11 -Wall -Wextra -Werror -I"$p/include" -Imyinc use.c -o use-direct \
    -L"$p/lib" -Wl,-rpath,"$p/lib" -lcolosim > cc.log 2>&1 || { cat cc.log; fail "cc -I PREFIX/include"; }
# pkg-config, through the moved prefix's colosim.pc (its prefix is relative to the file)
cflags=$(PKG_CONFIG_PATH="$p/lib/pkgconfig" "$pkgconfig" --cflags colosim)
libs=$(PKG_CONFIG_PATH="$p/lib/pkgconfig" "$pkgconfig" --libs colosim)
case " $cflags " in *"/include/colosim "*) fail "pkg-config --cflags names include/colosim: $cflags" ;; esac
# shellcheck disable=SC2086 # word splitting of the flags is wanted
"$cc" -std=c11 $cflags -Imyinc use.c -o use-pc $libs -Wl,-rpath,"$p/lib" > cc.log 2>&1 ||
    { cat cc.log; fail "cc with pkg-config ($cflags $libs)"; }
for prog in ./use-direct ./use-pc; do
    "$prog" > use.txt || { cat use.txt; fail "$prog"; }
    grep -qx "scenario $p/share/colosim/scenarios/resnet50_bert_timeslice.cfg" use.txt ||
        { cat use.txt; fail "$prog did not find the scenario in the moved prefix"; }
    grep -q '^resnet50 completed [1-9][0-9]* p99 [0-9.]* ms json ok$' use.txt || { cat use.txt; fail "$prog's results"; }
done

# --- the installed program finds shipped scenarios, and the traces they name, by name
bin=$p/bin/colosim
"$bin" run resnet50_bert_timeslice.cfg --set duration_s=3 --seed 7 -q -o run.json
grep -q "\"file\": \"$p/share/colosim/scenarios/resnet50_bert_timeslice.cfg\"" run.json ||
    fail "colosim run NAME.cfg did not read the moved prefix's scenario"
"$bin" run scenarios/mps_caps_h100.cfg --set duration_s=3 -q -o mps.json
grep -q "\"file\": \"$p/share/colosim/scenarios/mps_caps_h100.cfg\"" mps.json ||
    fail "colosim run scenarios/NAME.cfg did not read the moved prefix's scenario"
cp "$p/share/colosim/scenarios/resnet50_bert_timeslice.cfg" mine.cfg # names ../traces/...
"$bin" run mine.cfg --set duration_s=3 -q -o mine.json
grep -q "\"trace\": \"$p/share/colosim/traces/resnet50_b4_v100.json\"" mine.json ||
    fail "a scenario's trace not beside it was not found in the moved prefix"
if "$bin" run no_such_scenario.cfg > nope.txt 2>&1; then fail "a missing scenario ran"; fi
grep -q '^no_such_scenario.cfg: ' nope.txt || { cat nope.txt; fail "a missing scenario's error"; }
# the build run in place finds the source tree's
"$build/colosim" run resnet50_bert_timeslice.cfg --set duration_s=3 -q -o tree.json
grep -q "\"file\": \"$src/scenarios/resnet50_bert_timeslice.cfg\"" tree.json ||
    fail "the build tree's colosim did not find the source tree's scenario"

# --- the man page names no folder of the build machine
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
for s in "$src" "$build" "$prefix/share"; do
    if grep -nF "$s" "$p/share/man/man1/colosim.1"; then fail "colosim.1 names $s"; fi
done

# --- Python
if ! command -v python3 > /dev/null; then
    echo "installed_use: C program and installed colosim pass; python3 missing: Python skipped"
    exit 77
fi
cat > use.py << 'EOF'
import json, os, sys
import colosim
p = sys.argv[1]
r = colosim.run("resnet50_bert_timeslice.cfg", set={"duration_s": 3}, seed=7)
assert colosim.library_path() == os.path.join(p, "lib", "libcolosim.so.0"), colosim.library_path()
assert r["scenario"]["file"] == os.path.join(p, "share/colosim/scenarios/resnet50_bert_timeslice.cfg")
# the document colosim run -o writes with the same overrides (the command may add parts)
with open("run.json") as f:
    cli = json.load(f)
for k in r:
    assert cli.get(k) == r[k], f"Python's results differ from colosim run -o's in {k}"
assert r["tenants"] and r["scenario"]["overrides"] == ["duration_s=3", "seed=7"]
# an override as a list, checked in the results
r = colosim.run("scenarios/resnet50_bert_timeslice.cfg",
                set=["duration_s=3", "tenants.resnet50.arrival.rate=300.0"])
t = r.tenants["resnet50"]
assert t["arrival"]["rate"] == 300.0 and t["completed"] > 0 and t["latency_ms"]["p99"] > 0, t
assert r["scenario"]["overrides"] == ["duration_s=3", "tenants.resnet50.arrival.rate=300.0"]
assert colosim.find_data("bert_b2_v100.json", "traces") == os.path.join(p, "share/colosim/traces/bert_b2_v100.json")
assert colosim.find_data("no_such.cfg") is None
try:
    colosim.run("resnet50_bert_timeslice.cfg", set={"tenants.resnet50.arrival.rate": "fast"})
    raise SystemExit("a bad override was taken")
except colosim.ColosimError as e:
    assert e.source == "--set" and e.key == "tenants.resnet50.arrival.rate", (e.source, e.key)
    assert str(e).startswith("--set:1: tenants.resnet50.arrival.rate: "), str(e)
rows = r.rows()
assert [x["name"] for x in rows] == ["resnet50", "bert"] and rows[0]["latency_ms.p99"] == t["latency_ms"]["p99"]
import importlib.util
if importlib.util.find_spec("pandas") is None:
    try:
        r.to_dataframe()
        raise SystemExit("to_dataframe without pandas")
    except ImportError:
        pass
    sys.path.insert(0, os.path.abspath("fakepandas"))  # a stand-in that records what it is given
df = r.to_dataframe()
assert list(df.index) == ["resnet50", "bert"], list(df.index)
assert df.loc["resnet50", "latency_ms.p99"] == t["latency_ms"]["p99"]
print("python: ok", colosim.__version__, "p99", t["latency_ms"]["p99"])
EOF
mkdir -p fakepandas/pandas
cat > fakepandas/pandas/__init__.py << 'EOF'
class _Loc:
    def __init__(self, df): self.df = df
    def __getitem__(self, k): return self.df.rows[self.df.index.index(k[0])][k[1]]
class DataFrame:
    def __init__(self, rows, index): self.rows, self.index, self.loc = list(rows), list(index), _Loc(self)
EOF
export PYTHONDONTWRITEBYTECODE=1
PYTHONPATH="$p/lib/python3/site-packages" python3 use.py "$p" > py.txt 2>&1 || { cat py.txt; fail "Python with the moved prefix"; }
grep -q '^python: ok 0\.' py.txt || { cat py.txt; fail "Python's output"; }
# the source tree's package, with COLOSIM_LIBRARY naming the moved prefix's library
COLOSIM_LIBRARY="$p/lib/libcolosim.so.0" PYTHONPATH="$src/python" python3 -c '
import colosim, sys
r = colosim.run("resnet50_bert_timeslice.cfg", set={"duration_s": 3})
assert colosim.library_path() == sys.argv[1], colosim.library_path()
assert r.tenants["bert"]["completed"] > 0' "$p/lib/libcolosim.so.0" || fail "COLOSIM_LIBRARY"
if COLOSIM_LIBRARY=/nonexistent/libcolosim.so PYTHONPATH="$src/python" python3 -c '
import colosim; colosim.run("resnet50_bert_timeslice.cfg")' > bad.txt 2>&1; then fail "a missing COLOSIM_LIBRARY loaded"; fi
grep -q "COLOSIM_LIBRARY" bad.txt || { cat bad.txt; fail "a missing library's error does not name COLOSIM_LIBRARY"; }
echo "installed_use: C (cc -I PREFIX/include, pkg-config), colosim run NAME.cfg and Python against a moved prefix"
