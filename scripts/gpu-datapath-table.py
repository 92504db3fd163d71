#!/usr/bin/env python3
"""Issue 27, item 2: the data path on a GPU as a fraction of the card's floor, beside the model.

    python3 scripts/gpu-datapath-table.py GPU_DIR... [--model MODEL_DIR] [--rates RATES_DIR]

The GPU_DIRs hold memhc-synth's records of `scripts/gpu-run.sh datapath datapath-vsize`
(datapath-*.json; the `cpu` stage's records have their own table, scripts/per-contraction.py);
MODEL_DIR the records of the same commands with `--backend model` (`BACKEND=model
scripts/gpu-run.sh datapath ...` on any machine); RATES_DIR (default: the first GPU_DIR) the
`limits.json` and `criterion/` of the same session's `limits` and `contraction` stages.

For each record: the schedule (naive, optimal: pageable host memory; direct: `--host-memory
pinned --prefetch 12`), wall time, the card's floor

    floor = max(flops / zgemm rate at N, bytes in / bus, bytes out / bus)

and floor / wall, the fraction of the floor a run reaches. The zgemm rate at N is the faster of
the contraction bench's `zgemm-one` (one product of order 4N: what a tiled meson contraction
issues) and `zgemm-strided` (64 batched products of order N) at that N, measured in the same
session; the bus is the slower of the pinned host-to-device and device-to-host copies of 1 GiB
(`limits.json`), each direction counted on its own (the bus is full duplex). The bytes are the
fewest any record at the same point moved (any policy, any schedule; each direction on its
own): where nothing is evicted, every distinct input in once and every result out once; where
the budget binds, the least any schedule needed under it. Every schedule at a point is held to
the same floor. Beside each: the host CPU time per contraction (`cpu_s`, the whole process)
over the device's compute time per contraction (`device_compute_s`, timing events), and the
model's makespan and fraction for the same command. No third-party packages are needed.
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


def point(r):
    return (r["tensor_size"], r["vector_size"], r["vectors"], r["repeat"], r.get("oversub") or 0.0)


def key(r):
    return point(r) + (r["policy"],)


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


def rates_line(zgemm, bus):
    """The one-line statement of the rates a floor is computed from."""
    return (f"bus {bus / 1e9:.1f} GB/s; zgemm rate (TFLOPS) by N: "
            + ", ".join(f"{n}: {zgemm[n] / 1e12:.1f}" for n in sorted(zgemm)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("gpu", nargs="+")
    p.add_argument("--model")
    p.add_argument("--rates")
    a = p.parse_args()
    zgemm, bus = rates(a.rates or a.gpu[0])
    gpu = [r for d in a.gpu for r in load_records(d, "datapath-")]
    model = {}
    if a.model:
        for r in load_records(a.model, "datapath-"):
            model[(key(r), schedule(r))] = r
    if not gpu:
        sys.exit("gpu-datapath-table: no datapath-*.json records in " + ", ".join(a.gpu))
    print(rates_line(zgemm, bus))
    least = {}
    for r in gpu:
        h2d, d2h = least.get(point(r), (r["h2d_bytes"], r["d2h_bytes"]))
        least[point(r)] = (min(h2d, r["h2d_bytes"]), min(d2h, r["d2h_bytes"]))
    print()
    print("| N | vector size | vectors | repeat | oversub | policy | schedule | wall ms | floor ms "
          "| floor term | fraction of floor | host CPU / device compute | model ms "
          "| model fraction | wall / model |")
    print("|" + "---|" * 15)
    groups = {}
    seen = set()
    for r in sorted(gpu, key=lambda r: (key(r), schedule(r))):
        k, s = key(r), schedule(r)
        if (k, s) in seen:
            continue
        seen.add((k, s))
        n = r["tensor_size"]
        if n not in zgemm:
            continue
        h2d, d2h = least[point(r)]
        terms = {"compute": r["flops"] / zgemm[n], "in": h2d / bus, "out": d2h / bus}
        term = max(terms, key=terms.get)
        floor = terms[term]
        frac = floor / r["wall_s"]
        group = (s, n, "Table 1 (oversubscribed)" if r.get("oversub") else "Fig. 7 (fitting)")
        cpu, dev = r.get("cpu_s"), r.get("device_compute_s")
        ratio = f"{cpu / dev:.2f}" if cpu is not None and dev else "-"
        groups.setdefault(group, {"frac": [], "model_frac": [], "ratio": []})["frac"].append(frac)
        m = model.get((k, s))
        if m and m.get("model_makespan_s"):
            ms = m["model_makespan_s"]
            groups[group]["model_frac"].append(m["model_floor_s"] / ms)
            groups[group]["ratio"].append(r["wall_s"] / ms)
            mcol = (f"{1e3 * ms:.2f} | {m['model_floor_s'] / ms:.3f} | "
                    f"{r['wall_s'] / ms:.2f}")
        else:
            mcol = "- | - | -"
        print(f"| {n} | {r['vector_size']} | {r['vectors']} | {r['repeat']} | "
              f"{r.get('oversub') or 0} | {r['policy']} | {s} | {1e3 * r['wall_s']:.2f} | "
              f"{1e3 * floor:.2f} | {term} | {frac:.3f} | {ratio} | {mcol} |")
    walls = {}
    for r in gpu:
        walls.setdefault(key(r), {}).setdefault(schedule(r), r["wall_s"])
    speedups = [w["optimal"] / w["direct"] for w in walls.values() if "optimal" in w and "direct" in w]
    if speedups:
        print(f"\ndirect against optimal (pageable), wall time ratio over {len(speedups)} points: "
              f"median {statistics.median(speedups):.1f}x, {min(speedups):.1f}-{max(speedups):.1f}x")
    print()
    print("| schedule | points | median fraction of floor | min | max |")
    print("|---|---|---|---|---|")
    fractions = {}
    for (s, _, _), g in sorted(groups.items()):
        fractions.setdefault(s, []).extend(g["frac"])
    for s in sorted(fractions):
        v = fractions[s]
        print(f"| {s} | {len(v)} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} |")
    print()
    print("| schedule | N | points | fraction of floor | model fraction | wall / model |")
    print("|---|---|---|---|---|---|")

    def span(v):
        return f"{min(v):.3f}-{max(v):.3f}" if v else "-"

    for (s, n, where), g in sorted(groups.items()):
        print(f"| {s} | {n}, {where} | {len(g['frac'])} | {span(g['frac'])} | "
              f"{span(g['model_frac'])} | {span(g['ratio'])} |")


if __name__ == "__main__":
    main()
