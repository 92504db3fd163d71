#!/usr/bin/env bash
# Prints every table of docs/results/2026-11-28-h100-3.md from the raw files of this folder.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/../../../scripts"
first="$here/2026-11-28T064227Z-contraction-register-host128"
corr="$here/2026-11-28T064620Z-corr-paper"
tables="$here/2026-11-28T064815Z-synth-tables"
echo "### The meson contraction against cuBLAS's strided batch; registered against staged copies"
python3 "$scripts/gpu-ratios.py" "$first/criterion"
echo
echo "### Registration: fixed cost and cost per copy, fitted from the three copy counts"
python3 "$scripts/register-rule.py" "$first/criterion"
echo
python3 "$scripts/host-window.py" "$first"
echo
echo "### memhc run on the correlator presets at the paper's tensor sizes (three runs each)"
python3 "$scripts/corr-paper-table.py" "$corr"
echo
echo "### MemHC Table 1 at 20 vectors (vector sizes 8-32; the step stopped during vector size 64)"
python3 "$scripts/synth-table-partial.py" "$tables/synth-table1.json.partial"
