#!/usr/bin/env python3
"""Per-contraction times from memhc-synth's JSON records (issue 10, item e).

    python3 scripts/per-contraction.py RECORDS.json

For each record: wall time, the host's CPU time (`cpu_s`: the whole process over the run,
staging threads included) and the device's compute time (`device_compute_s`: GEMM and GEAM
batches, from the backend's timing events), each divided by the run's contractions
(vectors x vector size). No third-party packages are needed.
"""
import json
import sys


def per(value, n):
    return "-" if value is None else f"{1e6 * value / n:.0f} us"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: per-contraction.py RECORDS.json")
    with open(sys.argv[1]) as f:
        records = json.load(f)
    print("| N | policy / mode | contractions | wall | host CPU | device compute | CPU / compute |")
    print("|---|---|---|---|---|---|---|")
    for r in records:
        n = r["vectors"] * r["vector_size"]
        cpu, dev = r.get("cpu_s"), r.get("device_compute_s")
        ratio = f"{cpu / dev:.2f}" if cpu is not None and dev else "-"
        print(f"| {r['tensor_size']} | {r['policy']} / {r['mode']} | {n} | {per(r['wall_s'], n)} "
              f"| {per(cpu, n)} | {per(dev, n)} | {ratio} |")


if __name__ == "__main__":
    main()
