#!/usr/bin/env bash
# The tables of docs/results/2026-11-28-model-h100.md, from the raw records:
#   docs/results/2026-11-28-model-h100/compare.sh > docs/results/2026-11-28-model-h100/tables.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
H=docs/results/2026-11-28-h100
G=$H/2026-11-28T014224Z-datapath-cpu-profile-direct
M=docs/results/2026-11-28-model-h100
gpu=(--gpu "$G" --gpu "$H/2026-11-28T014903Z-datapath-vsize")
echo "## Per point: the H100's wall time against the model before and after the fix"
echo
python3 scripts/model-h100-compare.py "${gpu[@]}" --model "before=$M/before" --model "fixed=$M/model-fixed"
echo
echo "## The reverted schedule experiment: first-in-first-out reuse of resting blocks, on the first fix's model"
echo
python3 scripts/model-h100-compare.py "${gpu[@]}" --model "v1=$M/model-fixed-v1" --model "fifo=$M/fifo-reverted"
echo
echo "## Per span: the recorded timelines against the model's of the same commands"
echo
for t in fig7 table1; do
    for m in before model-fixed-v1 model-fixed; do
        python3 scripts/model-h100-compare.py --timeline "$t, model: $m" \
            "$G/timeline-direct-$t.json.gz" "$M/$m/timeline-direct-$t.json.gz"
    done
done
echo "## N = 192, repeat 1 on the model, 4 and 16 streams"
echo
for s in 4 16; do
    tl=$(mktemp)
    gzip -dc "$M/model-fixed/timeline-direct-N192-r1-streams$s.json.gz" > "$tl"
    echo "streams $s:"
    python3 scripts/timeline-engines.py "$tl"
    python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r=r[0] if isinstance(r,list) else r; print(f\"modelled makespan {1e3*r['model_makespan_s']:.2f} ms, floor {1e3*r['model_floor_s']:.2f} ms, fraction {r['model_floor_s']/r['model_makespan_s']:.3f}\")" "$M/model-fixed/profile-direct-N192-r1-streams$s.json"
    echo
    rm -f "$tl"
done
