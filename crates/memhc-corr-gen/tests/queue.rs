//! The planner's execution queue on the presets is well formed, whatever the order, sharing
//! and vector size: every product and trace once, every product before its readers, vectors
//! of independent contractions no wider than asked, every object released once and never
//! used after, and the reported peak is the one the queue holds (recomputed here, and read
//! from the runtime's own accounting in dry runs on the data-less `NullBackend`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use memhc_corr::{Operand, Order, Plan, PlanOptions, plan};
use memhc_corr_gen::file::{FileOptions, to_file};
use memhc_corr_gen::presets::Preset;

/// Checks the queue of `p` and returns the peak of live bytes it holds.
fn check_queue(p: &Plan, vector_size: usize) -> u64 {
    let mut computed = vec![false; p.products.len()];
    let mut traced = vec![false; p.traces.len()];
    let mut released: HashSet<Operand> = HashSet::new();
    let mut alive: HashMap<Operand, u64> = HashMap::new();
    let (mut held, mut peak) = (0u64, 0u64);
    // Makes `op` alive; the bytes held after.
    let touch = |op: Operand,
                 released: &HashSet<Operand>,
                 alive: &mut HashMap<Operand, u64>,
                 held: &mut u64| {
        assert!(!released.contains(&op), "{op:?} used after its release");
        if let std::collections::hash_map::Entry::Vacant(e) = alive.entry(op) {
            e.insert(p.bytes(op));
            *held += p.bytes(op);
        }
        *held
    };
    for (s, stage) in p.stages.iter().enumerate() {
        assert!(stage.contractions.len() <= vector_size, "stage {s}");
        let inside: HashSet<usize> = stage.contractions.iter().copied().collect();
        for &c in &stage.contractions {
            assert!(!computed[c], "product {c} computed twice");
            let pr = &p.products[c];
            for op in [pr.a, pr.b] {
                if let Operand::Product(q) = op {
                    assert!(
                        computed[q],
                        "stage {s}: product {c} reads {q} before it exists"
                    );
                    assert!(!inside.contains(&q), "stage {s}: dependent contractions");
                }
                peak = peak.max(touch(op, &released, &mut alive, &mut held));
            }
            let op = Operand::Product(c);
            peak = peak.max(touch(op, &released, &mut alive, &mut held));
        }
        for &c in &stage.contractions {
            computed[c] = true;
        }
        for &t in &stage.traces {
            assert!(!traced[t], "trace {t} twice");
            traced[t] = true;
            let tr = &p.traces[t];
            for op in [tr.a, tr.b] {
                if let Operand::Product(q) = op {
                    assert!(
                        computed[q],
                        "stage {s}: trace {t} reads {q} before it exists"
                    );
                }
                touch(op, &released, &mut alive, &mut held);
            }
            let scratch = 16 * (tr.pairs.pairs().len() * tr.rows) as u64;
            peak = peak.max(held + scratch);
        }
        for &op in &stage.release {
            assert!(released.insert(op), "{op:?} released twice");
            held -= alive.remove(&op).expect("released but never used");
        }
    }
    assert!(computed.iter().all(|&c| c) && traced.iter().all(|&t| t));
    assert!(alive.is_empty(), "never released: {:?}", alive.keys());
    peak
}

/// The runtime's statistics after `p` ran on the null backend under `budget` (optimal mode).
fn dry_run(p: &Plan, budget: usize) -> memhc_core::Stats {
    let config = memhc_core::Config::default().with_budget(budget);
    let rt = memhc_core::Runtime::new(memhc_host::NullBackend::new(budget), config).unwrap();
    let mut engine = hadron::Engine::new(rt);
    memhc_corr::run(p, &mut engine, &mut |_| {}).unwrap();
    engine.runtime().stats()
}

#[test]
fn preset_queues_are_well_formed_and_hold_their_reported_peak() {
    for preset in Preset::ALL {
        let file = to_file(
            &preset.generate(),
            &FileOptions {
                tensor_size: 2,
                seed: 1,
                keys: BTreeMap::new(),
            },
        );
        let checked = memhc_corr::CheckedFile::new(file, Path::new(".")).unwrap();
        let cases = [
            (true, Order::Planned, 16),
            (false, Order::Planned, 4),
            (true, Order::File, 1),
        ];
        for (sharing, order, vector_size) in cases {
            let options = PlanOptions {
                sharing,
                order,
                vector_size,
            };
            let p = plan(&checked, &options).unwrap();
            let peak = check_queue(&p, vector_size);
            assert_eq!(peak, p.report.peak_bytes, "{preset} {options:?}");
            assert!(p.report.peak_bytes_with_pool >= p.report.peak_bytes);
            let r = &p.report;
            for (budget, want) in [
                (1 << 40, r.peak_bytes_with_pool),
                (r.peak_bytes, r.peak_bytes),
            ] {
                let stats = dry_run(&p, budget as usize);
                assert_eq!(
                    (stats.peak_device_bytes, stats.evictions),
                    (want, 0),
                    "{preset} {options:?}, budget {budget}"
                );
            }
        }
    }
}
