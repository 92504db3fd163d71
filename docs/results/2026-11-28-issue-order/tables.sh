#!/usr/bin/env bash
# The tables of docs/results/2026-11-28-issue-order.md, from the raw records:
#   docs/results/2026-11-28-issue-order/tables.sh > docs/results/2026-11-28-issue-order/tables.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/results/2026-11-28-issue-order
echo "## Per point: the modelled fraction of the floor in each issue order"
echo
python3 $D/tables.py $D
echo
echo "## Per engine: N = 192, vector size 16, repeat 1 and 0.25 (scripts/timeline-engines.py)"
for r in 1 0.25; do
    for o in queue dependency; do
        tl=$(mktemp)
        gzip -dc "$D/$o/timeline-direct-N192-r$r.json.gz" > "$tl"
        echo
        echo "repeat $r, order $o:"
        python3 scripts/timeline-engines.py "$tl" | sed "s|$tl|$o/timeline-direct-N192-r$r.json.gz|"
        python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print(f\"modelled makespan {1e3*r['model_makespan_s']:.2f} ms, floor {1e3*r['model_floor_s']:.2f} ms, fraction {r['model_floor_s']/r['model_makespan_s']:.3f}\")" "$D/$o/profile-direct-N192-r$r.json"
        rm -f "$tl"
    done
done
