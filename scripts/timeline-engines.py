#!/usr/bin/env python3
"""How busy each engine of a modelled (or real) GPU was, from a Chrome-trace timeline written by
`memhc-synth --timeline`: per engine (host-to-device copies, device-to-host copies, GEMMs) the
first start, the last end, the time covered by spans, the spans' count, and the time the copy
spans took beyond their bytes at the bus rate (work waiting inside a span for its engine).

Usage: scripts/timeline-engines.py TIMELINE.json [BANDWIDTH_GB_S (default 55)]
"""
import json
import statistics
import sys

path = sys.argv[1]
bw = float(sys.argv[2]) * 1e9 if len(sys.argv) > 2 else 55e9
t = json.load(open(path))
ev = t["traceEvents"] if isinstance(t, dict) else t
spans = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("copy", "compute")]
t0 = min(e["ts"] for e in spans)
t1 = max(e["ts"] + e["dur"] for e in spans)


def covered(sel):
    iv = sorted((e["ts"], e["ts"] + e["dur"]) for e in spans if sel(e))
    total, cur = 0.0, None
    for a, b in iv:
        if cur is None:
            cur = [a, b]
        elif a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            total += cur[1] - cur[0]
            cur = [a, b]
    if cur:
        total += cur[1] - cur[0]
    return iv, total


print(f"timeline {path}: span {(t1 - t0) / 1e3:.2f} ms")
print("| engine | spans | first start ms | last end ms | covered ms | covered share | "
      "median span us | time beyond bytes at the bus rate, ms |")
print("|---|---|---|---|---|---|---|---|")
for name, sel in [
    ("h2d", lambda e: e["name"].startswith("h2d")),
    ("d2h", lambda e: e["name"].startswith("d2h")),
    ("gemm", lambda e: e["cat"] == "compute"),
]:
    iv, total = covered(sel)
    if not iv:
        continue
    chosen = [e for e in spans if sel(e)]
    med = statistics.median(e["dur"] for e in chosen)
    beyond = "-"
    if name != "gemm":
        extra = sum(e["dur"] - e.get("args", {}).get("bytes", 0) / bw * 1e6 for e in chosen)
        beyond = f"{extra / 1e3:.2f}"
    print(f"| {name} | {len(chosen)} | {(iv[0][0] - t0) / 1e3:.2f} | {(max(b for _, b in iv) - t0) / 1e3:.2f} | "
          f"{total / 1e3:.2f} | {total / (t1 - t0):.3f} | {med:.1f} | {beyond} |")
