#!/usr/bin/env bash
# Writes colosim(1) from the program's own help (so the page never drifts from --help):
# the main usage, then each command's. The help names the configure-time folders it searches
# (SOURCE_GPU_DIR, INSTALL_GPU_DIR); the page names them in words, so that it holds no path of
# the machine it was built on. Usage: make_man.sh COLOSIM VERSION OUT.1 [SOURCE_GPU_DIR INSTALL_GPU_DIR]
set -euo pipefail
colosim=$1 version=$2 out=$3 src_gpus=${4:-} inst_gpus=${5:-}
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
# the help of `colosim help [CMD]`, with the configure-time folders in words
help() {
    local t src_words="the source tree's models/gpus" inst_words="the configure-time prefix's share/colosim/gpus"
    t=$("$colosim" help "$@")
    [ -z "$src_gpus" ] || t=${t//"$src_gpus"/"$src_words"}
    [ -z "$inst_gpus" ] || t=${t//"$inst_gpus"/"$inst_words"}
    printf '%s\n' "$t"
}
{
    echo ".TH COLOSIM 1 \"\" \"colosim $version\" \"User Commands\""
    echo ".SH NAME"
    echo "colosim \\- simulate DNN inference services sharing one NVIDIA GPU"
    echo ".SH SYNOPSIS"
    echo ".B colosim"
    echo ".I COMMAND"
    echo "[\\fIARGS\\fR]"
    echo ".SH DESCRIPTION"
    echo ".nf"
    help | esc
    echo ".fi"
    echo ".SH COMMANDS"
    for cmd in run check plan live sweep search plot compare gpus trace llm import calibrate validate; do
        echo ".SS $cmd"
        echo ".nf"
        help "$cmd" | esc
        echo ".fi"
    done
    echo ".SH ENVIRONMENT"
    echo ".TP"
    echo ".B COLOSIM_GPU_PATH"
    echo "Colon-separated folders searched first for GPU descriptions (NAME.cfg)."
    echo ".TP"
    echo ".B COLOSIM_DATA_DIR"
    echo "A folder holding gpus/ (and calibrated/), searched next; by default an installed"
    echo "colosim finds its data in ../share/colosim beside the program or library."
    echo "The same folders hold the scenarios and traces colosim ships: a scenario FILE of run,"
    echo "check or plan that is not a file relative to the working directory is looked for in"
    echo "each as FILE, then scenarios/FILE (colosim run resnet50_bert_timeslice.cfg), and a"
    echo "trace a scenario names that is not beside it, as traces/NAME."
    echo ".SH EXIT STATUS"
    echo "0 success, 1 failure while running, 2 bad input or usage, 130 or 143 when stopped by"
    echo "SIGINT or SIGTERM."
    echo ".SH SEE ALSO"
    echo ".BR colosim-scenario (5);"
    echo "the documentation installed in share/doc/colosim under the install prefix (docs/ in"
    echo "the source tree)."
} > "$out"
