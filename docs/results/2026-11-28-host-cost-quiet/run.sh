#!/bin/sh
# The runs behind docs/results/2026-11-28-host-cost-quiet.md: the machine, then the host_cost
# bench at HEAD (six rounds; each round runs the two schedules in alternating order), then
# the page's tables from the raw output. Load averages are sampled before and after.
set -e
out=docs/results/2026-11-28-host-cost-quiet
{ date -u; uname -r; nproc; grep -m1 'model name' /proc/cpuinfo; grep MemTotal /proc/meminfo;
  cat /sys/kernel/mm/transparent_hugepage/enabled; uptime; git rev-parse HEAD; git status --short | wc -l; } > $out/machine.txt
MEMHC_HOST_COST_ROUNDS=6 cargo bench -p memhc-gpu --bench host_cost > $out/bench-host-cost.txt
{ date -u; uptime; } >> $out/machine.txt
python3 scripts/host-cost-table.py $out/bench-host-cost.txt > $out/tables.md
