#!/usr/bin/env python3
"""The table of gpu-run.sh's `corr-paper` stage: `memhc run` on the correlator presets at the
paper's tensor sizes, per preset and configuration.

    scripts/corr-paper-table.py FOLDER

Reads FOLDER/corr-paper-PRESET-N-{pageable,pinned}.json (memhc run --json records) and prints,
per preset, each configuration's median wall time over its runs (with the range), its ratio to
the optimal mode on pageable memory, the contractions (GEMM calls), the bytes each way, the
copies back, misses and evictions, the compute time at the zgemm rate given (`--tflops`,
default 45: the H100's rate for one product of order 4N at N = 256, docs/results/2026-11-28-h100-3),
the uploads' time at the bus rate given (`--bus`, GB/s, default 55), and what is left of the
wall time after both, per GEMM call (the host's share, if the GPU's work did not overlap).
"""
import glob
import json
import os
import statistics
import sys


def main():
    args = sys.argv[1:]
    tflops, bus = 45.0, 55.0
    if "--bus" in args:
        i = args.index("--bus")
        bus = float(args[i + 1])
        del args[i:i + 2]
    if "--tflops" in args:
        i = args.index("--tflops")
        tflops = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit("usage: corr-paper-table.py FOLDER [--tflops RATE] [--bus GBPS]")
    folder = args[0]
    presets = {}
    for path in sorted(glob.glob(os.path.join(folder, "corr-paper-*-*-*.json"))):
        name = os.path.basename(path)[len("corr-paper-"):-len(".json")]
        preset, _, memory = name.rpartition("-")
        with open(path) as f:
            presets.setdefault(preset, []).extend(json.load(f))
    for preset, records in presets.items():
        base = next((r for r in records if r["mode"] == "optimal" and r["host_memory"] == "pageable"), None)
        print(f"\n#### {preset}\n")
        print("| mode | host memory | prefetch | wall (median) | range | / optimal pageable | GEMM calls | H2D | D2H | D2H copies | misses | evictions | compute at rate | uploads at bus | rest per GEMM call |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in records:
            s = r["stats"]
            runs = r.get("wall_s_runs") or [r["wall_s"]]
            ratio = f"{r['wall_s'] / base['wall_s']:.2f}" if base else "-"
            compute = s["flops"] / (tflops * 1e12)
            uploads = s["h2d_bytes"] / (bus * 1e9)
            rest = (r["wall_s"] - compute - uploads) / r["gemm_calls"]
            print(f"| {r['mode']} | {r['host_memory']} | {r['prefetch'] or 'off'} | {statistics.median(runs):.3f} s "
                  f"| {min(runs):.3f}-{max(runs):.3f} | {ratio} | {r['gemm_calls']} | {s['h2d_bytes'] / 1e9:.2f} GB "
                  f"| {s['d2h_bytes'] / 1e9:.3f} GB | {s['d2h_copies']} | {s['misses']} | {s['evictions']} | {compute * 1e3:.1f} ms | {uploads * 1e3:.1f} ms | {rest * 1e6:.0f} us |")


if __name__ == "__main__":
    main()
