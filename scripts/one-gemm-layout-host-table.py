#!/usr/bin/env python3
"""Tables of docs/results/2026-11-28-host-one-gemm.md from the one_gemm bench's raw files.

Usage: scripts/one-gemm-layout-host-table.py docs/results/2026-11-28-host-one-gemm

Reads every round's criterion files there (`round-K/<build>/**/new/benchmark.json` and
`estimates.json`, as scripts/one-gemm-layout-runs.sh saved them; builds `before` and `after`),
takes each line's median time per iteration in each run (criterion's median over its samples)
and prints per N:

* every line's time in each build (median over rounds, with the range) and GFLOPS;
* ratios taken within one run (one process, lines one after another) or, for after / before,
  within one round: `contraction` after / before; `contraction / faer-64-products` in each
  build (issue 30's host target: at most 1); in the after build, the two bare products of
  order 4N against the 64 products (`faer-one-product`: faer's own parallel split, what the
  backend ran before; `faer-row-panels`: the split the backend runs now), and what the runtime
  adds to the bare product it runs: `contraction / faer-one-product` before, `contraction /
  faer-row-panels` after. Each ratio is the median
  over rounds with its range, and how many rounds had it at most 1;
* whether the target holds: the after build's median `contraction / faer-64-products` at most
  1 at every N.

If the folder holds `loadavg-samples*.txt` (lines `HH:MM:SS load1 load5 load15 ...`, sampled
every 30 s while the measurements ran), the 1-minute load average is summarised first (median [min, max]).

A line missing from a build (`faer-row-panels` is not in the before build's bench) is left
out. Stdlib only.
"""
import glob
import importlib.util
import os
import statistics
import sys

# The rounds' criterion estimates are read as the layout page's table reads them.
here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("layout", os.path.join(here, "one-gemm-layout-table.py"))
layout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(layout)
rounds, summary = layout.rounds, layout.summary

BASE = "faer-64-products"
LINES = ["contraction", BASE, "faer-one-product", "faer-row-panels"]
BUILDS = ["before", "after"]


def main():
    folder = sys.argv[1]
    data = rounds(folder)
    ks = sorted(k for k in data if all(b in data[k] for b in BUILDS))
    print(f"rounds: {len(ks)} ({', '.join(map(str, ks))})")
    samples = sorted(glob.glob(os.path.join(folder, "loadavg-samples*.txt")))
    if samples:
        loads = [float(line.split()[1]) for f in samples for line in open(f) if line.strip()]
        print(f"1-minute load average while they ran (2 cores): {summary(loads, 2)},"
              f" {len(loads)} samples")
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
    print("Ratios, median [min, max] over rounds (rounds at most 1 of all rounds):")
    print()
    print("| N | contraction after / before | before: contraction / 64 products"
          " | after: contraction / 64 products | after: faer-one-product / 64 products"
          " | after: faer-row-panels / 64 products | before: contraction / faer-one-product"
          " | after: contraction / faer-row-panels |")
    print("|---|---|---|---|---|---|---|---|")
    met = True
    for n in ns:
        def c(k, b, line="contraction"):
            return data[k][b][(n, line)]

        def ratio(xs):
            return f"{summary(xs, 3)} ({sum(x <= 1 for x in xs)} of {len(xs)})"

        change = [c(k, "after") / c(k, "before") for k in ks]
        before = [c(k, "before") / c(k, "before", BASE) for k in ks]
        after = [c(k, "after") / c(k, "after", BASE) for k in ks]
        one = [c(k, "after", "faer-one-product") / c(k, "after", BASE) for k in ks]
        pk = [k for k in ks if (n, "faer-row-panels") in data[k]["after"]]
        panels = [c(k, "after", "faer-row-panels") / c(k, "after", BASE) for k in pk]
        over = [c(k, "after") / c(k, "after", "faer-row-panels") for k in pk]
        over_before = [c(k, "before") / c(k, "before", "faer-one-product") for k in ks]
        met = met and statistics.median(after) <= 1.0
        cells = [ratio(change), ratio(before), ratio(after), ratio(one)]
        cells += [ratio(panels) if pk else "-", ratio(over_before), ratio(over) if pk else "-"]
        print(f"| {n} | " + " | ".join(cells) + " |")
    print()
    verdict = "met" if met else "NOT met"
    print(f"Issue 30's host target (after: median contraction / 64 products <= 1.0 at every N"
          f" = {', '.join(map(str, ns))}): {verdict}.")


if __name__ == "__main__":
    main()
