#!/usr/bin/env bash
# 1 rank against 2 ranks on this machine (docs/results/2026-11-24-mpi.md).
#
# corr:  a correlator campaign (a1_rhopi, N = $N, 8 time sources, 2 configurations: 16 units of
#        one source) in one process without MPI, under `mpirun -n 1`, under `mpirun -n 2`, and
#        the same with one rayon thread per rank; ROUNDS rounds, interleaved.
# tiny:  the protocol's own cost: 128 units of N = 2 (each a few ms of work) in one process and
#        under `mpirun -n 2`.
# synth: a sweep of 10 points (memhc-synth --journal) in one process and under mpirun -n 1, 2.
#
# Ranks are not bound to cores (--bind-to none): Open MPI binds 1 or 2 ranks to one core each by
# default, which would leave `mpirun -n 1` one core of the two.
# Each run prints `uptime`'s load, then wall, user and system seconds (bash's `time`, which
# counts the ranks: mpirun waits for them), and for campaigns the summary: units and busy
# seconds per rank. Every campaign output is compared with the one-process output (cmp).
# Needs release binaries built with the mpi feature:
#   cargo build --release -p memhc-cli -p memhc-synth --features memhc-cli/mpi,memhc-synth/mpi
# Usage: scripts/mpi-scaling.sh [WORKDIR] [ROUNDS] [corr|tiny|synth ...]
set -euo pipefail
BIN="${CARGO_TARGET_DIR:-$PWD/target}/release"
W="${1:-/tmp/memhc-mpi-scaling}"
ROUNDS="${2:-5}"
shift 2 2>/dev/null || true
PARTS=("${@:-corr}")
N="${N:-128}"
mkdir -p "$W"
cd "$W"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --bind-to none --mca btl self,tcp --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
TIMEFORMAT='real %R user %U sys %S'

"$BIN/memhc" gen a1_rhopi --tensor-size "$N" --sources 0,4,8,12,16,20,24,28 -o a1.json >/dev/null
"$BIN/memhc" gen a1_rhopi --tensor-size 2 --sources "$(seq -s, 0 63)" -o tiny.json >/dev/null
for f in a1 tiny; do
    cat > "$f-campaign.json" <<JSON
{"format": "memhc-campaign/1", "source_block": 1,
 "configurations": [{"id": "cfg1000", "file": "$f.json"}, {"id": "cfg1010", "file": "$f.json", "seed": 1}]}
JSON
done
SWEEP=(--tensor-size 48 --vectors 30 --sweep repeat=0,0.25,0.5,0.75,1 --sweep oversub=0,1 --policy lru,belady)

campaign() { # WHICH NAME LAUNCH...
    local which=$1 name=$2; shift 2
    local out="out-$which-$name.json"
    rm -rf "$out" "$out.journal"
    echo "uptime: $(uptime | sed 's/.*load/load/')"
    local t
    t=$( { time "$@" "$BIN/memhc" campaign "$which-campaign.json" -o "$out" --quiet \
        --summary "sum-$which-$name.json" >/dev/null; } 2>&1 )
    python3 -c "import json; s=json.load(open('sum-$which-$name.json')); print('$which', '$name', '$t', 'ranks', s['ranks'], 'wall_s', round(s['wall_seconds'], 3), 'units', [r['units'] for r in s['per_rank']], 'busy_s', [round(r['busy_seconds'], 2) for r in s['per_rank']])"
    cmp "$out" "ref-$which.json"
}

synth() { # NAME LAUNCH...
    local name=$1; shift
    rm -rf "j-$name"
    echo "uptime: $(uptime | sed 's/.*load/load/')"
    local t
    t=$( { time "$@" "$BIN/memhc-synth" "${SWEEP[@]}" --journal "j-$name" \
        --json "synth-$name.json" >/dev/null 2>&1; } 2>&1 )
    echo "synth $name $t"
}

for which in a1 tiny; do
    "$BIN/memhc" campaign "$which-campaign.json" -o "ref-$which.json" --quiet >/dev/null
done
for r in $(seq "$ROUNDS"); do
    echo "== round $r"
    for part in "${PARTS[@]}"; do
        case $part in
        corr)
            campaign a1 single env
            campaign a1 mpi1 "${MPI[@]}" -n 1
            campaign a1 mpi2 "${MPI[@]}" -n 2
            campaign a1 single-1thread env RAYON_NUM_THREADS=1
            campaign a1 mpi2-1thread "${MPI[@]}" -n 2 -x RAYON_NUM_THREADS=1
            ;;
        tiny)
            campaign tiny single env
            campaign tiny mpi2 "${MPI[@]}" -n 2
            ;;
        synth)
            synth single env
            synth mpi1 "${MPI[@]}" -n 1
            synth mpi2 "${MPI[@]}" -n 2
            ;;
        esac
    done
done
