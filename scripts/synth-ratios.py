#!/usr/bin/env python3
"""Speed-ups and fractions of the card's limit from memhc-synth's JSON records (issue 10, b-d).

    python3 scripts/synth-ratios.py RECORDS.json [--zgemm-tflops R] [--bus-gbs B]

Groups the records by point (tensor size, vector size, vectors, repeated rate, oversubscription,
policy) and prints, per point, each mode's wall time, optimal's speed-up over naive and over
unified, and each mode's fraction of the card's limit:

    floor = max(flops / zgemm rate, compulsory bytes / bus bandwidth)

The compulsory bytes are what the optimal mode moves at the same point when it evicts nothing
(every distinct input in once, every result out once); where optimal evicts, the records do
not give them, and the floor is left out. The zgemm rate and the bus
bandwidth are the card's, measured in the same session (`scripts/gpu-limits.py`); the defaults
are the H100's of docs/results/2026-11-26-h100.md: 46.4 TFLOPS (64 batched N = 384 products)
and 55 GB/s (pinned, both directions). No third-party packages are needed.
"""
import argparse
import json
from collections import defaultdict


def point_key(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], r["repeat"], r["oversub"],
            r["policy"] if r["oversub"] else "-")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records")
    p.add_argument("--zgemm-tflops", type=float, default=46.4)
    p.add_argument("--bus-gbs", type=float, default=55.0)
    a = p.parse_args()
    with open(a.records) as f:
        records = json.load(f)
    points = defaultdict(dict)
    for r in records:
        points[point_key(r)][r["mode"]] = r
    modes = [m for m in ("optimal", "naive", "unified")
             if any(m in by_mode for by_mode in points.values())]
    head = ["N", "vsize", "vectors", "repeat", "oversub", "policy"]
    head += [f"{m} s" for m in modes]
    head += [f"optimal / {m}" for m in modes if m != "optimal"]
    head += ["floor s"] + [f"{m} of floor" for m in modes]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, by_mode in sorted(points.items()):
        cells = [str(k) for k in key]
        cells += [f"{by_mode[m]['wall_s']:.3f}" if m in by_mode else "-" for m in modes]
        opt = by_mode.get("optimal")
        for m in modes:
            if m == "optimal":
                continue
            ok = opt is not None and m in by_mode
            cells.append(f"{by_mode[m]['wall_s'] / opt['wall_s']:.2f}x" if ok else "-")
        floor = None
        if opt is not None:
            compute = opt["flops"] / (a.zgemm_tflops * 1e12)
            if opt["evictions"] == 0:
                moved = opt["h2d_bytes"] + opt["d2h_bytes"]
                floor = max(compute, moved / (a.bus_gbs * 1e9))
        cells.append(f"{floor:.3f}" if floor else "-")
        for m in modes:
            ok = floor and m in by_mode
            cells.append(f"{100 * floor / by_mode[m]['wall_s']:.1f}%" if ok else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
