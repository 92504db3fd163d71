#!/bin/bash
# Three repetitions of every run of measure.sh (same binary, same files), for medians.
set -e
M=${MEMHC:?set MEMHC to the memhc binary, e.g. MEMHC=$PWD/target/release/memhc}
cd "$(dirname "$0")"
echo "== uptime before: $(uptime)"
for rep in 1 2 3; do
  mkdir -p rep$rep
  for f in a1_128 f0d2_64; do
    for s in sharing no-sharing; do
      flag=""; [ $s = no-sharing ] && flag=--no-sharing
      peak=$(python3 -c "import json;print(json.load(open('plan-$f-$s.json'))['peak_bytes'])")
      $M run $f.json $flag --policy lru,pp-lru,belady --mode naive,optimal --budget $((peak / 2)) --json rep$rep/run-$f-$s.json > /dev/null
    done
    peak=$(python3 -c "import json;print(json.load(open('plan-$f-sharing.json'))['peak_bytes'])")
    $M run $f.json --policy lru,belady --mode optimal --budget $peak --json rep$rep/order-$f-planned.json > /dev/null
    $M run $f.json --file-order --policy lru,belady --mode optimal --budget $peak --json rep$rep/order-$f-file.json > /dev/null
  done
  echo "== rep $rep done: $(uptime)"
done
echo "== uptime after: $(uptime)"
