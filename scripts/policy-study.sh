#!/usr/bin/env bash
# Reruns the eviction-policy study of docs/policies.md: every table (as text) and every plot
# (SVG) it cites, into one folder. Counts are exact and repeat run to run; only GFLOPS and
# wall times vary.
#
#   scripts/policy-study.sh [OUT]        # default OUT: target/policy-study
#
# Needs jq. Builds memhc-synth and the policy_probe example in release mode first; set
# SYNTH=path and PROBE=path to use binaries built elsewhere instead.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-target/policy-study}"
target="${CARGO_TARGET_DIR:-target}"
if [[ -z "${SYNTH:-}" || -z "${PROBE:-}" ]]; then
    cargo build --release -q -p memhc-synth
    cargo build --release -q -p memhc-workload --example policy_probe
fi
synth="${SYNTH:-$target/release/memhc-synth}"
probe="${PROBE:-$target/release/examples/policy_probe}"
mkdir -p "$out"
all=lru,pp-lru,car,clock-pro,belady

# One line per record: dist, V, repeat, oversub, slots, policy, misses, evictions,
# misses / compulsory, misses / belady, h2d+d2h MiB. Compulsory = distinct objects
# = R + vectors * (3V - R), R = round(2V * repeat).
summary() {
    jq -r '.[] | (.repeat * 2 * .vector_size | round) as $r
        | ($r + .vectors * (3 * .vector_size - $r)) as $comp
        | (16 * 16 * .tensor_size * .tensor_size) as $obj
        | [.dist, .vector_size, .repeat, (.oversub // "-"), (.budget / $obj | floor), .policy,
           .misses, .evictions, (.misses / $comp * 1000 | round / 1000),
           (.misses / .miss_lower_bound * 1000 | round / 1000),
           ((.h2d_bytes + .d2h_bytes) / 1048576 * 10 | round / 10)] | @tsv' "$@"
}

# 1. The paper's Table 1-3 points, uniform and gaussian (counts do not depend on N).
for d in uniform gaussian; do
    "$synth" --tensor-size 8 --sweep vector-size=8,16,32 --repeat 0.5 --oversub 0.5 --dist "$d" \
        --policy "$all" --json "$out/t1-$d.json" >/dev/null 2>&1
    "$synth" --tensor-size 2 --vector-size 64 --repeat 0.5 --sweep oversub=0.5,1,1.5 --dist "$d" \
        --policy "$all" --json "$out/t2-$d.json" >/dev/null 2>&1
    "$synth" --tensor-size 2 --vector-size 64 --sweep repeat=0.125,0.25,0.75 --oversub 0.5 \
        --dist "$d" --policy "$all" --json "$out/t3-$d.json" >/dev/null 2>&1
done
summary "$out"/t1-*.json "$out"/t2-*.json "$out"/t3-*.json > "$out/tables123.tsv"

# 2. Fixed budgets from 400 KB to 4 MB at N = 8 (24 to 244 slots of 16 KiB).
for b in 400K 800K 1600K 4M; do
    "$synth" --tensor-size 8 --vector-size 8 --repeat 0.5 --budget "$b" --policy "$all" \
        --json "$out/budget-$b.json" >/dev/null 2>&1
done
summary "$out"/budget-*.json > "$out/budgets.tsv"

# 3. Inside the policies: the model's view at budgets from under one vector to oversub 0.5.
for d in uniform gaussian recent:1 recent:4 recent:8; do
    "$probe" --dist "$d" --slots 12,16,20,24,32,48,64,96 --oversub 0.5
done > "$out/probe-v8.txt"

# 4. recent:1 at budgets of 0.75 to 2 vectors' worth of new objects, V = 8 to 64, and at
#    V = 64 with repeated rates 1/8 to 3/4 (1 and 1.25 vectors).
for v in 8 16 32 64; do
    n=$((2 * v))
    "$probe" --dist recent:1 --vector-size "$v" --policy lru,pp-lru,belady \
        --slots $((n * 3 / 4)),$n,$((n * 5 / 4)),$((n * 3 / 2)),$((n * 2))
done > "$out/probe-recent1-vsize.txt"
for r in 0.125 0.25 0.5 0.75; do
    rep=$(jq -n "$r * 128 | round")
    n=$((192 - rep))
    "$probe" --dist recent:1 --vector-size 64 --repeat "$r" --policy lru,pp-lru,belady \
        --slots "$n,$((n * 5 / 4))"
done > "$out/probe-recent1-repeat.txt"

# 5. The Table 1 sweep with recent:1 and a budget of about 1.25 vectors (oversub 20).
"$synth" --tensor-size 8 --sweep vector-size=8,16,32 --repeat 0.5 --oversub 20 --dist recent:1 \
    --policy lru,pp-lru,belady --paper-table --json "$out/t1-recent1.json" \
    > "$out/t1-recent1.txt" 2>/dev/null
summary "$out/t1-recent1.json" > "$out/t1-recent1.tsv"

# 6. The plots: misses and evictions against oversub, uniform and recent:1.
for d in uniform recent:1; do
    "$synth" --tensor-size 8 --vector-size 8 --repeat 0.5 --dist "$d" --policy "$all" \
        --sweep oversub=0,1,2,4,8,12,16,20,25,30 --plot "$out/plots-${d/:/}" \
        --json "$out/sweep-${d/:/}.json" >/dev/null 2>&1
done
summary "$out"/sweep-*.json > "$out/sweeps.tsv"
echo "wrote $out"
