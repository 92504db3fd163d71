#!/usr/bin/env bash
# 6 rounds of the one_gemm bench (one build), raw criterion files per round, load samples.
set -uo pipefail
bin=$1; out=$2
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; uptime; (cd /work/main && git rev-parse HEAD); sha256sum "$bin"; } > $out/machine.txt
( while true; do echo "$(date -u +%T) $(cat /proc/loadavg)" >> $out/loadavg-samples.txt; sleep 30; done ) &
sampler=$!
home=$(mktemp -d)
for k in 1 2 3 4 5 6; do
  rm -rf "$home/criterion"
  CRITERION_HOME="$home/criterion" "$bin" --bench > "$out/round-$k.txt" 2>&1
  (cd "$home/criterion" && find . -path '*/new/*.json' \( -name benchmark.json -o -name estimates.json -o -name sample.json \) -print0 |
     while IFS= read -r -d '' f; do mkdir -p "$out/round-$k/$(dirname "$f")"; cp "$f" "$out/round-$k/$f"; done)
done
kill $sampler; uptime >> $out/machine.txt; echo done >> $out/machine.txt
