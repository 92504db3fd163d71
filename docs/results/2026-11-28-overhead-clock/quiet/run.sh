#!/bin/sh
# The quieter rerun of docs/results/2026-11-28-overhead-clock.md (after the session's helpers
# stopped): six rounds of scripts/overhead-growth.sh (MEASURE=2), three "builds" interleaved:
#   thread:    the bench at 198ced1, MEMHC_OVERHEAD_CLOCK=cpu (the thread's CPU clock)
#   head:      the bench at HEAD (commit.txt: after the prefetch-budget and issue-order merges),
#              MEMHC_OVERHEAD_CLOCK=cpu
#   wall-head: the same binary, default clock (wall_s per contraction)
# Wrappers in /tmp/ovh exec copies of target/release/deps/overhead-<hash> (`cargo bench -p
# memhc-workload --bench overhead --no-run` at each commit). Load sampled every 30 s.
set -e
out=docs/results/2026-11-28-overhead-clock/quiet
git rev-parse HEAD > $out/commit.txt
( while :; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done ) > $out/load.txt &
sampler=$!
ROUNDS=${ROUNDS:-6} MEASURE=${MEASURE:-2} scripts/overhead-growth.sh $out/rounds.log \
    /tmp/ovh/thread /tmp/ovh/head /tmp/ovh/wall-head > $out/summary.md
kill $sampler
