//! Generated files pass the format's validation, and the planner's counts of the presets.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;

use memhc_corr::{PlanOptions, plan};
use memhc_corr_gen::file::{FileOptions, displacement_path, to_file};
use memhc_corr_gen::presets::Preset;

fn options(n: usize) -> FileOptions {
    FileOptions {
        tensor_size: n,
        seed: 1,
        keys: BTreeMap::new(),
    }
}

#[test]
fn every_preset_file_passes_validation_and_plans() {
    for p in Preset::ALL {
        let g = p.generate();
        let file = to_file(&g, &options(2));
        let text = serde_json::to_string(&file).unwrap();
        let checked = memhc_corr::parse(&text, "gen.json", Path::new(".")).unwrap();
        assert_eq!(checked.nodes.len(), g.nodes.len());
        let shared = plan(&checked, &PlanOptions::default()).unwrap().report;
        assert_eq!(
            shared.contractions_without_sharing as usize,
            g.contractions()
        );
        assert!(shared.contractions <= shared.contractions_without_sharing);
        // The planner's order never holds more bytes at its peak than the file's order.
        for sharing in [true, false] {
            let r = plan(
                &checked,
                &PlanOptions {
                    sharing,
                    ..PlanOptions::default()
                },
            )
            .unwrap()
            .report;
            assert!(
                r.peak_bytes <= r.peak_bytes_other_order,
                "{p}, sharing {sharing}: planner peak {} > file-order peak {}",
                r.peak_bytes,
                r.peak_bytes_other_order
            );
        }
        println!("{p}: {}", serde_json::to_string(&shared).unwrap());
    }
}

#[test]
fn the_planner_order_holds_less_than_the_file_order() {
    // (preset, sharing, the least fraction of the file order's peak the planner saves). The
    // planner's order is strictly lower wherever it achieves that; on a1_rhopi without
    // sharing it equals the file's order (docs/results/2026-11-24-correlators.md).
    let cases = [
        (Preset::A1RhoPi, true, 0.05),
        (Preset::F0d2, true, 0.5),
        (Preset::F0d2, false, 0.5),
        (Preset::F0d4, true, 0.5),
        (Preset::F0d4, false, 0.5),
    ];
    for (p, sharing, least) in cases {
        let file = to_file(&p.generate(), &options(2));
        let checked = memhc_corr::CheckedFile::new(file, Path::new(".")).unwrap();
        let r = plan(
            &checked,
            &PlanOptions {
                sharing,
                ..PlanOptions::default()
            },
        )
        .unwrap()
        .report;
        let saved = 1.0 - r.peak_bytes as f64 / r.peak_bytes_other_order as f64;
        assert!(
            r.peak_bytes < r.peak_bytes_other_order && saved >= least,
            "{p}, sharing {sharing}: planner peak {} against the file order's {} saves {saved:.3}",
            r.peak_bytes,
            r.peak_bytes_other_order
        );
        if p != Preset::A1RhoPi {
            continue;
        }
        // A file-order plan reports the same two numbers the other way round.
        let f = plan(
            &checked,
            &PlanOptions {
                sharing,
                order: memhc_corr::Order::File,
                ..PlanOptions::default()
            },
        )
        .unwrap()
        .report;
        assert_eq!(
            (f.peak_bytes, f.peak_bytes_other_order),
            (r.peak_bytes_other_order, r.peak_bytes)
        );
    }
}

#[test]
fn preset_sizes_against_the_paper() {
    // Table 4 counts every object of the queue: the initial nodes and one output per
    // contraction (docs/correlator-presets.md).
    let want = [
        (Preset::A1RhoPi, 38, 68),
        (Preset::F0d2, 210, 1944),
        (Preset::F0d4, 190, 1992),
    ];
    for (p, nodes, contractions) in want {
        let g = p.generate();
        assert_eq!(
            (g.nodes.len(), g.contractions()),
            (nodes, contractions),
            "{p}"
        );
        let paper = p.paper();
        let total = (nodes + contractions) as f64;
        assert!((total / paper.nodes as f64 - 1.0).abs() < 0.01, "{p}");
        assert!(
            (contractions as f64 / paper.contractions as f64 - 1.0).abs() < 0.015,
            "{p}"
        );
    }
}

#[test]
fn displacement_paths() {
    assert_eq!(displacement_path(""), Vec::<i64>::new());
    assert_eq!(displacement_path("nabla_z"), vec![3]);
    assert_eq!(displacement_path("B_z"), vec![1, 2, -1, -2]);
    assert_eq!(displacement_path("nabla_x.D_y"), vec![1, 3, 1]);
}
