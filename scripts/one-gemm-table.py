#!/usr/bin/env python3
"""Tables of docs/results/2026-11-27-one-gemm.md from the one_gemm bench's raw files.

Usage: scripts/one-gemm-table.py docs/results/2026-11-27-one-gemm

Reads every round's criterion files there (`round-K/**/new/benchmark.json` and
`estimates.json`, as scripts/one-gemm-runs.sh saved them), takes each line's median time per
iteration in each round (criterion's median over its samples), and prints per N:

* the three lines' times (median over rounds, with the range over rounds) and GFLOPS;
* the ratios of each round, `contraction / faer-64-products` and
  `faer-one-product / faer-64-products`, as the median over rounds with their range, and how
  many rounds had each ratio below 1.

A ratio is taken within one round (the lines of one round ran one after another), so the
machine's drift between rounds cancels. Stdlib only.
"""
import glob
import json
import os
import re
import statistics
import sys

BASE = "faer-64-products"
LINES = ["contraction", BASE, "faer-one-product"]


def rounds(folder):
    """{round: {(n, line): median ns}}"""
    out = {}
    for bench in glob.glob(os.path.join(folder, "round-*", "**", "new", "benchmark.json"),
                           recursive=True):
        k = int(re.search(r"round-(\d+)", bench).group(1))
        meta = json.load(open(bench))
        n = int(re.search(r"N=(\d+)", meta["group_id"]).group(1))
        est = json.load(open(os.path.join(os.path.dirname(bench), "estimates.json")))
        out.setdefault(k, {})[(n, meta["function_id"])] = est["median"]["point_estimate"]
    return out


def spread(values, fmt):
    return f"{fmt(statistics.median(values))} [{fmt(min(values))}, {fmt(max(values))}]"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    data = rounds(sys.argv[1])
    if not data:
        sys.exit(f"no round-*/**/new/benchmark.json under {sys.argv[1]}")
    ns = sorted({n for r in data.values() for (n, _) in r})
    print(f"rounds: {len(data)} ({', '.join(str(k) for k in sorted(data))})")
    print()
    print("| N | line | time per contraction, µs: median [min, max] over rounds | GFLOPS (median) |")
    print("|---|---|---|---|")
    for n in ns:
        flops = 64 * 8 * n**3
        for line in LINES:
            t = [r[(n, line)] / 1e3 for r in data.values() if (n, line) in r]
            if not t:
                continue
            gf = flops / (statistics.median(t) * 1e3)
            print(f"| {n} | {line} | {spread(t, lambda v: f'{v:.1f}')} | {gf:.2f} |")
    print()
    print("| N | contraction / 64 products | rounds below 1 | one 4N product / 64 products "
          "| rounds below 1 | rounds |")
    print("|---|---|---|---|---|---|")
    for n in ns:
        ok = [r for r in data.values() if all((n, l) in r for l in LINES)]
        c = [r[(n, "contraction")] / r[(n, BASE)] for r in ok]
        o = [r[(n, "faer-one-product")] / r[(n, BASE)] for r in ok]
        f = lambda v: f"{v:.3f}"
        below = lambda v: sum(x < 1 for x in v)
        print(f"| {n} | {spread(c, f)} | {below(c)} | {spread(o, f)} | {below(o)} | {len(ok)} |")


if __name__ == "__main__":
    main()
