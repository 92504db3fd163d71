//! `memhc run --host-memory pageable|pinned` and `--prefetch`: node data loaded straight into
//! the backend's page-locked memory, with or without copies issued ahead, gives the
//! correlators the dense reference gives (`--verify`), the same values as pageable memory, on
//! the host backend and on the modelled H100 (no data: it runs and records); a bad value is
//! one line on stderr and exit code 2.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn memhc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memhc"))
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-host-memory-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A preset workload, small.
fn preset(d: &Path) -> PathBuf {
    let file = d.join("a1.json");
    let out = memhc()
        .args(["gen", "a1_rhopi", "--tensor-size", "3", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    file
}

fn run(file: &Path, args: &[&str], json: &Path) -> (Output, serde_json::Value) {
    let out = memhc()
        .arg("run")
        .arg(file)
        .args(args)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap();
    (out, records)
}

#[test]
fn pinned_node_data_verifies_and_gives_the_pageable_values() {
    let d = dir("host");
    let file = preset(&d);
    let (pinned_csv, pageable_csv) = (d.join("pinned.csv"), d.join("pageable.csv"));
    let common = [
        "--verify",
        "--policy",
        "lru,belady",
        "--mode",
        "naive,optimal",
    ];
    let mut args: Vec<&str> = common.to_vec();
    args.extend([
        "--host-memory",
        "pinned",
        "--out",
        pinned_csv.to_str().unwrap(),
    ]);
    let (out, records) = run(&file, &args, &d.join("pinned.json"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("verified against the dense reference"));
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 4);
    for r in records {
        assert_eq!(r["host_memory"], "pinned", "{r}");
        assert!(r["stats"]["h2d_bytes"].as_u64().unwrap() > 0, "{r}");
    }
    // Oversubscribed too: a budget below the plan's peak, still verified.
    let (_, small) = run(
        &file,
        &[
            "--verify",
            "--host-memory",
            "pinned",
            "--budget",
            "40K",
            "--policy",
            "belady",
        ],
        &d.join("small.json"),
    );
    assert!(
        small[0]["stats"]["evictions"].as_u64().unwrap() > 0,
        "{small}"
    );
    // The default is pageable, and the values are the same, digit for digit.
    let mut args: Vec<&str> = common.to_vec();
    args.extend(["--out", pageable_csv.to_str().unwrap()]);
    let (_, records) = run(&file, &args, &d.join("pageable.json"));
    assert_eq!(records[0]["host_memory"], "pageable");
    let (a, b) = (
        std::fs::read_to_string(&pinned_csv).unwrap(),
        std::fs::read_to_string(&pageable_csv).unwrap(),
    );
    assert!(a.lines().count() > 1);
    assert_eq!(a, b);
}

#[test]
fn prefetch_with_pinned_memory_verifies_oversubscribed() {
    let d = dir("prefetch");
    let file = preset(&d);
    let (_, records) = run(
        &file,
        &[
            "--verify",
            "--host-memory",
            "pinned",
            "--prefetch",
            "6",
            "--budget",
            "40K",
            "--policy",
            "lru,belady",
        ],
        &d.join("prefetch.json"),
    );
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 2);
    for r in records {
        assert_eq!(r["prefetch"], 6, "{r}");
        assert!(r["stats"]["prefetches"].as_u64().unwrap() > 0, "{r}");
        assert!(r["stats"]["evictions"].as_u64().unwrap() > 0, "{r}");
    }
    // Off by default, recorded as null.
    let (_, plain) = run(&file, &["--policy", "lru"], &d.join("plain.json"));
    assert!(plain[0]["prefetch"].is_null(), "{plain}");
    assert_eq!(plain[0]["stats"]["prefetches"], 0, "{plain}");
}

#[test]
fn runs_report_the_median_wall_time_of_every_run() {
    let d = dir("runs");
    let file = preset(&d);
    let (_, records) = run(
        &file,
        &["--runs", "3", "--policy", "lru", "--mode", "naive,optimal"],
        &d.join("runs.json"),
    );
    for r in records.as_array().unwrap() {
        assert_eq!(r["runs"], 3, "{r}");
        let mut walls: Vec<f64> = r["wall_s_runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_f64().unwrap())
            .collect();
        assert_eq!(walls.len(), 3, "{r}");
        walls.sort_by(f64::total_cmp);
        assert_eq!(r["wall_s"].as_f64(), Some(walls[1]), "{r}");
    }
}

#[test]
fn the_model_runs_with_pinned_memory_and_records() {
    let d = dir("model");
    let file = preset(&d);
    let (out, records) = run(
        &file,
        &[
            "--backend",
            "model",
            "--host-memory",
            "pinned",
            "--policy",
            "lru",
        ],
        &d.join("model.json"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("model: makespan"), "{stderr}");
    assert_eq!(records[0]["host_memory"], "pinned", "{records}");
    assert!(records[0]["stats"]["gemm_calls"].as_u64().unwrap() > 0);
    // The record carries the queue's modelled makespan and floor, as memhc-synth's do: both
    // positive, the floor a lower bound.
    let makespan = records[0]["model_makespan_s"].as_f64().unwrap();
    let floor = records[0]["model_floor_s"].as_f64().unwrap();
    assert!(floor > 0.0 && floor <= makespan, "{records}");
    // A backend that is not the model records neither.
    let (_, host) = run(&file, &["--policy", "lru"], &d.join("host.json"));
    assert!(host[0].get("model_makespan_s").is_none(), "{host}");
    assert!(host[0].get("model_floor_s").is_none(), "{host}");
}

#[test]
fn a_bad_host_memory_is_one_line_and_exit_code_2() {
    let d = dir("bad");
    let file = preset(&d);
    for (args, needle) in [
        (
            vec!["--host-memory", "locked"],
            "--host-memory: unknown host memory 'locked'",
        ),
        (
            vec!["--host-memory", ""],
            "--host-memory: unknown host memory",
        ),
        (
            vec!["--host-memory", "pinned", "--mode", "unified"],
            "--host-memory pinned does not apply to --mode unified",
        ),
        (
            vec!["--prefetch", "0"],
            "--prefetch: '0': a prefetch window of at least 1 object use, or off",
        ),
        (vec!["--prefetch", "6,12"], "--prefetch: one setting"),
        (vec!["--runs", "0"], "--runs 0: at least one run"),
        (
            vec!["--prefetch", "6", "--mode", "unified"],
            "--prefetch does not apply to --mode unified",
        ),
    ] {
        let out = memhc().arg("run").arg(&file).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
