#!/bin/sh
# The rounds behind docs/results/2026-11-28-overhead-clock.md. Three ways of timing the same
# bookkeeping, as three "builds" of scripts/overhead-growth.sh, interleaved in every round:
#   schedstat: the bench before 198ced1 (binary of 016fc4f), MEMHC_OVERHEAD_CLOCK=cpu
#              (/proc/thread-self/schedstat)
#   thread:    the bench at 198ced1, MEMHC_OVERHEAD_CLOCK=cpu (the thread's CPU clock)
#   wall:      the bench at 198ced1, default clock (the run's wall_s per contraction)
# Wrappers in /tmp/ovh set the variable and exec the binaries (copies of
# target/release/deps/overhead-<hash> built with `cargo bench -p memhc-workload --bench
# overhead --no-run` at each commit). Load averages are sampled every 30 s into load.txt.
set -e
out=docs/results/2026-11-28-overhead-clock
( while :; do echo "$(date -u +%H:%M:%S) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 30; done ) > $out/load.txt &
sampler=$!
ROUNDS=${ROUNDS:-6} MEASURE=${MEASURE:-2} scripts/overhead-growth.sh $out/rounds.log \
    /tmp/ovh/schedstat /tmp/ovh/thread /tmp/ovh/wall > $out/summary.md
kill $sampler
