//! A sweep over real MPI (feature `mpi`): `mpirun -n 3 --oversubscribe memhc-synth --sweep ...
//! --journal DIR` on the host backend, over TCP on the loopback interface only. Without the
//! test harness (one process runs the scenarios in order): the records count the same as a
//! run in one process, and after rank 1 is killed in the middle a rerun resumes to the same
//! counts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::counts;

const SWEEP: &[&str] = &[
    "--tensor-size",
    "4",
    "--vector-size",
    "4",
    "--vectors",
    "6",
    "--sweep",
    "repeat=0,0.25,0.5,0.75,1",
    "--sweep",
    "oversub=0,1",
    "--policy",
    "lru,belady",
    "--verify",
];

fn main() {
    let d = std::env::temp_dir().join(format!("memhc-synth-mpi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();

    let plain = Command::new(env!("CARGO_BIN_EXE_memhc-synth"))
        .args(SWEEP)
        .arg("--json")
        .arg(d.join("plain.json"))
        .output()
        .unwrap();
    assert!(plain.status.success(), "{}", stderr(&plain));
    let expected = counts(&d.join("plain.json"));
    assert_eq!(expected.len(), 10 * 2);

    let journal = d.join("journal");
    let o = mpirun(
        &d.join("killed.json"),
        &journal,
        Some("exit,rank=1,after=1"),
    );
    assert!(!o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rank 1: stopped by the fault hook"),
        "{}",
        stderr(&o)
    );
    let recorded = std::fs::read_dir(journal.join("units")).unwrap().count();
    assert!((1..10).contains(&recorded), "{recorded}");

    let o = mpirun(&d.join("resumed.json"), &journal, None);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "10 points ({recorded} from the journal) on 3 ranks (mpi)"
        )),
        "{err}"
    );
    assert_eq!(counts(&d.join("resumed.json")), expected);
    std::fs::remove_dir_all(&d).unwrap();
    println!(
        "mpi: a sweep of 10 points on 3 ranks, rank 1 killed after {recorded} recorded points, resumed to the counts of one process"
    );
}

fn mpirun(json: &Path, journal: &PathBuf, fault: Option<&str>) -> Output {
    Command::new("mpirun")
        .args(["-n", "3", "--oversubscribe"])
        .args([
            "--mca",
            "btl",
            "self,tcp",
            "--mca",
            "btl_tcp_if_include",
            "lo",
        ])
        .args(["--mca", "oob_tcp_if_include", "lo"])
        .args(["-x", "MEMHC_CAMPAIGN_FAULT"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("MEMHC_CAMPAIGN_FAULT", fault.unwrap_or(""))
        .arg(env!("CARGO_BIN_EXE_memhc-synth"))
        .args(SWEEP)
        .arg("--journal")
        .arg(journal)
        .arg("--json")
        .arg(json)
        .output()
        .expect("mpirun (Debian: openmpi-bin) must be installed")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
