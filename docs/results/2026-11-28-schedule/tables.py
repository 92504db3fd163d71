#!/usr/bin/env python3
"""The tables of docs/results/2026-11-28-schedule.md, from the raw records.

    python3 docs/results/2026-11-28-schedule/tables.py

Before: docs/results/2026-11-28-model-floor/{queue,dependency}/datapath-*.json (main, the same
commands). After: docs/results/2026-11-28-schedule/{queue,dependency}/datapath-*.json (runs.sh).
Per point: the modelled fraction of the floor (`model_floor_s / model_makespan_s`) before and
after in each order, and the best fraction the arithmetic allows on this model:

    makespan >= max(2u + C g + r,  U u + g + r,  2u + g + R r)

with C contractions (`gemm_calls`, one call each), U uploads and R read-backs (`h2d_bytes`,
`d2h_bytes` over a node's 16 (4N)^2 bytes), and u, g, r one upload, one contraction's GEMM and
one read-back as the model times them alone: the shortest h2d, GEMM and d2h spans of the
timelines in timelines/ at that N. The first term is the fill (the first contraction's two
inputs), every GEMM back to back on the one compute engine, and the drain (the last result's
read-back); the second every upload back to back, then one GEMM and one read-back; the third
the fill, one GEMM, then every read-back back to back. The bound leaves out the duplex shares
(an upload beside a read-back runs at 0.805 of the bus instead of 0.910), so where the copies
bound it, it is above what any schedule reaches. Standard library only.
"""

import glob
import gzip
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
BEFORE = os.path.join(HERE, "..", "2026-11-28-model-floor")


def load(folder):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "datapath-*.json"))):
        with open(path) as f:
            for r in json.load(f):
                out[key(r)] = r
    return out


def key(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], float(r["repeat"]),
            float(r.get("oversub") or 0.0), r["policy"])


def frac(r):
    return r["model_floor_s"] / r["model_makespan_s"]


def alone_times(n):
    """Shortest upload, GEMM and read-back span (seconds) of the timelines at N = n."""
    best = {"h2d": None, "gemm": None, "d2h": None}
    for path in glob.glob(os.path.join(HERE, "timelines", f"*-N{n}-r*.timeline.json.gz")):
        with gzip.open(path) as f:
            t = json.load(f)
        for e in t["traceEvents"] if isinstance(t, dict) else t:
            if e.get("ph") != "X" or e.get("cat") not in ("copy", "compute"):
                continue
            kind = "gemm" if e["cat"] == "compute" else e["name"][:3]
            if kind in best and (best[kind] is None or e["dur"] < best[kind]):
                best[kind] = e["dur"]
    return {k: v * 1e-6 for k, v in best.items()}


def bound(r, t):
    node = 16 * (4 * r["tensor_size"]) ** 2
    c, up, rb = r["gemm_calls"], r["h2d_bytes"] / node, r["d2h_bytes"] / node
    u, g, d = t["h2d"], t["gemm"], t["d2h"]
    terms = {
        "SMs": 2 * u + c * g + d,
        "uploads": up * u + g + d,
        "read-backs": 2 * u + g + rb * d,
    }
    name = max(terms, key=terms.get)
    return terms[name], name


def main():
    before = {o: load(os.path.join(BEFORE, o)) for o in ("queue", "dependency")}
    after = {o: load(os.path.join(HERE, o)) for o in ("queue", "dependency")}
    times = {n: alone_times(n) for n in (192, 384)}
    for n, t in times.items():
        print(f"N = {n}: one upload {1e6 * t['h2d']:.1f} us, one GEMM {1e6 * t['gemm']:.1f} us, "
              f"one read-back {1e6 * t['d2h']:.1f} us (shortest spans of timelines/*-N{n}-*)")
    print()
    keys = sorted(after["dependency"],
                  key=lambda k: (-k[0], k[3] if k[1] == 16 else 2, k[1], k[4], k[5]))
    print("| N | vector size | repeat | oversub | policy | floor ms | queue before / after "
          "| dependency before | dependency after | change | makespan ms before / after "
          "| bound ms | bound by | best fraction | dependency after / best |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    worst, rose, fell = None, 0, 0
    for k in keys:
        qb, qa = before["queue"][k], after["queue"][k]
        db, da = before["dependency"][k], after["dependency"][k]
        assert qb["model_makespan_s"] == qa["model_makespan_s"], ("queue order changed", k)
        assert da.get("order") == "dependency" and "order" not in qa, k
        lb, name = bound(da, times[k[0]])
        best = da["model_floor_s"] / lb
        change = frac(da) - frac(db)
        rose += change > 5e-4
        fell += change < -5e-4
        if worst is None or change < worst[0]:
            worst = (change, k)
        n, vs, _, rep, ov, pol = k
        print(f"| {n} | {vs} | {rep:g} | {ov:g} | {pol} | {1e3 * da['model_floor_s']:.2f} "
              f"| {frac(qb):.3f} / {frac(qa):.3f} | {frac(db):.3f} | {frac(da):.3f} | {change:+.3f} "
              f"| {1e3 * db['model_makespan_s']:.2f} / {1e3 * da['model_makespan_s']:.2f} "
              f"| {1e3 * lb:.2f} | {name} | {best:.3f} | {frac(da) / best:.3f} |")
    print()
    print(f"points: {len(keys)}; the queue's order unchanged at every point (makespans equal); "
          f"the dependency order rose at {rose}, fell at {fell} (by more than 0.0005); "
          f"smallest change {worst[0]:+.4f} at N = {worst[1][0]}, vector size {worst[1][1]}, "
          f"repeat {worst[1][3]:g}")
    for n in (384, 192):
        sel = [k for k in keys if k[0] == n]
        fb = [frac(before["dependency"][k]) for k in sel]
        fa = [frac(after["dependency"][k]) for k in sel]
        print(f"N = {n}: dependency order before {min(fb):.3f}-{max(fb):.3f}, "
              f"after {min(fa):.3f}-{max(fa):.3f}")


if __name__ == "__main__":
    main()
