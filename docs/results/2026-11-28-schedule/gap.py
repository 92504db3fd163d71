#!/usr/bin/env python3
"""Where a modelled run's time goes, from its timeline and record (memhc-synth --timeline, --json):
the fill (queue start to the first GEMM's start), the GEMMs themselves (count x the shortest
GEMM span), the SMs idle between the first GEMM and the last, the drain (last GEMM's end to the
last read-back's end) and the time after the last span (host work at the end of the queue).

    gap.py RUN.timeline.json.gz RUN.json
"""
import gzip
import json
import sys

with gzip.open(sys.argv[1]) as f:
    t = json.load(f)
ev = t["traceEvents"] if isinstance(t, dict) else t
rec = json.load(open(sys.argv[2]))[0]
start = rec["model_setup_s"] * 1e6  # the queue's start on the timeline's clock, us
spans = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("copy", "compute")]
gemms = [e for e in spans if e["cat"] == "compute"]
g = min(e["dur"] for e in gemms)
first = min(e["ts"] + e["dur"] for e in gemms) - g
last = max(e["ts"] + e["dur"] for e in gemms)
end = max(e["ts"] + e["dur"] for e in spans)
make = rec["model_makespan_s"] * 1e6
busy = len(gemms) * g
print(f"fill {(first - start) / 1e3:.2f} ms + GEMMs {busy / 1e3:.2f} ms + SMs idle between "
      f"{(last - first - busy) / 1e3:.2f} ms + drain {(end - last) / 1e3:.2f} ms + after the "
      f"last span {(start + make - end) / 1e3:.2f} ms = makespan {make / 1e3:.2f} ms")
