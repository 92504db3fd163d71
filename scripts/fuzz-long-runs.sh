#!/usr/bin/env bash
# The long fuzz runs of issue 31 (docs/results/2026-11-27-fuzz.md): each named target, one at
# a time, for SECONDS seconds (MEMHC_FUZZ_SECONDS, see memhc_testkit::fuzz), in release mode
# under `nice -n 19`, measured by `/usr/bin/time -v`. The raw output of target T goes to
# docs/results/2026-11-27-fuzz/T.txt; scripts/fuzz-table.py turns those files into the table.
#
#   scripts/fuzz-long-runs.sh 600 corr-files npy-node-data workload-files campaign-manifests
#
# Targets: corr-files npy-node-data workload-files campaign-manifests memhc-args
# memhc-synth-args capi-calls capi-correlators. Run from the repository root; the test binaries
# are built (`cargo test --release --no-run`) first, in CARGO_TARGET_DIR if set.
set -u
seconds=${1:?usage: $0 SECONDS TARGET...}
shift
out=docs/results/2026-11-27-fuzz
mkdir -p "$out"

# target -> package, test file, test function
spec() {
    case "$1" in
    corr-files) echo "memhc-corr fuzz_files mutated_correlator_files_never_crash" ;;
    npy-node-data) echo "memhc-corr fuzz_files mutated_npy_node_data_never_crashes" ;;
    workload-files) echo "memhc-workload fuzz_workload mutated_workload_files_never_crash" ;;
    campaign-manifests) echo "memhc-campaign fuzz_manifest mutated_manifests_never_crash" ;;
    memhc-args) echo "memhc-cli fuzz_args random_command_lines_end_with_an_exit_code" ;;
    memhc-synth-args) echo "memhc-synth fuzz_args random_command_lines_end_with_an_exit_code" ;;
    capi-calls) echo "memhc-capi fuzz_abi arbitrary_call_sequences_never_crash_nor_report_internal_errors" ;;
    capi-correlators) echo "memhc-capi fuzz_abi arbitrary_correlator_call_sequences_never_crash" ;;
    *) echo "unknown target $1" >&2; return 1 ;;
    esac
}

# Every test binary in one cargo call, before any run: packages built together share one
# feature resolution (built one by one, each would rebuild its dependencies).
args=()
for target in "$@"; do
    read -r package file test < <(spec "$target") || exit 2
    args+=(-p "$package" --test "$file")
done
built=$(cargo test --release "${args[@]}" --no-run --message-format=json) || exit 2

for target in "$@"; do
    read -r package file test < <(spec "$target") || exit 2
    exe=$(python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and t.get("kind") == ["test"] \
            and t.get("name") == sys.argv[1] and m["package_id"].find(sys.argv[2]) >= 0:
        print(m["executable"])' "$file" "$package" <<<"$built" | head -1)
    if [ -z "$exe" ]; then
        echo "$target: the test binary did not build" >&2
        exit 2
    fi
    dir=$(cargo metadata --no-deps --format-version 1 |
        python3 -c 'import json,sys,os
m = json.load(sys.stdin)
print(next(os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["name"] == sys.argv[1]))' "$package")
    raw="$PWD/$out/$target.txt"
    {
        echo "# target: $target"
        echo "# test: $package $file::$test"
        echo "# commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!docs' || echo ' (with local changes)')"
        echo "# seconds asked: $seconds"
        echo "# started: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "# command: MEMHC_FUZZ_SECONDS=$seconds /usr/bin/time -v nice -n 19 $(basename "$exe") --exact $test --nocapture --test-threads=1"
    } >"$raw"
    (cd "$dir" && MEMHC_FUZZ_SECONDS=$seconds /usr/bin/time -v nice -n 19 "$exe" --exact "$test" \
        --nocapture --test-threads=1) >>"$raw" 2>&1
    echo "# exit: $?" >>"$raw"
    echo "$target: $(grep -o -m1 'memhc-fuzz .*' "$raw"), $(tail -1 "$raw")"
done
