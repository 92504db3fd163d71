#!/bin/sh
# The runs behind docs/results/2026-11-28-pinned-pool.md: the machine, then the host_cost bench
# of two builds, one round per invocation, six rounds interleaved (before first in even rounds,
# after first in odd), then the page's tables from the raw output.
#   before: main at $BASE (git archive of that commit in $BASE_DIR, its own target directory)
#   after:  this checkout
# Usage (from the repository root): BASE=431a60b docs/results/2026-11-28-pinned-pool/run.sh
set -e
out=docs/results/2026-11-28-pinned-pool
base=${BASE:-431a60b}
base_dir=${BASE_DIR:-/tmp/pp/base}
base_target=${BASE_TARGET:-/work/target-pinned-pool-base}
if [ ! -d "$base_dir" ]; then
    mkdir -p "$base_dir" && git archive "$base" | tar -x -C "$base_dir"
fi
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; grep MemTotal /proc/meminfo;
  cat /sys/kernel/mm/transparent_hugepage/enabled; uptime; echo "before: $base"; echo "after: $(git rev-parse HEAD) + working tree"; } > $out/machine.txt
(cd "$base_dir" && CARGO_TARGET_DIR=$base_target cargo bench -q -p memhc-gpu --bench host_cost --no-run)
cargo bench -q -p memhc-gpu --bench host_cost --no-run
before() { (cd "$base_dir" && CARGO_TARGET_DIR=$base_target MEMHC_HOST_COST_ROUNDS=1 cargo bench -q -p memhc-gpu --bench host_cost) > $out/before-r$1.txt; }
after() { MEMHC_HOST_COST_ROUNDS=1 cargo bench -q -p memhc-gpu --bench host_cost > $out/after-r$1.txt; }
for k in 0 1 2 3 4 5; do
    if [ $((k % 2)) -eq 0 ]; then before $k; after $k; else after $k; before $k; fi
    uptime >> $out/machine.txt
done
python3 scripts/pinned-pool-table.py $out > $out/tables.md
