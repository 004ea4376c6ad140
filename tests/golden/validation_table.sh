#!/usr/bin/env bash
# The validation suite against published measurements (docs/validation.md): no case got worse
# than validation/recorded.json says by more than one percentage point, every case is recorded,
# every error above 50 % states its cause; and the table in docs/validation.md is what this build
# prints. A change that moves the table records it again: validation/record.sh.
#   validation_table.sh COLOSIM SRC
set -euo pipefail
colosim=$1; src=$2
"$colosim" validate "$src/validation" --check "$src/validation/recorded.json" -q
md=$(mktemp --suffix=.md)
trap 'rm -f "$md"' EXIT
cp "$src/docs/validation.md" "$md"
# The table names each source file as given: run from the source tree, as record.sh does.
(cd "$src" && "$colosim" validate validation --markdown "$md" -q >/dev/null)
if ! diff -u "$src/docs/validation.md" "$md"; then
    echo "docs/validation.md differs from this build's table: run validation/record.sh" >&2
    exit 1
fi
echo "the validation table in docs/validation.md is this build's"
