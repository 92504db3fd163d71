#!/usr/bin/env bash
# The direct path on the modelled H100 (deterministic: the model's clocks, not this machine's),
# tiled copies per component (16 2D copies a meson node) against per block column (4 3D
# copies), at N = 128 and 384, 20 vectors of 16, repeat 0.5. Writes model-N<n>-<tiled>.json
# here; report.py prints the table. Run from the repository root:
#   docs/results/2026-11-28-tiled-columns/run.sh
set -euo pipefail
here=docs/results/2026-11-28-tiled-columns
cargo build --release -q -p memhc-synth
git rev-parse HEAD > "$here/commit.txt"
for n in 128 384; do
    for tiled in component column; do
        MEMHC_GPU_TILED=$tiled target/release/memhc-synth --backend model --tensor-size $n \
            --vector-size 16 --vectors 20 --repeat 0.5 --mode optimal --host-memory pinned \
            --prefetch 12 --json "$here/model-N$n-$tiled.json" > "$here/model-N$n-$tiled.log" 2>&1
    done
done
python3 "$here/report.py"
