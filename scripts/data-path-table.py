#!/usr/bin/env python3
"""Tables of docs/results/2026-11-27-data-path.md from the model bench's raw output.

Usage: scripts/data-path-table.py docs/results/2026-11-27-data-path

Reads `bench-model.txt` there (the rows `cargo bench -p memhc-gpu --bench model` prints, one
per point and schedule) and prints, per point, the modelled floor / makespan of today's optimal
schedule (pageable host memory, every copy staged) and of the direct path, the speed-up, and a
summary; then, from the memhc-synth records `fig7-r0.5-*.json` there, the one point's schedules
step by step (pageable, pinned, pinned with prefetch windows). Stdlib only.
"""
import glob
import json
import os
import statistics
import sys


def rows(path):
    out = []
    header = None
    for line in open(path):
        cells = line.split()
        if cells[:2] == ["N", "vsize"]:
            header = cells
            continue
        if header is None or len(cells) < 10 or not cells[0].isdigit():
            continue
        out.append(
            {
                "n": int(cells[0]),
                "vsize": int(cells[1]),
                "repeat": float(cells[2]),
                "oversub": float(cells[3]),
                "mode": cells[4],
                "makespan": float(cells[5]),
                "floor": float(cells[6]),
                "floor_mk": float(cells[8]),
                "host_pct": float(cells[16]) if len(cells) > 16 else None,
                "setup": float(cells[18]) if len(cells) > 18 else None,
                "cpu_bytes": float(cells[19]) if len(cells) > 19 else None,
            }
        )
    return out


def records(folder):
    print("| `fig7-r0.5-*.json` | host memory | prefetch | modelled makespan ms | floor ms | "
          "floor/makespan | set-up ms | early read-backs |")
    print("|---|---|---|---|---|---|---|---|")
    found = []
    for path in glob.glob(os.path.join(folder, "fig7-r0.5-*.json")):
        r = json.load(open(path))[0]
        found.append((r["pinned"], r["prefetch"] or 0, os.path.basename(path), r))
    for pinned, window, name, r in sorted(found):
        mk, fl = r["model_makespan_s"], r["model_floor_s"]
        print(f"| {name} | {'pinned' if pinned else 'pageable'} | {window or 'off'} | "
              f"{mk * 1e3:.2f} | {fl * 1e3:.2f} | {fl / mk:.3f} | {r['model_setup_s'] * 1e3:.1f} | "
              f"{r['early_read_backs']} |")


def main():
    folder = sys.argv[1]
    data = rows(os.path.join(folder, "bench-model.txt"))
    points = {}
    for r in data:
        points.setdefault((r["n"], r["vsize"], r["repeat"], r["oversub"]), {})[r["mode"]] = r
    print("| N | vector size | repeat | oversub | optimal floor/makespan | direct floor/makespan | "
          "direct makespan ms | speed-up | direct host % | direct set-up ms | "
          "host bytes per device byte: optimal, direct |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ratios = {"optimal": [], "direct": []}
    speedups = []
    for key, modes in points.items():
        o, d = modes.get("optimal"), modes.get("direct")
        if not (o and d):
            continue
        n, vs, rep, ov = key
        speed = o["makespan"] / d["makespan"]
        speedups.append(speed)
        ratios["optimal"].append(o["floor_mk"])
        ratios["direct"].append(d["floor_mk"])
        print(f"| {n} | {vs} | {rep:g} | {ov:g} | {o['floor_mk']:.3f} | {d['floor_mk']:.3f} | "
              f"{d['makespan']:.2f} | {speed:.1f}x | {d['host_pct']:.1f} | {d['setup']:.1f} | "
              f"{o['cpu_bytes']:.4f}, {d['cpu_bytes']:.4f} |")
    print()
    print("| schedule | points | min floor/makespan | median | max | points at >= 0.90 |")
    print("|---|---|---|---|---|---|")
    for name, xs in ratios.items():
        print(f"| {name} | {len(xs)} | {min(xs):.3f} | {statistics.median(xs):.3f} | "
              f"{max(xs):.3f} | {sum(x >= 0.90 for x in xs)} |")
    print()
    print(f"speed-up of the direct path over today's optimal: min {min(speedups):.1f}x, "
          f"median {statistics.median(speedups):.1f}x, max {max(speedups):.1f}x "
          f"({len(speedups)} points)")
    print()
    records(folder)


if __name__ == "__main__":
    main()
