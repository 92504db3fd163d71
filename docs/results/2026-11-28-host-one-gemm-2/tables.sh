#!/usr/bin/env bash
# Prints the tables of docs/results/2026-11-28-host-one-gemm-2.md from this folder's raw files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
python3 "$here/../../../scripts/one-gemm-table.py" "$here"
echo
echo "1-minute load average while the rounds ran (2 cores), least and most of $(wc -l < "$here/loadavg-samples.txt") samples:"
awk '{print $2}' "$here/loadavg-samples.txt" | sort -n | sed -n '1p;$p' | paste -sd' '
