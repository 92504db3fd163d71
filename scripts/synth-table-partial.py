#!/usr/bin/env python3
"""A MemHC table from memhc-synth records (a finished FILE.json or a FILE.json.partial).

    scripts/synth-table-partial.py FILE

One row per record: tensor size, vector size, oversubscription, repeated rate, policy, wall
time, misses against the lower bound (Belady's, `miss_lower_bound`), and wall time relative to
lru at the same point.
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: synth-table-partial.py FILE")
    with open(sys.argv[1]) as f:
        records = json.load(f)
    key = lambda r: (r["tensor_size"], r["vector_size"], r["oversub"], r["repeat"])
    lru = {key(r): r["wall_s"] for r in records if r["policy"] == "lru"}
    print("| N | vector size | oversub | repeat | policy | wall | misses | lower bound | lru / this |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in records:
        base = lru.get(key(r))
        ratio = f"{base / r['wall_s']:.2f}" if base else "-"
        print(f"| {r['tensor_size']} | {r['vector_size']} | {r['oversub']} | {r['repeat']} | {r['policy']} "
              f"| {r['wall_s']:.3f} s | {r['misses']} | {r['miss_lower_bound']} | {ratio} |")


if __name__ == "__main__":
    main()
