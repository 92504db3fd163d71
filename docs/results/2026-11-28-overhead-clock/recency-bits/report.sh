#!/bin/sh
# Prints every number of README.md from the raw files beside it.
d=$(dirname "$0")
scripts/overhead-growth.sh --summary "$d/rounds.log"
echo
scripts/overhead-paired.py "$d/rounds.log" head bits
echo
python3 - "$d/load.txt" <<'PY'
import statistics, sys
v = [float(l.split()[1]) for l in open(sys.argv[1]) if l.strip()]
print(f"load average (1 min) while the rounds ran: min {min(v):.2f}, median {statistics.median(v):.2f}, max {max(v):.2f} ({len(v)} samples, every 30 s)")
PY
