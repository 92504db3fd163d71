#!/usr/bin/env bash
# Issue 29, the schedule: the model points of docs/results/2026-11-28-issue-order (merged.sh
# there: the direct path, `--host-memory pinned --prefetch 12`, 8 vectors, the Fig. 7 points,
# the vector sizes at repeat 1, the Table 1 point), both orders, with the memhc-synth of the
# commit under test, into $OUT/{queue,dependency} (the "before" is
# docs/results/2026-11-28-model-floor/, the same commands at main); then N = 192 and 384,
# vector size 16, repeat 1 and 0.75, with timelines ($OUT/timelines); then the reference
# checks of the dependency order on the host backend ($OUT/verify); then tables.sh.
#   SYNTH=/path/to/release/memhc-synth docs/results/2026-11-28-schedule/runs.sh
set -euo pipefail
cd "$(dirname "$0")/../../.."
synth=${SYNTH:-target/release/memhc-synth}
D=docs/results/2026-11-28-schedule
out=${OUT:-$D}
git rev-parse HEAD > "$out/commit.txt"
SYNTH="$synth" OUT="$out" docs/results/2026-11-28-issue-order/merged.sh
t="$out/timelines"
mkdir -p "$t"
: > "$t/commands.txt"; : > "$t/log.txt"
for order in queue dependency; do
    for n in 192 384; do
        for r in 1 0.75; do
            args=(--backend model --tensor-size "$n" --vector-size 16 --vectors 8 --repeat "$r"
                  --mode optimal --host-memory pinned --prefetch 12 --order "$order"
                  --json "$t/$order-N$n-r$r.json" --timeline "$t/$order-N$n-r$r.timeline.json")
            echo "\$ memhc-synth ${args[*]}" >> "$t/commands.txt"
            "$synth" "${args[@]}" >> "$t/log.txt" 2>&1
        done
    done
done
gzip -f "$t"/*.timeline.json
v="$out/verify"
mkdir -p "$v"
: > "$v/commands.txt"; : > "$v/log.txt"
h() { echo "\$ memhc-synth $*" >> "$v/commands.txt"; "$synth" "$@" >> "$v/log.txt" 2>&1; }
common=(--tensor-size 8 --vector-size 8 --vectors 30 --policy all --sweep repeat=0.25,0.75 --order dependency --verify)
h "${common[@]}" --mode all --sweep oversub=0,0.5,1.5,3 --json "$v/pageable.json"
h "${common[@]}" --mode unified --json "$v/unified.json"
h "${common[@]}" --mode optimal --host-memory pinned --prefetch off,12 --sweep oversub=0,0.5,1.5 \
  --json "$v/pinned.json"
"$D/tables.sh" > "$D/tables.md"
