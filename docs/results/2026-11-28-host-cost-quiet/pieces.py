#!/usr/bin/env python3
"""Metered pieces of fake device work per contraction, and the meters' estimated cost, per
raw file (medians over its rounds): the per-row fake (before) against one piece per copy.

Usage: docs/results/2026-11-28-host-cost-quiet/pieces.py FILE..."""
import statistics
import sys

for path in sys.argv[1:]:
    runs = {}
    for line in open(path):
        f = line.split()
        if len(f) < 23 or f[0] != "raw" or not f[1].isdigit():
            continue
        contractions = int(f[4])
        meter_cost, device_calls = float(f[9]), int(f[14])
        copy_calls, pin_calls = int(f[10]), int(f[17])
        cpu, device_cpu = float(f[6]), float(f[15])
        metered = copy_calls + device_calls + pin_calls
        runs.setdefault((f[2], f[3]), []).append(
            (device_calls / contractions, metered * meter_cost / contractions * 1e6,
             (cpu - device_cpu) / contractions * 1e6))
    for (n, sched), rows in sorted(runs.items(), key=lambda kv: (int(kv[0][0]), kv[0][1])):
        med = [statistics.median(r[i] for r in rows) for i in range(3)]
        print(f"{path.rsplit('/', 1)[-1]}: N={n} {sched}: {med[0]:.1f} device pieces per "
              f"contraction; meters left out {med[1]:.1f} us; process CPU less device work "
              f"{med[2]:.1f} us per contraction ({len(rows)} rounds)")
