#!/usr/bin/env bash
# The model as it stands (this folder: runs.sh of the model-h100 page at the commit in
# commit.txt) against the H100's direct-path records, beside the model-h100 page's "fixed"
# model (e6f9cca): per point, wall time, model time and error (scripts/model-h100-compare.py).
#   docs/results/2026-11-28-model-end/h100/compare.sh > docs/results/2026-11-28-model-end/h100/tables.md
set -euo pipefail
cd "$(dirname "$0")/../../../.."
python3 scripts/model-h100-compare.py --gpu docs/results/2026-11-28-h100/2026-11-28T014224Z-datapath-cpu-profile-direct --gpu docs/results/2026-11-28-h100/2026-11-28T014903Z-datapath-vsize \
    --model "fixed=docs/results/2026-11-28-model-h100/model-fixed" --model "now=docs/results/2026-11-28-model-end/h100"
