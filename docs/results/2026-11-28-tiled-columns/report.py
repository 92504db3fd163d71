#!/usr/bin/env python3
"""Prints the table of 2026-11-28-tiled-columns.md from the records beside it."""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
print("| N | tiled copies | contractions | model makespan | per contraction | model floor | makespan / floor | column / component |")
print("|---|---|---|---|---|---|---|---|")
for n in (128, 384):
    base = None
    for tiled in ("component", "column"):
        with open(os.path.join(here, f"model-N{n}-{tiled}.json")) as f:
            r = json.load(f)[0]
        c = r["vectors"] * r["vector_size"]
        m, fl = r["model_makespan_s"], r["model_floor_s"]
        base = base or m
        print(f"| {n} | {tiled} | {c} | {m * 1e3:.2f} ms | {m / c * 1e6:.1f} us | {fl * 1e3:.2f} ms | {m / fl:.3f} | {m / base:.3f} |")
