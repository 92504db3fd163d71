#!/usr/bin/env python3
"""Paired ratios from scripts/overhead-growth.sh's raw log: for each case and size, the ratio
after / before of the two builds' estimates *within each round* (they ran one after the other,
so a load that drifts over the hour affects both alike), and the median and range of those
ratios over the rounds. Ratios below 1: the second build is faster.

Usage: scripts/overhead-paired.py RAW.log [BEFORE AFTER]   (build names; default
overhead-before overhead-after)
"""
import collections
import re
import statistics
import sys

raw = sys.argv[1]
before, after = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("overhead-before", "overhead-after")
head = re.compile(r"### round (\d+) size (\d+) build (\S+)")
time = re.compile(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]")
unit = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3}
est = collections.defaultdict(dict)  # (case, size) -> {(round, build): µs}
case = None
for line in open(raw, encoding="utf-8"):
    m = head.match(line)
    if m:
        rnd, size, build = int(m[1]), int(m[2]), m[3]
        continue
    m = re.match(r"overhead/\d+/(\S+)", line)
    if m:
        case = m[1]
    m = time.search(line)
    if m and case and case != "analyse":
        est[(case, size)][(rnd, build)] = float(m[1]) * unit[m[2]]
        case = None
print(f"paired ratios {after} / {before} (from {raw})")
print("| case | contractions | median ratio | min-max | rounds below 1 | rounds |")
print("|---|---|---|---|---|---|")
for (c, size), v in sorted(est.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    rounds = sorted({r for r, _ in v})
    ratios = [v[(r, after)] / v[(r, before)] for r in rounds if (r, after) in v and (r, before) in v]
    if not ratios:
        continue
    below = sum(x < 1 for x in ratios)
    print(f"| {c} | {size} | {statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} | "
          f"{below} | {len(ratios)} |")
