#!/usr/bin/env bash
# Runs the prebuilt GPU binaries of gpu-bin/ (made by scripts/gpu-build.sh on a machine with
# Rust) on a machine with an NVIDIA GPU, which needs no Rust toolchain, and writes the raw
# results with the environment they came from into one folder:
#
#   scripts/gpu-run.sh STAGE...
#
# Stages, in the order given:
#   check        tests, verify, sanitize and corr at once (correctness only: they share the
#                GPU, so nothing they print is a timing)
#   tests        every memhc-cuda test binary (conformance, end to end, availability, unit)
#   verify       memhc-synth --backend cuda --verify at N = 64 and 384: every mode (unified
#                included) fitting, and lru, pp-lru and belady oversubscribed; and the direct
#                data path (--host-memory pinned --prefetch 12), naive and optimal, fitting and
#                oversubscribed (lru, belady)
#   corr         memhc run --backend cuda --verify on the presets a1_rhopi and f0d2 at N = 64
#                (made by memhc gen there), fitting and at half the plan's peak, lru and
#                belady, naive and optimal, pageable and pinned host memory (the dense
#                reference takes minutes for f0d2: each its own process, all at once)
#   sanitize     compute-sanitizer memcheck over the conformance and end-to-end binaries,
#                racecheck and synccheck over the conformance binary
#   limits       the card's zgemm rate and pinned copy bandwidth (scripts/gpu-limits.py, PyTorch)
#   contraction  the meson contraction against one cublasZgemmStridedBatched (criterion)
#   register     a pageable buffer (1, 8, 64 MiB) copied 1, 4, 16 times: staged against
#                registered in place (criterion; the rule of GpuBackend::adopt_pageable)
#   fig7 tables  the synthetic benches of MemHC Fig. 7 and Tables 1-3 (criterion; long)
#   synth        memhc-synth at the Fig. 7 points of repeated rate (N = 384 and 192, vector
#                size 16; $SYNTH_SIZES, default 384,192) and a Table 1 point ($SYNTH_VECTORS vectors, default 20;
#                $SYNTH_REPEATS rates, default 0,0.125,0.25,0.5,0.75,1; $SYNTH_RUNS runs, 3)
#   profile      memhc-synth under bash's time with --timeline and --report, at a Fig. 7 and
#                a Table 1 point, optimal and naive: where a run's wall time goes
#   cpu          host CPU time against device compute time per contraction, N = 128 and 384,
#                pageable (optimal, naive) and the direct data path
#   datapath     the data path of issue 29 at the Fig. 7 points of repeated rate (N = $SYNTH_SIZES,
#                vector size 16, repeats 0-1) and the Table 1 point: today's schedule (pageable,
#                optimal and naive) and the direct path (--host-memory pinned --prefetch 12,
#                optimal), each point's records with cpu_s and device_compute_s
#   datapath-vsize  the same at the Fig. 7 points of vector size (1 to 32, repeat 1)
#   order        the direct path in both issue orders (--order queue,dependency: the dependency
#                order of docs/results/2026-11-28-issue-order.md) at the Fig. 7 points of
#                repeated rate 0.75 and 1 (N = $SYNTH_SIZES, vector size 16) and vector size 4
#                and 32 at repeat 1: first --verify at N = 64, then timed; each record carries
#                its order
#   profile-direct  timelines (--timeline) of the direct path at the Fig. 7 point N = 384,
#                repeat 0.5 and the Table 1 point
#   floor-rounds issue 29's GPU target, repeated: the direct path at the Fig. 7 points of N = 384
#                (vector size 16, repeats 0-1; vector sizes 1-32 at repeat 1) and the Table 1
#                point (lru), and today's schedule (pageable, optimal) at the repeat points,
#                $SYNTH_RUNS runs each (every run's wall time is in the records: wall_s_runs)
#   wait         host CPU per contraction on the direct path (N = 128 and 384) with the driver's
#                default wait and with MEMHC_GPU_WAIT=block (threads sleep while they wait), two
#                rounds of each, interleaved, $WAIT_RUNS runs per round (default 3)
#   host128      where the host's time goes on the direct path at N = 128 (issue 29's unmet host
#                target): 20 and 80 vectors (a cost per run against one per contraction), the
#                driver's default wait and MEMHC_GPU_WAIT=block, each under scripts/thread-cpu.py
#                (the CPU time of every thread, sampled), and one --timeline of each wait
#   host128-ab   the direct path at N = 128, 80 vectors: tiled copies per component (16 2D
#                copies a meson node) or per block column (4 3D copies; MEMHC_GPU_TILED), device
#                blocks from the driver when needed (handover) or one arena (--alloc arena),
#                $AB_ROUNDS rounds (default 3) with the four settings interleaved, $AB_RUNS runs
#                each (default 2); scripts/host-ab.py prints the table
#   gauss        MEMHC_GPU_GEMM=gauss (one-product GEMMs of three real products, cublasZgemm3m):
#                memhc-synth --verify on the direct path at N = 64 and 384 (layered meson
#                contractions, fitting and oversubscribed) and memhc run --verify on f0d2 at N = 64
#   column       MEMHC_GPU_TILED=column (tiled copies per block column, cuMemcpy3DAsync):
#                memhc-synth --verify on the direct path at N = 64 and 384, fitting and
#                oversubscribed
#   corr-paper   memhc run timings (alone on the GPU, median of $SYNTH_RUNS runs) at the paper's
#                tensor sizes: a1_rhopi at N = 128 and f0d2 at N = 256, optimal, naive and
#                unified with pageable host memory, optimal on the direct data path
#                (--host-memory pinned --prefetch 12) (issue 27, item 4)
#   compare      gpu-bin/memhc-synth-before (an older build: BEFORE=REV scripts/gpu-build.sh),
#                gpu-bin/memhc-synth-glibc (the system's allocator) and gpu-bin/memhc-synth
#                (mimalloc), those present, at one Fig. 7 point (N = 384, vector size 16,
#                repeated rate 0.5; $SYNTH_RUNS runs) and one oversubscribed Table 1 point
#                (lru and belady, one run: each is long), in one run
#   synth-vsize  memhc-synth at the Fig. 7 points of vector size (1 to 32, repeated rate 1)
#   synth-tables memhc-synth at the points of MemHC Tables 1-3 (N = 384, optimal, lru, pp-lru
#                and belady, $SYNTH_VECTORS vectors, $SYNTH_RUNS runs): vector sizes 8-64 at
#                oversubscription 0.5; vector size 64 at oversubscription 0.5, 1 and 1.5; vector
#                size 64 at repeated rates 0.25-1 (the criterion `tables` stage times the same
#                points at 20 vectors, far longer)
#   all          check limits contraction synth synth-vsize fig7 tables (synth-tables runs the
#                points of the criterion `tables` stage through memhc-synth, so `all` leaves it
#                out)
#
# Every step runs under a time limit ($STEP_TIMEOUT seconds, default 150; a step that hits it
# records exit status 124; a memhc-synth step stopped so keeps the records of the points it
# finished in its FILE.json.partial). The folder is $RESULTS (default: $OUT/results if $OUT is set, else
# docs/results), then <UTC date>-<stages>/. Every step writes its command and raw output there;
# the environment (device, driver, CUDA, the binaries' manifest) is recorded first. With $OUT
# set, the folder is also packed into $OUT/<folder>.tar.gz (the device tool returns few files).
# Copy the folder into docs/results/ of the repository: a GPU claim without it does not exist.
set -uo pipefail
cd "$(dirname "$0")/.."

bin=gpu-bin
[ -d "$bin" ] || { echo "gpu-run: no $bin/; run scripts/gpu-build.sh on the build machine and carry $bin" >&2; exit 2; }
[ $# -gt 0 ] || set -- all
[ "$1" = all ] && set -- check limits contraction synth synth-vsize fig7 tables
stages=$(IFS=-; echo "$*")
root=${RESULTS:-${OUT:+$OUT/results}}
root=${root:-docs/results}
name="$(date -u +%Y-%m-%dT%H%M%SZ)-$stages"
dir="$root/$name"
mkdir -p "$dir"
limit=${STEP_TIMEOUT:-150}
# The synth stages: vectors per run, repeated rates swept, runs per configuration (median).
vectors=${SYNTH_VECTORS:-20}
repeats=${SYNTH_REPEATS:-0,0.125,0.25,0.5,0.75,1}
sizes=${SYNTH_SIZES:-384,192}
runs=${SYNTH_RUNS:-3}
# The direct data path of issue 29: page-locked host objects, copies issued ahead.
direct="--host-memory pinned --prefetch 12"
# The backend of the cpu, datapath and datapath-vsize stages: `BACKEND=model` runs them on the
# modelled H100 (no GPU needed), the twin of a GPU run for scripts/gpu-datapath-table.py.
backend=${BACKEND:-cuda}
t0=$(date +%s)

# cuBLAS: the toolkit's, else the one in PyTorch's pip wheels; cudarc searches LD_LIBRARY_PATH.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null); do
    [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}

# Runs one command under the time limit, recording it, its output (stdout and stderr), its exit
# status and its wall time in $dir/$1.log; prints the log's last lines.
step() {
    local name=$1; shift
    echo "== [$(( $(date +%s) - t0 )) s] $name: $*" | tee -a "$dir/commands.txt"
    local start=$(date +%s.%N) status
    {
        echo "\$ $*"
        timeout -k 10 "$limit" "$@"
        status=$?
        echo "exit status: $status$([ $status = 124 ] && echo " (stopped at the $limit s limit)")"
        echo "wall: $(python3 -c "print(f'{$(date +%s.%N) - $start:.1f}')") s"
    } > "$dir/$name.log" 2>&1
    tail -n 25 "$dir/$name.log"
}

tests() {
    for t in "$bin"/tests/*; do
        step "test-$(basename "$t")" "$t" --test-threads=1 --nocapture
    done
}

# memhc-synth --verify: every configuration its own process (the reference recomputes each
# run's results on the host, single-threaded, about 3 s per contraction at N = 384), all at
# once; the budgets are small, so they fit on the card together.
verify() {
    local synth="$bin/memhc-synth" pids=()
    for n in 64 384; do
        if [ $n = 64 ]; then set -- --vector-size 16 --vectors 8; else set -- --vector-size 4 --vectors 2; fi
        for mode in naive reorg reorg-sync optimal unified; do
            step "verify-N$n-fit-$mode" "$synth" --backend cuda --verify --tensor-size $n "$@" \
                --repeat 0.5 --mode $mode & pids+=($!)
        done
        for policy in lru pp-lru belady; do
            for mode in naive optimal; do
                step "verify-N$n-oversub-$policy-$mode" "$synth" --backend cuda --verify \
                    --tensor-size $n "$@" --repeat 0.5 --oversub 0.5 --policy $policy \
                    --mode $mode & pids+=($!)
            done
        done
        for mode in naive optimal; do
            step "verify-N$n-fit-direct-$mode" "$synth" --backend cuda --verify --tensor-size $n \
                "$@" --repeat 0.5 --mode $mode $direct & pids+=($!)
            for policy in lru belady; do
                step "verify-N$n-oversub-direct-$policy-$mode" "$synth" --backend cuda --verify \
                    --tensor-size $n "$@" --repeat 0.5 --oversub 0.5 --policy $policy \
                    --mode $mode $direct & pids+=($!)
            done
        done
    done
    wait "${pids[@]}"
}

# memhc-synth --verify on the direct path with the environment setting $1 (VAR=value), at
# N = 64 and 384, fitting and oversubscribed (belady); the steps are named after $2.
verify_with() {
    local setting=$1 name=$2 n
    for n in 64 384; do
        if [ $n = 64 ]; then set -- --vector-size 16 --vectors 8; else set -- --vector-size 4 --vectors 2; fi
        ( export "$setting"
          step "$name-verify-N$n-fit" "$bin/memhc-synth" --backend cuda --verify --tensor-size $n \
              "$@" --repeat 0.5 --mode optimal $direct
          step "$name-verify-N$n-oversub" "$bin/memhc-synth" --backend cuda --verify \
              --tensor-size $n "$@" --repeat 0.5 --oversub 0.5 --policy belady --mode optimal $direct )
    done
}

# memhc run --verify on two presets of the paper's Table 4 at N = 64: fitting (the plan's peak)
# and oversubscribed (half of it), pageable and pinned host memory.
corr() {
    local memhc="$bin/memhc" pids=() peak
    for preset in a1_rhopi f0d2; do
        "$memhc" gen $preset --tensor-size 64 -o "$dir/$preset.json" > "$dir/gen-$preset.log" 2>&1
        peak=$("$memhc" plan "$dir/$preset.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_bytes"])')
        for hm in pageable pinned; do
            step "corr-$preset-fit-$hm" "$memhc" run "$dir/$preset.json" --backend cuda --verify \
                --policy lru --mode naive,optimal --host-memory $hm \
                --json "$dir/corr-$preset-fit-$hm.json" & pids+=($!)
            step "corr-$preset-oversub-$hm" "$memhc" run "$dir/$preset.json" --backend cuda \
                --verify --budget $((peak / 2)) --policy lru,belady --mode naive,optimal \
                --host-memory $hm --json "$dir/corr-$preset-oversub-$hm.json" & pids+=($!)
        done
    done
    wait "${pids[@]}"
}

sanitize() {
    local cs pids=()
    cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
    [ -n "$cs" ] || { echo "gpu-run: no compute-sanitizer" | tee "$dir/sanitize.log"; return; }
    for t in conformance end_to_end; do
        step "sanitize-memcheck-$t" "$cs" --tool memcheck --leak-check full --error-exitcode 3 \
            "$bin/tests/$t" --test-threads=1 & pids+=($!)
    done
    for tool in racecheck synccheck; do
        step "sanitize-$tool-conformance" "$cs" --tool $tool --error-exitcode 3 \
            "$bin/tests/conformance" --test-threads=1 & pids+=($!)
    done
    wait "${pids[@]}"
}

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(uname -a)"
    echo "stages: $*"
    echo "LD_LIBRARY_PATH: $LD_LIBRARY_PATH"
    nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,memory.free,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
    nvidia-smi 2>&1 | sed -n '1,4p'
    nvcc --version 2>&1 | tail -n 2
    ls -l /usr/local/cuda/lib64/libcublas.so* 2>/dev/null
    python3 -c 'import nvidia.cublas, os; print("pip cuBLAS:", list(nvidia.cublas.__path__)[0])' 2>&1
    python3 -m pip show nvidia-cublas 2>/dev/null | sed -n '1,2p'
    compute-sanitizer --version 2>&1 | tail -n 1
    nproc
    echo "--- binaries (gpu-bin/MANIFEST)"
    cat "$bin/MANIFEST"
} > "$dir/environment.txt" 2>&1
cat "$dir/environment.txt"

export CRITERION_HOME="$dir/criterion"
for stage in "$@"; do
    case "$stage" in
        env) ;;
        check) tests & verify & sanitize & corr & wait ;;
        corr) corr ;;
        tests) tests ;;
        verify) verify ;;
        sanitize) sanitize ;;
        limits) step limits python3 scripts/gpu-limits.py --json "$dir/limits.json" ;;
        contraction|register|fig7|tables)
            MEMHC_BENCH_GROUPS=$stage step "bench-$stage" "$bin/bench-cuda" --bench "^$stage/" ;;
        synth)
            # The synthetic tool itself, at the Fig. 7 points and an oversubscribed Table 1 point.
            step synth-fig7-repeat "$bin/memhc-synth" --backend cuda --vector-size 16 \
                --vectors "$vectors" --sweep "tensor-size=$sizes" --sweep "repeat=$repeats" \
                --mode optimal,naive,unified --runs "$runs" --json "$dir/synth-fig7-repeat.json"
            step synth-table1 "$bin/memhc-synth" --backend cuda --tensor-size 384 --vector-size 32 \
                --vectors "$vectors" --repeat 0.5 --oversub 0.5 --policy lru,pp-lru,belady \
                --paper-table --runs "$runs" --json "$dir/synth-table1.json" ;;
        profile)
            # Where a run's wall time goes: CPU time (bash's time: user and sys) against wall, the event
            # timeline (Chrome trace, GPU timing events) and the memory report, at one Fig. 7
            # point (fitting) and one Table 1 point (oversubscribed), optimal and naive.
            for mode in optimal naive; do
                step "profile-fig7-$mode" bash -c 'time "$@"' time "$bin/memhc-synth" --backend cuda \
                    --tensor-size 384 --vector-size 16 --vectors "$vectors" --repeat 0.5 \
                    --mode $mode --report --timeline "$dir/timeline-fig7-$mode.json"
                step "profile-table1-$mode" bash -c 'time "$@"' time "$bin/memhc-synth" --backend cuda \
                    --tensor-size 384 --vector-size 32 --vectors "$vectors" --repeat 0.5 \
                    --oversub 0.5 --mode $mode --report --timeline "$dir/timeline-table1-$mode.json"
            done ;;
        cpu)
            # Item e of issue 10: the host's CPU time per contraction (cpu_s: the process over
            # the run, staging threads included) against the device's compute time per
            # contraction (device_compute_s, from timing events), at N = 128 and 384.
            step cpu "$bin/memhc-synth" --backend "$backend" --sweep tensor-size=128,384 \
                --vector-size 16 --vectors "$vectors" --repeat 0.5 --mode optimal,naive \
                --runs "$runs" --json "$dir/cpu.json"
            python3 scripts/per-contraction.py "$dir/cpu.json" | tee "$dir/cpu-per-contraction.md"
            step cpu-direct "$bin/memhc-synth" --backend "$backend" --sweep tensor-size=128,384 \
                --vector-size 16 --vectors "$vectors" --repeat 0.5 --mode optimal $direct \
                --runs "$runs" --json "$dir/cpu-direct.json"
            python3 scripts/per-contraction.py "$dir/cpu-direct.json" \
                | tee "$dir/cpu-direct-per-contraction.md" ;;
        order)
            # Issue 29's schedule: the dependency order against the queue's on the direct path.
            for o in queue dependency; do
                step "order-verify-$o" "$bin/memhc-synth" --backend "$backend" --tensor-size 64 \
                    --vector-size 16 --vectors 8 --sweep repeat=0.5,1 --sweep oversub=0,1 \
                    --mode optimal $direct --order "$o" --verify --json "$dir/order-verify-$o.json"
            done
            for o in queue dependency; do
                step "order-fig7-$o" "$bin/memhc-synth" --backend "$backend" --vector-size 16 \
                    --vectors "$vectors" --sweep "tensor-size=$sizes" --sweep repeat=0.75,1 \
                    --mode optimal $direct --order "$o" --runs "$runs" \
                    --json "$dir/order-fig7-$o.json"
                step "order-vsize-$o" "$bin/memhc-synth" --backend "$backend" --repeat 1 \
                    --vectors "$vectors" --sweep "tensor-size=$sizes" --sweep vector-size=4,32 \
                    --mode optimal $direct --order "$o" --runs "$runs" \
                    --json "$dir/order-vsize-$o.json"
            done ;;
        datapath)
            # Issue 29's data path against today's schedule, at the Fig. 7 points of repeated
            # rate and the Table 1 point.
            step datapath-fig7-pageable "$bin/memhc-synth" --backend "$backend" --vector-size 16 \
                --vectors "$vectors" --sweep "tensor-size=$sizes" --sweep repeat=0,0.25,0.5,0.75,1 \
                --mode optimal,naive --runs "$runs" --json "$dir/datapath-fig7-pageable.json"
            step datapath-fig7-direct "$bin/memhc-synth" --backend "$backend" --vector-size 16 \
                --vectors "$vectors" --sweep "tensor-size=$sizes" --sweep repeat=0,0.25,0.5,0.75,1 \
                --mode optimal $direct --runs "$runs" --json "$dir/datapath-fig7-direct.json"
            step datapath-table1-pageable "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vector-size 32 --vectors "$vectors" --repeat 0.5 --oversub 0.5 \
                --policy lru,pp-lru,belady --mode optimal --runs "$runs" \
                --json "$dir/datapath-table1-pageable.json"
            step datapath-table1-direct "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vector-size 32 --vectors "$vectors" --repeat 0.5 --oversub 0.5 \
                --policy lru,pp-lru,belady --mode optimal $direct --runs "$runs" \
                --json "$dir/datapath-table1-direct.json" ;;
        datapath-vsize)
            for hm in pageable direct; do
                extra=""; [ $hm = direct ] && extra=$direct
                step "datapath-vsize-$hm" "$bin/memhc-synth" --backend "$backend" --vectors "$vectors" \
                    --repeat 1 --sweep "tensor-size=$sizes" --sweep vector-size=1,2,4,8,16,32 \
                    --mode optimal $extra --runs "$runs" --json "$dir/datapath-vsize-$hm.json"
            done ;;
        floor-rounds)
            step floor-fig7-direct "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vector-size 16 --vectors "$vectors" --sweep repeat=0,0.25,0.5,0.75,1 \
                --mode optimal $direct --runs "$runs" --json "$dir/floor-fig7-direct.json"
            step floor-vsize-direct "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vectors "$vectors" --repeat 1 --sweep vector-size=1,2,4,8,16,32 \
                --mode optimal $direct --runs "$runs" --json "$dir/floor-vsize-direct.json"
            step floor-table1-direct "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vector-size 32 --vectors "$vectors" --repeat 0.5 --oversub 0.5 --policy lru \
                --mode optimal $direct --runs "$runs" --json "$dir/floor-table1-direct.json"
            step floor-fig7-pageable "$bin/memhc-synth" --backend "$backend" --tensor-size 384 \
                --vector-size 16 --vectors "$vectors" --sweep repeat=0,0.25,0.5,0.75,1 \
                --mode optimal --runs "$runs" --json "$dir/floor-fig7-pageable.json" ;;
        wait)
            for round in 1 2; do
                for w in auto block; do
                    MEMHC_GPU_WAIT=$w step "wait-$w-$round" "$bin/memhc-synth" --backend "$backend" \
                        --sweep tensor-size=128,384 --vector-size 16 --vectors "$vectors" \
                        --repeat 0.5 --mode optimal $direct --runs "${WAIT_RUNS:-3}" \
                        --json "$dir/wait-$w-$round.json"
                done
            done
            for f in "$dir"/wait-*.json; do
                echo "### $(basename "$f")"; python3 scripts/per-contraction.py "$f"
            done | tee "$dir/wait.md" ;;
        host128)
            for w in auto block; do
                for nv in 20 80; do
                    MEMHC_GPU_WAIT=$w step "host128-$w-v$nv" python3 scripts/thread-cpu.py \
                        "$dir/threads-host128-$w-v$nv.jsonl" -- "$bin/memhc-synth" --backend "$backend" \
                        --tensor-size 128 --vector-size 16 --vectors $nv --repeat 0.5 \
                        --mode optimal $direct --runs "$runs" --json "$dir/host128-$w-v$nv.json"
                done
                MEMHC_GPU_WAIT=$w step "host128-timeline-$w" "$bin/memhc-synth" --backend "$backend" \
                    --tensor-size 128 --vector-size 16 --vectors 20 --repeat 0.5 --mode optimal \
                    $direct --json "$dir/host128-timeline-$w.json" \
                    --timeline "$dir/timeline-host128-$w.json"
            done
            for f in "$dir"/host128-*-v*.json; do
                echo "### $(basename "$f")"; python3 scripts/per-contraction.py "$f"
            done | tee "$dir/host128.md" ;;
        host128-ab)
            for round in $(seq 1 "${AB_ROUNDS:-3}"); do
                for tiled in component column; do
                    for alloc in handover arena; do
                        MEMHC_GPU_TILED=$tiled step "host128-$tiled-$alloc-$round" "$bin/memhc-synth" \
                            --backend "$backend" --tensor-size 128 --vector-size 16 --vectors 80 \
                            --repeat 0.5 --mode optimal --alloc $alloc $direct --runs "${AB_RUNS:-2}" \
                            --json "$dir/host128-$tiled-$alloc-$round.json"
                    done
                done
            done
            python3 scripts/host-ab.py "$dir" | tee "$dir/host128-ab.md" ;;
        gauss)
            verify_with MEMHC_GPU_GEMM=gauss gauss
            "$bin/memhc" gen f0d2 --tensor-size 64 -o "$dir/f0d2-gauss.json" > "$dir/gen-f0d2-gauss.log" 2>&1
            MEMHC_GPU_GEMM=gauss step gauss-corr-f0d2 "$bin/memhc" run "$dir/f0d2-gauss.json" \
                --backend cuda --verify --mode optimal ;;
        column) verify_with MEMHC_GPU_TILED=column column ;;
        corr-paper)
            for spec in a1_rhopi:128 f0d2:256; do
                preset=${spec%%:*}; n=${spec##*:}
                "$bin/memhc" gen $preset --tensor-size $n -o "$dir/$preset-$n.json" \
                    > "$dir/gen-$preset-$n.log" 2>&1
                step "corr-paper-$preset-$n-pageable" "$bin/memhc" run "$dir/$preset-$n.json" \
                    --backend cuda --mode optimal,naive,unified --runs "$runs" \
                    --json "$dir/corr-paper-$preset-$n-pageable.json"
                step "corr-paper-$preset-$n-pinned" "$bin/memhc" run "$dir/$preset-$n.json" \
                    --backend cuda --mode optimal --host-memory pinned --prefetch 12 \
                    --runs "$runs" --json "$dir/corr-paper-$preset-$n-pinned.json"
            done ;;
        profile-direct)
            step profile-direct-fig7 bash -c 'time "$@"' time "$bin/memhc-synth" --backend cuda \
                --tensor-size 384 --vector-size 16 --vectors "$vectors" --repeat 0.5 \
                --mode optimal $direct --json "$dir/profile-direct-fig7.json" \
                --timeline "$dir/timeline-direct-fig7.json"
            step profile-direct-table1 bash -c 'time "$@"' time "$bin/memhc-synth" --backend cuda \
                --tensor-size 384 --vector-size 32 --vectors "$vectors" --repeat 0.5 --oversub 0.5 \
                --mode optimal $direct --json "$dir/profile-direct-table1.json" \
                --timeline "$dir/timeline-direct-table1.json" ;;
        compare)
            # Before and after a change, in one run: gpu-bin/memhc-synth-before (an older
            # build: BEFORE=REV scripts/gpu-build.sh), this build on the system's allocator and
            # this build as shipped, at a Fig. 7 point and a Table 1 point.
            builds="memhc-synth-before memhc-synth-glibc memhc-synth"
            for b in $builds; do
                [ -x "$bin/$b" ] || { echo "gpu-run: no $bin/$b" >&2; continue; }
                step "compare-$b" "$bin/$b" --backend cuda --tensor-size 384 --vector-size 16 \
                    --vectors "$vectors" --repeat 0.5 --mode optimal,naive,unified \
                    --runs "$runs" --json "$dir/compare-$b.json"
            done
            for b in $builds; do
                [ -x "$bin/$b" ] || continue
                step "compare-table1-$b" "$bin/$b" --backend cuda --tensor-size 384 \
                    --vector-size 32 --vectors "$vectors" --repeat 0.5 --oversub 0.5 \
                    --policy lru,belady --mode optimal --runs 1 \
                    --json "$dir/compare-table1-$b.json"
            done ;;
        synth-vsize)
            step synth-fig7-vsize "$bin/memhc-synth" --backend cuda --vectors "$vectors" --repeat 1 \
                --sweep tensor-size=384,192 --sweep vector-size=1,2,4,8,16,32 \
                --mode optimal,naive,unified --runs "$runs" --json "$dir/synth-fig7-vsize.json" ;;
        synth-tables)
            # MemHC Tables 1-3, with the paper's per-vector averages (--paper-table).
            table() {
                local name=$1; shift
                step "synth-$name" "$bin/memhc-synth" --backend cuda --tensor-size 384 \
                    --vectors "$vectors" --mode optimal --policy lru,pp-lru,belady \
                    --paper-table --runs "$runs" --json "$dir/synth-$name.json" "$@"
            }
            table table1 --repeat 0.5 --oversub 0.5 --sweep vector-size=8,16,32,64
            table table2 --repeat 0.5 --vector-size 64 --sweep oversub=0.5,1,1.5
            table table3 --oversub 0.5 --vector-size 64 --sweep repeat=0.25,0.5,0.75,1 ;;
        *) echo "gpu-run: unknown stage $stage (env check tests verify corr sanitize limits contraction register fig7 tables synth profile cpu compare synth-vsize synth-tables datapath datapath-vsize order profile-direct floor-rounds wait host128 host128-ab gauss column corr-paper all)" >&2; exit 2 ;;
    esac
done
if [ -d "$CRITERION_HOME" ]; then
    python3 scripts/gpu-ratios.py "$CRITERION_HOME" | tee "$dir/ratios.md"
fi
echo "== [$(( $(date +%s) - t0 )) s] done"
grep -H "exit status" "$dir"/*.log | sed "s|$dir/||"
if [ -n "${OUT:-}" ]; then
    tar czf "$OUT/$name.tar.gz" -C "$root" "$name" && echo "packed: \$OUT/$name.tar.gz"
fi
echo "results: $dir"
