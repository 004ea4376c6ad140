#!/usr/bin/env bash
# Converts Vidur's published per-operator LLM profiles (github.com/microsoft/vidur, MIT,
# data/profiling/compute/GPU/MODEL/mlp.csv) into the committed colosim LLM profiles of this
# folder (traces/llm/README.md). VIDUR is a clone of the repository or its bare git directory.
# Usage: traces/llm/import_vidur.sh VIDUR [COLOSIM]   (COLOSIM default: build/colosim)
set -euo pipefail
vidur=${1:?usage: import_vidur.sh VIDUR [COLOSIM]}
cd "$(dirname "$0")/../.."
colosim=${2:-build/colosim}
git_dir=$vidur/.git
[ -d "$git_dir" ] || git_dir=$vidur
commit=$(git --git-dir="$git_dir" rev-parse HEAD)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# path under data/profiling/compute  colosim GPU  profile  tensor parallelism (ranks)
while read -r path gpu profile tp; do
    [ -n "$path" ] || continue
    src=data/profiling/compute/$path/mlp.csv
    git --git-dir="$git_dir" show "$commit:$src" > "$work/mlp.csv"
    "$colosim" import vidur "$work/mlp.csv" --gpu "$gpu" --tp "$tp" --commit "$commit" \
        --source "$src" -o "traces/llm/$profile.json"
done <<LIST
a100/microsoft/phi-2                          a100-80gb phi-2_a100             1
h100/microsoft/phi-2                          h100-sxm  phi-2_h100             1
a100/meta-llama/Meta-Llama-3-8B               a100-80gb llama-3-8b_a100        1
a100/codellama/CodeLlama-34b-Instruct-hf      a100-80gb codellama-34b_a100     1
h100/codellama/CodeLlama-34b-Instruct-hf      h100-sxm  codellama-34b_h100     1
h100/codellama/CodeLlama-34b-Instruct-hf      h100-sxm  codellama-34b_h100_tp2 2
h100/codellama/CodeLlama-34b-Instruct-hf      h100-sxm  codellama-34b_h100_tp4 4
a100/codellama/CodeLlama-34b-Instruct-hf      a100-80gb codellama-34b_a100_tp2 2
h100/meta-llama/Llama-2-70b-hf                h100-sxm  llama-2-70b_h100_tp4   4
a100/meta-llama/Meta-Llama-3-70B              a100-80gb llama-3-70b_a100_tp4   4
LIST
