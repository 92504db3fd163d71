#!/usr/bin/env python3
"""Instructions (and, with --cache-sim, last-level cache misses) per contraction of the
overhead bench's case, counted by callgrind: deterministic, so two builds can be compared on a
busy machine where the criterion bench's times cannot be trusted to a few per cent.

    cargo build --release -p memhc-workload --example overhead_case   # at each commit to compare
    scripts/overhead-callgrind.py OUT_DIR NAME=BINARY... [--sizes 4000] [--case lru,fits]
                                  [--cache-sim]

Each binary runs `overhead_case SIZE POLICY FIT -` under callgrind (the dry run that finds the
peak runs the same code, so every function is called for 2 x SIZE contractions; the counts are
divided by that). The callgrind files and `callgrind_annotate --inclusive=yes` of each are kept
in OUT_DIR; the table printed gives, per build and size, the inclusive counts per contraction
of the functions named below.
"""
import argparse
import os
import re
import subprocess
import sys

FUNCTIONS = [
    ("contract_into", r"hadron::engine::Engine<B>::contract_into$"),
    ("launch", r"Runtime<B>>::launch$"),
    ("release", r"(hadron::engine::Engine<B>::release|Runtime<B>>?::release)$"),
    ("run (whole queue)", r"memhc_workload::run::run$"),
]


def annotate(path, events):
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=yes", "--threshold=100", f"--show={events}", path],
        capture_output=True, text=True, check=True).stdout
    return out


def counts(text, ncols):
    found = {}
    for line in text.splitlines():
        cols = r"(?:[\d,.]+ \([\s\d.]+%\)\s+|\.\s+)" + "{" + str(ncols) + "}"
        m = re.match(r"\s*(" + cols + r")(\S.*?)(?: \[.*\])?$", line)
        if not m:
            continue
        name = m.group(2)
        if name.startswith("=>") or ":" not in name:
            continue
        nums = re.findall(r"([\d,]+) \(|(?<!\S)\.(?!\S)", m.group(1))
        vals = [int(n.replace(",", "")) if n else 0 for n in nums]
        fn = name.split(":", 1)[1]
        for label, pat in FUNCTIONS:
            if re.search(pat, fn) and label not in found:
                found[label] = vals
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--sizes", default="4000")
    ap.add_argument("--case", default="lru,fits")
    ap.add_argument("--cache-sim", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    policy, fit = a.case.split(",")
    events = "Ir,DLmr,DLmw" if a.cache_sim else "Ir"
    ncols = 3 if a.cache_sim else 1
    head = "| build | contractions | function | instructions per contraction |"
    if a.cache_sim:
        head += " LL misses per contraction (read + write) |"
    print(head)
    print("|---|---|---|---|" + ("---|" if a.cache_sim else ""))
    for size in [int(s) for s in a.sizes.split(",")]:
        for b in a.builds:
            name, binary = b.split("=", 1)
            stem = os.path.join(a.out, f"{name}-{size}-{policy}-{fit}" + ("-cache" if a.cache_sim else ""))
            if not os.path.exists(stem + ".out"):
                cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={stem}.out"]
                if a.cache_sim:
                    cmd.append("--cache-sim=yes")
                cmd += [binary, str(size), policy, fit, "-"]
                with open(stem + ".log", "w") as log:
                    subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, check=True)
            text = annotate(stem + ".out", events)
            with open(stem + ".annotate.txt", "w") as f:
                f.write(text)
            per = 2 * size
            found = counts(text, ncols)
            for label, _ in FUNCTIONS:
                if label not in found:
                    print(f"| {name} | {size} | {label} | (inlined) |" + (" |" if a.cache_sim else ""))
                    continue
                v = found[label]
                row = f"| {name} | {size} | {label} | {v[0] / per:,.0f} |"
                if a.cache_sim:
                    row += f" {(v[1] + v[2]) / per:.2f} |"
                print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
