#!/usr/bin/env python3
"""Modelled makespan against recorded wall time, per point, from the raw records.

    python3 scripts/model-validate.py \
        --pair RECORDED.json MODELLED.json [--pair ...] \
        [--timeline RECORDED.json[.gz] MODELLED.json[.gz] [--timeline ...]]

RECORDED.json: memhc-synth records from a GPU (`--backend cuda`); MODELLED.json: records of
the same command with `--backend model` (they carry `model_makespan_s`, `model_floor_s`).
Records are matched on their parameters (N, vector size, vectors, repeated rate,
oversubscription, policy, mode, allocation, prefetch, seed, distribution); unified-memory
records have no modelled counterpart (the model has no managed memory) and are listed as
such. Prints Markdown: one row per point with the error (modelled - recorded) / recorded, a
summary per mode, and for each timeline pair the spans per kind (count, total, median) as
recorded and as modelled. Standard library only.
"""

import argparse
import gzip
import json
import statistics
import sys

KEY = ("tensor_size", "vector_size", "vectors", "repeat", "oversub", "policy", "mode",
       "alloc", "prefetch", "seed", "dist")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def key(r):
    return tuple(r.get(k) for k in KEY)


def pct(x):
    return f"{100.0 * x:+.1f}%"


def compare(pairs):
    rows = []
    for recorded_path, modelled_path in pairs:
        modelled = {key(r): r for r in load(modelled_path)}
        for r in load(recorded_path):
            m = modelled.get(key(r))
            rows.append((recorded_path, r, m))
    print("| source | N | vsize | vectors | repeat | oversub | policy | mode | recorded wall s "
          "| modelled makespan s | error | modelled floor s | recorded wall / floor "
          "| modelled makespan / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors = {}
    for path, r, m in rows:
        src = path.split("/")[-1]
        head = (f"| {src} | {r['tensor_size']} | {r['vector_size']} | {r['vectors']} "
                f"| {r['repeat']} | {r['oversub']} | {r['policy']} | {r['mode']} "
                f"| {r['wall_s']:.3f} ")
        if m is None or m.get("model_makespan_s") is None:
            print(head + "| - | (not modelled) | - | - | - |")
            continue
        mk, fl = m["model_makespan_s"], m["model_floor_s"]
        err = (mk - r["wall_s"]) / r["wall_s"]
        errors.setdefault(r["mode"], []).append(err)
        print(head + f"| {mk:.3f} | {pct(err)} | {fl:.3f} | {r['wall_s'] / fl:.1f} "
              f"| {mk / fl:.1f} |")
    print()
    print("| mode | points | median error | mean error | median abs error | largest abs error |")
    print("|---|---|---|---|---|---|")
    every = []
    for mode in sorted(errors):
        e = errors[mode]
        every += e
        print(f"| {mode} | {len(e)} | {pct(statistics.median(e))} | {pct(statistics.mean(e))} "
              f"| {100 * statistics.median(abs(x) for x in e):.1f}% "
              f"| {100 * max(abs(x) for x in e):.1f}% |")
    if every:
        print(f"| all | {len(every)} | {pct(statistics.median(every))} "
              f"| {pct(statistics.mean(every))} "
              f"| {100 * statistics.median(abs(x) for x in every):.1f}% "
              f"| {100 * max(abs(x) for x in every):.1f}% |")
    print()


def spans(path):
    events = load(path)
    events = events["traceEvents"] if isinstance(events, dict) else events
    work = [e for e in events if e.get("ph") == "X"]
    by_kind = {}
    for e in work:
        by_kind.setdefault(e["name"].split()[0], []).append(e)
    first = min(e["ts"] for e in work)
    last = max(e["ts"] + e["dur"] for e in work)
    return by_kind, (last - first) / 1e3


def timelines(pairs):
    for recorded_path, modelled_path in pairs:
        rec, rec_span = spans(recorded_path)
        mod, mod_span = spans(modelled_path)
        print(f"**{recorded_path.split('/')[-1]}** against **{modelled_path.split('/')[-1]}**: "
              f"first to last span {rec_span:.1f} ms recorded, {mod_span:.1f} ms modelled "
              f"({pct((mod_span - rec_span) / rec_span)})")
        print()
        print("| spans | recorded count | modelled count | recorded total ms | modelled total ms "
              "| recorded median µs | modelled median µs | median error |")
        print("|---|---|---|---|---|---|---|---|")
        for kind in sorted(set(rec) | set(mod)):
            r, m = rec.get(kind, []), mod.get(kind, [])
            rd = [e["dur"] for e in r]
            md = [e["dur"] for e in m]
            rmed = statistics.median(rd) if rd else 0.0
            mmed = statistics.median(md) if md else 0.0
            err = pct((mmed - rmed) / rmed) if rmed else "-"
            print(f"| {kind} | {len(r)} | {len(m)} | {sum(rd) / 1e3:.1f} | {sum(md) / 1e3:.1f} "
                  f"| {rmed:.0f} | {mmed:.0f} | {err} |")
        print()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pair", nargs=2, action="append", default=[],
                   metavar=("RECORDED", "MODELLED"))
    p.add_argument("--timeline", nargs=2, action="append", default=[],
                   metavar=("RECORDED", "MODELLED"))
    a = p.parse_args()
    if not a.pair and not a.timeline:
        p.error("give at least one --pair or --timeline")
    if a.pair:
        compare(a.pair)
    if a.timeline:
        timelines(a.timeline)


if __name__ == "__main__":
    sys.exit(main())
