#!/bin/sh
# How much of the modelled makespan is the host's driver calls (the model's host_call_s, 2 us
# per call by default): the dependency order on the direct path at four Fig. 7 points, with
# host_call_s at 0, 2 us (the default) and 4 us (MEMHC_MODEL). Prints a Markdown table.
#   SYNTH=target/release/memhc-synth docs/results/2026-11-28-schedule/host-calls.sh > OUT
set -eu
SYNTH=${SYNTH:-target/release/memhc-synth}
tmp=$(mktemp -d)
echo "| N | vector size | repeat | host_call_s | makespan ms | fraction of the floor |"
echo "|---|---|---|---|---|---|"
for pt in "192 16 1" "384 16 1" "192 8 1" "192 16 0.5"; do
    set -- $pt
    for call in 0 2e-6 4e-6; do
        MEMHC_MODEL=host_call_s=$call "$SYNTH" --backend model --tensor-size "$1" --vector-size "$2" \
            --vectors 8 --repeat "$3" --mode optimal --host-memory pinned --prefetch 12 \
            --order dependency --json "$tmp/r.json" >/dev/null 2>&1
        python3 - "$tmp/r.json" "$1" "$2" "$3" "$call" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r = r[0] if isinstance(r, list) else r
m, f = r["model_makespan_s"], r["model_floor_s"]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {sys.argv[4]} | {sys.argv[5]} | {m * 1e3:.3f} | {f / m:.3f} |")
PY
    done
done
rm -r "$tmp"
