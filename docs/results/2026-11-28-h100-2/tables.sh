#!/usr/bin/env bash
# Prints every table of docs/results/2026-11-28-h100-2.md from the raw files of this folder.
# The zgemm rate at N = 384 comes from the H100 session before (its contraction stage; this
# session's was stopped at N = 192 by the call's time limit), the bus from this session's
# limits stage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
scripts="$here/../../../scripts"
first="$here/2026-11-28T042610Z-limits-wait-floor-rounds-contraction-register"
rerun="$here/2026-11-28T043534Z-floor-fig7-rerun"
before="$here/../2026-11-28-h100/2026-11-28T013842Z-check-limits-contraction"
echo "### The direct path's fraction of the floor, six runs per point; host CPU by wait"
echo
python3 "$scripts/gpu-floor-rounds.py" "$first" "$rerun" --limits "$first" --rates "$before"
echo
echo "### The meson contraction against cuBLAS's strided batch (N = 128 only: the bench was stopped at N = 192)"
python3 "$scripts/gpu-ratios.py" "$first/criterion"
