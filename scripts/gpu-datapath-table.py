#!/usr/bin/env python3
"""Issue 27, item 2: the data path on a GPU as a fraction of the card's floor, beside the model.

    python3 scripts/gpu-datapath-table.py GPU_DIR [--model MODEL_DIR] [--rates RATES_DIR]

GPU_DIR holds memhc-synth's records of `scripts/gpu-run.sh datapath datapath-vsize cpu`
(datapath-*.json, cpu*.json); MODEL_DIR the records of the same commands with
`--backend model` (`BACKEND=model scripts/gpu-run.sh datapath ...` on any machine); RATES_DIR (default GPU_DIR) the `limits.json`
and `criterion/` of the same session's `limits` and `contraction` stages.

For each record: the schedule (naive, optimal: pageable host memory; direct: `--host-memory
pinned --prefetch 12`), wall time, the card's floor

    floor = max(flops / zgemm rate at N, bytes in / bus, bytes out / bus)

and wall / floor as a fraction. The zgemm rate at N is the faster of the contraction bench's
`zgemm-one` (one product of order 4N: what a tiled meson contraction issues) and
`zgemm-strided` (64 batched products of order N) at that N, measured in the same session; the
bus is the slower of the pinned host-to-device and device-to-host copies of 1 GiB
(`limits.json`), each direction counted on its own (the bus is full duplex). The bytes are the
optimal pageable record's at the same point and policy (every distinct input in once and every
result out once where nothing is evicted; what the budget forces where it binds), so every
schedule at a point is held to the same floor. Beside each: the host CPU time per contraction
(`cpu_s`, the whole process) over the device's compute time per contraction
(`device_compute_s`, timing events), and the model's makespan and fraction for the same
command. No third-party packages are needed.
"""
import argparse
import glob
import json
import os
import statistics
import sys


def load_records(folder, prefix):
    out = []
    for path in sorted(glob.glob(os.path.join(folder, prefix + "*.json"))):
        with open(path) as f:
            data = json.load(f)
        if isinstance(data, list):
            out.extend(data)
    return out


def schedule(r):
    if r.get("pinned"):
        return "direct"
    return r["mode"]


def key(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], r["repeat"], r.get("oversub") or 0.0,
            r["policy"])


def rates(folder):
    """zgemm GFLOPS per N (faster of zgemm-one and zgemm-strided) and the bus in bytes/s."""
    with open(os.path.join(folder, "limits.json")) as f:
        limits = json.load(f)
    bw = limits["bandwidth_gb_s"]
    bus = 1e9 * min(bw["h2d 1024 MiB"], bw["d2h 1024 MiB"])
    zgemm = {}
    for est in glob.glob(os.path.join(folder, "criterion", "contraction_N=*", "*", "new",
                                      "estimates.json")):
        fdir = os.path.dirname(os.path.dirname(est))
        name = os.path.basename(fdir)
        if name not in ("zgemm-one", "zgemm-strided"):
            continue
        with open(os.path.join(os.path.dirname(est), "benchmark.json")) as f:
            bench = json.load(f)
        with open(est) as f:
            median_ns = json.load(f)["median"]["point_estimate"]
        n = int(bench["group_id"].split("N=")[1])
        rate = bench["throughput"]["Elements"] / (median_ns * 1e-9)
        zgemm[n] = max(zgemm.get(n, 0.0), rate)
    return zgemm, bus


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpu")
    p.add_argument("--model")
    p.add_argument("--rates")
    a = p.parse_args()
    zgemm, bus = rates(a.rates or a.gpu)
    gpu = load_records(a.gpu, "datapath-") + load_records(a.gpu, "cpu")
    model = {}
    if a.model:
        for r in load_records(a.model, "datapath-") + load_records(a.model, "cpu"):
            model[(key(r), schedule(r))] = r
    if not gpu:
        sys.exit("gpu-datapath-table: no datapath-*.json or cpu*.json records in " + a.gpu)
    print(f"bus {bus / 1e9:.1f} GB/s; zgemm rate (TFLOPS) by N: "
          + ", ".join(f"{n}: {zgemm[n] / 1e12:.1f}" for n in sorted(zgemm)))
    base = {key(r): r for r in gpu if schedule(r) == "optimal"}
    print()
    print("| N | vector size | vectors | repeat | oversub | policy | schedule | wall ms | floor ms "
          "| floor term | fraction of floor | host CPU / device compute | model ms "
          "| model fraction | wall / model |")
    print("|" + "---|" * 15)
    fractions = {}
    seen = set()
    for r in sorted(gpu, key=lambda r: (key(r), schedule(r))):
        k, s = key(r), schedule(r)
        if (k, s) in seen:
            continue
        seen.add((k, s))
        n = r["tensor_size"]
        b = base.get(k, r)
        if n not in zgemm:
            continue
        terms = {"compute": r["flops"] / zgemm[n], "in": b["h2d_bytes"] / bus,
                 "out": b["d2h_bytes"] / bus}
        term = max(terms, key=terms.get)
        floor = terms[term]
        frac = floor / r["wall_s"]
        fractions.setdefault(s, []).append(frac)
        cpu, dev = r.get("cpu_s"), r.get("device_compute_s")
        ratio = f"{cpu / dev:.2f}" if cpu is not None and dev else "-"
        m = model.get((k, s))
        if m and m.get("model_makespan_s"):
            ms = m["model_makespan_s"]
            mcol = (f"{1e3 * ms:.2f} | {m['model_floor_s'] / ms:.3f} | "
                    f"{r['wall_s'] / ms:.2f}")
        else:
            mcol = "- | - | -"
        print(f"| {n} | {r['vector_size']} | {r['vectors']} | {r['repeat']} | "
              f"{r.get('oversub') or 0} | {r['policy']} | {s} | {1e3 * r['wall_s']:.2f} | "
              f"{1e3 * floor:.2f} | {term} | {frac:.3f} | {ratio} | {mcol} |")
    print()
    print("| schedule | points | median fraction of floor | min | max |")
    print("|---|---|---|---|---|")
    for s in sorted(fractions):
        v = fractions[s]
        print(f"| {s} | {len(v)} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} |")


if __name__ == "__main__":
    main()
