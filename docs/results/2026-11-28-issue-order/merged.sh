#!/usr/bin/env bash
# The model points of runs.sh again, both orders, at the merge of the dependency order with
# prefetch-budget (prefetch evicts nothing: docs/results/2026-11-28-prefetch-budget.md), into
# $OUT/{queue,dependency} (default $D/merged); then the per-point table (tables.py) into
# $OUT/tables.md. docs/results/2026-11-28-model-floor/run.sh runs it into its own folder.
#   SYNTH=target/release/memhc-synth docs/results/2026-11-28-issue-order/merged.sh
set -euo pipefail
synth=${SYNTH:-target/release/memhc-synth}
D=docs/results/2026-11-28-issue-order
out=${OUT:-$D/merged}
direct="--host-memory pinned --prefetch 12"
mkdir -p "$out"
git rev-parse HEAD > "$out/commit.txt"
for order in queue dependency; do
    o="$out/$order"
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
python3 "$D/tables.py" "$out" > "$out/tables.md"
