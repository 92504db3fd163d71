#!/usr/bin/env python3
"""The model bench on memhc-synth's runner (bench-model-runner.txt) against memhc-synth's own
model runs of the same points (../queue and ../dependency, merged.sh): the bench's `direct`
and `direct-dep` rows and the records' `model_floor_s / model_makespan_s`, and the bench's
`direct` rows before it used the runner (bench-model.txt: its own copy of the runner).

    python3 docs/results/2026-11-28-model-end/bench/runner-check.py
"""
import glob
import json
import os

from compare import rows

HERE = os.path.dirname(os.path.abspath(__file__))


def bench(name):
    """The bench's floor/makespan per (N, vector size, repeat, oversub, mode)."""
    return {(int(k[0]), int(k[1]), float(k[2]), float(k[3]), k[4]): f for k, (_, f) in rows(name).items()}


def synth(order):
    out = {}
    for path in glob.glob(os.path.join(HERE, "..", order, "datapath-*.json")):
        for r in json.load(open(path)):
            if r["policy"] == "lru":
                k = (r["tensor_size"], r["vector_size"], r["repeat"], r["oversub"])
                out[k] = r["model_floor_s"] / r["model_makespan_s"]
    return out


runner, old = bench("bench-model-runner.txt"), bench("bench-model.txt")
orders = {"direct": synth("queue"), "direct-dep": synth("dependency")}
print("| N | vector size | repeat | oversub | bench row | bench (own runner) | bench (memhc-synth's runner) | memhc-synth | equal |")
print("|---|---|---|---|---|---|---|---|---|")
equal = 0
rows = [k for k in runner if k[4] in orders]
for k in rows:
    s = orders[k[4]][k[:4]]
    same = abs(s - runner[k]) < 0.0005
    equal += same
    before = f"{old[k]:.3f}" if k in old else "-"
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {before} | {runner[k]:.3f} | {s:.3f} | {'yes' if same else 'no'} |")
print()
print(f"{equal} of {len(rows)} rows equal to memhc-synth's (to the bench's three decimals)")
