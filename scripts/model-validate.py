#!/usr/bin/env python3
"""Modelled makespan against recorded wall time, per point, from the raw records.

    python3 scripts/model-validate.py \
        --pair RECORDED.json MODELLED.json [--pair ...] \
        [--log-pair RECORDED.log MODELLED.json [--log-pair ...]] \
        [--timeline RECORDED.json[.gz] MODELLED.json[.gz] [--timeline ...]]

RECORDED.json: memhc-synth records from a GPU (`--backend cuda`); MODELLED.json: records of
the same command with `--backend model` (they carry `model_makespan_s`, `model_floor_s`).
Records are matched on their parameters (N, vector size, vectors, repeated rate,
oversubscription, policy, mode, allocation, prefetch, seed, distribution); unified-memory
records have no modelled counterpart (the model has no managed memory) and are listed as
such. `--log-pair` takes the recorded side from the table a memhc-synth log prints (for
runs recorded without `--json`: the profiles). Prints Markdown: one row per point with the error (modelled - recorded) / recorded, a
summary per mode, and for each timeline pair the spans per kind (count, total, median) as
recorded and as modelled. Standard library only.
"""

import argparse
import gzip
import json
import statistics
import sys

# The cost of freeing one 36 MiB host copy with glibc on the recorded host, as issue 29 reads
# it from the N = 384 timeline ("freeing released nodes' host copies (~1.1 ms each)").
FREE_MS = 1.1

KEY = ("tensor_size", "vector_size", "vectors", "repeat", "oversub", "policy", "mode",
       "alloc", "prefetch", "seed", "dist")


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def from_log(path):
    """The records of the table memhc-synth printed in a log: the columns it shows, with the
    names of the JSON fields (`N` is `tensor_size`, `vsize` `vector_size`)."""
    names = {"N": "tensor_size", "vsize": "vector_size"}
    records, header = [], None
    with open(path) as f:
        for line in f:
            cols = line.split()
            if cols[:2] == ["policy", "mode"]:
                header = [names.get(c, c) for c in cols]
            elif header and len(cols) == len(header):
                r = dict(zip(header, cols))
                for k in ("tensor_size", "vector_size"):
                    r[k] = int(r[k])
                for k in ("repeat", "oversub", "wall_s"):
                    r[k] = float(r[k])
                records.append(r)
            elif header:
                header = None
    return records


LOG_KEY = ("tensor_size", "vector_size", "repeat", "oversub", "policy", "mode", "alloc")


def key(r):
    return tuple(r.get(k) for k in KEY)


def pct(x):
    return f"{100.0 * x:+.1f}%"


def compare(pairs, log_pairs):
    rows = []
    for recorded_path, modelled_path in pairs:
        modelled = {key(r): r for r in load(modelled_path)}
        for r in load(recorded_path):
            m = modelled.get(key(r))
            rows.append((recorded_path, r, m))
    for recorded_path, modelled_path in log_pairs:
        modelled = load(modelled_path)
        for r in from_log(recorded_path):
            m = next((m for m in modelled
                      if all(str(m.get(k)) == str(r.get(k)) for k in LOG_KEY
                             if k not in ("repeat", "oversub"))
                      and m["repeat"] == r["repeat"] and (m["oversub"] or 0.0) == r["oversub"]),
                     None)
            r.setdefault("vectors", m["vectors"] if m else "?")
            rows.append((recorded_path, r, m))
    print("| source | N | vsize | vectors | repeat | oversub | policy | mode | recorded wall s "
          "| modelled makespan s | error | modelled floor s | recorded wall / floor "
          "| modelled makespan / floor | same bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    errors, by_n = {}, {}
    for path, r, m in rows:
        src = path.split("/")[-1]
        head = (f"| {src} | {r['tensor_size']} | {r['vector_size']} | {r['vectors']} "
                f"| {r['repeat']} | {r['oversub']} | {r['policy']} | {r['mode']} "
                f"| {r['wall_s']:.3f} ")
        if m is None or m.get("model_makespan_s") is None:
            print(head + "| - | (not modelled) | - | - | - | - |")
            continue
        mk, fl = m["model_makespan_s"], m["model_floor_s"]
        err = (mk - r["wall_s"]) / r["wall_s"]
        errors.setdefault(r["mode"], []).append(err)
        by_n.setdefault((r["mode"], r["tensor_size"]), []).append(err)
        same = "-"
        if "h2d_bytes" in r:
            same = "yes" if (r["h2d_bytes"], r["d2h_bytes"]) == (m["h2d_bytes"], m["d2h_bytes"]) \
                else "no"
        print(head + f"| {mk:.3f} | {pct(err)} | {fl:.3f} | {r['wall_s'] / fl:.1f} "
              f"| {mk / fl:.1f} | {same} |")
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
    print("| mode | N | points | median error | median abs error | largest abs error |")
    print("|---|---|---|---|---|---|")
    for (mode, n), e in sorted(by_n.items()):
        print(f"| {mode} | {n} | {len(e)} | {pct(statistics.median(e))} "
              f"| {100 * statistics.median(abs(x) for x in e):.1f}% "
              f"| {100 * max(abs(x) for x in e):.1f}% |")
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
    # Time covered by some span (a copy or a GEMM on some stream), in ms.
    busy, end = 0.0, first
    for start, stop in sorted((e["ts"], e["ts"] + e["dur"]) for e in work):
        if stop > end:
            busy += stop - max(start, end)
            end = stop
    registered = sum(1 for e in events if e.get("ph") == "i" and e["name"].startswith("register"))
    return by_kind, (last - first) / 1e3, busy / 1e3, registered


def name(path):
    return "/".join(path.split("/")[-2:])


def timelines(pairs):
    for recorded_path, modelled_path in pairs:
        rec, rec_span, rec_busy, registered = spans(recorded_path)
        mod, mod_span, mod_busy, _ = spans(modelled_path)
        print(f"**{name(recorded_path)}** against **{name(modelled_path)}**: "
              f"first to last span {rec_span:.1f} ms recorded, {mod_span:.1f} ms modelled "
              f"({pct((mod_span - rec_span) / rec_span)}); no span on any stream for "
              f"{rec_span - rec_busy:.1f} ms recorded, {mod_span - mod_busy:.1f} ms modelled "
              f"({rec_span - rec_busy - (mod_span - mod_busy):.1f} ms more recorded); "
              f"{registered} host-backed nodes registered, whose host copies the runtime frees "
              f"when it releases them: at {FREE_MS} ms each (issue 29), "
              f"{registered * FREE_MS:.1f} ms the model does not see")
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
    p.add_argument("--log-pair", nargs=2, action="append", default=[],
                   metavar=("RECORDED_LOG", "MODELLED"))
    p.add_argument("--timeline", nargs=2, action="append", default=[],
                   metavar=("RECORDED", "MODELLED"))
    a = p.parse_args()
    if not a.pair and not a.log_pair and not a.timeline:
        p.error("give at least one --pair, --log-pair or --timeline")
    if a.pair or a.log_pair:
        compare(a.pair, a.log_pair)
    if a.timeline:
        timelines(a.timeline)


if __name__ == "__main__":
    sys.exit(main())
