#!/usr/bin/env python3
"""Prints the tables of ../2026-11-28-prefetch-budget.md from the raw files that run.sh wrote
under before/ and after/ (next to this script): evictions, misses, prefetches, bytes uploaded,
and the modelled makespan over the modelled floor, for each workload, budget and data path.

memhc run's counts come from its JSON record; its makespan and floor from the `model:` line of
its output (<name>.log), which its JSON did not carry when these runs were made (that makespan
includes the modelled set-up before the queue). Since 61f2eb3 memhc run's JSON carries both,
the makespan of the queue alone: a rerun's records are read for them first. memhc-synth's JSON
carries both."""
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATHS = [("pageable", "pageable, no prefetch"), ("pinned-off", "pinned, no prefetch"),
         ("pinned", "pinned, prefetch 12")]
MODEL = re.compile(r"model: makespan ([0-9.]+) s, floor ([0-9.]+) s")


def memhc_point(d, name):
    rec = json.loads((d / f"{name}.json").read_text())
    assert len(rec) == 1, name
    s = rec[0]["stats"]
    if "model_makespan_s" in rec[0]:
        makespan, floor = rec[0]["model_makespan_s"], rec[0]["model_floor_s"]
    else:
        m = MODEL.search((d / f"{name}.log").read_text())
        makespan, floor = float(m.group(1)), float(m.group(2))
    return dict(budget=rec[0]["budget"], evictions=s["evictions"], misses=s["misses"],
                prefetches=s["prefetches"], h2d=s["h2d_bytes"], makespan=makespan, floor=floor)


def synth_point(d, name):
    rec = json.loads((d / f"{name}.json").read_text())
    assert len(rec) == 1, name
    r = rec[0]
    return dict(budget=r["budget"], evictions=r["evictions"], misses=r["misses"],
                prefetches=r.get("prefetches", 0), h2d=r["h2d_bytes"],
                makespan=r["model_makespan_s"], floor=r["model_floor_s"])


def rows(point, names):
    out = []
    for label, name in names:
        b = point(HERE / "before", name)
        a = point(HERE / "after", name)
        out.append((label, b, a))
    return out


def table(title, entries):
    print(f"#### {title}\n")
    print("| budget | data path | evictions before | after | misses before | after "
          "| prefetches before | after | H2D MiB before | after "
          "| makespan / floor before | after | makespan ms before | after |")
    print("|---|---|" + "---|" * 12)
    for (budget_label, path_label), b, a in entries:
        assert b["budget"] == a["budget"]
        print(f"| {budget_label} | {path_label} | {b['evictions']} | {a['evictions']} "
              f"| {b['misses']} | {a['misses']} | {b['prefetches']} | {a['prefetches']} "
              f"| {b['h2d'] / 2**20:.0f} | {a['h2d'] / 2**20:.0f} "
              f"| {b['makespan'] / b['floor']:.2f} | {a['makespan'] / a['floor']:.2f} "
              f"| {b['makespan'] * 1e3:.1f} | {a['makespan'] * 1e3:.1f} |")
    print()


def main():
    for w in ["a1_rhopi-128", "f0d2-256"]:
        peak = json.loads((HERE / "after" / f"{w}-plan.json").read_text())["peak_bytes"]
        entries = []
        for scale, label in [("1", "peak"), ("0.5", "0.5 x peak")]:
            for path, plabel in PATHS:
                name = f"{w}-{scale}-{path}"
                b = memhc_point(HERE / "before", name)
                a = memhc_point(HERE / "after", name)
                entries.append(((f"{label} ({b['budget']} B)", plabel), b, a))
        table(f"memhc run {w} (plan peak {peak} B)", entries)
    entries = []
    for oversub, label in [("0", "peak (oversub 0)"), ("1", "0.5 x peak (oversub 1)")]:
        for path, plabel in PATHS:
            name = f"synth-384-oversub{oversub}-{path}"
            b = synth_point(HERE / "before", name)
            a = synth_point(HERE / "after", name)
            entries.append(((f"{label}, {b['budget']} B", plabel), b, a))
    table("memhc-synth N = 384, vector size 16, 8 vectors, repeat 0.5", entries)


if __name__ == "__main__":
    sys.exit(main())
