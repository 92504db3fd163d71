#!/usr/bin/env bash
# Prints every table of ../2026-11-28-prefetch-budget.md from the raw files in this folder.
set -euo pipefail
cd "$(dirname "$0")"
python3 cause.py
python3 table.py
