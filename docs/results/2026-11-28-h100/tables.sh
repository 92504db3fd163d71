#!/usr/bin/env bash
# Prints every table of docs/results/2026-11-28-h100.md from the raw files of this folder
# (run from the repository root or anywhere; writes the three .md files beside this script).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/../../../scripts"
check="$here/2026-11-28T013842Z-check-limits-contraction"
data="$here/2026-11-28T014224Z-datapath-cpu-profile-direct"
vsize="$here/2026-11-28T014903Z-datapath-vsize"
model="$here/model/2026-11-28T014953Z-datapath-cpu-datapath-vsize"
python3 "$scripts/gpu-check-summary.py" "$check" "$here/host-counts" > "$here/check-summary.md"
python3 "$scripts/gpu-ratios.py" "$check/criterion" > "$here/contraction-ratios.md"
python3 "$scripts/gpu-datapath-table.py" "$data" "$vsize" --model "$model" --rates "$check" \
    > "$here/datapath-table.md"
cat "$here/check-summary.md" "$here/contraction-ratios.md" "$here/datapath-table.md"
echo
echo "### Host CPU time per contraction (H100; cpu stage)"
cat "$data/cpu-per-contraction.md" "$data/cpu-direct-per-contraction.md"
echo
echo "### The same on the modelled H100"
cat "$model/cpu-per-contraction.md" "$model/cpu-direct-per-contraction.md"
