#!/usr/bin/env python3
"""The table of gpu-run.sh's `host128-ab` stage: the direct path at N = 128 with each way of
issuing tiled copies and each allocation setting, in interleaved rounds.

    scripts/host-ab.py FOLDER

Reads FOLDER/host128-TILED-ALLOC-ROUND.json (memhc-synth records) and prints, per setting, the
median over rounds of: wall time, process CPU time and device compute time per contraction,
the model's makespan per contraction where the records have one, and the wall time relative to
the first setting (tiled per component, `handover`) in the same round, with the spread (min-max)
of that ratio over the rounds.
"""
import glob
import json
import os
import re
import statistics
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: host-ab.py FOLDER")
    runs = {}
    for path in glob.glob(os.path.join(sys.argv[1], "host128-*-*-*.json")):
        m = re.match(r"host128-(\w+)-(\w+)-(\d+)\.json$", os.path.basename(path))
        if not m:
            continue
        with open(path) as f:
            r = json.load(f)[0]
        runs[(m.group(1), m.group(2), int(m.group(3)))] = r
    if not runs:
        sys.exit(f"host-ab: no host128-TILED-ALLOC-ROUND.json in {sys.argv[1]}")
    settings = sorted({(t, a) for t, a, _ in runs}, key=lambda s: (s[0] != "component", s[1] != "handover", s))
    rounds = sorted({k for _, _, k in runs})
    base = settings[0]
    print("| tiled copies | allocation | wall / contraction | CPU / contraction | device compute / contraction | model makespan / contraction | wall / first setting's (same round) | range |")
    print("|---|---|---|---|---|---|---|---|")
    for s in settings:
        rs = [runs[(s[0], s[1], k)] for k in rounds if (s[0], s[1], k) in runs]
        n = rs[0]["vectors"] * rs[0]["vector_size"]
        med = lambda key: statistics.median(r[key] for r in rs if r.get(key) is not None) / n * 1e6 if any(r.get(key) is not None for r in rs) else float("nan")
        ratios = [runs[(s[0], s[1], k)]["wall_s"] / runs[(base[0], base[1], k)]["wall_s"]
                  for k in rounds if (s[0], s[1], k) in runs and (base[0], base[1], k) in runs]
        print(f"| {s[0]} | {s[1]} | {med('wall_s'):.0f} us | {med('cpu_s'):.0f} us | {med('device_compute_s'):.0f} us "
              f"| {med('model_makespan_s'):.0f} us | {statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} |")
    print(f"\n{len(rounds)} rounds; each record is the median of its runs (memhc-synth --runs).")


if __name__ == "__main__":
    main()
