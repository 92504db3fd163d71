//! One case of the `overhead` bench, run once, for profiling under callgrind: the synthetic
//! workload at N = 2 (vector size 16, repeat rate 1/2) on the null backend, optimal mode on 4
//! streams, as `benches/overhead.rs` runs it.
//!
//! ```text
//! cargo build --release -p memhc-workload --example overhead_case
//! valgrind --tool=callgrind --toggle-collect='hadron::engine::Engine*::contract_into' \
//!     target/release/examples/overhead_case 32000 lru fits 21935104
//! ```
//!
//! Arguments: the number of contractions (4000), the policy (`lru`), `fits` (budget = the
//! peak without eviction) or `oversub` (budget = peak / 2.5), and optionally the peak in bytes
//! (which the program prints), to skip the dry run that finds it: that dry run runs the same
//! code, so a profile of the case alone must not include it (`-` finds it), and how repeated
//! nodes are drawn (`uniform`, the default, or `gaussian`, `recent:K`). It prints the case's
//! wall time per contraction: the fastest of `MEMHC_OVERHEAD_REPEAT` runs (default 1; a
//! short queue is over in milliseconds, so one run is at the mercy of a busy machine). Like
//! the bench, it runs under mimalloc.

use std::error::Error;

use memhc_core::{Mode, PolicyKind};
use memhc_host::null::NullBackend;
use memhc_workload::run::{RunSpec, peak_without_eviction, run};
use memhc_workload::{Dist, SynthParams, generate};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let contractions: usize = args.first().map_or(Ok(4000), |s| s.parse())?;
    let policy: PolicyKind = args.get(1).map_or("lru", String::as_str).parse()?;
    let oversub = args.get(2).is_some_and(|s| s.starts_with("oversub"));
    let params = SynthParams {
        tensor_size: 2,
        vector_size: 16,
        vectors: contractions / 16,
        repeat: 0.5,
        dist: args
            .get(4)
            .map_or(Ok(Dist::Uniform), |s| s.parse::<Dist>())?,
        ..SynthParams::default()
    };
    let workload = generate(&params)?;
    let analysis = workload.analyse()?;
    let peak = match args.get(3).filter(|p| *p != "-") {
        Some(p) => p.parse()?,
        None => peak_without_eviction(&workload, &analysis)?,
    };
    let budget = if oversub {
        (peak as f64 / 2.5) as usize
    } else {
        peak
    };
    let spec = RunSpec::new(policy, Mode::Optimal, budget, 4);
    let repeat: usize = std::env::var("MEMHC_OVERHEAD_REPEAT").map_or(Ok(1), |s| s.parse())?;
    let mut best: Option<memhc_workload::run::Outcome> = None;
    for _ in 0..repeat.max(1) {
        let o = run(
            NullBackend::new(budget),
            &workload,
            &analysis,
            &spec,
            &mut |_| {},
        )?;
        if best.as_ref().is_none_or(|b| o.wall_s < b.wall_s) {
            best = Some(o);
        }
    }
    let o = best.ok_or("no run")?;
    println!(
        "{contractions} contractions, {policy}, peak {peak}, budget {budget}: wall {:.3} us/contraction, {} misses, {} evictions",
        o.wall_s / contractions as f64 * 1e6,
        o.stats.misses,
        o.stats.evictions
    );
    Ok(())
}
