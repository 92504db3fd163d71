#!/usr/bin/env python3
"""The table of memhc-host's `gemm_panels` example (docs/results/2026-11-28-host-one-gemm.md).

Usage: scripts/one-gemm-layout-panels-table.py FILE

FILE is the example's stdout: one line `round N variant rep ns` per repetition, and one line
`cpu round N variant wall_ns ticks` per variant and round. Per N, round and variant the median
over the repetitions is taken; then, per N and variant, the median over rounds of that time
(with its range), and of its ratio to `64-products` in the same round (with its range and how
many rounds had it below 1); and the CPU time the process used over all the variant's
repetitions (all rounds) divided by their wall time: the cores it kept busy on average, at most
2 on the measured host. Stdlib only.
"""
import collections
import os
import statistics
import sys

BASE = "64-products"


def main():
    reps = collections.defaultdict(list)
    cpu = collections.defaultdict(lambda: [0, 0])
    ticks = os.sysconf("SC_CLK_TCK")
    for line in open(sys.argv[1]):
        if line.startswith("cpu "):
            _, rnd, n, variant, wall, used = line.split()
            cpu[(int(n), variant)][0] += int(wall) / 1e9
            cpu[(int(n), variant)][1] += int(used) / ticks
            continue
        rnd, n, variant, _rep, ns = line.split()
        reps[(int(n), variant, int(rnd))].append(int(ns) / 1e6)
    per = {key: statistics.median(v) for key, v in reps.items()}
    ns = sorted({n for n, _, _ in per})
    order = []
    for _, v, _ in sorted(reps, key=lambda key: key[2]):
        if v not in order:
            order.append(v)
    rounds = sorted({r for _, _, r in per})
    print(f"rounds: {len(rounds)}, repetitions per round: "
          f"{sorted({len(v) for v in reps.values()})}")
    print()
    print("| N | variant | time, ms: median [min, max] over rounds"
          " | / 64-products: median [min, max] | rounds below 1 | cores busy (CPU / wall) |")
    print("|---|---|---|---|---|---|")
    for n in ns:
        for v in order:
            rs = [r for r in rounds if (n, v, r) in per and (n, BASE, r) in per]
            if not rs:
                continue
            t = [per[(n, v, r)] for r in rs]
            q = [per[(n, v, r)] / per[(n, BASE, r)] for r in rs]
            fmt = lambda xs, d: (f"{statistics.median(xs):.{d}f}"
                                 f" [{min(xs):.{d}f}, {max(xs):.{d}f}]")
            wall, used = cpu.get((n, v), (0, 0))
            busy = f"{used / wall:.2f}" if wall > 0 and used >= 0 else "-"
            print(f"| {n} | {v} | {fmt(t, 3)} | {fmt(q, 3)} | {sum(x < 1 for x in q)} of {len(q)}"
                  f" | {busy} |")


if __name__ == "__main__":
    main()
