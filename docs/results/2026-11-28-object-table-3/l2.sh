#!/usr/bin/env bash
# Misses of a last level the size of this machine's L2 (1 MiB a core, 16-way; `lscpu`) inside
# `contract_into`: callgrind's model has two levels, D1 and LL, and by default LL is the host's
# L3, so misses that leave L2 and hit L3 are not counted. With --LL set to the L2 they are.
#
#   docs/results/2026-11-28-object-table-3/l2.sh OUT_DIR NAME BINARY SIZE POLICY FIT
#
# Writes OUT_DIR/l2-NAME-SIZE-POLICY-FIT.out (gzip it to keep it) and its .log.
set -euo pipefail
out=$1 name=$2 bin=$3 size=$4 policy=$5 fit=$6
stem=$out/l2-$name-$size-$policy-$fit
if [[ ! -e $stem.out && ! -e $stem.out.gz ]]; then
    valgrind --tool=callgrind --cache-sim=yes --LL=1048576,16,64 --callgrind-out-file="$stem.out" \
        --toggle-collect='hadron::engine::Engine*::contract_into' \
        "$bin" "$size" "$policy" "$fit" - >"$stem.log" 2>&1
fi
