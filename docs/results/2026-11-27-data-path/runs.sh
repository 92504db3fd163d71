#!/usr/bin/env bash
# The modelled runs behind 2026-11-27-data-path.md (no GPU; seconds each). From the repository
# root, after `cargo build --release -p memhc-synth`:  docs/results/2026-11-27-data-path/runs.sh
set -euo pipefail
D=${OUT_DIR:-docs/results/2026-11-27-data-path}
S=target/release/memhc-synth
point=(--backend model --tensor-size 384 --vector-size 16 --vectors 8 --repeat 0.5 --mode optimal --runs 1)
"$S" "${point[@]}" --host-memory pageable --json "$D/fig7-r0.5-pageable.json" > "$D/fig7-r0.5-pageable.log"
"$S" "${point[@]}" --host-memory pinned --json "$D/fig7-r0.5-pinned.json" > "$D/fig7-r0.5-pinned.log"
for w in 3 6 12 24 48; do
    "$S" "${point[@]}" --host-memory pinned --prefetch "$w" \
        --json "$D/fig7-r0.5-pinned-prefetch$w.json" > "$D/fig7-r0.5-pinned-prefetch$w.log"
done
cargo bench -p memhc-gpu --bench model 2>/dev/null > "$D/bench-model.txt"
scripts/data-path-table.py "$D" > "$D/tables.md"
