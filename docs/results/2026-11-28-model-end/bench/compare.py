#!/usr/bin/env python3
"""The model bench (`cargo bench -p memhc-gpu --bench model`) before and after the model's
end-of-run fix: bench-model-before.txt (the fix undone locally, otherwise the same tree) and
bench-model.txt (the commit in ../commit.txt). Per point and mode: makespan and floor/makespan.

    python3 docs/results/2026-11-28-model-end/bench/compare.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(name):
    """The bench's table in `name`: (N, vector size, repeat, oversub, mode) as printed ->
    (makespan ms, floor/makespan)."""
    out = {}
    for line in open(os.path.join(HERE, name)):
        f = line.split()
        if len(f) > 9 and f[0].isdigit():
            out[tuple(f[:5])] = (float(f[5]), float(f[8]))
    return out


def main():
    before, after = rows("bench-model-before.txt"), rows("bench-model.txt")
    print("| N | vector size | repeat | oversub | mode | makespan ms before / after | floor/makespan before / after |")
    print("|---|---|---|---|---|---|---|")
    for k, (ma, fa) in after.items():
        mb, fb = before[k]
        print(f"| {' | '.join(k)} | {mb:.2f} / {ma:.2f} | {fb:.3f} / {fa:.3f} |")


if __name__ == "__main__":
    main()
