#!/usr/bin/env python3
"""Where the host's time goes in a GPU run: the tables of gpu-run.sh's `host128` stage.

    scripts/host-window.py FOLDER

FOLDER holds, for each wait W (auto, block) and vector count V, `host128-W-vV.json` (the
memhc-synth records: wall_s_runs, cpu_s_runs, device_compute_s) and
`threads-host128-W-vV.jsonl` (scripts/thread-cpu.py's samples: every thread's CPU time), and,
per wait, `timeline-host128-W.json` (memhc-synth --timeline). Files may be gzipped (`.gz`).

1. CPU per contraction by thread, inside the timed runs. memhc-synth makes one untimed
   warm-up run, then the recorded runs; before each, every core generates the node values (a
   burst of many busy threads). A run's window is taken to start where its burst ends and to
   last its recorded wall time (wall_s_runs, in order): the window's CPU time is split into the
   main thread, the CUDA driver's threads (names starting `cuda`) and the rest.
2. The host's time between the runtime's events in the timeline (instant events, host clock),
   after the last registration: the sum of each gap, attributed to the pair (event before,
   event after), the ten largest, per contraction.
"""
import gzip
import json
import os
import statistics
import sys
from collections import Counter


def load(path):
    for p in (path, path + ".gz"):
        if os.path.exists(p):
            opener = gzip.open if p.endswith(".gz") else open
            with opener(p, "rt") as f:
                if p.endswith(".jsonl") or p.endswith(".jsonl.gz"):
                    return [json.loads(line) for line in f if line.strip()]
                return json.load(f)
    return None


def windows(samples, runs, busy=4, gap=0.05):
    """The windows [start, start + wall) of the recorded runs: each starts at the end of a
    burst (a sample interval where at least `busy` threads other than the first used CPU); the
    first burst is the warm-up's."""
    prev, ends, in_burst, last_busy = {}, [], False, None
    first_tid = None
    for r in samples:
        threads = r["threads"]
        if first_tid is None and threads:
            first_tid = min(threads, key=int)
        active = 0
        for tid, (_, ns, *_) in threads.items():
            if tid != first_tid and ns - prev.get(tid, ns) > 0:
                active += 1
            prev[tid] = ns
        if active >= busy:
            in_burst, last_busy = True, r["t"]
        elif in_burst and r["t"] - last_busy > gap:
            ends.append(last_busy)
            in_burst = False
    starts = ends[-len(runs):] if len(ends) >= len(runs) else []
    return [(s, s + w) for s, w in zip(starts, runs)], first_tid


def cpu_in(samples, lo, hi, main):
    """CPU seconds per group (main, cuda, other) between times lo and hi."""
    before, after = {}, {}
    for r in samples:
        for tid, (comm, ns, *_) in r["threads"].items():
            if r["t"] <= lo:
                before[tid] = (comm, ns)
            if r["t"] <= hi:
                after[tid] = (comm, ns)
    out = Counter()
    for tid, (comm, ns) in after.items():
        used = ns - before.get(tid, (comm, 0))[1]
        group = "main" if tid == main else ("cuda" if comm.startswith("cuda") else "other")
        out[group] += used / 1e9
    return out


def thread_table(folder):
    print("| wait | vectors | contractions | wall / contraction | process CPU | main thread | CUDA threads | other threads | device compute |")
    print("|---|---|---|---|---|---|---|---|---|")
    for wait in ("auto", "block"):
        for v in (20, 80):
            rec = load(f"{folder}/host128-{wait}-v{v}.json")
            samples = load(f"{folder}/threads-host128-{wait}-v{v}.jsonl")
            if not rec or not samples:
                continue
            r = rec[0]
            n = r["vectors"] * r["vector_size"]
            wins, main = windows(samples, r["wall_s_runs"])
            groups = [cpu_in(samples, lo, hi, main) for lo, hi in wins]
            us = lambda x: f"{x / n * 1e6:.0f} us"
            med = lambda key: statistics.median(g[key] for g in groups) if groups else float("nan")
            print(f"| {wait} | {v} | {n} | {us(r['wall_s'])} | {us(r['cpu_s'])} | {us(med('main'))} "
                  f"| {us(med('cuda'))} | {us(med('other'))} | {us(r['device_compute_s'])} |")
    print()
    print("Wall and process CPU: the records' medians over the runs; the thread columns: the "
          "median over the runs' windows of the sampled CPU time (5 ms samples, so a window of "
          "a quarter second is known to about 2%).")


def gap_table(folder):
    for wait in ("auto", "block"):
        tl = load(f"{folder}/timeline-host128-{wait}.json")
        rec = load(f"{folder}/host128-timeline-{wait}.json")
        if not tl or not rec:
            continue
        events = tl["traceEvents"] if isinstance(tl, dict) else tl
        rt = sorted((e for e in events if e.get("cat") == "runtime"), key=lambda e: e["ts"])
        names = [e["name"] for e in rt]
        first = max(i for i, name in enumerate(names) if name == "register") + 1
        n = rec[0]["vectors"] * rec[0]["vector_size"]
        gaps, count = Counter(), Counter()
        for a, b in zip(rt[first - 1:], rt[first:]):
            gaps[(a["name"], b["name"])] += b["ts"] - a["ts"]
            count[(a["name"], b["name"])] += 1
        total = sum(gaps.values())
        print(f"\n#### MEMHC_GPU_WAIT={wait}: {total / 1e3:.1f} ms from the last registration to the last event, {n} contractions ({total / n:.0f} us each)\n")
        print("| after | before | gaps | mean gap | share | per contraction |")
        print("|---|---|---|---|---|---|")
        for (a, b), t in gaps.most_common(10):
            print(f"| {a} | {b} | {count[(a, b)]} | {t / count[(a, b)]:.1f} us | {100 * t / total:.1f}% | {t / n:.1f} us |")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: host-window.py FOLDER")
    folder = sys.argv[1]
    print("### CPU per contraction inside the timed runs, by thread (direct path, N = 128)\n")
    thread_table(folder)
    print("\n### The host's time between runtime events (one timed run of 20 vectors, --timeline)")
    gap_table(folder)


if __name__ == "__main__":
    main()
