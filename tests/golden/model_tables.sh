#!/usr/bin/env bash
# The tables of docs/model.md ("What the model predicts") are what docs/model_tables.sh prints
# with this build: a change to the model that moves them must update the page.
#   model_tables.sh COLOSIM SRC
set -euo pipefail
colosim=$1; src=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$src/docs/model_tables.sh" "$colosim" > "$out"
missing=0
while IFS= read -r line; do
    case "$line" in "|"*) ;; *) continue ;; esac
    if ! grep -qxF -- "$line" "$src/docs/model.md"; then
        echo "docs/model.md lacks: $line" >&2
        missing=$((missing + 1))
    fi
done < "$out"
[ "$missing" -eq 0 ] || { echo "$missing table rows differ: run docs/model_tables.sh and update docs/model.md" >&2; exit 1; }
echo "every table row of docs/model_tables.sh is in docs/model.md"
