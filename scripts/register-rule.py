#!/usr/bin/env python3
"""Fits the `register` bench (memhc-cuda): staged against registered copies of a pageable
buffer, and where registration starts to pay.

    scripts/register-rule.py CRITERION_DIR

For each buffer size B it reads the criterion medians of `staged-xK` and `registered-xK`
(K = 1, 4, 16 copies of the same buffer; registered: `cuMemHostRegister` once, then K DMAs,
then unregistered) from CRITERION_DIR/register_bytes=B/, fits time = fixed + K * per_copy to
each by least squares, and prints both fits, the copies at which the two lines cross (the
break-even), and the measured ratio registered / staged at each K.
"""
import glob
import json
import os
import re
import sys


def median_ms(folder):
    with open(os.path.join(folder, "new", "estimates.json")) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


def fit(points):
    n = len(points)
    mx = sum(k for k, _ in points) / n
    my = sum(t for _, t in points) / n
    sxx = sum((k - mx) ** 2 for k, _ in points)
    per = sum((k - mx) * (t - my) for k, t in points) / sxx
    return my - per * mx, per


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: register-rule.py CRITERION_DIR")
    rows = []
    for d in glob.glob(os.path.join(sys.argv[1], "register_bytes=*")):
        size = int(re.search(r"bytes=(\d+)", d).group(1))
        series = {}
        for kind in ("staged", "registered"):
            pts = []
            for sub in glob.glob(os.path.join(d, f"{kind}-x*")):
                k = int(sub.rsplit("-x", 1)[1])
                pts.append((k, median_ms(sub)))
            series[kind] = sorted(pts)
        rows.append((size, series))
    print("| buffer | staged: fixed + per copy | registered: fixed + per copy | per copy, staged / registered | break-even (copies) | registered / staged at 1, 4, 16 copies |")
    print("|---|---|---|---|---|---|")
    for size, s in sorted(rows):
        fs, ps = fit(s["staged"])
        fr, pr = fit(s["registered"])
        even = (fr - fs) / (ps - pr) if ps > pr else float("inf")
        ratios = ", ".join(f"{r / t:.2f}" for (_, t), (_, r) in zip(s["staged"], s["registered"]))
        rate = lambda per: f"{size / (per * 1e-3) / 1e9:.1f} GB/s"
        print(f"| {size / 2**20:g} MiB | {fs:.3f} + {ps:.3f} ms | {fr:.3f} + {pr:.3f} ms | {rate(ps)} / {rate(pr)} | {even:.1f} | {ratios} |")


if __name__ == "__main__":
    main()
