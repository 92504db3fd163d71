#!/bin/bash
# unit-graphs.sh DIR: writes the unit graph (cargo --unit-graph) of every cargo build that
# .ci/run makes, in .ci/run's order, as DIR/NN-name.json. Nothing is compiled. --unit-graph is
# unstable; the channel override lets the stable toolchain print it.
set -u
export __CARGO_TEST_CHANNEL_OVERRIDE_DO_NOT_USE_THIS=nightly
d=$1
mkdir -p "$d"
graph() { # graph NAME CARGO-ARGS...
    local name=$1
    shift
    cargo "$@" --unit-graph -Z unstable-options >"$d/$name.json" 2>/dev/null || echo "failed: cargo $*" >&2
}
graph 01-clippy clippy --workspace --all-targets
graph 02-doc doc --no-deps --workspace
graph 03-clippy-features clippy --workspace --all-targets --features cuda,rocm,mpi,hdf5,python
graph 04-test test --workspace --no-run
graph 05-gpu-benches test --workspace --features cuda,rocm --bench cuda --bench rocm --no-run
graph 06-hdf5-mpi test --workspace --features hdf5,mpi --test hdf5 --test mpi --no-run
graph 07-capi-release build --release -p memhc-capi
graph 08-wheel-release build --release -p memhc-py --features python,pyo3/extension-module
graph 09-static-release build --release -p memhc-capi -p memhc-py --features memhc-embed/hdf5,memhc-py/python,pyo3/extension-module
