//! `memhc-synth --journal DIR`: a sweep run as a campaign in one process (the build without
//! MPI; over MPI ranks see `tests/mpi.rs`). Its records count the same as a plain run's, a run
//! killed after one point resumes from the journal to the same counts, and a rerun of a
//! finished sweep runs nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::counts;

fn synth(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memhc-synth"));
    cmd.args(args).env_remove("MEMHC_HOST_MEMORY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-synth-dist-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const SWEEP: &[&str] = &[
    "--tensor-size",
    "4",
    "--vector-size",
    "4",
    "--vectors",
    "8",
    "--sweep",
    "repeat=0,0.5,1",
    "--sweep",
    "oversub=0,1",
    "--policy",
    "lru,belady",
    "--verify",
];

fn run(d: &Path, out: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let json = d.join(out);
    let mut args: Vec<&str> = SWEEP.to_vec();
    args.extend(extra);
    args.extend(["--json", json.to_str().unwrap()]);
    synth(&args, env)
}

#[test]
fn a_journaled_sweep_counts_as_a_plain_one_and_resumes_after_a_kill() {
    let d = scratch("resume");
    let plain = run(&d, "plain.json", &[], &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let expected = counts(&d.join("plain.json"));
    assert_eq!(expected.len(), 6 * 2);
    assert!(expected.iter().all(|r| r["verified"] == true));

    let journal = d.join("journal");
    let j = journal.to_str().unwrap();
    let killed = run(
        &d,
        "killed.json",
        &["--journal", j],
        &[("MEMHC_CAMPAIGN_FAULT", "exit,rank=0,after=2")],
    );
    assert_eq!(killed.status.code(), Some(137), "{}", stderr(&killed));
    assert!(stderr(&killed).contains("stopped by the fault hook"));
    assert!(!d.join("killed.json").exists());
    assert_eq!(std::fs::read_dir(journal.join("units")).unwrap().count(), 2);

    let resumed = run(&d, "resumed.json", &["--journal", j], &[]);
    let err = stderr(&resumed);
    assert!(resumed.status.success(), "{err}");
    assert!(
        err.contains("6 points (2 from the journal) on 1 rank (none)"),
        "{err}"
    );
    assert_eq!(counts(&d.join("resumed.json")), expected);
    // The table on stdout is the plain run's (up to the timings).
    assert_eq!(
        String::from_utf8_lossy(&resumed.stdout).lines().count(),
        String::from_utf8_lossy(&plain.stdout).lines().count()
    );

    let again = run(&d, "again.json", &["--journal", j], &[]);
    assert!(
        stderr(&again).contains("(6 from the journal)"),
        "{}",
        stderr(&again)
    );
    assert_eq!(counts(&d.join("again.json")), expected);
    // Other options: the records are not reused.
    let other = run(&d, "other.json", &["--journal", j, "--streams", "2"], &[]);
    assert_eq!(other.status.code(), Some(2));
    assert!(
        stderr(&other).contains("another spec"),
        "{}",
        stderr(&other)
    );
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_in_a_distributed_sweep_is_one_line() {
    let d = scratch("bad");
    let j = d.join("j");
    let j = j.to_str().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (
            &["--journal", j, "--policy", "fifo"],
            "unknown eviction policy",
        ),
        (&["--journal", j, "--timeout", "0"], "--timeout"),
        (
            &["--journal", j, "--emit-workload", "w.json"],
            "cannot be used with",
        ),
    ];
    for (args, needle) in cases {
        let o = synth(args, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    std::fs::remove_dir_all(&d).unwrap();
}
