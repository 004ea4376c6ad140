#!/usr/bin/env bash
# colosim trace FILE --against REAL --kernels (docs/traces.md, "Predicted against measured") on
# the committed traces: ResNet-101 from the V100 (345 kernels) to the H100 (344), aligned: one row
# per paired kernel, in trace order, the H100's last kernel (gemmSN) paired with the V100's last
# (a cuBLAS sgemm) and the V100's elementwise_kernel before it listed as unpaired; the measured
# column adds up to the measured total printed; the totals are those printed without --kernels.
# b4 to b8 on the H100 (344 each): paired in order, the measured column adds up to the 'all' row.
# --kernels=csv: the table alone, the same rows and sums. Traces of two models cannot be paired:
# exit 2, nothing on standard output, the reason naming the file. Usage errors: exit 2.
# Usage: trace_kernels.sh COLOSIM SOURCE_DIR OUT_DIR
set -euo pipefail
colosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1") src=$2 out=$3
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$src"
fail() {
    echo "FAIL: $*"
    exit 1
}
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2"; }

# the rows of the per-kernel table of a text output: from its header to the '(#:' line
rows() { awk '/^ +# +file# +kernel/ { on = 1; next } /^ +\(#:/ { on = 0 } on' "$1"; }
# the sum of a column counted from the end of each line (measured us: 3rd from the end)
sum_from_end() { awk -v k="$1" '{ s += $(NF - k) } END { printf "%.3f\n", s }'; }

v100=traces/resnet101_b4_v100.json h100=traces/resnet101_b4_h100.json
h100b8=traces/resnet101_b8_h100.json

# 1. V100 -> H100, aligned
"$colosim" trace "$v100" --against "$h100" > "$out/totals.txt"
"$colosim" trace "$v100" --against "$h100" --kernels > "$out/aligned.txt" ||
    fail "aligned: exit status $?"
# the totals come first and are the same as without --kernels
head -n "$(wc -l < "$out/totals.txt")" "$out/aligned.txt" | cmp -s - "$out/totals.txt" ||
    fail "--kernels changed the totals printed before it"
has "$out/aligned.txt" "per kernel: 344 kernels in REAL and 345 in FILE, paired by aligning"
paired=$(sed -n "s|^ *\([0-9]*\) of $h100's 344 kernels paired: .*|\1|p" "$out/aligned.txt")
[ "$paired" = 344 ] || fail "aligned: paired count '$paired', expected 344"
rows "$out/aligned.txt" > "$out/aligned.rows"
[ "$(wc -l < "$out/aligned.rows")" = "$paired" ] ||
    fail "aligned: $(wc -l < "$out/aligned.rows") rows for $paired paired kernels"
# trace order on both sides: # and file# rise
awk 'NR > 1 && ($1 <= a || $2 <= b) { exit 1 } { a = $1; b = $2 }' "$out/aligned.rows" ||
    fail "aligned: rows not in trace order"
# the H100's last kernel with the V100's last; the V100's kernel 343 left without a partner
grep -qE '^ +343 +344 +gemmSN_TN_kernel ' "$out/aligned.rows" || fail "aligned: no row 343 <- 344"
! awk '$2 == 343' "$out/aligned.rows" | grep -q . || fail "aligned: FILE's kernel 343 is paired"
has "$out/aligned.txt" "$v100: 1 kernel unpaired"
grep -qE '^ +343 +elementwise_kernel ' "$out/aligned.txt" || fail "aligned: 343 not listed unpaired"
has "$out/aligned.txt" "$h100: every kernel paired"
# the measured column adds up to the measured total printed, and to the 'all' row
total=$(sed -n "s|.* kernels paired: measured \([0-9.]*\) us, predicted .*|\1|p" "$out/aligned.txt")
sum=$(sum_from_end 2 < "$out/aligned.rows")
[ "$sum" = "$total" ] || fail "aligned: measured column sums to $sum, the total printed is $total"
all_ms=$(awk '$1 == "all" { print $3 }' "$out/totals.txt")
awk -v s="$sum" -v a="$all_ms" 'BEGIN { d = s / 1000 - a; exit !(d < 0.0005 && d > -0.0005) }' ||
    fail "aligned: measured column $sum us against the 'all' row's $all_ms ms"
has "$out/aligned.txt" "all its kernels: measured $total us (0.000 us of it in kernels without a partner)"
has "$out/aligned.txt" "per kernel: |error| median "
[ "$(awk '/the 10 kernels with the most absolute error/ { on = 1; getline; next }
          on && /^ +[0-9]+ / { n++ } on && !/^ +[0-9]+ / { on = 0 } END { print n }' \
      "$out/aligned.txt")" = 10 ] || fail "aligned: not 10 kernels with the most error"

# 2. batch 4 -> 8 on the H100: as many kernels, in order
"$colosim" trace "$h100" --against "$h100b8" --kernels > "$out/in_order.txt" ||
    fail "in order: exit status $?"
has "$out/in_order.txt" "per kernel: both have 344 kernels, paired in order"
rows "$out/in_order.txt" > "$out/in_order.rows"
[ "$(wc -l < "$out/in_order.rows")" = 344 ] || fail "in order: $(wc -l < "$out/in_order.rows") rows"
awk '$1 != $2 { exit 1 }' "$out/in_order.rows" || fail "in order: a row pairs # with another file#"
sum=$(sum_from_end 2 < "$out/in_order.rows")
all_ms=$(awk '$1 == "all" { print $3 }' "$out/in_order.txt")
awk -v s="$sum" -v a="$all_ms" 'BEGIN { d = s / 1000 - a; exit !(d < 0.0005 && d > -0.0005) }' ||
    fail "in order: measured column $sum us against the 'all' row's $all_ms ms"

# 3. --kernels=csv: the table alone, the same rows
"$colosim" trace "$v100" --against "$h100" --kernels=csv > "$out/aligned.csv" 2> "$out/csv.err" ||
    fail "csv: exit status $?"
[ "$(head -n 1 "$out/aligned.csv")" = \
    "index,file_index,kernel,grid,class,predicted_class,measured_us,predicted_us,error_pct" ] ||
    fail "csv: header '$(head -n 1 "$out/aligned.csv")'"
[ "$(($(wc -l < "$out/aligned.csv") - 1))" = 344 ] || fail "csv: $(wc -l < "$out/aligned.csv") lines"
sum=$(tail -n +2 "$out/aligned.csv" | awk -F, '{ s += $(NF - 2) } END { printf "%.3f\n", s }')
[ "$sum" = "$total" ] || fail "csv: measured_us sums to $sum, the text total is $total"
diff <(awk '{ print $1, $2 }' "$out/aligned.rows") \
    <(tail -n +2 "$out/aligned.csv" | awk -F, '{ print $1, $2 }') > /dev/null ||
    fail "csv: not the text table's pairs"
has "$out/csv.err" "1 of $v100's 345 kernels have no partner in $h100"

# 4. traces of two models cannot be paired: exit 2, nothing printed, the file named
rc=0
"$colosim" trace "$v100" --against traces/bert_b2_v100.json --kernels > "$out/two_models.out" \
    2> "$out/two_models.err" || rc=$?
[ "$rc" = 2 ] || fail "two models: exit status $rc, expected 2"
[ ! -s "$out/two_models.out" ] || fail "two models: printed $(head -n 3 "$out/two_models.out")"
has "$out/two_models.err" "traces/bert_b2_v100.json: cannot pair its kernels with those of $v100: it is a trace of bert, that one of resnet101"

# 5. usage errors: exit 2
for args in "--kernels" "--against $h100 --kernels=json" "--against $h100 --kernels=csv --classes" \
    "--against $h100 --kernels csv"; do
    rc=0
    # shellcheck disable=SC2086
    "$colosim" trace "$v100" $args > /dev/null 2> "$out/usage.err" || rc=$?
    [ "$rc" = 2 ] || fail "'$args': exit status $rc, expected 2"
    grep -q '^colosim: .*--kernels' "$out/usage.err" || fail "'$args': said $(head -n 1 "$out/usage.err")"
done
echo "trace_kernels: 344 rows aligned and in order, sums, csv, two models refused, usage errors"
