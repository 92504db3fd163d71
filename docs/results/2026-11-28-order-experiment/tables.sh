#!/usr/bin/env bash
# Prints the table of docs/results/2026-11-28-order-experiment.md from this folder's records.
set -euo pipefail
cd "$(dirname "$0")"
python3 - <<'PY'
import json
print("| streams | N | repeat | queue order: model fraction | readiness order: model fraction |")
print("|---|---|---|---|---|")
for streams, prefix in (("4", "order"), ("16", "order16")):
    q = json.load(open(f"{prefix}-queue.json"))
    r = json.load(open(f"{prefix}-ready.json"))
    for a, b in zip(q, r):
        fa = a["model_floor_s"] / a["model_makespan_s"]
        fb = b["model_floor_s"] / b["model_makespan_s"]
        print(f"| {streams} | {a['tensor_size']} | {a['repeat']} | {fa:.3f} | {fb:.3f} |")
PY
