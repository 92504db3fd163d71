#!/usr/bin/env python3
"""Issue 29's GPU targets from repeated runs: fraction of the card's floor, and host CPU time.

    python3 scripts/gpu-floor-rounds.py DIR... [--limits LIMITS_DIR] [--rates RATES_DIR]

The DIRs hold the records of `scripts/gpu-run.sh floor-rounds wait` (floor-*.json,
wait-*.json); LIMITS_DIR (default: the first DIR) the `limits.json` of the `limits` stage (the
bus), RATES_DIR (default: LIMITS_DIR) the `criterion/` of the `contraction` stage (the zgemm
rates), best from the same session. The floor of a point is scripts/gpu-datapath-table.py's: `max(flops /
zgemm rate at N, bytes in / bus, bytes out / bus)`, the bytes the fewest any record at the
point moved. Every record carries the wall time of each of its runs (`wall_s_runs`); the
fraction of the floor is given per run, as the median over the runs with the least and the
most. The direct path (`--host-memory pinned --prefetch 12`) against today's schedule
(pageable, optimal) is the ratio of their median wall times, with the range of the ratios of
the slowest to the fastest runs of each. The wait table: host CPU per contraction over device
compute per contraction (`cpu_s_runs` / `device_compute_s`), with the driver's default wait
and with `MEMHC_GPU_WAIT=block`, and the wall time of each (rounds interleaved). No
third-party packages are needed.
"""
import argparse
import glob
import importlib.util
import json
import os
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    "datapath", os.path.join(os.path.dirname(os.path.abspath(__file__)), "gpu-datapath-table.py"))
datapath = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(datapath)


def spread(values, fmt="{:.3f}"):
    return (f"{fmt.format(statistics.median(values))} "
            f"({fmt.format(min(values))}-{fmt.format(max(values))})")


def floor_table(records, zgemm, bus):
    least = {}
    for r in records:
        h2d, d2h = least.get(datapath.point(r), (r["h2d_bytes"], r["d2h_bytes"]))
        least[datapath.point(r)] = (min(h2d, r["h2d_bytes"]), min(d2h, r["d2h_bytes"]))
    print("| N | vector size | vectors | repeat | oversub | policy | schedule | runs "
          "| wall ms, median (least-most) | floor ms | floor term "
          "| fraction of floor, median (least-most) |")
    print("|" + "---|" * 12)
    walls = {}
    direct_fractions, direct_runs = [], []
    for r in sorted(records, key=lambda r: (datapath.key(r), datapath.schedule(r))):
        n, s = r["tensor_size"], datapath.schedule(r)
        if n not in zgemm:
            continue
        runs = r.get("wall_s_runs") or [r["wall_s"]]
        h2d, d2h = least[datapath.point(r)]
        terms = {"compute": r["flops"] / zgemm[n], "in": h2d / bus, "out": d2h / bus}
        term = max(terms, key=terms.get)
        fractions = [terms[term] / w for w in runs]
        if s == "direct" and not r.get("oversub"):
            direct_fractions.append(statistics.median(fractions))
            direct_runs.extend(fractions)
        walls.setdefault(datapath.key(r), {})[s] = runs
        print(f"| {n} | {r['vector_size']} | {r['vectors']} | {r['repeat']} | "
              f"{r.get('oversub') or 0} | {r['policy']} | {s} | {len(runs)} | "
              f"{spread([1e3 * w for w in runs], '{:.2f}')} | {1e3 * terms[term]:.2f} | {term} | "
              f"{spread(fractions)} |")
    if direct_fractions:
        distinct = {datapath.point(r) for r in records
                    if datapath.schedule(r) == "direct" and not r.get("oversub")}
        print(f"\ndirect path, Fig. 7 points (fitting): {len(direct_fractions)} records of "
              f"{len(distinct)} distinct points (a point in both sweeps is run in each), median "
              f"fraction of floor {spread(direct_fractions)} (each point's median over its runs); "
              f"points at or above 0.70: {sum(f >= 0.70 for f in direct_fractions)} of "
              f"{len(direct_fractions)}; single runs at or above 0.70: "
              f"{sum(f >= 0.70 for f in direct_runs)} of {len(direct_runs)} (least "
              f"{min(direct_runs):.3f})")
    pairs = [(k, w) for k, w in sorted(walls.items()) if "optimal" in w and "direct" in w]
    if pairs:
        print("\n| N | vector size | repeat | pageable optimal / direct, median wall "
              "| range (fastest-slowest pairs) |")
        print("|---|---|---|---|---|")
        for k, w in pairs:
            o, d = w["optimal"], w["direct"]
            print(f"| {k[0]} | {k[1]} | {k[3]} | {statistics.median(o) / statistics.median(d):.1f}x "
                  f"| {min(o) / max(d):.1f}-{max(o) / min(d):.1f}x |")


def wait_table(folder):
    files = sorted(glob.glob(os.path.join(folder, "wait-*.json")))
    if not files:
        return
    rows = {}
    for path in files:
        wait = os.path.basename(path).split("-")[1]
        with open(path) as f:
            for r in json.load(f):
                n = r["vectors"] * r["vector_size"]
                dev = r.get("device_compute_s")
                row = rows.setdefault((r["tensor_size"], wait), {"cpu": [], "wall": [], "dev": []})
                row["cpu"].extend(c / n for c in r.get("cpu_s_runs") or [])
                row["wall"].extend(w / n for w in r.get("wall_s_runs") or [r["wall_s"]])
                if dev:
                    row["dev"].append(dev / n)
    print("\n| N | wait | runs | host CPU per contraction, us | device compute per contraction, us "
          "| CPU / compute | wall per contraction, us |")
    print("|---|---|---|---|---|---|---|")
    for (n, wait), row in sorted(rows.items()):
        if not row["cpu"] or not row["dev"]:
            continue
        dev = statistics.median(row["dev"])
        print(f"| {n} | {wait} | {len(row['cpu'])} | {spread([1e6 * c for c in row['cpu']], '{:.0f}')} "
              f"| {1e6 * dev:.0f} | {spread([c / dev for c in row['cpu']], '{:.2f}')} | "
              f"{spread([1e6 * w for w in row['wall']], '{:.0f}')} |")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--limits")
    p.add_argument("--rates")
    a = p.parse_args()
    limits = a.limits or a.dirs[0]
    _, bus = datapath.rates(limits)
    zgemm, _ = datapath.rates(a.rates or limits)
    records = [r for d in a.dirs for r in datapath.load_records(d, "floor-")]
    if not records:
        sys.exit("gpu-floor-rounds: no floor-*.json records in " + ", ".join(a.dirs))
    print(datapath.rates_line(zgemm, bus))
    print()
    floor_table(records, zgemm, bus)
    for d in a.dirs:
        wait_table(d)


if __name__ == "__main__":
    main()
