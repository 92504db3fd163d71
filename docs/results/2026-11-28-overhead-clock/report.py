#!/usr/bin/env python3
"""Every number of docs/results/2026-11-28-overhead-clock.md, from the raw files beside it:
the rounds' summary (scripts/overhead-growth.sh --summary rounds.log), the load averages
sampled while they ran (load.txt), and the schedstat steps (schedstat-steps.txt).

Usage: docs/results/2026-11-28-overhead-clock/report.py
"""
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))
summary = subprocess.run(
    [os.path.join(root, "scripts", "overhead-growth.sh"), "--summary", os.path.join(here, "rounds.log")],
    capture_output=True, text=True, check=True).stdout
print(summary, end="")

loads = [float(line.split()[1]) for line in open(os.path.join(here, "load.txt")) if line.strip()]
print(f"\nload average (1 min) while the rounds ran: min {min(loads):.2f}, median "
      f"{statistics.median(loads):.2f}, max {max(loads):.2f} ({len(loads)} samples, every 30 s)")

first = open(os.path.join(here, "schedstat-steps.txt")).readline().strip()
print(f"schedstat-steps.txt: {first}")

# Thread clock against schedstat, per case, at each size: the medians' ratio.
rows = {}
for line in summary.splitlines():
    f = [x.strip() for x in line.strip("|").split("|")]
    if len(f) == 7 and f[1] in ("schedstat", "thread"):
        rows[(f[0], f[1])] = (float(f[2]), float(f[3]))
print("\n| case | 4k: schedstat / thread clock | 256k: schedstat / thread clock |")
print("|---|---|---|")
for case in sorted({c for c, _ in rows}):
    s, t = rows.get((case, "schedstat")), rows.get((case, "thread"))
    if s and t:
        print(f"| {case} | {s[0] / t[0]:.3f} | {s[1] / t[1]:.3f} |")
sys.exit(0)
