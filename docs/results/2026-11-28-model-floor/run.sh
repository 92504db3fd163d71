#!/usr/bin/env bash
# The model points of docs/results/2026-11-28-issue-order (runs.sh there), both orders, with the
# compute floor at the rate each GEMM call runs at (one-product calls at the one-product table),
# into $D/{queue,dependency}; then the per-point table (that page's tables.py) into $D/tables.md.
#   SYNTH=target/release/memhc-synth docs/results/2026-11-28-model-floor/run.sh
set -euo pipefail
synth=${SYNTH:-target/release/memhc-synth}
D=docs/results/2026-11-28-model-floor
direct="--host-memory pinned --prefetch 12"
git rev-parse HEAD > "$D/commit.txt"
for order in queue dependency; do
    o="$D/$order"
    mkdir -p "$o"
    : > "$o/commands.txt"; : > "$o/log.txt"
    m() { echo "\$ memhc-synth --backend model $* --order $order" >> "$o/commands.txt"; \
          "$synth" --backend model "$@" --order "$order" >> "$o/log.txt" 2>&1; }
    m --vector-size 16 --vectors 8 --sweep tensor-size=384,192 --sweep repeat=0,0.25,0.5,0.75,1 \
      --mode optimal $direct --runs 1 --json "$o/datapath-fig7-direct.json"
    m --vectors 8 --repeat 1 --sweep tensor-size=384,192 --sweep vector-size=1,2,4,8,32 \
      --mode optimal $direct --runs 1 --json "$o/datapath-vsize-direct.json"
    m --tensor-size 384 --vector-size 32 --vectors 8 --repeat 0.5 --oversub 0.5 \
      --policy lru,pp-lru,belady --mode optimal $direct --runs 1 --json "$o/datapath-table1-direct.json"
done
python3 docs/results/2026-11-28-issue-order/tables.py "$D" > "$D/tables.md"
