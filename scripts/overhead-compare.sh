#!/usr/bin/env bash
# Compares builds of the `overhead_case` example (issue 12's bookkeeping cost per contraction)
# on a shared, noisy machine: the binaries take turns, case by case, for ROUNDS rounds, and the
# table gives each binary's minimum and median of its `wall` line (µs per contraction).
#
#   cargo build --release -p memhc-workload --example overhead_case
#   cp target/release/examples/overhead_case /tmp/oc-after      # and an older build as before
#   ROUNDS=5 scripts/overhead-compare.sh /tmp/oc-before /tmp/oc-after
#
# CASES (default: the bench's six named cases) is a list of `contractions policy fit peak`
# separated by `;`; the peak skips the dry run that finds it (the program prints it).
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: ROUNDS=5 CASES='4000 lru fits 2777088;...' $0 BINARY..." >&2
    exit 2
fi
ROUNDS=${ROUNDS:-5}
CASES=${CASES:-"4000 lru fits 2777088;4000 belady oversub 2777088;32000 lru fits 21935104;32000 belady oversub 21935104;256000 lru fits 174771200;256000 belady oversub 174771200"}

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
IFS=';' read -r -a cases <<<"$CASES"
for ((r = 1; r <= ROUNDS; r++)); do
    for c in "${cases[@]}"; do
        for b in "$@"; do
            # shellcheck disable=SC2086 # a case is several arguments
            w=$("$b" $c | sed -n 's/.*wall \([0-9.]*\) us.*/\1/p')
            printf '%s\t%s\t%s\n' "$c" "$(basename "$b")" "$w" >>"$raw"
        done
    done
    echo "round $r of $ROUNDS done" >&2
done

python3 - "$raw" <<'EOF'
import collections, statistics, sys
runs = collections.defaultdict(list)
order = []
for line in open(sys.argv[1]):
    case, binary, wall = line.rstrip("\n").split("\t")
    if (case, binary) not in runs:
        order.append((case, binary))
    runs[(case, binary)].append(float(wall))
print("| case | binary | min µs | median µs | runs |")
print("|---|---|---|---|---|")
for key in order:
    v = runs[key]
    print(f"| {key[0]} | {key[1]} | {min(v):.2f} | {statistics.median(v):.2f} | {len(v)} |")
EOF
