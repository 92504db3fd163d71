#!/usr/bin/env bash
# Builds, on a machine with Rust and no GPU, everything the GPU runs need, into gpu-bin/
# (ignored by git): the memhc-cuda test binaries, its benchmark binary and memhc-synth, all with
# the `cuda` feature, release mode, stripped. CUDA is loaded at run time, so nothing here needs
# CUDA installed. Then carry gpu-bin/ to the GPU machine and run scripts/gpu-run.sh there (it
# needs no Rust toolchain).
#
#   scripts/gpu-build.sh            # build and list what was built
#   BEFORE=REV scripts/gpu-build.sh # also memhc-synth as of commit REV, as
#                                   # gpu-bin/memhc-synth-before (gpu-run.sh's compare stage)
#
# Besides memhc-synth (mimalloc as the process's allocator: its default `mimalloc` feature) it
# builds `memhc` (the correlator tool, package memhc-cli, with `cuda`) and memhc-synth-glibc, the
# same source as memhc-synth with the system's allocator (`--no-default-features`), for the
# compare stage; `GLIBC=0 scripts/gpu-build.sh` leaves that one out (one build less).
#
# A GPU record must come from a clean commit, so this refuses a tree with uncommitted changes
# to tracked files (ALLOW_DIRTY=1 builds anyway, and the manifest says so). To keep working
# while it builds, build in a worktree of the commit:
#   git worktree add --detach ../gpu-tree HEAD && (cd ../gpu-tree && scripts/gpu-build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

if ! git diff --quiet HEAD && [ "${ALLOW_DIRTY:-0}" != 1 ]; then
    echo "gpu-build: uncommitted changes to tracked files; a GPU record must come from a clean" \
        "commit: commit them, build in a worktree of HEAD, or set ALLOW_DIRTY=1" >&2
    exit 2
fi

out=gpu-bin
rm -rf "$out"
mkdir -p "$out/tests"

executables() {
    # The paths of the executables cargo reports building, one per line.
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["target"]["kind"][0], m["target"]["name"], m["executable"])
'
}

echo "building the memhc-cuda tests ..." >&2
cargo test --release -p memhc-cuda --no-run --message-format=json \
    | executables | while read -r kind name path; do
        case "$kind" in
            test) cp "$path" "$out/tests/$name" ;;
            lib) cp "$path" "$out/tests/unit-$name" ;;
        esac
    done
echo "building the memhc-cuda benches ..." >&2
cargo bench -p memhc-cuda --no-run --message-format=json \
    | executables | while read -r kind name path; do
        [ "$kind" = bench ] && cp "$path" "$out/bench-$name"
    done
echo "building memhc-synth ..." >&2
cargo build --release -p memhc-synth --features cuda
cp "${CARGO_TARGET_DIR:-target}/release/memhc-synth" "$out/memhc-synth"
echo "building memhc (the correlator tool) ..." >&2
cargo build --release -p memhc-cli --features cuda
cp "${CARGO_TARGET_DIR:-target}/release/memhc" "$out/memhc"
if [ "${GLIBC:-1}" != 0 ]; then
    echo "building memhc-synth with the system's allocator ..." >&2
    cargo build --release -p memhc-synth --no-default-features --features cuda
    cp "${CARGO_TARGET_DIR:-target}/release/memhc-synth" "$out/memhc-synth-glibc"
fi

if [ -n "${BEFORE:-}" ]; then
    rev=$(git rev-parse --verify "$BEFORE^{commit}")
    echo "building memhc-synth as of $rev (BEFORE) ..." >&2
    tree=$(mktemp -d)
    before_target="${CARGO_TARGET_DIR:-$PWD/target}/before"
    git worktree add -q --detach "$tree" "$rev"
    (cd "$tree" && CARGO_TARGET_DIR="$before_target" \
        cargo build --release -p memhc-synth --features cuda)
    cp "$before_target/release/memhc-synth" "$out/memhc-synth-before"
    git worktree remove --force "$tree"
fi

find "$out" -type f -exec strip --strip-debug {} \;
{
    echo "commit: $(git rev-parse HEAD)$(git diff --quiet HEAD || echo ' (with uncommitted changes)')"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m) with $(rustc --version)"
    if [ -n "${BEFORE:-}" ]; then echo "memhc-synth-before: commit $rev"; fi
    (cd "$out" && find . -type f ! -name MANIFEST -exec sha256sum {} \; | sort -k2)
} > "$out/MANIFEST"
du -sh "$out" >&2
cat "$out/MANIFEST"
