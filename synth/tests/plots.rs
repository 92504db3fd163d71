//! Tests of the SVG plots of a sweep (`--plot DIR`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};

use memhc_synth::plot::write_plots;
use memhc_synth::{Error, Record};

/// A record of one run at repeated rate `repeat` with the given metrics.
fn record(policy: &str, mode: &str, repeat: f64, gflops: f64, evictions: u64) -> Record {
    let misses = evictions + 10;
    Record {
        policy: policy.into(),
        mode: mode.into(),
        // The mode's own allocation setting, as a real run without --alloc records it.
        alloc: if mode == "optimal" {
            "handover"
        } else {
            "driver"
        }
        .into(),
        reuse_tolerance_percent: 0,
        prefetch: None,
        order: "queue".into(),
        backend: "host".into(),
        tensor_size: 64,
        vector_size: 16,
        vectors: 8,
        repeat,
        dist: "uniform".into(),
        oversub: Some(0.5),
        seed: 1,
        budget: 1 << 20,
        peak_no_eviction_bytes: 1 << 21,
        allocations: 100,
        pool_reuses: 10,
        handovers: 0,
        arena_allocations: 0,
        pool_slack_bytes: 0,
        fragmentation_evictions: 0,
        arena_stranded_bytes: 0,
        arena_restarts: 0,
        hits: 200,
        misses,
        hit_rate: 200.0 / (200.0 + misses as f64),
        evictions,
        writebacks: 0,
        prefetches: 0,
        prefetch_hits: 0,
        prefetch_wasted: 0,
        prefetch_bytes: 0,
        async_writebacks: 0,
        pinned: false,
        early_read_backs: 0,
        copy_hidden_share: None,
        h2d_bytes: 1000,
        d2h_bytes: 1000,
        peak_device_bytes: 1 << 20,
        flops: 1_000_000,
        gemm_calls: 40,
        gflops,
        wall_s: 0.001,
        wall_s_runs: Vec::new(),
        cpu_s: None,
        cpu_s_runs: Vec::new(),
        device_compute_s: None,
        miss_lower_bound: Some(5 + (10.0 * (1.0 - repeat)) as u64),
        verified: Some(true),
        max_rel_error: Some(0.0),
        model_makespan_s: None,
        model_setup_s: None,
        model_floor_s: None,
    }
}

/// A sweep over the repeated rate with two policies and one mode, given out of order.
fn sweep() -> Vec<Record> {
    let mut records = Vec::new();
    for &repeat in &[0.5, 0.0, 0.9] {
        records.push(record(
            "lru",
            "naive",
            repeat,
            10.0 + repeat,
            40 - (repeat * 10.0) as u64,
        ));
        records.push(record(
            "pp-lru",
            "reorg",
            repeat,
            12.0 + repeat,
            30 - (repeat * 10.0) as u64,
        ));
    }
    records
}

/// A fresh, empty directory under the system's temp dir for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("memhc-synth-plots-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    dir
}

/// Reads `path` and checks that it looks like a complete SVG document.
fn read_svg(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = text.trim_start();
    assert!(
        start.starts_with("<svg") || start.starts_with("<?xml"),
        "{}: does not start like SVG: {}",
        path.display(),
        &start[..start.len().min(80)]
    );
    assert!(text.contains("</svg>"), "{}: no </svg>", path.display());
    text
}

/// The contents of the `<text>` elements of `svg`, trimmed.
fn texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let start = t.find('>')? + 1;
            let end = t.find("</text>")?;
            Some(t.get(start..end)?.trim().to_string())
        })
        .collect()
}

#[test]
fn writes_three_svg_plots_with_series_and_axis_labels() {
    let dir = temp_dir("three").join("nested");
    let paths = write_plots(&dir, &sweep(), "repeat").unwrap();
    let expected: Vec<PathBuf> = ["gflops", "evictions", "misses"]
        .iter()
        .map(|m| dir.join(format!("{m}-vs-repeat.svg")))
        .collect();
    assert_eq!(paths, expected);
    for (path, y_label) in paths.iter().zip(["GFLOPS", "evictions", "misses"]) {
        assert!(path.is_file(), "{} was not written", path.display());
        let texts = texts(&read_svg(path));
        for label in ["lru/naive", "pp-lru/reorg", "repeat", y_label] {
            assert!(
                texts.iter().any(|t| t == label),
                "{}: no text {label:?} in {texts:?}",
                path.display()
            );
        }
        let title = format!("{y_label} against repeat (N=64, vector size 16");
        assert!(
            texts.iter().any(|t| t.starts_with(&title)),
            "{}: no title {title:?} in {texts:?}",
            path.display()
        );
    }
    fs::remove_dir_all(dir.parent().unwrap()).unwrap();
}

#[test]
fn misses_plot_shows_the_lower_bound_only_when_records_carry_it() {
    let dir = temp_dir("bound");
    let paths = write_plots(&dir, &sweep(), "repeat").unwrap();
    let misses = texts(&read_svg(&paths[2]));
    assert!(
        misses.iter().any(|t| t == "lower bound (belady)"),
        "{misses:?}"
    );
    assert!(!read_svg(&paths[0]).contains("lower bound"));

    let mut records = sweep();
    for r in &mut records {
        r.miss_lower_bound = None;
    }
    let paths = write_plots(&dir, &records, "repeat").unwrap();
    assert!(!read_svg(&paths[2]).contains("lower bound"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn plots_other_swept_parameters_and_single_points() {
    let dir = temp_dir("single");
    // One point: the x range is padded; all-zero metrics still give a y range.
    let records = vec![record("lru", "optimal", 0.3, 0.0, 0)];
    let paths = write_plots(&dir, &records, "vector-size").unwrap();
    assert_eq!(paths[1], dir.join("evictions-vs-vector-size.svg"));
    for path in &paths {
        let texts = texts(&read_svg(path));
        assert!(texts.iter().any(|t| t == "lru/optimal"), "{texts:?}");
        assert!(texts.iter().any(|t| t == "vector-size"), "{texts:?}");
    }

    let mut records = sweep();
    for (i, r) in records.iter_mut().enumerate() {
        r.oversub = Some(0.1 * (i / 2) as f64);
    }
    let paths = write_plots(&dir, &records, "oversub").unwrap();
    assert_eq!(paths[0], dir.join("gflops-vs-oversub.svg"));
    assert!(texts(&read_svg(&paths[0])).iter().any(|t| t == "oversub"));
    fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unknown_swept_parameter_is_a_usage_error() {
    let dir = temp_dir("unknown");
    match write_plots(&dir, &sweep(), "colour") {
        Err(Error::Usage(msg)) => {
            assert!(msg.contains("colour"), "{msg}");
            assert!(msg.contains("no such parameter"), "{msg}");
        }
        other => panic!("expected a usage error, got {other:?}"),
    }
    assert!(!dir.exists(), "nothing is written on error");

    // A budget given in bytes leaves no oversubscription rate to plot against.
    let mut records = sweep();
    records[3].oversub = None;
    assert!(matches!(
        write_plots(&dir, &records, "oversub"),
        Err(Error::Usage(msg)) if msg.contains("oversub")
    ));
    assert!(!dir.exists());
}

#[test]
fn no_records_is_a_usage_error() {
    let dir = temp_dir("empty");
    match write_plots(&dir, &[], "repeat") {
        Err(Error::Usage(msg)) => assert!(msg.contains("no records"), "{msg}"),
        other => panic!("expected a usage error, got {other:?}"),
    }
    assert!(!dir.exists());
}

#[test]
fn unwritable_directory_is_an_io_error_with_the_path() {
    let base = temp_dir("io");
    fs::create_dir_all(&base).unwrap();
    let file = base.join("not-a-dir");
    fs::write(&file, "x").unwrap();
    match write_plots(&file, &sweep(), "repeat") {
        Err(e @ Error::Io { .. }) => {
            assert!(e.to_string().contains("not-a-dir"), "{e}");
        }
        other => panic!("expected an I/O error, got {other:?}"),
    }
    fs::remove_dir_all(&base).unwrap();
}
