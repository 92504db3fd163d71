#!/bin/sh
# Every number of the quieter rerun (section "Quieter, and after the merges" of
# docs/results/2026-11-28-overhead-clock.md), from the raw files here.
set -e
cd "$(dirname "$0")/../../../.."
d=docs/results/2026-11-28-overhead-clock/quiet
scripts/overhead-growth.sh --summary $d/rounds.log
echo
python3 scripts/overhead-paired.py $d/rounds.log thread head
echo
python3 - $d/load.txt <<'PY'
import statistics, sys
loads = [float(l.split()[1]) for l in open(sys.argv[1]) if l.strip()]
print(f"load average (1 min) while the rounds ran: min {min(loads):.2f}, median "
      f"{statistics.median(loads):.2f}, max {max(loads):.2f} ({len(loads)} samples, every 30 s)")
PY
echo
echo "lazy-rounds.log (four rounds, 'head' against 'lazy': HEAD with the queue order's batches made one at a time, not kept):"
scripts/overhead-growth.sh --summary $d/lazy-rounds.log
python3 scripts/overhead-paired.py $d/lazy-rounds.log head lazy
