#!/usr/bin/env python3
"""Prints, from the event logs of the runs before the fix (before/timeline-*.json.gz: `memhc run
... --host-memory pinned --prefetch 12 --timeline`, Chrome-trace JSON whose runtime instants
carry the event log), every eviction of the run: the launch (queue index) it happened in,
whether a prefetch made it (on the copy stream) or a launch, the victim, the object it made
room for, and what happened to the victim next (released unused, or brought in again)."""
import gzip
import json
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent


def evictions(path):
    d = json.load(gzip.open(path))
    copy = d["otherData"]["copy_stream"]
    ev = [e for e in d["traceEvents"] if e.get("cat") == "runtime" and e.get("ph") == "i"]
    for i, e in enumerate(ev):
        if e["name"] != "evict":
            continue
        a = e["args"]
        victim = a["object"]
        served = next((f["args"].get("object") for f in ev[i + 1:i + 4]
                       if f["name"] in ("handover", "alloc")), None)
        fate = "held to the end"
        for f in ev[i + 1:]:
            if f["args"].get("object") == victim and f["name"] in ("miss", "prefetch",
                                                                    "release", "hit"):
                fate = ("released unused" if f["name"] == "release"
                        else f"{f['name']} again at launch {f['args']['queue']}")
                break
        yield a["queue"], ("prefetch" if a.get("stream") == copy else "launch"), victim, served, fate


def main():
    for name in ["a1_rhopi-128", "f0d2-256"]:
        rows = list(evictions(HERE / "before" / f"timeline-{name}-1-pinned.json.gz"))
        print(f"## {name}, budget = plan peak, pinned, prefetch 12, before the fix\n")
        print("| launch | evicted by | victim | for | victim next |")
        print("|---|---|---|---|---|")
        for q, by, victim, served, fate in rows:
            print(f"| {q} | {by} | #{victim} | #{served} | {fate} |")
        kinds = Counter((by, "released unused" if fate == "released unused"
                         else "brought in again" if " again " in fate else fate)
                        for _, by, _, _, fate in rows)
        print(f"\n{len(rows)} evictions: " + "; ".join(
            f"{n} made by a {by}, the victim {fate}" for (by, fate), n in sorted(kinds.items()))
            + "\n")


if __name__ == "__main__":
    main()
