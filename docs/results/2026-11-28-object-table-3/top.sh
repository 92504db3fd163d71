#!/usr/bin/env bash
# Where the last-level misses inside `contract_into` are, by function (the method of
# 2026-11-28-object-table-2): callgrind with the cache simulation, counting only what runs inside
# `Engine::contract_into` (the dry run that finds the peak runs it too: 2 x SIZE contractions),
# then `callgrind_annotate --inclusive=no` sorted by write and by read misses.
#
#   docs/results/2026-11-28-object-table-3/top.sh OUT_DIR NAME BINARY SIZE POLICY FIT
#
# Writes OUT_DIR/top-NAME-SIZE-POLICY-FIT.out (kept, gzip it) and the two sorted lists
# OUT_DIR/top-NAME-SIZE-POLICY-FIT-by-DLmw.txt and -by-DLmr.txt (the function list, up to
# 60 lines, without the annotated sources).
set -euo pipefail
out=$1 name=$2 bin=$3 size=$4 policy=$5 fit=$6
stem=$out/top-$name-$size-$policy-$fit
if [[ ! -e $stem.out && ! -e $stem.out.gz ]]; then
    valgrind --tool=callgrind --cache-sim=yes --callgrind-out-file="$stem.out" \
        --toggle-collect='hadron::engine::Engine*::contract_into' \
        "$bin" "$size" "$policy" "$fit" - >"$stem.log" 2>&1
fi
[[ -e $stem.out ]] || gunzip -k "$stem.out.gz"
for ev in DLmw DLmr; do
    callgrind_annotate --inclusive=no --show=DLmr,DLmw,Ir --sort=$ev --threshold=99 "$stem.out" \
        | sed '/^-- Auto-annotated source\|^-- User-annotated source\|^The following files/,$d' \
        | sed -n '1,60p' >"$stem-by-$ev.txt"
done
