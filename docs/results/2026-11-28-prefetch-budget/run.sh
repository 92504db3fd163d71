#!/usr/bin/env bash
# Runs the points of docs/results/2026-11-28-prefetch-budget.md on the modelled H100 with the
# binaries in BIN (memhc, memhc-synth) and writes every raw file under OUT/LABEL:
#   run.sh BIN LABEL [OUT]
# memhc run's JSON records carry the counts; its makespan and floor are in its output (the
# `model:` line), kept as <name>.log. memhc-synth's JSON records carry both.
set -euo pipefail
bin=$1 label=$2 out=${3:-$(dirname "$0")}/$2
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bin/memhc" gen a1_rhopi --tensor-size 128 -o "$work/a1_rhopi-128.json" > /dev/null
"$bin/memhc" gen f0d2 --tensor-size 256 -o "$work/f0d2-256.json" > /dev/null
for w in a1_rhopi-128 f0d2-256; do
  "$bin/memhc" plan "$work/$w.json" > "$out/$w-plan.json"
  peak=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["peak_bytes"])' "$out/$w-plan.json")
  for scale in 1 0.5; do
    budget=$(python3 -c "print(int($peak * $scale))")
    for path in pageable pinned-off pinned; do
      extra=()
      [ "$path" = pinned ] && extra=(--host-memory pinned --prefetch 12)
      [ "$path" = pinned-off ] && extra=(--host-memory pinned)
      name="$w-$scale-$path"
      echo "+ memhc run $w.json --backend model --mode optimal --budget $budget ${extra[*]}" > "$out/$name.log"
      "$bin/memhc" run "$work/$w.json" --backend model --mode optimal --budget "$budget" \
        "${extra[@]}" --json "$out/$name.json" >> "$out/$name.log" 2>&1
    done
  done
done
for oversub in 0 1; do
  for path in pageable pinned-off pinned; do
    extra=()
    [ "$path" = pinned ] && extra=(--host-memory pinned --prefetch 12)
    [ "$path" = pinned-off ] && extra=(--host-memory pinned)
    name="synth-384-oversub$oversub-$path"
    echo "+ memhc-synth --backend model --tensor-size 384 --vector-size 16 --vectors 8 --repeat 0.5 --mode optimal --oversub $oversub ${extra[*]}" > "$out/$name.log"
    "$bin/memhc-synth" --backend model --tensor-size 384 --vector-size 16 --vectors 8 \
      --repeat 0.5 --mode optimal --oversub "$oversub" "${extra[@]}" \
      --json "$out/$name.json" >> "$out/$name.log" 2>&1
  done
done
