//! The host memory of nodes whose values nobody reads costs nothing, whatever the global
//! allocator: the dry runs (the peak without eviction, the Belady bound) and a run on the
//! modelled GPU (a backend that keeps no values) of a queue whose initial nodes total several
//! GiB leave the process's resident set almost where it was. This binary runs under mimalloc,
//! memhc-synth's allocator, which fills a zeroed allocation and so backs every page of it: a
//! node registered as a zeroed vector would cost its full size here.
//!
//! One test in its own binary: the peak resident set it reads is the process's.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use memhc_core::{Mode, PolicyKind};
use memhc_gpu::model::{ModelParams, model_backend};
use memhc_synth::generate::{SynthParams, generate};
use memhc_synth::run::{RunSpec, miss_lower_bound, peak_without_eviction, run};

/// A field of `/proc/self/status` in bytes (`None` off Linux).
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib << 10)
}

#[test]
fn dry_runs_and_a_model_run_of_gib_of_nodes_do_not_grow_the_resident_set() {
    // 656 initial nodes of 4 MiB (N = 128): 2.6 GiB of zeros if they were made.
    let p = SynthParams {
        tensor_size: 128,
        vector_size: 16,
        vectors: 40,
        repeat: 0.5,
        ..SynthParams::default()
    };
    let w = generate(&p).unwrap();
    let a = w.analyse().unwrap();
    let node_bytes: u64 = w
        .nodes
        .iter()
        .map(|n| (n.shape.spins() * n.shape.component_elems() * 16) as u64)
        .sum();
    assert!(node_bytes > 2 << 30, "{node_bytes}");
    let Some(before) = status_bytes("VmRSS:") else {
        return; // no /proc: nothing to measure
    };
    // The peak from here on (the high-water mark is reset to the resident set where the
    // kernel allows it; else the peak so far is below `before` plus this test's own).
    let _ = std::fs::write("/proc/self/clear_refs", "5");

    let peak = peak_without_eviction(&w, &a).unwrap();
    let spec = RunSpec::new(PolicyKind::Lru, Mode::Optimal, peak, 1);
    miss_lower_bound(&w, &a, &spec).unwrap();
    let (backend, _clock) = model_backend(ModelParams::default(), peak).unwrap();
    let out = run(backend, &w, &a, &spec, &mut |_| {}).unwrap();
    assert!(out.stats.flops > 0);
    // The results the run hands back are made (they were copied back).
    let results: u64 = out
        .results
        .iter()
        .map(|(_, r)| std::mem::size_of_val(r.as_slice()) as u64)
        .sum();
    drop(out);

    let grown = status_bytes("VmHWM:").unwrap().saturating_sub(before);
    assert!(
        grown < results + (256 << 20),
        "the resident set grew by {grown} bytes ({results} of results) over runs of {node_bytes} \
         bytes of nodes"
    );
}
