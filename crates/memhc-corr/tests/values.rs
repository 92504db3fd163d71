//! Correlator values from plans run on the runtime, against the independent reference
//! (`hadron::dense`: graph by graph, plain dense products), to 1e-12 relative: every policy,
//! every mode, sharing on and off, planner and file order, fitting and oversubscribed budgets.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use hadron::Engine;
use memhc_core::{Config, Mode, PolicyKind, Runtime};
use memhc_corr::{CheckedFile, Order, PlanOptions, plan, reference, run};
use memhc_host::HostBackend;
use num_complex::Complex64;

fn checked(n: usize) -> CheckedFile {
    CheckedFile::new(common::shared_file(n), std::path::Path::new(".")).unwrap()
}

fn run_with(checked: &CheckedFile, options: PlanOptions, config: Config, budget: usize) -> f64 {
    let p = plan(checked, &options).unwrap();
    let want = reference::correlators(checked).unwrap();
    let rt = Runtime::new(HostBackend::new(budget), config.with_budget(budget)).unwrap();
    let mut engine = Engine::new(rt);
    let got = run(&p, &mut engine, &mut |_| {}).unwrap();
    engine.runtime().audit().unwrap();
    got.max_relative_error(&want)
}

#[test]
fn every_policy_mode_and_sharing_agrees_with_the_reference() {
    let m = checked(4);
    for sharing in [true, false] {
        for order in [Order::Planned, Order::File] {
            let options = PlanOptions {
                sharing,
                order,
                vector_size: 4,
            };
            let p = plan(&m, &options).unwrap();
            let peak = p.report.peak_bytes as usize;
            let node = 16 * 16 * 16 * 16;
            // Oversubscribed: well below the peak, but room for one contraction and a trace.
            let small = (peak * 2 / 5).max(4 * node);
            for mode in Mode::ALL {
                for policy in PolicyKind::ALL {
                    for budget in [peak + 4 * node, small] {
                        let config = Config::for_mode(mode).with_policy(policy).with_streams(2);
                        let err = run_with(&m, options, config, budget);
                        assert!(
                            err < 1e-12,
                            "{mode} {policy:?} sharing {sharing} {order:?} budget {budget}: {err:e}"
                        );
                    }
                }
            }
        }
    }
}

/// [`run_with`] with node data loaded straight into the backend's host memory, under the
/// direct data path.
fn run_pinned(checked: &CheckedFile, config: Config, budget: usize) -> f64 {
    let p = plan(checked, &PlanOptions::default()).unwrap();
    let want = reference::correlators(checked).unwrap();
    let config = config.with_direct_host(true).with_budget(budget);
    let rt = Runtime::new(HostBackend::new(budget), config).unwrap();
    let mut engine = Engine::new(rt);
    let got = memhc_corr::run_with(&p, &mut engine, true, &mut |_| {}).unwrap();
    engine.runtime().audit().unwrap();
    got.max_relative_error(&want)
}

#[test]
fn node_data_in_page_locked_memory_agrees_with_the_reference() {
    let m = checked(4);
    let peak = plan(&m, &PlanOptions::default()).unwrap().report.peak_bytes as usize;
    let node = 16 * 16 * 16 * 16;
    for mode in [Mode::Naive, Mode::Reorg, Mode::ReorgSync, Mode::Optimal] {
        for policy in [PolicyKind::Lru, PolicyKind::Belady] {
            for budget in [peak + 4 * node, (peak * 2 / 5).max(4 * node)] {
                let config = Config::for_mode(mode).with_policy(policy).with_streams(2);
                let err = run_pinned(&m, config, budget);
                assert!(err < 1e-12, "{mode} {policy:?} budget {budget}: {err:e}");
            }
        }
    }
}

#[test]
fn node_files_fill_page_locked_memory_as_they_read_into_vectors() {
    let dir = common::scratch("pinned-npy");
    let mut f = common::shared_file(3);
    let shape = hadron::NodeShape::meson(3).unwrap();
    let written = hadron::HadronNode::random(&shape, 11);
    memhc_corr::write_npy(&dir.join("b.npy"), &written).unwrap();
    f.nodes[1].data = memhc_corr::DataSource::Npy("b.npy".into());
    let path = dir.join("corr.json");
    memhc_corr::save(&f, &path).unwrap();
    let m = memhc_corr::load(&path).unwrap();
    for node in &m.nodes {
        let mut filled = vec![Complex64::new(7.0, 7.0); node.shape.layout().unwrap().elems()];
        node.fill(&mut filled).unwrap();
        assert_eq!(filled, node.values().unwrap().as_slice());
    }
    let mut b = vec![Complex64::default(); written.as_slice().len()];
    m.nodes[1].fill(&mut b).unwrap();
    assert_eq!(b, written.as_slice());
    // A buffer of the wrong length is refused.
    assert!(m.nodes[1].fill(&mut b[1..]).is_err());
    assert!(run_pinned(&m, Config::for_mode(Mode::Optimal), 1 << 30) < 1e-12);
}

#[test]
fn other_tensor_sizes_agree_too() {
    for n in [5, 6, 8] {
        let m = checked(n);
        let err = run_with(
            &m,
            PlanOptions::default(),
            Config::for_mode(Mode::Optimal),
            1 << 30,
        );
        assert!(err < 1e-12, "N = {n}: {err:e}");
    }
}

#[test]
fn sharing_removes_contractions_and_keeps_values() {
    let m = checked(4);
    let on = plan(&m, &PlanOptions::default()).unwrap();
    let off = plan(
        &m,
        &PlanOptions {
            sharing: false,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    // Unshared: box 2, box2 2, rotated 2, disc 0, long 3, tri 1 + 1, again 1, sparse 2 = 14.
    assert_eq!(off.report.contractions_without_sharing, 14);
    assert_eq!(off.report.contractions, 14);
    assert_eq!(on.report.contractions_without_sharing, 14);
    assert!(on.report.contractions < 14, "{:?}", on.report);
    // The rotated box is the box: one trace fewer with sharing.
    assert!(on.report.traces < off.report.traces);
    assert!(on.report.flops < off.report.flops);
}

#[test]
fn baryon_loops_agree_with_the_reference() {
    for n in [2, 3] {
        let m = CheckedFile::new(common::baryon_file(n), std::path::Path::new(".")).unwrap();
        for sharing in [true, false] {
            for order in [Order::Planned, Order::File] {
                let options = PlanOptions {
                    sharing,
                    order,
                    vector_size: 3,
                };
                let p = plan(&m, &options).unwrap();
                let peak = p.report.peak_bytes as usize;
                // The most one contraction or trace holds at once.
                let largest = p
                    .products
                    .iter()
                    .enumerate()
                    .map(|(i, pr)| {
                        p.bytes(pr.a) + p.bytes(pr.b) + p.bytes(memhc_corr::Operand::Product(i))
                    })
                    .chain(p.traces.iter().map(|t| {
                        p.bytes(t.a) + p.bytes(t.b) + 16 * (t.pairs.pairs().len() * t.rows) as u64
                    }))
                    .max()
                    .unwrap() as usize;
                for mode in Mode::ALL {
                    for policy in [PolicyKind::Lru, PolicyKind::PpLru, PolicyKind::Belady] {
                        // Fitting, and oversubscribed.
                        for budget in [peak, (peak / 2).max(largest)] {
                            let config = Config::for_mode(mode).with_policy(policy).with_streams(2);
                            let err = run_with(&m, options, config, budget);
                            assert!(
                                err < 1e-12,
                                "N = {n}, {mode} {policy:?} sharing {sharing} {order:?} budget {budget}: {err:e}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn baryon_views_mean_what_the_format_says() {
    // nn = Tr(B1 as N x N² · B2 as N² x N)
    //    = Σ_(α, β) Σ_(i, j, k) B1[4α + β][i, j, k] · B2[4β + α][j, k, i], by plain loops.
    let n = 3;
    let m = CheckedFile::new(common::baryon_file(n), std::path::Path::new(".")).unwrap();
    let (b1, b2) = (m.nodes[0].values().unwrap(), m.nodes[1].values().unwrap());
    let mut want = num_complex::Complex64::new(0.0, 0.0);
    for alpha in 0..4 {
        for beta in 0..4 {
            let (x, y) = (
                b1.component(4 * alpha + beta),
                b2.component(4 * beta + alpha),
            );
            for i in 0..n {
                for j in 0..n {
                    for k in 0..n {
                        want += x[[i, j, k]] * y[[j, k, i]];
                    }
                }
            }
        }
    }
    let p = plan(&m, &PlanOptions::default()).unwrap();
    let rt = Runtime::new(HostBackend::new(1 << 26), Config::default()).unwrap();
    let mut engine = Engine::new(rt);
    let got = run(&p, &mut engine, &mut |_| {}).unwrap();
    let reference = reference::correlators(&m).unwrap();
    // N_N at (0, 5) sums nn, its rotation nn_rot (the same trace, computed once) and npin.
    let npin = reference.correlators[0].values[0].complex() - 2.0 * want;
    let c = got.correlators[0].values[0].complex();
    assert!((c - (2.0 * want + npin)).norm() < 1e-12 * c.norm());
    assert!(got.max_relative_error(&reference) < 1e-12);
    // Sharing: the rotations are one trace each, and the planner made no baryon product twice.
    let off = plan(
        &m,
        &PlanOptions {
            sharing: false,
            ..PlanOptions::default()
        },
    )
    .unwrap();
    assert!(p.report.traces < off.report.traces);
    assert!(p.report.contractions < off.report.contractions);
}

/// `load_onto` loads and queues nothing; `Loaded::run` is the whole queue: together they give
/// what `run` gives, with the node data (read on every core) equal to each node's own values.
#[test]
fn loading_queues_nothing_and_the_queue_alone_agrees_with_the_reference() {
    let m = checked(4);
    let p = plan(&m, &PlanOptions::default()).unwrap();
    let want = reference::correlators(&m).unwrap();
    for pinned in [false, true] {
        let config = Config::for_mode(Mode::Optimal).with_direct_host(pinned);
        let rt = Runtime::new(HostBackend::new(1 << 30), config.with_budget(1 << 30)).unwrap();
        let mut engine = Engine::new(rt);
        let loaded = memhc_corr::load_onto(&p, &mut engine, pinned).unwrap();
        let s = engine.runtime().stats();
        assert_eq!(
            (s.h2d_bytes, s.d2h_bytes, s.gemm_calls, s.misses),
            (0, 0, 0, 0),
            "pinned {pinned}: loading moved or computed something"
        );
        // Every used node's registered values are its own, whichever thread made them.
        let mut used = 0;
        for (n, node) in m.nodes.iter().enumerate() {
            if let Some(id) = loaded.node(n) {
                let got = engine.runtime_mut().read(id).unwrap().to_vec();
                assert_eq!(got, node.values().unwrap().as_slice(), "node {}", node.id);
                used += 1;
            }
        }
        assert_eq!(used, p.used_nodes().len());
        let got = loaded.run(&p, &mut engine, &mut |_| {}).unwrap();
        engine.runtime().audit().unwrap();
        assert!(got.max_relative_error(&want) < 1e-12, "pinned {pinned}");
        assert!(engine.runtime().stats().gemm_calls > 0);
    }
}
