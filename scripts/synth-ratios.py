#!/usr/bin/env python3
"""Speed-ups and fractions of the card's limit from memhc-synth's JSON records (issue 10, b-d).

    python3 scripts/synth-ratios.py RECORDS.json [--zgemm-tflops R] [--bus-gbs B]

Groups the records by point (tensor size, vector size, vectors, repeated rate, oversubscription,
and the configuration: policy, allocation, prefetch, reuse tolerance, backend) and prints, per
point, each mode's wall time, optimal's speed-up over naive and over unified (the other mode's
time over optimal's), and each mode's fraction of the card's limit:

    floor = max(flops / zgemm rate, compulsory bytes in / bus bandwidth,
                compulsory bytes out / bus bandwidth)

The compulsory bytes are what the optimal mode moves at the same point when it evicts nothing
(every distinct input in once, every result out once); where optimal evicts, the records do
not give them, and the floor is left out. The two directions count separately: the bus is full
duplex, so a run could at best overlap its uploads with its copies back. The zgemm rate and the bus
bandwidth are the card's, measured in the same session (`scripts/gpu-limits.py`); the defaults
are the H100's of docs/results/2026-11-26-h100.md: 46.4 TFLOPS (64 batched N = 384 products)
and 55 GB/s (pinned, both directions). No third-party packages are needed.
"""
import argparse
import json
from collections import defaultdict


def point_key(r):
    """A record's point and configuration, without its mode; sortable (a budget given in bytes
    leaves no oversubscription rate: it sorts first and shows as `budget`)."""
    oversub = r.get("oversub")
    # Each mode has its own allocation setting (optimal hands buffers over; the others ask the
    # driver); only another one, chosen with --alloc, is a configuration of its own.
    own = "handover" if r["mode"] == "optimal" else "driver"
    alloc = r.get("alloc", own)
    return (r["tensor_size"], r["vector_size"], r["vectors"], r["repeat"],
            (oversub is not None, oversub or 0.0), r["policy"], "-" if alloc == own else alloc,
            str(r.get("prefetch")), r.get("reuse_tolerance_percent", 0), r.get("backend", "-"))


def show(key):
    n, v, vectors, repeat, (has_oversub, oversub), policy, alloc, prefetch, tol, backend = key
    return [str(n), str(v), str(vectors), str(repeat), str(oversub) if has_oversub else "budget",
            policy, alloc, backend]


def positive(text):
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: must be positive")
    return value


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("records")
    p.add_argument("--zgemm-tflops", type=positive, default=46.4)
    p.add_argument("--bus-gbs", type=positive, default=55.0)
    a = p.parse_args()
    with open(a.records) as f:
        records = json.load(f)
    points = defaultdict(dict)
    for r in records:
        by_mode = points[point_key(r)]
        if r["mode"] in by_mode:
            p.error(f"two records of mode {r['mode']} at one point and configuration: "
                    f"{show(point_key(r))} (two runs of one sweep in one file?)")
        if not r["wall_s"] > 0:
            p.error(f"a record with wall time {r['wall_s']}: {show(point_key(r))}")
        by_mode[r["mode"]] = r
    modes = [m for m in ("optimal", "naive", "unified")
             if any(m in by_mode for by_mode in points.values())]
    head = ["N", "vsize", "vectors", "repeat", "oversub", "policy", "alloc", "backend"]
    head += [f"{m} s" for m in modes]
    head += [f"speed-up over {m}" for m in modes if m != "optimal"]
    head += ["floor s"] + [f"{m} of floor" for m in modes]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, by_mode in sorted(points.items()):
        cells = show(key)
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
                bus = a.bus_gbs * 1e9
                floor = max(compute, opt["h2d_bytes"] / bus, opt["d2h_bytes"] / bus)
        cells.append(f"{floor:.3f}" if floor else "-")
        for m in modes:
            ok = floor and m in by_mode
            cells.append(f"{100 * floor / by_mode[m]['wall_s']:.1f}%" if ok else "-")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
