//! The planner's analytic peaks against the runtime's own accounting: plans run on the
//! data-less `NullBackend` (memhc-host), whose device memory the runtime allocates exactly as
//! on a real device.
//!
//! * With a budget that never binds, the runtime's `peak_device_bytes` is the report's
//!   `peak_bytes_with_pool`: released buffers stay in the free pool for requests of their size,
//!   so each size of buffer (nodes, identities, products of other shapes, a trace's scratch)
//!   holds its own peak.
//! * With the budget at the report's `peak_bytes`, nothing is evicted and the device holds
//!   exactly that at its peak (the pool is drained before anything is evicted); one byte
//!   less, and the run must evict (or cannot fit).
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use hadron::Engine;
use memhc_core::{Config, Mode, Runtime, Stats};
use memhc_corr::{CheckedFile, Order, Plan, PlanOptions, plan, run};
use memhc_host::NullBackend;

fn dry_run(p: &Plan, budget: usize) -> Result<Stats, memhc_corr::CorrError> {
    let config = Config::for_mode(Mode::Optimal).with_budget(budget);
    let rt = Runtime::new(NullBackend::new(budget), config).unwrap();
    let mut engine = Engine::new(rt);
    run(p, &mut engine, &mut |_| {})?;
    engine.runtime().audit().unwrap();
    Ok(engine.runtime().stats())
}

fn check(checked: &CheckedFile, options: PlanOptions) {
    let p = plan(checked, &options).unwrap();
    let r = &p.report;
    let unbounded = dry_run(&p, 1 << 40).unwrap();
    assert_eq!(unbounded.evictions, 0);
    assert_eq!(
        unbounded.peak_device_bytes, r.peak_bytes_with_pool,
        "{options:?}: the runtime's peak with an unbounded budget"
    );
    let exact = dry_run(&p, r.peak_bytes as usize).unwrap();
    assert_eq!(exact.evictions, 0, "{options:?}: budget = peak_bytes");
    assert_eq!(
        exact.peak_device_bytes, r.peak_bytes,
        "{options:?}: the runtime's peak with the budget at the plan's peak"
    );
    match dry_run(&p, r.peak_bytes as usize - 1) {
        Ok(s) => assert!(s.evictions > 0, "{options:?}: one byte less evicts nothing"),
        Err(e) => assert!(e.to_string().contains("fit"), "{e}"),
    }
}

#[test]
fn the_runtime_holds_what_the_planner_predicts() {
    // Nodes of N x N, identities, products of the explicit loop's other spin counts, scratch;
    // baryons, their products of N² x N² and their traces' scratch of N² rows: several sizes
    // of buffer.
    let files = [
        common::shared_file(1),
        common::shared_file(3),
        common::baryon_file(2),
    ];
    for file in files {
        let checked = CheckedFile::new(file, std::path::Path::new(".")).unwrap();
        for sharing in [true, false] {
            for order in [Order::Planned, Order::File] {
                for vector_size in [1, 3, 16] {
                    check(
                        &checked,
                        PlanOptions {
                            sharing,
                            order,
                            vector_size,
                        },
                    );
                }
            }
        }
    }
}

#[test]
fn with_several_sizes_the_pool_holds_more_than_the_live_peak() {
    let checked = CheckedFile::new(common::shared_file(3), std::path::Path::new(".")).unwrap();
    let r = plan(&checked, &PlanOptions::default()).unwrap().report;
    assert!(r.peak_bytes_with_pool > r.peak_bytes, "{r:?}");
}
