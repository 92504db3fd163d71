#!/usr/bin/env bash
# The fixed sweep that a behaviour-preserving change must leave unchanged: every policy and
# mode (the four explicit ones at several oversubscription rates and repeat rates, and the
# unified mode where it fits), printed as JSON with the timing fields removed, so that two
# builds can be compared with `diff`.
#
#   scripts/sweep-counts.sh [path/to/memhc-synth] > counts.json
#
# Without an argument it builds and uses this checkout's release binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-}"
if [[ -z "$bin" ]]; then
    cargo build --release -q -p memhc-synth
    bin="${CARGO_TARGET_DIR:-target}/release/memhc-synth"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
common=(--tensor-size 8 --vector-size 8 --vectors 30 --policy all --sweep repeat=0.25,0.75)
"$bin" "${common[@]}" --mode all --sweep oversub=0,0.5,1.5,3 --json "$tmp/explicit.json" >/dev/null 2>&1
"$bin" "${common[@]}" --mode unified --json "$tmp/unified.json" >/dev/null 2>&1
"$bin" "${common[@]}" --mode optimal --dist gaussian --streams 3 --sweep oversub=1 \
    --json "$tmp/gaussian.json" >/dev/null 2>&1
jq -s 'add | map(del(.gflops, .wall_s, .wall_s_runs, .cpu_s, .cpu_s_runs, .device_compute_s, .copy_hidden_share))' "$tmp/explicit.json" "$tmp/unified.json" "$tmp/gaussian.json"
