//! Issue 31: no input kills `memhc`. A request that cannot fit the host or the budget, a
//! degenerate option, an endless file, is refused in one line on stderr with exit code 2,
//! before anything is printed or written; a failing command leaves no output and no journal.
//! Each case here was an OOM kill, an abort (exit 134), a hang or a silent exit 0 before.
//!
//! Every command runs with `MEMHC_HOST_MEMORY=4G`, so that the refusals do not depend on the
//! machine the tests run on.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn memhc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_memhc"));
    c.env("MEMHC_HOST_MEMORY", "4G");
    c
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-cli-admit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `cmd`, killed after 60 s (a hang fails the test instead of hanging it).
fn run(cmd: &mut Command) -> Output {
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the command hung: {cmd:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Asserts exit code 2, one line on stderr that mentions `needle`, nothing on stdout.
#[track_caller]
fn refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "'{err}' does not mention '{needle}'");
    assert!(
        out.stdout.is_empty(),
        "printed before refusing: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// One seeded node of 16 spins of `dims`, traced alone.
fn one_node(d: &Path, dims: &str) -> PathBuf {
    let f = d.join("node.json");
    std::fs::write(
        &f,
        format!(
            r#"{{"format": "memhc-corr/1",
  "nodes": [{{"id": "a", "spins": 16, "dims": {dims}, "time": 0, "data": {{"seed": 1}}}}],
  "graphs": [{{"id": "g", "loops": [{{"nodes": ["a"]}}]}}],
  "correlators": [{{"name": "C", "times": [{{"source": 0, "sink": 0, "graphs": ["g"]}}]}}]}}"#
        ),
    )
    .unwrap();
    f
}

#[test]
fn nodes_larger_than_the_host_are_refused_before_the_table() {
    let d = dir("huge");
    // 16 x 200000^2 complex doubles: 10 TB.
    let f = one_node(&d, "[200000, 200000]");
    refused(&run(memhc().arg("run").arg(&f)), "host memory");
    // A plan makes no values: it sizes the file for a larger machine. 16 x 200000^2 complex
    // doubles are 10240000000000 bytes.
    let plan = run(memhc().arg("plan").arg(&f));
    assert!(
        plan.status.success(),
        "{}",
        String::from_utf8_lossy(&plan.stderr)
    );
    let report = String::from_utf8_lossy(&plan.stdout);
    assert!(
        report.contains("\"node_bytes\": 10240000000000"),
        "{report}"
    );
    // A preset at N = 100000: 2.5 TB per node. `gen` writes seeds only, `run` refuses.
    let g = d.join("a1.json");
    let out = run(memhc()
        .args(["gen", "a1_rhopi", "--tensor-size", "100000", "-o"])
        .arg(&g));
    assert!(out.status.success());
    refused(&run(memhc().arg("run").arg(&g)), "host memory");
}

#[test]
fn a_budget_below_one_step_is_refused_before_the_table() {
    let d = dir("budget");
    // One node of 16 x 64 x 64 complex doubles is 1 MiB; 64K cannot hold it.
    let f = one_node(&d, "[64, 64]");
    let out_file = d.join("c.json");
    let out = run(memhc()
        .arg("run")
        .arg(&f)
        .args(["--budget", "64K", "--out"])
        .arg(&out_file));
    refused(&out, "does not fit");
    assert!(!out_file.exists(), "a failing run left its output");
}

#[test]
fn degenerate_options_are_refused() {
    let d = dir("options");
    let f = one_node(&d, "[2, 2]");
    refused(
        &run(memhc().arg("run").arg(&f).args(["--vector-size", "0"])),
        "--vector-size 0",
    );
    refused(
        &run(memhc().arg("plan").arg(&f).args(["--vector-size", "0"])),
        "--vector-size 0",
    );
    refused(
        &run(memhc().arg("run").arg(&f).args(["--streams", "0"])),
        "--streams 0",
    );
    refused(
        &run(memhc().arg("run").arg(&f).args(["--streams", "30000"])),
        "--streams 30000",
    );
    // The same file runs with sane options.
    let out = run(memhc().arg("run").arg(&f).args(["--streams", "2"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn endless_files_are_refused_not_read() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    refused(&run(memhc().args(["plan", "/dev/zero"])), "/dev/zero");
    refused(&run(memhc().args(["run", "/dev/zero"])), "/dev/zero");
}

/// A campaign manifest of one configuration of `file`, with `run` settings.
fn campaign(d: &Path, file: &Path, run: &str) -> PathBuf {
    let m = d.join("campaign.json");
    std::fs::write(
        &m,
        format!(
            r#"{{"format": "memhc-campaign/1", "configurations": [{{"id": "c1", "file": "{}"}}]{run}}}"#,
            file.file_name().unwrap().to_string_lossy()
        ),
    )
    .unwrap();
    m
}

#[test]
fn campaigns_are_admitted_before_the_journal_exists() {
    let d = dir("campaign");
    let out = d.join("out.json");
    let journal = d.join("out.json.journal");
    // Nodes of 10 TB: refused, nothing written.
    let f = one_node(&d, "[200000, 200000]");
    let m = campaign(&d, &f, "");
    let o = run(memhc().arg("campaign").arg(&m).arg("-o").arg(&out));
    refused(&o, "host memory");
    assert!(!out.exists() && !journal.exists(), "output or journal left");
    // A budget too small for any unit: refused before the journal exists.
    let f = one_node(&d, "[64, 64]");
    let m = campaign(&d, &f, r#", "run": {"budget": "64K"}"#);
    let o = run(memhc().arg("campaign").arg(&m).arg("-o").arg(&out));
    refused(&o, "does not fit");
    assert!(!out.exists() && !journal.exists(), "output or journal left");
    // A summary that cannot be written: refused before anything runs.
    let m = campaign(&d, &f, "");
    let o = run(memhc()
        .arg("campaign")
        .arg(&m)
        .arg("-o")
        .arg(&out)
        .args(["--summary", "/proc/memhc-no-such-file"]));
    refused(&o, "/proc/memhc-no-such-file");
    assert!(!out.exists() && !journal.exists(), "output or journal left");
}
