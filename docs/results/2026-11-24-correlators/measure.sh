#!/bin/bash
# Correlator measurements on the host backend (docs/results/2026-11-24-correlators.md).
set -e
M=${MEMHC:?set MEMHC to the memhc binary, e.g. MEMHC=$PWD/target/release/memhc}
cd "$(dirname "$0")"
echo "== uptime before: $(uptime)"
nproc
$M gen a1_rhopi --tensor-size 128 -o a1_128.json
$M gen f0d2 --tensor-size 64 -o f0d2_64.json
for f in a1_128 f0d2_64; do
  for s in sharing no-sharing; do
    flag=""; [ $s = no-sharing ] && flag=--no-sharing
    $M plan $f.json $flag > plan-$f-$s.json
    $M plan $f.json $flag --file-order > plan-$f-$s-file.json
  done
done
for f in a1_128 f0d2_64; do
  for s in sharing no-sharing; do
    flag=""; [ $s = no-sharing ] && flag=--no-sharing
    peak=$(python3 -c "import json;print(json.load(open('plan-$f-$s.json'))['peak_bytes'])")
    budget=$((peak / 2))
    echo "== $f $s: peak $peak, budget $budget"
    echo "\$ memhc run $f.json $flag --policy lru,pp-lru,belady --mode naive,optimal --budget $budget --json run-$f-$s.json"
    $M run $f.json $flag --policy lru,pp-lru,belady --mode naive,optimal --budget $budget --json run-$f-$s.json
  done
done
# The order under a budget: the planner's peak (sharing on), planner's order against the file's.
for f in a1_128 f0d2_64; do
  peak=$(python3 -c "import json;print(json.load(open('plan-$f-sharing.json'))['peak_bytes'])")
  for o in planned file; do
    flag=""; [ $o = file ] && flag=--file-order
    echo "== $f order $o, budget $peak (the planner order's peak)"
    echo "\$ memhc run $f.json $flag --policy lru,belady --mode optimal --budget $peak --json order-$f-$o.json"
    $M run $f.json $flag --policy lru,belady --mode optimal --budget $peak --json order-$f-$o.json
  done
done
echo "== uptime after: $(uptime)"
