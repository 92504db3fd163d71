#!/usr/bin/env bash
# Issue 28's target on the overhead bench: how the bookkeeping cost per contraction grows from
# 4,000 to 256,000 contractions, measured on a shared, noisy machine. Each round runs every
# build at both sizes, the builds and the sizes taking turns (the order of the sizes flips
# every round), through the bench's own criterion binary; the summary gives, per case and
# build, the median of the rounds' estimates at each size and the median, minimum and maximum
# of the per-round growth (256k estimate / 4k estimate of the same round).
#
#   cargo bench -p memhc-workload --bench overhead --no-run   # prints the bench binary's path
#   cp target/release/deps/overhead-<hash> /tmp/overhead-after   # and an older build as before
#   ROUNDS=6 scripts/overhead-growth.sh RAW.log /tmp/overhead-before /tmp/overhead-after
#
# RAW.log keeps every criterion line, headed `### round R size N build NAME`; run
# `scripts/overhead-growth.sh --summary RAW.log` to print the summary again from it.
# CASES (default `lru,belady`), MEASURE (criterion's --measurement-time, default 5) and SIZES
# (default `4000 256000`; the summary's growth needs two) can be set.
set -euo pipefail

summary() {
    python3 - "$1" <<'EOF'
import collections, re, statistics, sys
est = collections.defaultdict(dict)  # (case, build) -> {(round, size): estimate in µs}
head = re.compile(r"### round (\d+) size (\d+) build (\S+)")
time = re.compile(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]")
case = None
unit = {"ns": 1e-3, "µs": 1.0, "us": 1.0, "ms": 1e3}
for line in open(sys.argv[1], encoding="utf-8"):
    m = head.match(line)
    if m:
        rnd, size, build = int(m[1]), int(m[2]), m[3]
        continue
    m = re.match(r"overhead/\d+/(\S+)", line)
    if m:
        case = m[1]
    m = time.search(line)
    if m and case and case != "analyse":
        est[(case, build)][(rnd, size)] = float(m[1]) * unit[m[2]]
        case = None
print("| case | build | 4k median µs | 256k median µs | growth median | growth min-max | rounds |")
print("|---|---|---|---|---|---|---|")
for (c, b), v in est.items():
    lo, hi = min(s for _, s in v), max(s for _, s in v)
    rounds = sorted(r for r, s in v if s == lo and (r, hi) in v)
    small = [v[(r, lo)] for r in rounds]
    large = [v[(r, hi)] for r in rounds]
    growth = [b / a for a, b in zip(small, large)]
    print(f"| {c} | {b} | {statistics.median(small):.3f} | {statistics.median(large):.3f} | "
          f"{statistics.median(growth):.2f}x | {min(growth):.2f}-{max(growth):.2f}x | {len(growth)} |")
EOF
}

if [[ "${1:-}" == "--summary" ]]; then
    summary "$2"
    exit 0
fi
if [[ $# -lt 2 ]]; then
    echo "usage: ROUNDS=6 $0 RAW.log BENCH-BINARY..." >&2
    exit 2
fi
raw=$1
shift
ROUNDS=${ROUNDS:-6}
CASES=${CASES:-lru,belady}
MEASURE=${MEASURE:-5}
: >"$raw"
for ((r = 1; r <= ROUNDS; r++)); do
    read -r -a sizes <<<"${SIZES:-4000 256000}"
    if ((r % 2 == 0)); then
        for ((i = 0, j = ${#sizes[@]} - 1; i < j; i++, j--)); do
            t=${sizes[i]} sizes[i]=${sizes[j]} sizes[j]=$t
        done
    fi
    builds=("$@")
    if ((r % 2 == 0)); then # the builds take turns going first, too
        for ((i = 0, j = ${#builds[@]} - 1; i < j; i++, j--)); do
            t=${builds[i]} builds[i]=${builds[j]} builds[j]=$t
        done
    fi
    for size in "${sizes[@]}"; do
        for b in "${builds[@]}"; do
            echo "### round $r size $size build $(basename "$b")" >>"$raw"
            MEMHC_OVERHEAD_CASES=$CASES MEMHC_OVERHEAD_SIZES=$size \
                "$b" --bench --measurement-time "$MEASURE" 2>/dev/null | grep -E 'overhead/|time:' >>"$raw"
        done
    done
    echo "round $r of $ROUNDS done" >&2
done
summary "$raw"
