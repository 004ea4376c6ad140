#!/usr/bin/env bash
# The soak run (issue 10): scenarios/soak/soak_h100.cfg under every mechanism, checking that
# each run ends, accounts for every request, went through its faults, and that its memory does
# not grow with the simulated time.
#   soak.sh COLOSIM SRC OUT [DURATION_S]      (SOAK_MODES="mps mig" runs only those mechanisms)
# DURATION_S defaults to the file's 7200 s (two hours simulated; minutes per mechanism in a
# release build); CI runs it shortened to 60 s under ASan + UBSan. The faults are moved in
# proportion so that all twelve fall inside the run. Memory: the peak resident size of the run is
# compared with that of a run a quarter as long; it may not grow by more than half plus 32 MiB
# (exact latency samples are capped at metrics.exact_samples per tenant; the rest is a fixed
# histogram). Needs jq and /usr/bin/time.
set -euo pipefail
colosim=$1; src=$2; out=$3; dur=${4:-7200}
cfg=$src/scenarios/soak/soak_h100.cfg
rm -rf "$out"; mkdir -p "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || fail "/usr/bin/time is needed (apt-get install time)"
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by default) that would read
# as growth; a small one keeps the comparison about colosim's own memory.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"

# Time-slicing has no kernel scheduler: the same file without its scheduler line, with its
# relative paths made absolute.
sed -e '/^scheduler = /d' -e "s|\"\.\./\.\./|\"$src/|g" "$cfg" > "$out/soak_timeslice.cfg"

fault_sets() { # the twelve faults moved into a run of $1 seconds
    local d=$1 i=0
    for at in 600 1200 1800 2400 3000 3600 4200 4800 5400 6000 6600 7100; do
        printf -- '--set\nfaults.[%d].at_s=%s\n' $i "$(awk -v a=$at -v d="$d" 'BEGIN{printf "%.3f", a*d/7200}')"
        i=$((i + 1))
    done
}

run() { # run MODE DURATION NAME: the run's results in $out/NAME.json, its peak RSS (KiB) echoed
    local mode=$1 d=$2 name=$3 file=$cfg
    [ "$mode" = timeslice ] && file=$out/soak_timeslice.cfg
    local warm; warm=$(awk -v d="$d" 'BEGIN{w = d / 120; printf "%.3f", w < 60 ? w : 60}')
    mapfile -t sets < <(fault_sets "$d")
    /usr/bin/time -f %M -o "$out/$name.rss" "$colosim" run "$file" --set sharing.mode=$mode \
        --set duration_s="$d" --set warmup_s="$warm" "${sets[@]}" -q -o "$out/$name.json" ||
        fail "$mode: colosim run failed"
    tail -n 1 "$out/$name.rss"
}

for mode in ${SOAK_MODES:-timeslice mps mig green}; do
    start=$(date +%s.%N)
    rss=$(run $mode "$dur" $mode)
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
    rss_q=$(run $mode "$(awk -v d="$dur" 'BEGIN{print d / 4}')" $mode-quarter)
    r=$out/$mode.json
    # every request of the window completed, dropped for a reason, or in flight at the end
    jq -e '[.tenants[] | select(.arrived != .completed + .dropped + .in_flight)] | length == 0' \
        "$r" > /dev/null || fail "$mode: a tenant's requests do not add up"
    jq -e '[.tenants[] | select(.arrived == 0 or .completed == 0)] | length == 0' "$r" > /dev/null ||
        fail "$mode: a tenant served nothing"
    # each tenant went through at least its own faults (an MPS server or Green process takes
    # every member with it)
    for t in $(jq -r '.tenants[].name' "$r"); do
        own=$(grep -c "tenant = \"$t\"" "$cfg" || true)
        got=$(jq -r --arg t "$t" '.tenants[] | select(.name == $t) | .faults' "$r")
        [ "$got" -ge "$own" ] || fail "$mode: $t went through $got faults, $own were injected"
    done
    limit=$((rss_q * 3 / 2 + 32768))
    [ "$rss" -le "$limit" ] ||
        fail "$mode: peak memory $rss KiB for ${dur} s, $rss_q KiB for a quarter of it"
    printf '%-9s %6s s simulated in %6s s, peak %6d KiB (%6d KiB for a quarter), %s requests\n' \
        $mode "$dur" "$secs" "$rss" "$rss_q" "$(jq '[.tenants[].arrived] | add' "$r")"
done
echo "soak: every mechanism ran ${dur} s with its faults; requests accounted for; memory bounded"
