//! The campaign over real MPI (feature `mpi`): `mpirun -n 3 --oversubscribe` on the host
//! backend, over TCP on the loopback interface only. One test binary without the test
//! harness: run by cargo, it launches itself under `mpirun` for each scenario (each rank runs
//! `memhc campaign`'s code, [`memhc_campaign::corr::command::main`]) and checks the outcome:
//!
//! 1. a clean run on 3 ranks gives the same bytes as an in-process run on one;
//! 2. a rank killed in the middle (the fault hook: rank 2 exits on its second unit) stops the
//!    job; a rerun skips the recorded units and gives the same bytes again;
//! 3. a rank that hangs is noticed within the timeout: the job ends with one line naming it;
//! 4. bad input in one configuration is reported once, with the rank that found it, exit 2;
//! 5. a manifest that does not exist: one line from rank 0, exit 2, no rank left waiting.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use common::{CONFIGURATIONS, a1_file, dir, manifest};
use memhc_campaign::corr::command::{CampaignOptions, main as campaign_main};
use memhc_campaign::corr::{BackendRunner, CorrCampaign, CorrJob};
use memhc_campaign::{FAULT_VAR, Timing, run_local};
use memhc_corr::{GraphSpec, LoopSpec};

/// Set for the processes `mpirun` starts: they are ranks, not the test driver.
const RANK_VAR: &str = "MEMHC_MPI_TEST_RANK";

fn main() {
    if std::env::var_os(RANK_VAR).is_some() {
        rank();
    }
    let start = Instant::now();
    let d = dir("mpi");
    memhc_corr::save(&a1_file(3), &d.join("a1.json")).unwrap();
    let m = manifest(&d, &CONFIGURATIONS, r#", "source_block": 1"#);
    let expected = in_process(&m);

    clean_run_matches_one_process(&d, &m, &expected);
    killed_rank_then_rerun_matches(&d, &m, &expected);
    hung_rank_is_lost_within_the_timeout(&d, &m);
    bad_input_is_refused_once_before_any_rank_runs(&d);
    missing_manifest_is_one_line(&d);
    std::fs::remove_dir_all(&d).unwrap();
    println!(
        "mpi: 5 scenarios passed on mpirun -n 3 in {:.1} s",
        start.elapsed().as_secs_f64()
    );
}

/// A rank under mpirun: `MANIFEST OUT JOURNAL TIMEOUT_MS SUMMARY`.
fn rank() -> ! {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let options = CampaignOptions {
        manifest: PathBuf::from(&a[0]),
        out: PathBuf::from(&a[1]),
        journal: Some(PathBuf::from(&a[2])),
        timeout: Duration::from_millis(a[3].parse().unwrap()),
        summary: Some(PathBuf::from(&a[4])),
        progress: true,
    };
    std::process::exit(i32::from(campaign_main(
        "mpi-test",
        BackendRunner::host(),
        &options,
    )));
}

/// The campaign in this process, one rank, no MPI: the bytes every MPI run must give.
fn in_process(m: &Path) -> Vec<u8> {
    let campaign = CorrCampaign::load(m, "host").unwrap();
    let mut results = vec![None; campaign.units().len()];
    run_local(
        &CorrJob::new(BackendRunner::host()),
        campaign.units(),
        &mut results,
        None,
        1,
        &Timing::with_timeout(Duration::from_secs(60)),
        &mut |_| {},
    )
    .unwrap();
    campaign.gather(&results).unwrap().to_json().unwrap()
}

/// Runs the campaign of `m` on 3 ranks; returns mpirun's output and how long it took.
fn mpirun(
    m: &Path,
    out: &Path,
    journal: &Path,
    timeout_ms: u64,
    fault: Option<&str>,
) -> (Output, Duration) {
    let summary = out.with_extension("summary.json");
    let mut cmd = Command::new("mpirun");
    cmd.args(["-n", "3", "--oversubscribe"])
        // Loopback only: TCP between the ranks on `lo`, and the runtime's own traffic too.
        .args([
            "--mca",
            "btl",
            "self,tcp",
            "--mca",
            "btl_tcp_if_include",
            "lo",
        ])
        .args(["--mca", "oob_tcp_if_include", "lo"])
        .args(["-x", RANK_VAR, "-x", FAULT_VAR])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env(RANK_VAR, "1")
        .env(FAULT_VAR, fault.unwrap_or(""))
        .arg(std::env::current_exe().unwrap())
        .arg(m)
        .arg(out)
        .arg(journal)
        .arg(timeout_ms.to_string())
        .arg(&summary);
    let start = Instant::now();
    let output = cmd
        .output()
        .expect("mpirun (Debian: openmpi-bin) must be installed");
    (output, start.elapsed())
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn clean_run_matches_one_process(d: &Path, m: &Path, expected: &[u8]) {
    let out = d.join("clean.json");
    let (o, took) = mpirun(m, &out, &d.join("clean.journal"), 60_000, None);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read(&out).unwrap() == expected,
        "3 ranks differ from 1"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("clean.summary.json")).unwrap()).unwrap();
    assert_eq!(summary["transport"], "mpi");
    assert_eq!(summary["ranks"], 3);
    assert_eq!(summary["ran"], 12);
    let per_rank: u64 = summary["per_rank"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["units"].as_u64().unwrap())
        .sum();
    assert_eq!(per_rank, 12);
    println!("mpi: clean run on 3 ranks: same bytes as one process ({took:.1?})");
}

fn killed_rank_then_rerun_matches(d: &Path, m: &Path, expected: &[u8]) {
    let out = d.join("restart.json");
    let journal = d.join("restart.journal");
    let (o, _) = mpirun(m, &out, &journal, 60_000, Some("exit,rank=2,after=1"));
    let err = stderr(&o);
    assert!(!o.status.success(), "the killed run succeeded: {err}");
    assert!(
        err.contains("rank 2: stopped by the fault hook (exit"),
        "{err}"
    );
    assert!(!out.exists(), "a killed run wrote its output");
    let recorded = std::fs::read_dir(journal.join("units")).unwrap().count();
    assert!((1..12).contains(&recorded), "{recorded} units recorded");
    let (o, _) = mpirun(m, &out, &journal, 60_000, None);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("restart.summary.json")).unwrap()).unwrap();
    assert_eq!(summary["skipped"], recorded as u64);
    assert!(
        std::fs::read(&out).unwrap() == expected,
        "the rerun differs"
    );
    println!("mpi: rank 2 killed after {recorded} recorded units; the rerun gives the same bytes");
}

fn hung_rank_is_lost_within_the_timeout(d: &Path, m: &Path) {
    let out = d.join("hang.json");
    let (o, took) = mpirun(
        m,
        &out,
        &d.join("hang.journal"),
        3_000,
        Some("hang,rank=1,after=1"),
    );
    let err = stderr(&o);
    assert!(!o.status.success());
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("rank 1 lost")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].starts_with("mpi-test: rank 1 lost: no message for 3."),
        "{err}"
    );
    // The timeout, plus start-up and tear-down.
    assert!(took < Duration::from_secs(40), "{took:?}");
    println!(
        "mpi: a hung rank stopped the job in {took:.1?} (timeout 3 s): {}",
        lines[0]
    );
}

fn bad_input_is_refused_once_before_any_rank_runs(d: &Path) {
    let mut bad = a1_file(2);
    bad.graphs.push(GraphSpec {
        id: "broken".into(),
        coefficient: [1.0, 0.0],
        loops: vec![LoopSpec::meson(&["no_such_node"])],
    });
    let last = bad.correlators[0].times.len() - 1;
    bad.correlators[0].times[last].graphs.push("broken".into());
    let sub = d.join("bad");
    std::fs::create_dir_all(&sub).unwrap();
    memhc_corr::save(&a1_file(2), &sub.join("a1.json")).unwrap();
    memhc_corr::save(&bad, &sub.join("bad.json")).unwrap();
    let m = manifest(
        &sub,
        &[("c1", "a1.json", None), ("c2", "bad.json", None)],
        r#", "source_block": 2"#,
    );
    let (o, _) = mpirun(
        &m,
        &sub.join("out.json"),
        &sub.join("journal"),
        60_000,
        None,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("no_such_node")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    // Every unit is admitted before the journal exists (issue 31): the broken file is refused
    // up front, naming its unit, before any rank has run one.
    assert!(lines[0].starts_with("mpi-test: unit c2.b0001: "), "{err}");
    assert!(
        !sub.join("journal").exists(),
        "a refused campaign leaves no journal"
    );
    println!("mpi: bad input refused once: {}", lines[0]);
}

fn missing_manifest_is_one_line(d: &Path) {
    let (o, took) = mpirun(
        &d.join("nowhere.json"),
        &d.join("x.json"),
        &d.join("x.journal"),
        60_000,
        None,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let ours: Vec<&str> = err.lines().filter(|l| l.starts_with("mpi-test:")).collect();
    assert_eq!(ours.len(), 1, "{err}");
    assert!(ours[0].contains("nowhere.json"), "{err}");
    assert!(took < Duration::from_secs(40));
    println!("mpi: a missing manifest: {}", ours[0]);
}
