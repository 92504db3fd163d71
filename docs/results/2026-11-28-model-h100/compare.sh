#!/usr/bin/env bash
# The tables of docs/results/2026-11-28-model-h100.md, from the raw records:
#   docs/results/2026-11-28-model-h100/compare.sh > docs/results/2026-11-28-model-h100/tables.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
H=docs/results/2026-11-28-h100
G=$H/2026-11-28T014224Z-datapath-cpu-profile-direct
M=docs/results/2026-11-28-model-h100
echo "## Per point: the H100's wall time against the model (before the fix, after it; after the schedule change)"
echo
python3 scripts/model-h100-compare.py --gpu "$G" --gpu "$H/2026-11-28T014903Z-datapath-vsize" \
    --model "before=$M/before" --model "fixed=$M/model-fixed" --model "after=$M/after"
echo
echo "## Per span: the recorded timelines against the model's of the same commands"
echo
for t in fig7 table1; do
    for m in before model-fixed after; do
        python3 scripts/model-h100-compare.py --timeline "$t, model: $m" \
            "$G/timeline-direct-$t.json.gz" "$M/$m/timeline-direct-$t.json.gz"
    done
done
