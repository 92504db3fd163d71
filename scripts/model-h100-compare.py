#!/usr/bin/env python3
"""The modelled H100 against the real one on the direct data path (issue 29, deliverable 3).

    python3 scripts/model-h100-compare.py --gpu GPU_DIR [--gpu ...] \
        --model LABEL=MODEL_DIR [--model ...] \
        [--timeline NAME GPU_TIMELINE MODEL_TIMELINE [--timeline ...]]

GPU_DIR: memhc-synth records of an H100 session (`datapath-*.json`, `--backend cuda`);
MODEL_DIR: records of the same commands on `--backend model` (they carry `model_makespan_s`
and `model_floor_s`), one folder per labelled model (e.g. `before=...`, `after=...`). Records
are matched on N, vector size, vectors, repeated rate, oversubscription, policy and schedule
(`direct`: page-locked host objects, `--host-memory pinned`; `optimal`/`naive`: pageable).

Prints Markdown:

1. per point: the H100's wall time, each model's makespan and its error
   `(model - wall) / wall`, and each model's fraction of its own floor
   (`model_floor_s / model_makespan_s`), then a summary of the errors per model and N;
2. per timeline pair (`--timeline`, Chrome-trace JSON, optionally gzipped, as
   `memhc-synth --timeline` writes it): per engine (uploads, read-backs, GEMMs) the spans'
   count, total and median duration, the engine's covered time and its share of the run,
   the first start and last end; the time during which no engine works; and the uploads'
   and read-backs' median rate split by whether the other direction was busy (more than 95%
   of the span) or idle (less than 5%).

Standard library only.
"""

import argparse
import gzip
import json
import os
import glob
import statistics
import sys


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def records(folder):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, "datapath-*.json"))):
        data = load_json(path)
        if isinstance(data, list):
            out.extend(data)
    return out


def schedule(r):
    return "direct" if r.get("pinned") else r["mode"]


def key(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], float(r["repeat"]),
            float(r.get("oversub") or 0.0), r["policy"], schedule(r))


def pct(x):
    return f"{100 * x:+.1f}%"


def points(gpu_dirs, models):
    gpu = {}
    for d in gpu_dirs:
        for r in records(d):
            gpu.setdefault(key(r), r)
    mods = []
    for label, folder in models:
        m = {}
        for r in records(folder):
            if r.get("model_makespan_s"):
                m.setdefault(key(r), r)
        mods.append((label, m))
    labels = [label for label, _ in mods]
    head = ["N", "vector size", "repeat", "oversub", "policy", "schedule", "H100 wall ms"]
    for label in labels:
        head += [f"{label}: model ms", f"{label}: error", f"{label}: model fraction"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    errors = {label: {} for label in labels}
    for k in sorted(gpu, key=lambda k: (-k[0], k[6], k[1], k[3], k[2], k[5])):
        if not any(k in m for _, m in mods):
            continue
        r = gpu[k]
        row = [str(k[0]), str(k[1]), f"{k[3]:g}", f"{k[4]:g}", k[5], k[6],
               f"{1e3 * r['wall_s']:.2f}"]
        for label, m in mods:
            mr = m.get(k)
            if mr is None:
                row += ["-", "-", "-"]
                continue
            ms = mr["model_makespan_s"]
            err = (ms - r["wall_s"]) / r["wall_s"]
            errors[label].setdefault((k[6], k[0]), []).append(err)
            row += [f"{1e3 * ms:.2f}", pct(err), f"{mr['model_floor_s'] / ms:.3f}"]
        print("| " + " | ".join(row) + " |")
    print()
    print("| model | schedule | N | points | median error | mean error | median abs error "
          "| largest abs error |")
    print("|---|---|---|---|---|---|---|---|")
    for label in labels:
        for (s, n), v in sorted(errors[label].items(), key=lambda x: (x[0][0], -x[0][1])):
            a = [abs(x) for x in v]
            print(f"| {label} | {s} | {n} | {len(v)} | {pct(statistics.median(v))} | "
                  f"{pct(statistics.mean(v))} | {100 * statistics.median(a):.1f}% | "
                  f"{100 * max(a):.1f}% |")


def spans_of(path):
    t = load_json(path)
    ev = t["traceEvents"] if isinstance(t, dict) else t
    sp = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("copy", "compute")]
    out = []
    for e in sp:
        kind = "gemm" if e["cat"] == "compute" else e["name"][:3]
        out.append((kind, e["ts"], e["ts"] + e["dur"], e.get("args", {}).get("bytes", 0)))
    return out


def union(iv):
    total, cur = 0.0, None
    merged = []
    for a, b in sorted(iv):
        if cur is None:
            cur = [a, b]
        elif a <= cur[1]:
            cur[1] = max(cur[1], b)
        else:
            merged.append(cur)
            cur = [a, b]
    if cur:
        merged.append(cur)
    for a, b in merged:
        total += b - a
    return total, merged


def overlap(a, b, merged):
    s = 0.0
    for x, y in merged:
        if y <= a:
            continue
        if x >= b:
            break
        s += min(b, y) - max(a, x)
    return s


def timeline_stats(path):
    sp = spans_of(path)
    t0 = min(s[1] for s in sp)
    t1 = max(s[2] for s in sp)
    stats = {"span": t1 - t0}
    merged = {}
    for kind in ("h2d", "d2h", "gemm"):
        iv = [(a, b) for k, a, b, _ in sp if k == kind]
        merged[kind] = union(iv)[1]
        if not iv:
            continue
        cov, _ = union(iv)
        durs = [b - a for a, b in iv]
        stats[kind] = {
            "n": len(iv), "total": sum(durs), "median": statistics.median(durs),
            "covered": cov, "share": cov / (t1 - t0),
            "first": min(a for a, _ in iv) - t0, "last": max(b for _, b in iv) - t0,
        }
    stats["idle"] = (t1 - t0) - union([(a, b) for _, a, b, _ in sp])[0]
    for kind, other in (("h2d", "d2h"), ("d2h", "h2d")):
        alone, both = [], []
        for k, a, b, n in sp:
            if k != kind or b <= a or not n:
                continue
            f = overlap(a, b, merged[other]) / (b - a)
            if f < 0.05:
                alone.append((n, b - a))
            elif f > 0.95:
                both.append((n, b - a))
        stats[kind + "_rates"] = (alone, both)
    return stats


def timelines(pairs):
    for name, gpu_path, model_path in pairs:
        g, m = timeline_stats(gpu_path), timeline_stats(model_path)
        print(f"**{name}**: first to last span {g['span'] / 1e3:.2f} ms on the H100, "
              f"{m['span'] / 1e3:.2f} ms modelled ({pct((m['span'] - g['span']) / g['span'])}); "
              f"no engine busy for {g['idle'] / 1e3:.2f} ms on the H100, "
              f"{m['idle'] / 1e3:.2f} ms modelled")
        print()
        print("| engine | spans H100 / model | total ms H100 / model | median µs H100 / model "
              "| median error | covered share H100 / model | first start ms H100 / model "
              "| last end ms H100 / model |")
        print("|---|---|---|---|---|---|---|---|")
        for kind in ("h2d", "d2h", "gemm"):
            a, b = g.get(kind), m.get(kind)
            if not a or not b:
                continue
            print(f"| {kind} | {a['n']} / {b['n']} | {a['total'] / 1e3:.2f} / "
                  f"{b['total'] / 1e3:.2f} | {a['median']:.1f} / {b['median']:.1f} | "
                  f"{pct((b['median'] - a['median']) / a['median'])} | {a['share']:.3f} / "
                  f"{b['share']:.3f} | {a['first'] / 1e3:.2f} / {b['first'] / 1e3:.2f} | "
                  f"{a['last'] / 1e3:.2f} / {b['last'] / 1e3:.2f} |")
        print()
        print("| copies | other direction | spans H100 / model | median µs H100 / model "
              "| median GB/s H100 / model |")
        print("|---|---|---|---|---|")
        for kind in ("h2d", "d2h"):
            for i, what in enumerate(("idle (< 5% overlap)", "busy (> 95% overlap)")):
                a, b = g[kind + "_rates"][i], m[kind + "_rates"][i]
                dur = lambda v: f"{statistics.median(d for _, d in v):.1f}" if v else "-"
                rate = lambda v: (f"{statistics.median(n / d / 1e3 for n, d in v):.1f}"
                                  if v else "-")
                print(f"| {kind} | {what} | {len(a)} / {len(b)} | {dur(a)} / {dur(b)} | "
                      f"{rate(a)} / {rate(b)} |")
        print()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", action="append", default=[])
    p.add_argument("--model", action="append", default=[], help="LABEL=DIR")
    p.add_argument("--timeline", nargs=3, action="append", default=[],
                   metavar=("NAME", "GPU", "MODEL"))
    a = p.parse_args()
    models = []
    for m in a.model:
        label, _, folder = m.partition("=")
        if not folder:
            sys.exit(f"model-h100-compare: --model {m}: expected LABEL=DIR")
        models.append((label, folder))
    if a.gpu and models:
        points(a.gpu, models)
        print()
    if a.timeline:
        timelines(a.timeline)


if __name__ == "__main__":
    main()
