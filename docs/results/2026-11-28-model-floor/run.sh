#!/usr/bin/env bash
# The model points of docs/results/2026-11-28-issue-order (runs.sh there), both orders, with the
# compute floor at the rate each GEMM call runs at (one-product calls at the one-product table):
# that page's merged.sh, into this folder ({queue,dependency}/, commit.txt, tables.md).
#   SYNTH=target/release/memhc-synth docs/results/2026-11-28-model-floor/run.sh
set -euo pipefail
OUT=docs/results/2026-11-28-model-floor exec docs/results/2026-11-28-issue-order/merged.sh
