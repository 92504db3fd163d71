#!/usr/bin/env python3
"""Per point, the modelled fraction of the floor (`model_floor_s / model_makespan_s`) in two
folders of model runs ({queue,dependency}/datapath-*.json, merged.sh of the issue-order page).
By default before = docs/results/2026-11-28-schedule (the same commands one commit earlier in
the model) and after = this folder (the model's end-of-run fix, at the commit in commit.txt).
Standard library only.

    python3 docs/results/2026-11-28-model-end/compare.py [BEFORE AFTER]
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BEFORE, AFTER = sys.argv[1:3] if len(sys.argv) > 2 else (os.path.join(HERE, "..", "2026-11-28-schedule"), HERE)


def load(folder, order):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, order, "datapath-*.json"))):
        for r in json.load(open(path)):
            k = (r["tensor_size"], r["vector_size"], r["repeat"], r["oversub"], r["policy"])
            out[k] = r
    return out


print("| N | vector size | repeat | oversub | policy | order | makespan ms before / after | "
      "change ms | fraction before | fraction after | >= 0.90 after |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
changes = []
for order in ["queue", "dependency"]:
    before, after = load(BEFORE, order), load(AFTER, order)
    for k in sorted(after, key=lambda k: (-k[0], k[1] != 16, k[1], k[2], k[4])):
        b, a = before[k], after[k]
        mb, ma = b["model_makespan_s"], a["model_makespan_s"]
        assert b["model_floor_s"] == a["model_floor_s"], k
        fb, fa = b["model_floor_s"] / mb, a["model_floor_s"] / ma
        changes.append((mb - ma) * 1e3)
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {order} | {mb * 1e3:.2f} / {ma * 1e3:.2f} | "
              f"{(ma - mb) * 1e3:+.3f} | {fb:.3f} | {fa:.3f} | {'yes' if fa >= 0.90 else 'no'} |")
print()
print(f"makespans shorter by {min(changes):.3f}-{max(changes):.3f} ms over {len(changes)} runs; "
      "floors equal in every run (asserted)")
