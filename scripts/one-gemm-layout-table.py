#!/usr/bin/env python3
"""Tables of docs/results/2026-11-27-one-gemm-layout.md from the one_gemm bench's raw files.

Usage: scripts/one-gemm-layout-table.py docs/results/2026-11-27-one-gemm-layout

Reads every round's criterion files there (`round-K/<build>/**/new/benchmark.json` and
`estimates.json`, as scripts/one-gemm-layout-runs.sh saved them; builds `before` and
`after`), takes each line's median time per iteration in each run (criterion's median over
its samples), and prints per N:

* every line's time in each build (median over rounds, with the range) and GFLOPS;
* the ratios taken within one round: `contraction` after / before (the layout change),
  and `contraction / faer-64-products` in each build (the bare line ran in the same process),
  as the median over rounds with their range and how many rounds had each below 1.

Stdlib only.
"""
import glob
import json
import os
import re
import statistics
import sys

BASE = "faer-64-products"
LINES = ["contraction", BASE, "faer-one-product"]
BUILDS = ["before", "after"]


def rounds(folder):
    """{round: {build: {(n, line): median ns}}}"""
    out = {}
    pattern = os.path.join(folder, "round-*", "*", "**", "new", "benchmark.json")
    for bench in glob.glob(pattern, recursive=True):
        rel = os.path.relpath(bench, folder).split(os.sep)
        k, build = int(rel[0].split("-")[1]), rel[1]
        meta = json.load(open(bench))
        n = int(re.search(r"N=(\d+)", meta["group_id"]).group(1))
        est = json.load(open(os.path.join(os.path.dirname(bench), "estimates.json")))
        out.setdefault(k, {}).setdefault(build, {})[(n, meta["function_id"])] = \
            est["median"]["point_estimate"]
    return out


def summary(values, digits):
    return f"{statistics.median(values):.{digits}f} [{min(values):.{digits}f}, {max(values):.{digits}f}]"


def main():
    folder = sys.argv[1]
    data = rounds(folder)
    ks = sorted(k for k in data if all(b in data[k] for b in BUILDS))
    print(f"rounds: {len(ks)} ({', '.join(map(str, ks))})")
    ns = sorted({n for k in ks for b in BUILDS for (n, _) in data[k][b]})
    print()
    print("| N | line | build | time per contraction, µs: median [min, max] over rounds"
          " | GFLOPS (median) |")
    print("|---|---|---|---|---|")
    for n in ns:
        flops = 64 * 8 * n ** 3
        for line in LINES:
            for b in BUILDS:
                t = [data[k][b][(n, line)] / 1e3 for k in ks if (n, line) in data[k][b]]
                if t:
                    gf = flops / (statistics.median(t) * 1e3)
                    print(f"| {n} | {line} | {b} | {summary(t, 1)} | {gf:.2f} |")
    print()
    print("| N | contraction after / before | rounds below 1 | before: contraction / 64 products"
          " | after: contraction / 64 products | rounds below 1 (after) | after: one 4N product"
          " / 64 products | rounds |")
    print("|---|---|---|---|---|---|---|---|")
    for n in ns:
        c = lambda k, b, line="contraction": data[k][b][(n, line)]
        change = [c(k, "after") / c(k, "before") for k in ks]
        before = [c(k, "before") / c(k, "before", BASE) for k in ks]
        after = [c(k, "after") / c(k, "after", BASE) for k in ks]
        one = [c(k, "after", "faer-one-product") / c(k, "after", BASE) for k in ks]
        below = lambda xs: sum(x < 1 for x in xs)
        print(f"| {n} | {summary(change, 3)} | {below(change)} | {summary(before, 3)} |"
              f" {summary(after, 3)} | {below(after)} | {summary(one, 3)} | {len(ks)} |")


if __name__ == "__main__":
    main()
