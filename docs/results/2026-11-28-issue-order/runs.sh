#!/usr/bin/env bash
# Issue 29, the schedule: the direct data path's commands of docs/results/2026-11-28-model-h100
# (runs.sh there: the H100 session's `--host-memory pinned --prefetch 12`, 8 vectors, one run
# each; the Fig. 7 points, the vector sizes at repeat 1, the Table 1 point) on the modelled
# H100, once in each issue order (`--order queue`, the default, and `--order dependency`), into
# $OUT/queue and $OUT/dependency; then N = 192, repeat 1 and 0.25 with timelines, and the reference
# checks of the dependency order on the host backend ($OUT/verify).
#   SYNTH=path/to/memhc-synth OUT=docs/results/2026-11-28-issue-order \
#       docs/results/2026-11-28-issue-order/runs.sh
set -euo pipefail
synth=${SYNTH:-target/release/memhc-synth}
out=${OUT:?set OUT to the output folder}
direct="--host-memory pinned --prefetch 12"
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
    for r in 1 0.25; do
        m --tensor-size 192 --vector-size 16 --vectors 8 --repeat $r --mode optimal $direct \
          --json "$o/profile-direct-N192-r$r.json" --timeline "$o/timeline-direct-N192-r$r.json"
    done
    gzip -f "$o"/timeline-*.json
done
# The dependency order against the reference on the host backend: every mode and policy,
# fitting and oversubscribed (pageable); the direct path (page-locked, prefetch) in the
# optimal mode.
v="$out/verify"
mkdir -p "$v"
: > "$v/commands.txt"; : > "$v/log.txt"
h() { echo "\$ memhc-synth $*" >> "$v/commands.txt"; "$synth" "$@" >> "$v/log.txt" 2>&1; }
common=(--tensor-size 8 --vector-size 8 --vectors 30 --policy all --sweep repeat=0.25,0.75 --order dependency --verify)
h "${common[@]}" --mode all --sweep oversub=0,0.5,1.5,3 --json "$v/pageable.json"
h "${common[@]}" --mode unified --json "$v/unified.json"
h "${common[@]}" --mode optimal --host-memory pinned --prefetch off,12 --sweep oversub=0,0.5,1.5 \
  --json "$v/pinned.json"
