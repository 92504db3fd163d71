#!/usr/bin/env python3
"""What the `check` stage of scripts/gpu-run.sh found, from its raw logs (issue 27, item 1).

    python3 scripts/gpu-check-summary.py RESULTS_DIR [HOST_DIR]

Reads the step logs of one gpu-run.sh folder and prints, as markdown: each test binary's
`test result` line and whether anything printed SKIPPED; each `memhc-synth --verify`
configuration's verdict (the `verified` column of every record line); each compute-sanitizer
run's summary lines; each `memhc run --verify` run's verdict and its table (policy, mode,
bytes, hits, misses, evictions, BLAS calls); and every step's exit status. With HOST_DIR (the
same `memhc run` commands on the host backend, their `--json` records under the same names),
it also compares every count of each GPU run's record with the host's. No third-party
packages are needed. The check's steps share the GPU and the host's cores, so nothing in its
logs is a timing.
"""
import glob
import json
import os
import re
import sys


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def status(text):
    m = re.search(r"^exit status: (\d+)", text, re.M)
    return int(m.group(1)) if m else None


# The counts of a `memhc run` record that do not depend on time (every stat but `d2h_copies`
# and `h2d_copies`, which count DMA calls and depend on how the backend splits a copy).
COUNTS = ("h2d_bytes", "d2h_bytes", "hits", "misses", "evictions", "writebacks", "gemm_calls",
          "flops", "allocations", "pool_reuses", "handovers", "peak_device_bytes")


def compare(gpu_dir, host_dir):
    """Prints, per corr-*.json record, whether its counts equal the host backend's."""
    print("\n### Counts: the GPU's `memhc run` records against the host backend's\n")
    print("| run | records | counts compared | differing |")
    print("|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(gpu_dir, "corr-*.json"))):
        name = os.path.basename(path)
        host_path = os.path.join(host_dir, name)
        if not os.path.exists(host_path):
            print(f"| {name[5:-5]} | - | no host record | - |")
            continue
        with open(path) as f:
            gpu = json.load(f)
        with open(host_path) as f:
            host = json.load(f)
        differing, compared = [], 0
        for g, h in zip(gpu, host):
            for c in COUNTS:
                compared += 1
                if g["stats"].get(c) != h["stats"].get(c):
                    differing.append(f"{g['policy']}/{g['mode']} {c}: {g['stats'].get(c)} vs "
                                     f"{h['stats'].get(c)}")
        n = f"{len(gpu)}" if len(gpu) == len(host) else f"{len(gpu)} vs {len(host)}"
        print(f"| {name[5:-5]} | {n} | {compared} | {'; '.join(differing) or 'none'} |")


def section(logs, title, columns, prefix):
    """Prints a section's title and table header; yields its steps' (name, log) pairs, the name
    without `prefix`."""
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for name, text in logs.items():
        if name.startswith(prefix):
            yield name[len(prefix):], text


def main():
    if len(sys.argv) not in (2, 3) or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: gpu-check-summary.py RESULTS_DIR [HOST_DIR]")
    d = sys.argv[1]
    logs = {os.path.basename(p)[:-4]: read(p) for p in sorted(glob.glob(os.path.join(d, "*.log")))}

    for name, text in section(logs, "Tests", ("binary", "result", "SKIPPED printed", "exit"),
                              "test-"):
        results = re.findall(r"^test result: (.*?)(?:; finished.*)?$", text, re.M)
        print(f"| {name} | {'; '.join(results) or '-'} | {'yes' if 'SKIPPED' in text else 'no'} "
              f"| {status(text)} |")

    total = ok = 0
    for name, text in section(logs, "memhc-synth --verify",
                              ("configuration", "records", "verified yes", "exit"), "verify-"):
        header = next((line.split() for line in text.splitlines() if line.startswith("policy")), [])
        col = header.index("verified") if "verified" in header else None
        rows = [line.split() for line in text.splitlines()
                if header and line.split()[:1] and line.split()[0] in ("lru", "pp-lru", "belady")
                and len(line.split()) == len(header)]
        yes = sum(1 for r in rows if col is not None and r[col] == "yes")
        total += 1
        ok += int(bool(rows) and yes == len(rows) and status(text) == 0)
        print(f"| {name} | {len(rows)} | {yes} | {status(text)} |")
    print(f"\n{ok} of {total} configurations: every record verified, exit status 0.")

    for name, text in section(logs, "compute-sanitizer", ("run", "summary", "exit"), "sanitize-"):
        summary = re.findall(r"^========= (\w+ SUMMARY: .*)$", text, re.M)
        print(f"| {name} | {'; '.join(summary) or '-'} | {status(text)} |")

    columns = ("run", "policy", "mode", "h2d bytes", "d2h bytes", "hits", "misses", "evictions",
               "BLAS calls", "verified", "exit")
    for name, text in section(logs, "memhc run --verify (correlator files)", columns, "corr-"):
        verified = "yes" if "verified against the dense reference" in text else "no"
        for line in text.splitlines():
            f = line.split()
            if len(f) == 9 and f[0] in ("lru", "pp-lru", "belady") and f[1] in (
                    "naive", "reorg", "reorg-sync", "optimal"):
                print(f"| {name} | {f[0]} | {f[1]} | {f[3]} | {f[4]} | {f[5]} | {f[6]} | {f[7]} "
                      f"| {f[8]} | {verified} | {status(text)} |")

    if len(sys.argv) > 2:
        compare(d, sys.argv[2])
    failed = [n for n, t in logs.items() if status(t) not in (0, None)]
    print(f"\n{len(logs)} step logs; exit status other than 0: {', '.join(failed) or 'none'}.")


if __name__ == "__main__":
    main()
