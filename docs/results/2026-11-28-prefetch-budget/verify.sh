#!/usr/bin/env bash
# memhc run --verify (against the dense reference) on the host backend, the presets at N = 32,
# pinned + prefetch 12, at the plan's peak and half of it, with the memhc in BIN:
#   verify.sh BIN LABEL [OUT]  -> OUT/LABEL/verify-<preset>-<scale>.log
set -euo pipefail
bin=$1 label=$2 out=${3:-$(dirname "$0")}/$2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for p in a1_rhopi f0d2; do
  "$bin/memhc" gen "$p" --tensor-size 32 -o "$work/$p.json" > /dev/null
  peak=$("$bin/memhc" plan "$work/$p.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_bytes"])')
  for scale in 1 0.5; do
    budget=$(python3 -c "print(int($peak * $scale))")
    log="$out/verify-$p-32-$scale.log"
    echo "+ memhc run $p-32.json --backend host --verify --budget $budget --host-memory pinned --prefetch 12" > "$log"
    "$bin/memhc" run "$work/$p.json" --backend host --verify --budget "$budget" \
      --host-memory pinned --prefetch 12 >> "$log" 2>&1
  done
done
