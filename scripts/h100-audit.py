#!/usr/bin/env python3
"""The audit of the two H100 write-ups (issue 27, deliverable 5): every corrected figure,
computed from the raw files.

    python3 scripts/h100-audit.py > docs/results/2026-11-26-h100-2/audit.txt

Run from the repository root (section E calls `git diff`). Reads only the raw files under
docs/results/2026-11-26-h100/ and docs/results/2026-11-26-h100-2/ (JSON records, logs,
criterion estimates, gzipped timelines, manifests) and prints, section by section:

  A. the card's complex-double GEMM rate for 64 batched N x N products at N = 192 and 384, the
     faster of the two measurements of the first session (PyTorch `bmm` in limits.json, item
     d; cuBLAS strided in the criterion run, item a), and the pinned copy bandwidths;
  B. every Fig. 7 point: the compute and bus terms of the floor, which is larger, the floor,
     and each mode's share of it, with the N = 192 points at the N = 192 rate (the write-up
     had used the N = 384 rate for them);
  C. the ranges the write-ups and the README quote from B;
  D. the manifests: the commit each folder's binaries were built from, and whether the tree
     was clean;
  E. the files on the contraction bench's path that changed between the first session's
     build and the second's;
  F. the first session's profile of the optimal mode (log and timeline);
  G. mimalloc against glibc's malloc, run by run.

Standard library only; reuses scripts/gpu-ratios.py (criterion) and scripts/synth-ratios.py
(grouping records by point).
"""
import gzip
import importlib.util
import json
import os
import re
import statistics
import subprocess
from collections import defaultdict

R1 = "docs/results/2026-11-26-h100"
R2 = "docs/results/2026-11-26-h100-2"
CALL1 = f"{R1}/2026-11-26T160154Z-check-limits-contraction-synth"
PROFILE1 = f"{R1}/2026-11-26T160812Z-profile-synth"
CPU2 = f"{R2}/2026-11-26T204808Z-check-cpu-compare"
SYNTH2 = f"{R2}/2026-11-26T205142Z-synth-profile"
ALT2 = f"{R2}/2026-11-26T205616Z-verify-mimalloc-compare-alternating"
VSIZE2 = f"{R2}/2026-11-26T205748Z-synth-vsize"
# The bus figure both write-ups state and scripts/synth-ratios.py defaults to: the pinned 1 GiB
# copies of limits.json (55.13 GB/s up, 55.14 down) to the precision the write-ups quote them.
BUS_GBS = 55.0
RATES = {}  # filled by section A
# The crates whose code the `contraction` group of crates/memhc-cuda/benches/cuda.rs runs:
# memhc-cuda and its dependencies memhc-gpu and memhc-backend; hadron (the contraction) and
# memhc-core (the runtime, the bench's dev-dependencies) with memhc-core's memhc-policy. Their
# source, benches and manifests; not their tests.
BENCH_CRATES = ("memhc-cuda", "memhc-gpu", "memhc-backend", "memhc-core", "memhc-policy", "hadron")
# The whole bench-cuda binary also links memhc-workload and memhc-host (the fig7/table groups).
BENCH_BINARY_EXTRA = ("memhc-workload", "memhc-host", "memhc-testkit")


def module(name):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    spec = importlib.util.spec_from_file_location(name.replace("-", "_").removesuffix(".py"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_json(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def log_rows(path):
    """The rows of the tables memhc-synth prints in a log, as dicts, in order."""
    rows, header = [], None
    with open(path) as f:
        for line in f:
            cols = line.split()
            if cols[:2] == ["policy", "mode"]:
                header = cols
            elif header and len(cols) == len(header):
                rows.append(dict(zip(header, cols)))
            else:
                header = None
    return rows


def section_a():
    print("## A. The card's zgemm rate (64 batched N x N products) and bus, first session\n")
    limits = load_json(f"{CALL1}/limits.json")
    crit = module("gpu-ratios.py").load(f"{CALL1}/criterion")
    rates = {}
    for n in (128, 192, 256, 384):
        torch = limits["zgemm_gflops"][f"batched 64 x N={n}"] * 1e9
        f = crit[f"contraction/N={n}"]["zgemm-strided"]
        strided = f["flops"] / f["median_s"]
        rates[n] = max(torch, strided)
        RATES[n] = rates[n]
        print(f"N = {n}: PyTorch bmm {torch / 1e12:.2f} TFLOPS, cuBLAS strided (criterion) "
              f"{strided / 1e12:.2f} TFLOPS; the card's rate (the faster): "
              f"{rates[n] / 1e12:.1f} TFLOPS")
    for k, v in limits["bandwidth_gb_s"].items():
        if not k.startswith("d2d"):
            print(f"{k}: {v:.2f} GB/s")
    print(f"bus used for the floors (as both write-ups state): {BUS_GBS:.0f} GB/s per direction")
    print()
    return rates


def section_b(rates):
    print("## B. Fig. 7 points (second session, 8 vectors, glibc build): the floor's terms\n")
    print("floor = max(compute, in, out): compute = flops / the card's rate at the point's N "
          "(section A), in / out = the optimal mode's h2d / d2h bytes / bus; each mode's share "
          "= floor / its wall time. `was` = the floor and optimal's share with the N = 384 "
          "rate for every N, as the write-up had them.\n")
    point_key = module("synth-ratios.py").point_key
    bus = BUS_GBS * 1e9
    wrong_rate = rates[384]
    out = []
    for table, path in (("repeat", f"{SYNTH2}/synth-fig7-repeat.json"),
                        ("vsize", f"{VSIZE2}/synth-fig7-vsize.json")):
        points = defaultdict(dict)
        for r in load_json(path):
            points[point_key(r)][r["mode"]] = r
        print(f"### {table}: {os.path.relpath(path, R2)}\n")
        print("| N | vsize | repeat | compute s | in s | out s | larger | floor s | optimal "
              "| naive | unified | was: floor s, optimal |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for key in sorted(points, key=lambda k: (-k[0], k[1], k[3])):
            by = points[key]
            opt = by["optimal"]
            assert opt["evictions"] == 0, "the floor needs an optimal run without evictions"
            n = opt["tensor_size"]
            compute = opt["flops"] / rates[n]
            bin_, bout = opt["h2d_bytes"] / bus, opt["d2h_bytes"] / bus
            floor = max(compute, bin_, bout)
            was = max(opt["flops"] / wrong_rate, bin_, bout)
            larger = "compute" if compute > max(bin_, bout) else "bus"
            share = {m: 100 * floor / by[m]["wall_s"] for m in ("optimal", "naive", "unified")}
            out.append({"table": table, "N": n, "vsize": opt["vector_size"],
                        "repeat": opt["repeat"], "larger": larger, **share})
            print(f"| {n} | {opt['vector_size']} | {opt['repeat']} | {compute:.4f} | {bin_:.4f} "
                  f"| {bout:.4f} | {larger} | {floor:.4f} | {share['optimal']:.1f}% "
                  f"| {share['naive']:.1f}% | {share['unified']:.1f}% "
                  f"| {was:.4f}, {100 * was / opt['wall_s']:.1f}% |")
        print()
    n_compute = sum(p["larger"] == "compute" for p in out)
    print(f"points whose compute term is the larger: {n_compute} of {len(out)}: "
          + ", ".join(f"N = {p['N']} {p['table']} (vsize {p['vsize']}, repeat {p['repeat']})"
                      for p in out if p["larger"] == "compute"))
    for n in (384, 192):
        at = [p for p in out if p["N"] == n]
        print(f"N = {n}: compute term the larger at {sum(p['larger'] == 'compute' for p in at)} "
              f"of {len(at)} points")
    print()
    return out


def span(values):
    lo, hi = min(values), max(values)
    return f"{lo:.1f}-{hi:.1f}%"


def section_c(points):
    print("## C. The ranges quoted from B\n")
    def sel(**kw):
        return [p for p in points if all(p[k] == v for k, v in kw.items())]
    rep384 = sel(table="repeat", N=384)
    print("optimal, N = 384, repeated rates 0-0.75: "
          + span([p["optimal"] for p in rep384 if p["repeat"] < 1])
          + f"; at repeat 1: {sel(table='repeat', N=384, repeat=1.0)[0]['optimal']:.1f}%")
    vs384 = sel(table="vsize", N=384)
    print("optimal, N = 384, vector sizes 2-32: "
          + span([p["optimal"] for p in vs384 if p["vsize"] > 1])
          + f"; at vector size 1: {sel(table='vsize', N=384, vsize=1)[0]['optimal']:.1f}%")
    print("optimal, N = 384, every point (README): " + span([p["optimal"] for p in points
                                                          if p["N"] == 384]))
    print("optimal, N = 192, every point: " + span([p["optimal"] for p in points
                                                     if p["N"] == 192]))
    for m in ("naive", "unified"):
        print(f"{m}, every point: " + span([p[m] for p in points])
              + f" (N = 384: {span([p[m] for p in points if p['N'] == 384])}, "
              f"N = 192: {span([p[m] for p in points if p['N'] == 192])})")
    # The compare point (4 vectors, repeat 0.5, N = 384) that section 2 of the second write-up
    # sets against the first session's 10.2% (which added the two directions).
    bus = BUS_GBS * 1e9
    for label, path in (("first session, aac1112", f"{R1}/2026-11-26T162148Z-compare-check"
                         "/compare-memhc-synth.json"),
                        ("second session, glibc", f"{CPU2}/compare-memhc-synth.json"),
                        ("second session, mimalloc", f"{CPU2}/compare-memhc-synth-mimalloc.json")):
        opt = [r for r in load_json(path) if r["mode"] == "optimal"][0]
        added = (opt["h2d_bytes"] + opt["d2h_bytes"]) / bus
        floor = max(opt["flops"] / RATES[opt["tensor_size"]], opt["h2d_bytes"] / bus,
                    opt["d2h_bytes"] / bus)
        print(f"compare point (N = 384, 4 vectors, repeat 0.5), {label}: optimal "
              f"{opt['wall_s']:.3f} s, {100 * floor / opt['wall_s']:.1f}% of the floor "
              f"({floor:.4f} s; directions added: {100 * added / opt['wall_s']:.1f}%)")
    print()


def section_d():
    print("## D. Manifests: the commit of each folder's binaries (environment.txt)\n")
    for root in (R1, R2):
        for folder in sorted(os.listdir(root)):
            env = os.path.join(root, folder, "environment.txt")
            if not os.path.exists(env):
                continue
            with open(env) as f:
                text = f.read()
            commit = re.search(r"^commit: (\S+)(.*)$", text, re.M)
            clean = "NOT CLEAN" if "uncommitted" in commit.group(2) else "clean"
            print(f"{root}/{folder}: {commit.group(1)[:7]}{commit.group(2)} -> {clean}")
            for before in re.findall(r"^memhc-synth-before: (.*)$", text, re.M):
                print(f"    memhc-synth-before: {before}")
    print()


def manifest_commit(folder):
    with open(os.path.join(folder, "environment.txt")) as f:
        return re.search(r"^commit: (\S+)", f.read(), re.M).group(1)


def changed(a, b, crates):
    paths = [f"crates/{c}/{p}" for c in crates for p in ("src", "benches", "Cargo.toml")]
    names = subprocess.run(["git", "diff", "--name-only", a, b, "--"] + paths, check=True,
                           capture_output=True, text=True).stdout.split()
    return names


def section_e():
    print("## E. Item a's code: the contraction bench's path, first session against second\n")
    a, b = manifest_commit(CALL1), manifest_commit(SYNTH2)
    print(f"first record (item a measured): {a[:7]} ({CALL1}); second session's build: "
          f"{b[:7]} ({SYNTH2})")
    bench = changed(a, b, ("memhc-cuda",))
    print("crates/memhc-cuda/benches/cuda.rs changed: "
          + ("yes" if "crates/memhc-cuda/benches/cuda.rs" in bench else "no"))
    names = changed(a, b, BENCH_CRATES)
    print(f"changed files of {', '.join(BENCH_CRATES)} (src, benches, Cargo.toml): {len(names)} "
          f"({sum('/src/' in n for n in names)} source files, "
          f"{sum(n.endswith('Cargo.toml') for n in names)} manifests)")
    for n in names:
        print(f"    {n}")
    binary = changed(a, b, BENCH_CRATES + BENCH_BINARY_EXTRA)
    root = subprocess.run(["git", "diff", "--name-only", a, b, "--", "Cargo.toml", "Cargo.lock"],
                          check=True, capture_output=True, text=True).stdout.split()
    print(f"the whole bench-cuda binary (adding {', '.join(BENCH_BINARY_EXTRA)}): {len(binary)} "
          f"files, and the workspace's {' and '.join(root)}")
    print()


def section_f():
    print("## F. The first session's profile of the optimal mode (N = 384, vsize 16, 4 vectors, "
          "repeat 0.5)\n")
    row = [r for r in log_rows(f"{PROFILE1}/profile-fig7-optimal.log") if r["mode"] == "optimal"][0]
    print(f"profile-fig7-optimal.log: wall_s {row['wall_s']}, hits {row['hits']}, "
          f"misses {row['misses']}")
    sweep = [r for r in log_rows(f"{PROFILE1}/synth-fig7-repeat.log")
             if r["mode"] == "optimal" and r["repeat"] == "0.5"][0]
    print(f"synth-fig7-repeat.log (the sweep of the same call, another process): optimal at "
          f"repeat 0.5, wall_s {sweep['wall_s']}")
    # Chrome-trace JSON: `ts` and `dur` in microseconds.
    trace = load_json(f"{PROFILE1}/timeline-fig7-optimal.json.gz")
    ev = sorted((e for e in trace["traceEvents"] if "ts" in e), key=lambda e: e["ts"])
    run = [e for e in ev if e["name"] != "register" and e.get("ph") != "C"]
    end = max(e["ts"] + e.get("dur", 0) for e in ev)
    print(f"timeline: the run (first event after the nodes' registration to the last): "
          f"{(end - run[0]['ts']) / 1e6:.3f} s")
    reads = [e for e in ev if e["name"] == "host_read"]
    print(f"timeline: read-backs (host_read events): {len(reads)}, of "
          f"{len({e['args']['object'] for e in reads})} distinct objects, "
          f"{reads[0]['args']['bytes'] / 2**20:.0f} MiB each")
    gaps = [(b["ts"] - a["ts"]) / 1e3 for a, b in zip(reads, reads[1:])]
    print(f"timeline: time between consecutive read-backs: median {statistics.median(gaps):.1f} ms "
          f"(min {min(gaps):.1f}, max {max(gaps):.1f})")
    first_sync = max(e["ts"] for e in ev if e["name"] == "sync" and e["ts"] <= reads[0]["ts"])
    print(f"timeline: from the first read-back's sync to the run's end: "
          f"{(end - first_sync) / 1e6:.2f} s")
    gemm = [e["dur"] / 1e3 for e in ev if e["name"] == "gemm"]
    print(f"timeline: {len(gemm)} GEMM spans, {sum(gemm):.0f} ms in all, median "
          f"{statistics.median(gemm):.2f} ms (min {min(gemm):.2f}, max {max(gemm):.2f})")
    print()


def section_g():
    print("## G. mimalloc against glibc's malloc (N = 384, vsize 16, 4 vectors, repeat 0.5), "
          "glibc's wall time over mimalloc's\n")
    glibc = log_rows(f"{CPU2}/compare-memhc-synth.log")
    mim = log_rows(f"{CPU2}/compare-memhc-synth-mimalloc.log")
    ratios = defaultdict(list)
    for g, m in zip(glibc, mim):
        assert g["mode"] == m["mode"]
        ratios[g["mode"]].append(float(g["wall_s"]) / float(m["wall_s"]))
        print(f"compare (median of 2), {g['mode']}: {g['wall_s']} / {m['wall_s']} = "
              f"{ratios[g['mode']][-1]:.3f}x")
    # compare-alternating.log: blocks `== memhc-synth-mimalloc`, `== memhc-synth`, twice; each
    # glibc block against the mimalloc block just before it.
    blocks, name = [], None
    with open(f"{ALT2}/compare-alternating.log") as f:
        text = f.read()
    for part in text.split("== ")[1:]:
        name, body = part.split("\n", 1)
        blocks.append((name.strip(), body))
    rows = {}
    pair = 0
    for name, body in blocks:
        lines = body.splitlines()
        hdr = lines[0].split()
        rows[name] = {dict(zip(hdr, l.split()))["mode"]: dict(zip(hdr, l.split()))
                      for l in lines[1:] if len(l.split()) == len(hdr)}
        if name == "memhc-synth":
            pair += 1
            for mode in ("optimal", "naive"):
                g, m = rows["memhc-synth"][mode], rows["memhc-synth-mimalloc"][mode]
                ratios[mode].append(float(g["wall_s"]) / float(m["wall_s"]))
                print(f"alternating pair {pair} (median of 3), {mode}: {g['wall_s']} / "
                      f"{m['wall_s']} = {ratios[mode][-1]:.3f}x")
    for mode in ("optimal", "naive"):
        print(f"{mode}: {min(ratios[mode]):.2f}-{max(ratios[mode]):.2f}x")
    print()


def main():
    print("# Audit of the H100 write-ups: figures from the raw files (scripts/h100-audit.py)\n")
    rates = section_a()
    points = section_b(rates)
    section_c(points)
    section_d()
    section_e()
    section_f()
    section_g()


if __name__ == "__main__":
    main()
