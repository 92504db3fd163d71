#!/usr/bin/env python3
"""Ratios from one criterion run of the memhc-cuda benches (crates/memhc-cuda/benches/cuda.rs).

    python3 scripts/gpu-ratios.py CRITERION_DIR

Reads every <group>/<function>/new/{benchmark,estimates}.json under CRITERION_DIR and prints,
as markdown, for each group: each function's median time and rate (GFLOPS, from the group's
throughput in flops), and its ratio to the group's baseline, which is measured in the same run:
`zgemm-strided` for contraction groups (rate ratio: contraction / cuBLAS), `optimal` for fig7
groups (speedup of optimal over each other mode: time ratio), `lru` for table groups, and for
register groups each `registered-xK` against `staged-xK` (time ratio: below 1, registering
pays at that size and count); and the
ratio's range from the 95% confidence intervals of the two medians (criterion's). No
third-party packages are needed.
"""
import json
import os
import sys

BASELINES = {"contraction": "zgemm-strided", "fig7": "optimal", "table1": "lru",
             "table2": "lru", "table3": "lru"}


def load(root):
    groups = {}
    for dirpath, _, files in os.walk(root):
        if os.path.basename(dirpath) != "new" or "benchmark.json" not in files:
            continue
        with open(os.path.join(dirpath, "benchmark.json")) as f:
            bench = json.load(f)
        with open(os.path.join(dirpath, "estimates.json")) as f:
            est = json.load(f)
        flops = (bench.get("throughput") or {}).get("Elements")
        ci = est["median"]["confidence_interval"]
        groups.setdefault(bench["group_id"], {})[bench["function_id"]] = {
            "median_s": est["median"]["point_estimate"] * 1e-9,
            "low_s": ci["lower_bound"] * 1e-9,
            "high_s": ci["upper_bound"] * 1e-9,
            "flops": flops,
        }
    return groups


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: gpu-ratios.py CRITERION_DIR")
    groups = load(sys.argv[1])
    if not groups:
        sys.exit("gpu-ratios: no criterion results under " + sys.argv[1])
    for gid in sorted(groups):
        funcs = groups[gid]
        base_name = BASELINES.get(gid.split("/")[0])
        base = funcs.get(base_name)
        if gid.startswith("register"):
            print(f"\n### {gid}\n")
            print("| function | median | GB/s | time / staged-xK's | range (95% intervals) |")
            print("|---|---|---|---|---|")
            for name in sorted(funcs):
                f = funcs[name]
                rate = f["flops"] / f["median_s"] / 1e9 if f["flops"] else float("nan")
                pair = funcs.get("staged-x" + name.split("-x")[-1])
                if name.startswith("registered") and pair:
                    ratio = f"{f['median_s'] / pair['median_s']:.3f}"
                    span = f"{f['low_s'] / pair['high_s']:.3f}-{f['high_s'] / pair['low_s']:.3f}"
                else:
                    ratio = span = "-"
                print(f"| {name} | {f['median_s'] * 1e3:.3f} ms | {rate:.1f} | {ratio} | {span} |")
            continue
        print(f"\n### {gid}\n")
        print("| function | median | GFLOPS | ratio to " + (base_name or "-")
              + " | ratio range (95% intervals of both medians) |")
        print("|---|---|---|---|---|")
        for name in sorted(funcs):
            f = funcs[name]
            rate = f["flops"] / f["median_s"] / 1e9 if f["flops"] else float("nan")
            if base is None:
                ratio = span = "-"
            elif gid.startswith("contraction"):
                ratio = f"{base['median_s'] / f['median_s']:.3f} (rate)"
                span = f"{base['low_s'] / f['high_s']:.3f}-{base['high_s'] / f['low_s']:.3f}"
            else:
                ratio = f"{f['median_s'] / base['median_s']:.2f}x the time of {base_name}"
                span = f"{f['low_s'] / base['high_s']:.2f}-{f['high_s'] / base['low_s']:.2f}"
            print(f"| {name} | {f['median_s'] * 1e3:.3f} ms | {rate:.1f} | {ratio} | {span} |")


if __name__ == "__main__":
    main()
