#!/usr/bin/env bash
# The H100 records' configurations (docs/results/2026-11-26-h100-2.md) on the modelled H100:
# `memhc-synth --backend model`, the same flags (unified memory left out: the model has no
# managed memory). Writes JSON records and timelines into OUT.
#
#   SYNTH=target/release/memhc-synth OUT=docs/results/2026-11-27-model scripts/model-runs.sh
set -euo pipefail
SYNTH=${SYNTH:-target/release/memhc-synth}
OUT=${OUT:-docs/results/2026-11-27-model}
mkdir -p "$OUT"
run() {
    local name=$1
    shift
    echo "== $name: memhc-synth --backend model $*" | tee -a "$OUT/commands.txt"
    local t0=$SECONDS
    "$SYNTH" --backend model "$@" > "$OUT/$name.log" 2>&1
    echo "   ($((SECONDS - t0)) s)" | tee -a "$OUT/commands.txt"
}
run synth-fig7-repeat --vector-size 16 --vectors 8 --sweep tensor-size=384,192 \
    --sweep repeat=0,0.125,0.25,0.5,0.75,1 --mode optimal,naive --runs 1 \
    --json "$OUT/synth-fig7-repeat.json"
run synth-fig7-vsize --vectors 8 --repeat 1 --sweep tensor-size=384,192 \
    --sweep vector-size=1,2,4,8,16,32 --mode optimal,naive --runs 1 \
    --json "$OUT/synth-fig7-vsize.json"
run synth-table1 --tensor-size 384 --vector-size 32 --vectors 8 --repeat 0.5 --oversub 0.5 \
    --policy lru,pp-lru,belady --runs 1 --json "$OUT/synth-table1.json"
run cpu --sweep tensor-size=128,384 --vector-size 16 --vectors 4 --repeat 0.5 \
    --mode optimal,naive --runs 1 --json "$OUT/cpu.json"
run compare --tensor-size 384 --vector-size 16 --vectors 4 --repeat 0.5 --mode optimal,naive \
    --runs 1 --json "$OUT/compare.json"
run compare-table1 --tensor-size 384 --vector-size 32 --vectors 4 --repeat 0.5 --oversub 0.5 \
    --policy lru,belady --mode optimal --runs 1 --json "$OUT/compare-table1.json"
for mode in optimal naive; do
    run "profile-fig7-$mode" --tensor-size 384 --vector-size 16 --vectors 8 --repeat 0.5 \
        --mode "$mode" --json "$OUT/profile-fig7-$mode.json" \
        --timeline "$OUT/timeline-fig7-$mode.json"
    run "profile-table1-$mode" --tensor-size 384 --vector-size 32 --vectors 8 --repeat 0.5 \
        --oversub 0.5 --mode "$mode" --json "$OUT/profile-table1-$mode.json" \
        --timeline "$OUT/timeline-table1-$mode.json"
done
