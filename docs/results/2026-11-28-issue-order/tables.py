#!/usr/bin/env python3
"""The tables of docs/results/2026-11-28-issue-order.md, from the raw records of runs.sh.

    python3 docs/results/2026-11-28-issue-order/tables.py docs/results/2026-11-28-issue-order

Reads DIR/queue/datapath-*.json and DIR/dependency/datapath-*.json (memhc-synth records on
`--backend model`, carrying `model_makespan_s` and `model_floor_s`), matches them per point
(N, vector size, vectors, repeated rate, oversubscription, policy) and prints, per point, each
order's modelled makespan and fraction of the floor (`model_floor_s / model_makespan_s`),
the change, the share of the makespan during which a GEMM ran (`device_compute_s /
model_makespan_s`), the floor over the time the GEMMs took (`model_floor_s /
device_compute_s`: the fraction the SMs alone allow, were every GEMM back to back from the
start), the evictions and the peak device bytes; then a summary; then the reference checks
of DIR/verify/*.json (host backend, `--verify`). Standard library only.
"""

import glob
import json
import os
import sys


def load(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "datapath-*.json"))):
        with open(path) as f:
            out.extend(json.load(f))
    return out


def key(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], float(r["repeat"]),
            float(r.get("oversub") or 0.0), r["policy"])


def main():
    root = sys.argv[1]
    queue = {key(r): r for r in load(os.path.join(root, "queue"))}
    dep = {key(r): r for r in load(os.path.join(root, "dependency"))}
    for r in dep.values():
        assert r.get("order") == "dependency", r
    for r in queue.values():
        assert r.get("order", "queue") == "queue", r
    keys = sorted(set(queue) & set(dep), key=lambda k: (-k[0], k[3] if k[1] == 16 else 2, k[1], k[4], k[5]))
    print("| N | vector size | repeat | oversub | policy | floor ms | queue: makespan ms | queue: fraction "
          "| dependency: makespan ms | dependency: fraction | change | SM busy share queue / dependency "
          "| floor / GEMM time queue / dependency "
          "| evictions queue / dependency | peak device MiB queue / dependency |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    better = worse = 0
    peaks = [0, 0, 0]
    worst = None
    for k in keys:
        q, d = queue[k], dep[k]
        assert q["model_floor_s"] == d["model_floor_s"] or abs(q["model_floor_s"] / d["model_floor_s"] - 1) < 1e-9, k
        fq = q["model_floor_s"] / q["model_makespan_s"]
        fd = d["model_floor_s"] / d["model_makespan_s"]
        better += fd > fq
        peaks[(d["peak_device_bytes"] > q["peak_device_bytes"]) - (d["peak_device_bytes"] < q["peak_device_bytes"]) + 1] += 1
        worse += fd < fq
        if worst is None or fd - fq < worst[0]:
            worst = (fd - fq, k)
        n, vs, _, rep, ov, pol = k
        print(f"| {n} | {vs} | {rep:g} | {ov:g} | {pol} | {1e3 * q['model_floor_s']:.2f} "
              f"| {1e3 * q['model_makespan_s']:.2f} | {fq:.3f} | {1e3 * d['model_makespan_s']:.2f} "
              f"| {fd:.3f} | {fd - fq:+.3f} "
              f"| {q['device_compute_s'] / q['model_makespan_s']:.3f} / {d['device_compute_s'] / d['model_makespan_s']:.3f} "
              f"| {q['model_floor_s'] / q['device_compute_s']:.3f} / {d['model_floor_s'] / d['device_compute_s']:.3f} "
              f"| {q['evictions']} / {d['evictions']} "
              f"| {q['peak_device_bytes'] / 2**20:.0f} / {d['peak_device_bytes'] / 2**20:.0f} |")
    print()
    print(f"points: {len(keys)}; dependency better at {better}, worse at {worse}; "
          f"smallest change {worst[0]:+.3f} at N = {worst[1][0]}, vector size {worst[1][1]}, "
          f"repeat {worst[1][3]:g}, oversub {worst[1][4]:g}, {worst[1][5]}")
    print(f"peak device bytes in the dependency order: lower at {peaks[0]}, equal at {peaks[1]}, "
          f"higher at {peaks[2]} points")
    for n in sorted({k[0] for k in keys}, reverse=True):
        fq = [queue[k]["model_floor_s"] / queue[k]["model_makespan_s"] for k in keys if k[0] == n]
        fd = [dep[k]["model_floor_s"] / dep[k]["model_makespan_s"] for k in keys if k[0] == n]
        print(f"N = {n}: fraction queue {min(fq):.3f}-{max(fq):.3f}, dependency {min(fd):.3f}-{max(fd):.3f}")
    vdir = os.path.join(root, "verify")
    files = sorted(glob.glob(os.path.join(vdir, "*.json")))
    if files:
        print()
        print("| file | records | verified | largest relative error | modes | policies | oversub | pinned | prefetch | order |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for path in files:
            with open(path) as f:
                rs = json.load(f)
            ok = sum(1 for r in rs if r.get("verified") is True)
            err = max((r.get("max_rel_error") or 0.0) for r in rs)
            modes = ",".join(sorted({r["mode"] for r in rs}))
            pols = ",".join(sorted({r["policy"] for r in rs}))
            ovs = ",".join(f"{o:g}" for o in sorted({float(r.get("oversub") or 0) for r in rs}))
            pins = ",".join(sorted({str(r["pinned"]).lower() for r in rs}))
            pfs = ",".join(sorted({str(r["prefetch"]) for r in rs}))
            orders = ",".join(sorted({r.get("order", "queue") for r in rs}))
            print(f"| {os.path.basename(path)} | {len(rs)} | {ok} | {err:.2e} | {modes} | {pols} | {ovs} | {pins} | {pfs} | {orders} |")


if __name__ == "__main__":
    main()
