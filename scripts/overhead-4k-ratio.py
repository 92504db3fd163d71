#!/usr/bin/env python3
"""The 4k medians of scripts/overhead-growth.sh's summary, after / before, per case.

Usage: scripts/overhead-4k-ratio.py SUMMARY.md  (builds named overhead-before, overhead-after)
"""
import sys

rows = [l.split("|") for l in open(sys.argv[1]) if l.startswith("| ") and "overhead-" in l]
medians = {}
for r in rows:
    medians.setdefault(r[1].strip(), {})[r[2].strip()] = float(r[3])
print(f"4k median, after / before (from {sys.argv[1]}):")
for case, v in medians.items():
    print(f"{case}: {v['overhead-after'] / v['overhead-before']:.3f}")
