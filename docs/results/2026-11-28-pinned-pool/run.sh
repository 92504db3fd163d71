#!/bin/sh
# The runs behind docs/results/2026-11-28-pinned-pool.md: the machine, then the host_cost bench
# of two builds, one round per invocation, $ROUNDS rounds (default six) interleaved (before first in even rounds,
# after first in odd), then the page's tables from the raw output.
#   before: main at 431a60b (`git archive 431a60b` built with
#           `cargo bench -p memhc-gpu --bench host_cost --no-run`), binary $BEFORE_BIN
#   after:  this branch, built the same way, binary $AFTER_BIN
# Both binaries are built first (the bench profile) and run directly, as `cargo bench` runs
# them (`<binary> --bench`, from crates/memhc-gpu).
# Usage (from the repository root): BEFORE_BIN=... AFTER_BIN=... docs/results/2026-11-28-pinned-pool/run.sh
set -e
out=$(pwd)/docs/results/2026-11-28-pinned-pool
: "${BEFORE_BIN:?the before build's host_cost binary}" "${AFTER_BIN:?the after build's host_cost binary}"
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; grep MemTotal /proc/meminfo;
  cat /sys/kernel/mm/transparent_hugepage/enabled; uptime; echo "before: 431a60b"; echo "after: $(git rev-parse HEAD)"; } > $out/machine.txt
before() { (cd crates/memhc-gpu && MEMHC_HOST_COST_ROUNDS=1 "$BEFORE_BIN" --bench) > $out/before-r$1.txt; }
after() { (cd crates/memhc-gpu && MEMHC_HOST_COST_ROUNDS=1 "$AFTER_BIN" --bench) > $out/after-r$1.txt; }
for k in $(seq 0 $((${ROUNDS:-6} - 1))); do
    if [ $((k % 2)) -eq 0 ]; then before $k; after $k; else after $k; before $k; fi
    uptime >> $out/machine.txt
done
python3 scripts/pinned-pool-table.py $out > $out/tables.md
