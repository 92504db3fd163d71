#!/bin/sh
# The runs behind docs/results/2026-11-27-host-cost.md: the machine, then the bench (six
# interleaved rounds), then the page's tables from the raw output.
set -e
out=docs/results/2026-11-27-host-cost
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; grep MemTotal /proc/meminfo;
  cat /sys/kernel/mm/transparent_hugepage/enabled; uptime; git rev-parse HEAD; } > $out/machine.txt
MEMHC_HOST_COST_ROUNDS=6 cargo bench -p memhc-gpu --bench host_cost > $out/bench-host-cost.txt
uptime >> $out/machine.txt
python3 scripts/host-cost-table.py $out/bench-host-cost.txt > $out/tables.md
