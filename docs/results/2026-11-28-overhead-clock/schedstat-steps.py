#!/usr/bin/env python3
"""How /proc/thread-self/schedstat's first field (the thread's run time, ns) moves while the
thread runs: read it in a busy loop for 0.2 s and print each change. On the machine of
docs/results/2026-11-28-overhead-clock.md it moves in steps of about 4 ms (the scheduler's
tick), with a few short steps where the thread was switched out and in again.

Usage: docs/results/2026-11-28-overhead-clock/schedstat-steps.py > schedstat-steps.txt
"""
import statistics
import time

t0 = time.perf_counter()
prev = None
steps = []
while time.perf_counter() - t0 < 0.2:
    with open("/proc/thread-self/schedstat") as f:
        value = int(f.read().split()[0])
    if prev is not None and value != prev:
        steps.append((value - prev) / 1e6)
    prev = value
print(f"{len(steps)} changes in 0.2 s of a busy thread; median step {statistics.median(steps):.3f} ms")
print("steps, ms: " + " ".join(f"{s:.3f}" for s in steps))
