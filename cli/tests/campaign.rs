//! `memhc campaign` in one process (the build without MPI): the output equals `memhc run` of
//! each configuration's file, a run killed with SIGKILL in the middle resumes from its journal
//! to the same bytes, and bad input is one line with exit code 2. (Over MPI ranks:
//! memhc-campaign's `mpi` test.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn memhc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memhc"))
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-cli-campaign-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ok(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// a1_rhopi at sources 0, 4, 8, 12 and a manifest of two configurations, one reseeded.
fn setup(d: &Path, n: usize, block: usize) -> PathBuf {
    ok(memhc()
        .args(["gen", "a1_rhopi", "--sources", "0,4,8,12", "--tensor-size"])
        .arg(n.to_string())
        .arg("-o")
        .arg(d.join("a1.json")));
    let m = d.join("campaign.json");
    std::fs::write(
        &m,
        format!(
            r#"{{"format": "memhc-campaign/1", "source_block": {block},
                "configurations": [{{"id": "c1", "file": "a1.json"}},
                                   {{"id": "c2", "file": "a1.json", "seed": 5}}]}}"#
        ),
    )
    .unwrap();
    m
}

#[test]
fn a_campaign_gives_what_memhc_run_gives_for_each_configuration() {
    let d = dir("values");
    let m = setup(&d, 2, 1);
    let out = d.join("out.csv");
    let stdout = ok(memhc().arg("campaign").arg(&m).arg("-o").arg(&out));
    assert!(
        stdout.contains("8 units (0 from the journal) on 1 rank (none)"),
        "{stdout}"
    );
    let campaign = std::fs::read_to_string(&out).unwrap();
    assert!(campaign.starts_with("configuration,correlator,source,sink,re,im\n"));
    // 256 correlators at 4 sources, two configurations.
    assert_eq!(campaign.lines().count(), 1 + 2 * 256 * 4);
    ok(memhc()
        .arg("run")
        .arg(d.join("a1.json"))
        .arg("--out")
        .arg(d.join("whole.csv")));
    let whole = std::fs::read_to_string(d.join("whole.csv")).unwrap();
    let c1: Vec<&str> = campaign
        .lines()
        .filter_map(|l| l.strip_prefix("c1,"))
        .collect();
    let whole: Vec<&str> = whole.lines().skip(1).collect();
    assert_eq!(c1, whole, "c1 differs from memhc run of its file");
    let c2: Vec<&str> = campaign
        .lines()
        .filter_map(|l| l.strip_prefix("c2,"))
        .collect();
    assert_eq!(c2.len(), whole.len());
    assert_ne!(c2, whole, "the seed of c2 changes nothing");
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn a_run_killed_mid_campaign_resumes_to_the_same_bytes() {
    let d = dir("kill");
    let m = setup(&d, 6, 1);
    let clean = d.join("clean.json");
    ok(memhc()
        .arg("campaign")
        .arg(&m)
        .arg("-o")
        .arg(&clean)
        .arg("--quiet"));

    let out = d.join("out.json");
    let units = d.join("out.json.journal/units");
    let mut child = memhc()
        .arg("campaign")
        .arg(&m)
        .arg("-o")
        .arg(&out)
        .arg("--quiet")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Records only, not a temporary file on its way to becoming one.
    let recorded = |p: &Path| {
        std::fs::read_dir(p).map_or(0, |r| {
            r.filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                let name = name.to_string_lossy();
                name.ends_with(".json") && !name.starts_with('.')
            })
            .count()
        })
    };
    while recorded(&units) == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no unit recorded"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    let done = recorded(&units);
    assert!(
        !status.success() && !out.exists(),
        "the campaign ended before the kill"
    );
    assert!((1..8).contains(&done), "{done}");

    let stdout = ok(memhc()
        .arg("campaign")
        .arg(&m)
        .arg("-o")
        .arg(&out)
        .arg("--quiet"));
    assert!(
        stdout.contains(&format!("({done} from the journal)")),
        "{stdout}"
    );
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&clean).unwrap());
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn bad_input_is_one_line_and_exit_code_2() {
    let d = dir("bad");
    let m = setup(&d, 1, 2);
    let cases: [(&[&str], &str); 4] = [
        (
            &["campaign", "missing.json", "-o", "x.json"],
            "missing.json",
        ),
        (
            &["campaign", "campaign.json", "-o", "x.txt"],
            "the output is .json or .csv",
        ),
        (
            &[
                "campaign",
                "campaign.json",
                "-o",
                "x.json",
                "--backend",
                "tpu",
            ],
            "unknown backend",
        ),
        (
            &["gen", "a1_rhopi", "--sources", "0,0", "-o", "y.json"],
            "listed twice",
        ),
    ];
    for (args, needle) in cases {
        let out = memhc().current_dir(&d).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
    }
    // A configuration whose file is broken: named, with its configuration.
    std::fs::write(
        d.join("a1.json"),
        "{\"format\": \"memhc-corr/1\", \"nodes\": 3}",
    )
    .unwrap();
    let out = memhc()
        .arg("campaign")
        .arg(&m)
        .arg("-o")
        .arg(d.join("z.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.starts_with("memhc: configuration c1: "), "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}
