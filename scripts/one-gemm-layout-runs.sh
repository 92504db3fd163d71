#!/usr/bin/env bash
# Runs two builds of the one_gemm bench (benches/one_gemm.rs) ROUNDS times, alternating (odd
# rounds: BEFORE then AFTER; even rounds: AFTER then BEFORE), and keeps each run's raw output:
# the bench's stdout as OUT/round-K-<build>.txt and criterion's files (benchmark.json,
# estimates.json, sample.json of every line) under OUT/round-K/<build>/. Issue 30: the tiled
# layout (AFTER) against the commit before it (BEFORE), the same bench source in both.
#
# Usage: scripts/one-gemm-layout-runs.sh OUT ROUNDS BEFORE_BIN AFTER_BIN [FIRST]
#   (the bench binaries, built with `cargo bench --bench one_gemm --no-run` in each checkout;
#   FIRST, default 1: the number of the first round, to add rounds to an earlier set)
# Then:  scripts/one-gemm-layout-table.py OUT
set -euo pipefail
out=${1:?usage: one-gemm-layout-runs.sh OUT ROUNDS BEFORE_BIN AFTER_BIN}
rounds=${2:?rounds}
declare -A bin=([before]=${3:?before binary} [after]=${4:?after binary})
first=${5:-1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
for k in $(seq "$first" $((first + rounds - 1))); do
  if (( k % 2 )); then order=(before after); else order=(after before); fi
  for build in "${order[@]}"; do
    rm -rf "$home/criterion"
    CRITERION_HOME="$home/criterion" "${bin[$build]}" --bench 2>&1 | tee "$out/round-$k-$build.txt"
    (cd "$home/criterion" && find . -path '*/new/*.json' \
       \( -name benchmark.json -o -name estimates.json -o -name sample.json \) -print0 |
       while IFS= read -r -d '' f; do
         mkdir -p "$out/round-$k/$build/$(dirname "$f")"
         cp "$f" "$out/round-$k/$build/$f"
       done)
  done
done
