//! Fuzzing `memhc-synth`'s argument lists (issue 31): seeded random command lines from the
//! flags a user types, each with ordinary values and the values that break sizes (0, 2^40,
//! 2^62, 1000T, 30000 streams, negative and non-numbers), files that are endless or hold a
//! size that cannot fit, and flags that conflict. Every command must end by itself within a
//! minute with exit code 0, 1 (a run that failed) or 2 (bad input, one line on stderr): never a
//! signal (an abort is 134, an OOM kill 137), never a hang.
//!
//! Deterministic and bounded for CI (cases at a small default size); `MEMHC_FUZZ_CASES=N` (or `MEMHC_FUZZ_SECONDS=S`, see `memhc_testkit::fuzz`)
//! runs more. Commands run with `MEMHC_HOST_MEMORY=2G`, so that the host admission is the same
//! on every machine.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_testkit::fuzz::{self, Rng};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SIZES: [&str; 8] = [
    "0",
    "1",
    "2",
    "3",
    "100000",
    "1099511627776",
    "4611686018427387904",
    "-1",
];

/// Counts (`--vectors`, `--vector-size`): small ones, and ones the queue's bookkeeping alone
/// cannot fit in the host memory.
const COUNTS: [&str; 7] = [
    "0",
    "1",
    "2",
    "3",
    "1099511627776",
    "4611686018427387904",
    "-1",
];

/// Flags with their values (`""`: a switch).
fn flags(workload: &str, huge: &str, out: &str) -> Vec<(String, Vec<String>)> {
    let v = |xs: &[&str]| xs.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    vec![
        ("--tensor-size".into(), v(&SIZES)),
        // Counts of work, not sizes: 100000 of them is a valid run of minutes (the first
        // long fuzz run took it for a hang), so only the values admission must refuse.
        ("--vectors".into(), v(&COUNTS)),
        ("--vector-size".into(), v(&COUNTS)),
        ("--repeat".into(), v(&["0", "0.5", "1", "2", "-1", "nan"])),
        (
            "--dist".into(),
            v(&["uniform", "gaussian", "recent:2", "recent:0", "x"]),
        ),
        (
            "--streams".into(),
            v(&["0", "1", "2", "30000", "4611686018427387904"]),
        ),
        (
            "--alloc".into(),
            v(&["arena", "driver", "handover", "all", "foo"]),
        ),
        (
            "--budget".into(),
            v(&["1K", "1M", "30G", "1000T", "0", "x"]),
        ),
        ("--oversub".into(), v(&["0", "1", "-1", "inf"])),
        ("--prefetch".into(), v(&["off", "1", "12", "0", "off,6"])),
        ("--reuse-tolerance".into(), v(&["0", "15", "101"])),
        ("--policy".into(), v(&["lru", "all", "belady", "foo"])),
        (
            "--mode".into(),
            v(&["optimal", "all", "unified", "naive", "foo"]),
        ),
        ("--runs".into(), v(&["0", "1", "2"])),
        ("--verify".into(), v(&[""])),
        (
            "--sweep".into(),
            v(&["repeat=0,1", "tensor-size=2,100000", "oversub=0,1", "foo=1"]),
        ),
        (
            "--workload".into(),
            vec![
                workload.to_owned(),
                huge.to_owned(),
                "/dev/zero".into(),
                "/nonexistent".into(),
            ],
        ),
        ("--emit-workload".into(), vec![out.to_owned()]),
        ("--emit-npy".into(), v(&[""])),
        ("--backend".into(), v(&["host", "cuda", "foo"])),
    ]
}

/// Runs `args`; returns the exit code and stderr, failing on a signal or a hang.
fn run(args: &[String]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memhc-synth"))
        .args(args)
        .env("MEMHC_HOST_MEMORY", "2G")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("memhc-synth {} hung", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(code) => (code, err),
        None => panic!(
            "memhc-synth {} was killed by a signal: {:?}\n{err}",
            args.join(" "),
            out.status
        ),
    }
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-synth-fuzz-args-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small workload file, and one whose single term asks for 10^11 output spins.
fn files(d: &Path) -> (PathBuf, PathBuf) {
    let small = d.join("small.json");
    let out = Command::new(env!("CARGO_BIN_EXE_memhc-synth"))
        .args([
            "--tensor-size",
            "2",
            "--vectors",
            "2",
            "--vector-size",
            "2",
            "--emit-workload",
        ])
        .arg(&small)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let huge = d.join("huge.json");
    std::fs::write(
        &huge,
        r#"{"format": "memhc-workload/1",
  "nodes": [{"id": "n0", "spins": 2, "dims": [3, 3], "data": {"random": {"seed": 1}}}],
  "vectors": [[{"a": "n0", "b": "n0", "out": "t0", "terms": [[99999999999, 0, 0]]}]],
  "results": ["t0"]}"#,
    )
    .unwrap();
    (small, huge)
}

#[test]
fn random_command_lines_end_with_an_exit_code() {
    let d = scratch();
    let (small, huge) = files(&d);
    let out = d.join("emitted.json");
    let all = flags(
        &small.display().to_string(),
        &huge.display().to_string(),
        &out.display().to_string(),
    );
    for case in fuzz::cases("memhc-synth-args", 60) {
        let mut r = Rng::new(case);
        let mut args: Vec<String> = Vec::new();
        if r.below(4) == 0 {
            args.push("plan".into());
        }
        let mut chosen: Vec<&str> = Vec::new();
        for _ in 0..r.below(5) {
            let (flag, values) = &all[r.below(all.len())];
            if chosen.contains(&flag.as_str()) {
                continue;
            }
            chosen.push(flag);
            args.push(flag.clone());
            let value = &values[r.below(values.len())];
            if !value.is_empty() {
                args.push(value.clone());
            }
        }
        // Keep the runs the fuzzer admits small: the defaults are a real workload.
        if !chosen.contains(&"--workload") {
            for (flag, small) in [
                ("--tensor-size", "2"),
                ("--vectors", "2"),
                ("--vector-size", "2"),
            ] {
                if !chosen.contains(&flag) {
                    args.extend([flag.to_owned(), small.to_owned()]);
                }
            }
        }
        let (code, err) = run(&args);
        assert!(
            matches!(code, 0..=2),
            "memhc-synth {}: exit {code}\n{err}",
            args.join(" ")
        );
        if code == 2 {
            assert_eq!(
                err.lines().count(),
                1,
                "memhc-synth {}: {err}",
                args.join(" ")
            );
        }
    }
}

#[test]
fn the_table_of_issue_31_is_refused_in_one_line() {
    let d = scratch();
    let (small, huge) = files(&d);
    let s = |x: &str| x.to_owned();
    let small = small.display().to_string();
    let huge = huge.display().to_string();
    let emitted = d.join("w.json").display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                s("--tensor-size"),
                s("4"),
                s("--vectors"),
                s("2"),
                s("--alloc"),
                s("arena"),
                s("--budget"),
                s("1000T"),
            ],
            "host memory",
        ),
        (
            vec![
                s("--tensor-size"),
                s("2"),
                s("--vectors"),
                s("2"),
                s("--alloc"),
                s("arena"),
                s("--budget"),
                s("30G"),
            ],
            "host memory",
        ),
        (vec![s("--streams"), s("30000")], "--streams 30000"),
        (vec![s("--workload"), huge.clone()], "host memory"),
        (
            vec![s("plan"), s("--workload"), huge.clone()],
            "host memory",
        ),
        (vec![s("--workload"), s("/dev/zero")], "/dev/zero"),
        (
            vec![
                s("--tensor-size"),
                s("100000"),
                s("--vectors"),
                s("2"),
                s("--emit-workload"),
                emitted.clone(),
                s("--emit-npy"),
            ],
            "host memory",
        ),
        (vec![s("plan"), s("--alloc"), s("arena")], "--alloc arena"),
        (vec![s("plan"), s("--prefetch"), s("12")], "--prefetch 12"),
        (
            vec![s("plan"), s("--reuse-tolerance"), s("15")],
            "--reuse-tolerance 15",
        ),
        (vec![s("plan"), s("--alloc"), s("foo")], "--alloc"),
        (
            vec![s("--workload"), small.clone(), s("--tensor-size"), s("8")],
            "--tensor-size",
        ),
    ];
    for (args, needle) in cases {
        let (code, err) = run(&args);
        assert_eq!(code, 2, "memhc-synth {}: {err}", args.join(" "));
        assert_eq!(
            err.lines().count(),
            1,
            "memhc-synth {}: {err}",
            args.join(" ")
        );
        assert!(
            err.contains(needle),
            "memhc-synth {}: '{err}' lacks '{needle}'",
            args.join(" ")
        );
    }
    assert!(
        !Path::new(&emitted).exists(),
        "a refused emit left its file"
    );
}
