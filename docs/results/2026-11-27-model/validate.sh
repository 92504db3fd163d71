#!/usr/bin/env bash
# Prints validation.md from the raw records: run from the repository root (M: the folder of
# the modelled records, this one by default).
R=docs/results/2026-11-26-h100-2
P=$R/2026-11-26T205142Z-synth-profile
C=$R/2026-11-26T204808Z-check-cpu-compare
M=${M:-docs/results/2026-11-27-model}
python3 scripts/model-validate.py \
    --pair $P/synth-fig7-repeat.json $M/synth-fig7-repeat.json \
    --pair $R/2026-11-26T205748Z-synth-vsize/synth-fig7-vsize.json $M/synth-fig7-vsize.json \
    --pair $P/synth-table1.json $M/synth-table1.json \
    --pair $C/cpu.json $M/cpu.json \
    --pair $C/compare-memhc-synth.json $M/compare.json \
    --pair $C/compare-table1-memhc-synth.json $M/compare-table1.json \
    --log-pair $P/profile-fig7-optimal.log $M/profile-fig7-optimal.json \
    --log-pair $P/profile-fig7-naive.log $M/profile-fig7-naive.json \
    --log-pair $P/profile-table1-optimal.log $M/profile-table1-optimal.json \
    --log-pair $P/profile-table1-naive.log $M/profile-table1-naive.json \
    $(for t in fig7-optimal fig7-naive table1-optimal table1-naive; do
        echo --timeline $P/timeline-$t.json.gz $M/timeline-$t.json.gz; done)
