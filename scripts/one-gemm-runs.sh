#!/usr/bin/env bash
# Runs the one_gemm bench (benches/one_gemm.rs, issue 30 phase 1) ROUNDS times, one whole run
# of its three lines per N after the other (so the lines are interleaved round by round), and
# keeps each round's raw output: the bench's stdout and criterion's files (benchmark.json,
# estimates.json, sample.json of every line) under OUT/round-K/.
#
# Usage: scripts/one-gemm-runs.sh OUT [ROUNDS]   (default 6 rounds)
# Then:  scripts/one-gemm-table.py OUT
set -euo pipefail
out=${1:?usage: one-gemm-runs.sh OUT [ROUNDS]}
rounds=${2:-6}
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cargo bench -j 2 --bench one_gemm --no-run 2>&1 | tail -1
for k in $(seq 1 "$rounds"); do
  rm -rf "$target/criterion"
  cargo bench -j 2 --bench one_gemm 2>&1 | tee "$out/round-$k.txt"
  mkdir -p "$out/round-$k"
  (cd "$target/criterion" && find . -path '*/new/*.json' \
     \( -name benchmark.json -o -name estimates.json -o -name sample.json \) -print0 |
     while IFS= read -r -d '' f; do
       mkdir -p "$out/round-$k/$(dirname "$f")"
       cp "$f" "$out/round-$k/$f"
     done)
done
