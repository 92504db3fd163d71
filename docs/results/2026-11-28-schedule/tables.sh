#!/usr/bin/env bash
# The tables of docs/results/2026-11-28-schedule.md, from the raw records:
#   docs/results/2026-11-28-schedule/tables.sh > docs/results/2026-11-28-schedule/tables.md
set -euo pipefail
cd "$(dirname "$0")/../../.."
D=docs/results/2026-11-28-schedule
echo "## Per point: before (main) and after, both orders, and the best fraction by arithmetic"
echo
python3 $D/tables.py
echo
echo "## Per engine: vector size 16, repeat 1 and 0.75 (scripts/timeline-engines.py)"
for n in 192 384; do
    for r in 1 0.75; do
        for o in queue dependency; do
            f="$D/timelines/$o-N$n-r$r"
            tl=$(mktemp)
            gzip -dc "$f.timeline.json.gz" > "$tl"
            echo
            echo "N = $n, repeat $r, order $o:"
            python3 scripts/timeline-engines.py "$tl" | sed "s|$tl|$o-N$n-r$r.timeline.json.gz|"
            python3 -c "import json,sys; r=json.load(open(sys.argv[1]))[0]; print(f\"modelled makespan {1e3*r['model_makespan_s']:.2f} ms, floor {1e3*r['model_floor_s']:.2f} ms, fraction {r['model_floor_s']/r['model_makespan_s']:.3f}\")" "$f.json"
            python3 $D/gap.py "$f.timeline.json.gz" "$f.json"
            rm -f "$tl"
        done
    done
done
echo
echo "## The dependency order against the reference (host backend, --verify)"
echo
python3 - "$D/verify" <<'PY'
import glob, json, os, sys
print("| file | records | verified | largest relative error | modes | policies | oversub | pinned | prefetch | order |")
print("|---|---|---|---|---|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    rs = json.load(open(path))
    ok = sum(1 for r in rs if r.get("verified") is True)
    err = max((r.get("max_rel_error") or 0.0) for r in rs)
    col = lambda f: ",".join(sorted({f(r) for r in rs}))
    print(f"| {os.path.basename(path)} | {len(rs)} | {ok} | {err:.2e} | {col(lambda r: r['mode'])} "
          f"| {col(lambda r: r['policy'])} | {col(lambda r: format(float(r.get('oversub') or 0), 'g'))} "
          f"| {col(lambda r: str(r['pinned']).lower())} | {col(lambda r: str(r['prefetch']))} "
          f"| {col(lambda r: r.get('order', 'queue'))} |")
PY
