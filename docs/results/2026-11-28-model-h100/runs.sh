#!/usr/bin/env bash
# The direct data path's commands of the H100 session 2026-11-28 (scripts/gpu-run.sh, stages
# datapath, datapath-vsize and profile-direct: `--host-memory pinned --prefetch 12`, 8 vectors,
# one run each) on the modelled H100, into $OUT (a folder of its own per build or setting).
#   SYNTH=path/to/memhc-synth OUT=docs/results/2026-11-28-model-h100/after \
#       docs/results/2026-11-28-model-h100/runs.sh
# MEMHC_MODEL (model settings) and EXTRA (more memhc-synth flags) are passed on.
set -euo pipefail
synth=${SYNTH:-target/release/memhc-synth}
out=${OUT:?set OUT to the output folder}
mkdir -p "$out"
direct="--host-memory pinned --prefetch 12"
m() { echo "\$ MEMHC_MODEL=${MEMHC_MODEL:-} memhc-synth --backend model $* ${EXTRA:-}" >> "$out/commands.txt"; \
      "$synth" --backend model "$@" ${EXTRA:-} >> "$out/log.txt" 2>&1; }
: > "$out/commands.txt"; : > "$out/log.txt"
m --vector-size 16 --vectors 8 --sweep tensor-size=384,192 --sweep repeat=0,0.25,0.5,0.75,1 \
  --mode optimal $direct --runs 1 --json "$out/datapath-fig7-direct.json"
m --vectors 8 --repeat 1 --sweep tensor-size=384,192 --sweep vector-size=1,2,4,8,32 \
  --mode optimal $direct --runs 1 --json "$out/datapath-vsize-direct.json"
m --tensor-size 384 --vector-size 32 --vectors 8 --repeat 0.5 --oversub 0.5 \
  --policy lru,pp-lru,belady --mode optimal $direct --runs 1 --json "$out/datapath-table1-direct.json"
m --tensor-size 384 --vector-size 16 --vectors 8 --repeat 0.5 --mode optimal $direct \
  --json "$out/profile-direct-fig7.json" --timeline "$out/timeline-direct-fig7.json"
m --tensor-size 384 --vector-size 32 --vectors 8 --repeat 0.5 --oversub 0.5 --mode optimal $direct \
  --json "$out/profile-direct-table1.json" --timeline "$out/timeline-direct-table1.json"
# Not recorded on the H100: the weakest Fig. 7 point (N = 192, repeat 1), on 4 and 16 streams.
for streams in 4 16; do
    m --tensor-size 192 --vector-size 16 --vectors 8 --repeat 1 --mode optimal $direct \
      --streams $streams --json "$out/profile-direct-N192-r1-streams$streams.json" \
      --timeline "$out/timeline-direct-N192-r1-streams$streams.json"
done
gzip -f "$out"/timeline-*.json
