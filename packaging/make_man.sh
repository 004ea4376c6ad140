#!/usr/bin/env bash
# Writes colosim(1) from the program's own help (so the page never drifts from --help):
# the main usage, then each command's. Usage: make_man.sh COLOSIM VERSION OUT.1
set -euo pipefail
colosim=$1 version=$2 out=$3
esc() { sed -e 's/\\/\\e/g' -e 's/^\./\\\&./' -e "s/^'/\\\\\&'/"; }
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
    "$colosim" help | esc
    echo ".fi"
    echo ".SH COMMANDS"
    for cmd in run check plan live sweep search plot compare gpus trace llm import calibrate validate; do
        echo ".SS $cmd"
        echo ".nf"
        "$colosim" help "$cmd" | esc
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
    echo ".SH EXIT STATUS"
    echo "0 success, 1 failure while running, 2 bad input or usage, 130 or 143 when stopped by"
    echo "SIGINT or SIGTERM."
    echo ".SH SEE ALSO"
    echo ".BR colosim-scenario (5);"
    echo "the documentation in the source tree's docs/ folder."
} > "$out"
