#!/usr/bin/env python3
"""Every number of docs/results/2026-11-27-host-cost.md, from the raw output of
`cargo bench -p memhc-gpu --bench host_cost` (the `model ...` and `raw ...` lines).

Usage: scripts/host-cost-table.py docs/results/2026-11-27-host-cost/bench-host-cost.txt

Per run (one `raw` line), seconds of process CPU over the queue:
  device    = the fake device's own work (metered: a GPU does it), left out
  meter     = metered calls x the meter's cost per call (measured in the round), left out
  host      = cpu - device - meter
  faults    = (process faults - device faults - pinning faults) x per-fault cost (same round)
  copies    = CPU time inside the staging copies - their faults x per-fault cost
  pinning   = the fake's page-locked allocations (a GPU's cuMemHostAlloc)
  bookkeeping = host - copies - faults - pinning
each divided by the run's contractions; CPU bytes per device byte = staged / (staged + direct).
Medians over the rounds, with the minimum and maximum.
"""

import statistics
import sys
from collections import defaultdict

FIELDS = (
    "round N schedule contractions wall_s cpu_s faults fault_cost_s meter_cost_s copy_calls "
    "copy_bytes copy_cpu_s copy_faults device_calls device_cpu_s device_faults pin_calls "
    "pin_cpu_s pin_faults staged_h2d staged_d2h direct_h2d direct_d2h"
).split()


def parse(path):
    models, runs, registers, calibration = {}, [], [], []
    with open(path) as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] in ("register", "calibration"):
                kv = dict(w.split("=", 1) for w in words[1:])
                (registers if words[0] == "register" else calibration).append(kv)
            elif words[0] == "model":
                kv = dict(w.split("=", 1) for w in words[1:])
                models[(int(kv["N"]), kv["schedule"])] = {
                    "makespan_s": float(kv["makespan_s"]),
                    "floor_s": float(kv["floor_s"]),
                    "nodes": int(kv["nodes"]),
                    "vectors": int(kv["vectors"]),
                    "budget": int(kv["budget_bytes"]),
                }
            elif words[0] == "raw" and words[1] != "round":
                values = dict(zip(FIELDS, words[1:]))
                run = {
                    k: (v if k == "schedule" else float(v)) for k, v in values.items()
                }
                run["N"] = int(run["N"])
                runs.append(run)
    return models, runs, registers, calibration


def split(run):
    c = run["contractions"]
    fault_s = run["fault_cost_s"]
    device = run["device_cpu_s"]
    meter = (run["copy_calls"] + run["device_calls"] + run["pin_calls"]) * run["meter_cost_s"]
    host = run["cpu_s"] - device - meter
    host_faults = run["faults"] - run["device_faults"] - run["pin_faults"]
    faults = host_faults * fault_s
    copies = run["copy_cpu_s"] - run["copy_faults"] * fault_s
    pinning = run["pin_cpu_s"]
    bookkeeping = host - copies - faults - pinning
    staged = run["staged_h2d"] + run["staged_d2h"]
    direct = run["direct_h2d"] + run["direct_d2h"]
    us = 1e6 / c
    return {
        "cpu": run["cpu_s"] * us,
        "wall": run["wall_s"] * us,
        "device": device * us,
        "meter": meter * us,
        "host": host * us,
        "bookkeeping": bookkeeping * us,
        "copies": copies * us,
        "faults": faults * us,
        "pinning": pinning * us,
        "fault_count": host_faults / c,
        "fault_cost_us": fault_s * 1e6,
        "cpu_bytes_per_device_byte": staged / (staged + direct) if staged + direct else 0.0,
        "device_mib": (staged + direct) / c / 2**20,
        "contractions": c,
    }


def stat(values):
    return statistics.median(values), min(values), max(values)


def fmt(values, digits=1):
    m, lo, hi = stat(values)
    return f"{m:.{digits}f} ({lo:.{digits}f}-{hi:.{digits}f})"


def main():
    models, runs, registers, calibration = parse(sys.argv[1])
    groups = defaultdict(list)
    for r in runs:
        groups[(r["N"], r["schedule"])].append(split(r))
    rounds = {int(r["round"]) for r in runs}
    print(f"From {sys.argv[1]}: {len(runs)} runs, {len(rounds)} rounds; "
          "median (min-max) over the rounds; times in µs of CPU per contraction.\n")
    print("| N | schedule | contractions | host CPU | bookkeeping | CPU copies | page faults "
          "| pinning | faults per contraction | CPU bytes per device byte | device MiB per "
          "contraction |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (n, sched), rows in sorted(groups.items()):
        col = lambda k, d=1: fmt([r[k] for r in rows], d)
        print(f"| {n} | {sched} | {rows[0]['contractions']:.0f} | {col('host')} | "
              f"{col('bookkeeping')} | {col('copies')} | {col('faults')} | {col('pinning')} | "
              f"{col('fault_count', 0)} | {col('cpu_bytes_per_device_byte', 4)} | "
              f"{col('device_mib', 2)} |")
    print()
    print("| N | schedule | host CPU per contraction µs (median) | modelled makespan per "
          "contraction µs | host / modelled makespan | modelled floor per contraction µs | "
          "host / modelled floor | target (pinned): host / device <= 0.5 |")
    print("|---|---|---|---|---|---|---|---|")
    for (n, sched), rows in sorted(groups.items()):
        model = models[(n, sched)]
        c = rows[0]["contractions"]
        host = statistics.median(r["host"] for r in rows)
        mk = model["makespan_s"] * 1e6 / c
        fl = model["floor_s"] * 1e6 / c
        verdict = ("met" if host / mk <= 0.5 else "not met") if sched == "pinned" else "-"
        print(f"| {n} | {sched} | {host:.1f} | {mk:.1f} | {host / mk:.3f} | {fl:.1f} | "
              f"{host / fl:.3f} | {verdict} |")
    print()
    print("| N | schedule | left out: fake device work µs | left out: meter µs | process CPU µs "
          "| wall µs | per-fault cost µs |")
    print("|---|---|---|---|---|---|---|")
    for (n, sched), rows in sorted(groups.items()):
        col = lambda k, d=1: fmt([r[k] for r in rows], d)
        print(f"| {n} | {sched} | {col('device')} | {col('meter')} | {col('cpu')} | "
              f"{col('wall')} | {col('fault_cost_us', 3)} |")
    print()
    costs = [
        (float(c["first_touch_s"]) - float(c["second_touch_s"])) / int(c["faults"]) * 1e6
        for c in calibration
    ]
    if costs:
        print(f"per-fault cost: median {statistics.median(costs):.3f} µs of {len(costs)} "
              f"trials ({min(costs):.3f}-{max(costs):.3f}), "
              f"{int(calibration[0]['faults'])} faults per 64 MiB trial\n")
    if registers:
        print("| buffer MiB | copies | staged ms | registered ms | registered / staged "
              "| rule registers |")
        print("|---|---|---|---|---|---|")
        for r in registers:
            st, rg = float(r["staged_s"]), float(r["registered_s"])
            print(f"| {int(r['bytes']) / 2**20:.0f} | {r['copies']} | {st * 1e3:.3f} | "
                  f"{rg * 1e3:.3f} | {rg / st:.3f} | {r['rule_registers']} |")
        print()
    for (n, sched), model in sorted(models.items()):
        print(f"model N={n} {sched}: {model['vectors']} vectors, {model['nodes']} initial nodes, "
              f"budget {model['budget'] / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
