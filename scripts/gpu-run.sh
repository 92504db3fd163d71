#!/usr/bin/env bash
# Runs the prebuilt GPU binaries of gpu-bin/ (made by scripts/gpu-build.sh on a machine with
# Rust) on a machine with an NVIDIA GPU, which needs no Rust toolchain, and writes the raw
# results with the environment they came from into one folder:
#
#   scripts/gpu-run.sh STAGE...      STAGE: env tests contraction fig7 tables synth all
#
# The folder is $RESULTS (default: $OUT/results if $OUT is set, else docs/results), then
# <UTC date>-<stages>/. Every stage writes its command and its raw output there; `env`
# (always run first) records the device, driver, CUDA version, date and the binaries' manifest.
# Copy the folder into docs/results/ of the repository: a GPU claim without it does not exist.
set -uo pipefail
cd "$(dirname "$0")/.."

bin=gpu-bin
[ -d "$bin" ] || { echo "gpu-run: no $bin/; run scripts/gpu-build.sh on the build machine and carry $bin" >&2; exit 2; }
[ $# -gt 0 ] || set -- all
[ "$1" = all ] && set -- tests contraction fig7 tables synth
stages=$(IFS=-; echo "$*")
root=${RESULTS:-${OUT:+$OUT/results}}
root=${root:-docs/results}
dir="$root/$(date -u +%Y-%m-%dT%H%M%SZ)-$stages"
mkdir -p "$dir"

# cuBLAS: the toolkit's, else the one in PyTorch's pip wheels; cudarc searches LD_LIBRARY_PATH.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null); do
    [ -d "$d" ] && LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export LD_LIBRARY_PATH

# Runs one command, recording it and its output (stdout and stderr) in $dir/$1.log.
step() {
    local name=$1; shift
    echo "== $name: $*" | tee -a "$dir/commands.txt"
    { echo "\$ $*"; "$@"; echo "exit status: $?"; } > "$dir/$name.log" 2>&1
    tail -n 25 "$dir/$name.log"
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
    echo "--- binaries (gpu-bin/MANIFEST)"
    cat "$bin/MANIFEST"
} > "$dir/environment.txt" 2>&1
cat "$dir/environment.txt"

export CRITERION_HOME="$dir/criterion"
for stage in "$@"; do
    case "$stage" in
        env) ;;
        tests)
            for t in "$bin"/tests/*; do
                step "test-$(basename "$t")" "$t" --test-threads=1 --nocapture
            done ;;
        contraction|fig7|tables)
            MEMHC_BENCH_GROUPS=$stage step "bench-$stage" "$bin/bench-cuda" --bench "^$stage/" ;;
        synth)
            # The synthetic tool itself, at a Fig. 7 point and an oversubscribed Table 1 point.
            step synth-fig7 "$bin/memhc-synth" --backend cuda --tensor-size 384 --vector-size 16 \
                --vectors 20 --sweep repeat=0,0.5,1 --mode optimal,naive,unified --runs 3 \
                --json "$dir/synth-fig7.json"
            step synth-table1 "$bin/memhc-synth" --backend cuda --tensor-size 384 --vector-size 32 \
                --vectors 20 --repeat 0.5 --oversub 0.5 --policy lru,pp-lru,belady --paper-table \
                --runs 3 --json "$dir/synth-table1.json" ;;
        *) echo "gpu-run: unknown stage $stage (env tests contraction fig7 tables synth all)" >&2; exit 2 ;;
    esac
done
if [ -d "$CRITERION_HOME" ]; then
    python3 scripts/gpu-ratios.py "$CRITERION_HOME" | tee "$dir/ratios.md"
fi
echo "results: $dir"
