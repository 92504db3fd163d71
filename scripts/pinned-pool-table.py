#!/usr/bin/env python3
"""Every number of docs/results/2026-11-28-pinned-pool.md, from the raw output of
`cargo bench -p memhc-gpu --bench host_cost` run once per round for two builds, interleaved:
`before` (main, one page-locked allocation per host buffer, the runtime never registers) and
`after` (the pinned pool, registration by the runtime).

Usage: scripts/pinned-pool-table.py DIR
  DIR holds before-r<k>.txt and after-r<k>.txt, one single-round bench output each.

Per run, the split of scripts/host-cost-table.py (host CPU per contraction, less the fake
device's own work and the meters; bookkeeping, CPU copies, page faults, pinning), then per
(N, schedule, build) the median (min-max) over the rounds, the paired after/before ratio of
host CPU per round (median, min-max), the modelled device time per contraction and the issue's
target (host CPU <= 0.5 x modelled device time, pinned objects), and the `pool` lines of the
after build (page-locked allocations and pieces).
"""

import glob
import importlib.util
import os
import re
import statistics
import sys
from collections import defaultdict

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("hct", os.path.join(here, "host-cost-table.py"))
hct = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hct)


def fmt(values, digits=1):
    m, lo, hi = statistics.median(values), min(values), max(values)
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def pools(path):
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "pool":
                kv = dict(x.split("=", 1) for x in w[1:])
                out[(int(kv["N"]), kv["schedule"])] = kv
    return out


def main():
    d = sys.argv[1]
    rows = defaultdict(list)  # (N, schedule, build) -> [(round, split)]
    models = {}
    pool = defaultdict(list)
    for build in ("before", "after"):
        files = sorted(glob.glob(os.path.join(d, f"{build}-r*.txt")),
                       key=lambda p: int(re.search(r"-r(\d+)\.txt$", p).group(1)))
        for path in files:
            k = int(re.search(r"-r(\d+)\.txt$", path).group(1))
            m, runs, _, _ = hct.parse(path)
            for key, v in m.items():
                models[(key[0], key[1], build)] = v
            for r in runs:
                rows[(r["N"], r["schedule"], build)].append((k, hct.split(r)))
            for key, kv in pools(path).items():
                pool[(key[0], key[1])].append(kv)
    rounds = sorted({k for v in rows.values() for k, _ in v})
    print(f"From {d}: {len(rounds)} rounds per build, interleaved; median (min-max) over the "
          "rounds; µs of host CPU per contraction (the fake device's own work and the meters "
          "left out).\n")
    print("| N | schedule | build | host CPU | bookkeeping | CPU copies | page faults | pinning "
          "| CPU bytes per device byte |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        s = [x for _, x in rows[key]]
        col = lambda k, dg=1: fmt([r[k] for r in s], dg)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {col('host')} | {col('bookkeeping')} | "
              f"{col('copies')} | {col('faults')} | {col('pinning')} | "
              f"{col('cpu_bytes_per_device_byte', 4)} |")
    print()
    print("| N | schedule | after / before host CPU, paired by round: median (min-max) "
          "| rounds after faster |")
    print("|---|---|---|---|")
    for n, sched in sorted({(k[0], k[1]) for k in rows}):
        b = dict((k, x["host"]) for k, x in rows.get((n, sched, "before"), []))
        a = dict((k, x["host"]) for k, x in rows.get((n, sched, "after"), []))
        ratios = [a[k] / b[k] for k in sorted(set(a) & set(b))]
        if ratios:
            faster = sum(r < 1 for r in ratios)
            print(f"| {n} | {sched} | {fmt(ratios, 3)} | {faster} of {len(ratios)} |")
    print()
    print("| N | schedule | build | host CPU per contraction µs (median) | modelled makespan "
          "per contraction µs | host / modelled makespan | target (pinned): <= 0.5 |")
    print("|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        model = models[key]
        c = rows[key][0][1]["contractions"]
        host = statistics.median(x["host"] for _, x in rows[key])
        mk = model["makespan_s"] * 1e6 / c
        verdict = ("met" if host / mk <= 0.5 else "not met") if key[1] == "pinned" else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {host:.1f} | {mk:.1f} | {host / mk:.3f} | "
              f"{verdict} |")
    print()
    if pool:
        print("| N | schedule | page-locked allocations (whole run) | pieces cut | chunks at the "
              "end | chunk bytes | free bytes at the end |")
        print("|---|---|---|---|---|---|---|")
        for (n, sched), kvs in sorted(pool.items()):
            kv = kvs[0]
            same = all(x["host_allocs"] == kv["host_allocs"] for x in kvs)
            print(f"| {n} | {sched} | {kv['host_allocs']}{'' if same else ' (varies)'} | "
                  f"{kv['host_pieces']} | {kv['chunks']} | {kv['chunk_bytes']} | "
                  f"{kv['free_bytes']} |")


if __name__ == "__main__":
    main()
