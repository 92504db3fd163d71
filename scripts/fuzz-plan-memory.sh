#!/usr/bin/env bash
# What `memhc plan` takes to plan files too large to run (issue 31, the deviation reviewed in
# docs/results/2026-11-27-fuzz.md): its peak resident memory (`/usr/bin/time -v`) and exit
# status on a file of one 10 TB node, on the correlator fuzz corpus, and on the pion example
# for scale. Writes docs/results/2026-11-27-fuzz/plan-memory.log.
#
#   scripts/fuzz-plan-memory.sh [path/to/memhc]
set -u
bin=${1:-${CARGO_TARGET_DIR:-target}/debug/memhc}
out=docs/results/2026-11-27-fuzz
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/ten-terabytes-node.json" <<'JSON'
{"format": "memhc-corr/1",
 "nodes": [{"id": "a", "spins": 16, "dims": [200000, 200000], "time": 0, "data": {"seed": 1}}],
 "graphs": [{"id": "g", "loops": [{"nodes": ["a"]}]}],
 "correlators": [{"name": "C", "times": [{"source": 0, "sink": 0, "graphs": ["g"]}]}]}
JSON
{
    echo "# binary: $bin ($(git rev-parse --short HEAD))"
    for f in examples/data/pion.corr.json "$tmp/ten-terabytes-node.json" crates/memhc-corr/tests/fuzz-corpus/*.json; do
        echo "## file: $(basename "$f")"
        MEMHC_HOST_MEMORY=2G /usr/bin/time -v "$bin" plan "$f" 2>&1 >"$tmp/stdout" |
            grep -E "Maximum resident set size|Exit status|^memhc"
        grep -E '"node_bytes"|"peak_bytes"' "$tmp/stdout"
    done
} >"$out/plan-memory.log"
