#!/usr/bin/env bash
# Records the validation suite's table: validation/recorded.json (what colosim validate --check
# compares with) and the table in docs/validation.md. Run it in the commit that changes the
# model, and say in the commit message why a case moved. validation/record.sh [BUILD]
set -euo pipefail
cd "$(dirname "$0")/.."
colosim="${1:-build}/colosim"
"$colosim" validate validation -o validation/recorded.json --markdown docs/validation.md -q
