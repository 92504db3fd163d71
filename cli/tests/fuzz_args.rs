//! Fuzzing `memhc`'s argument lists (issue 31): seeded random command lines of `gen`, `plan`,
//! `run` and `campaign` from the flags a user types, with ordinary values and the values that
//! break sizes (0, 2^40, 2^62, 1000T, 30000 streams, negative and non-numbers), files that are
//! endless, missing or whose nodes cannot fit. Every command must end by itself within a
//! minute with exit code 0 or 2 (bad input: one line on stderr), never a signal (an abort is
//! 134, an OOM kill 137), never a hang.
//!
//! Deterministic and bounded for CI; `MEMHC_FUZZ_CASES=N` or `MEMHC_FUZZ_SECONDS=S` runs more (`memhc_testkit::fuzz`). Commands run with
//! `MEMHC_HOST_MEMORY=2G`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_testkit::fuzz::{self, Rng};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-cli-fuzz-args-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[String]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_memhc"))
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
            panic!("memhc {} hung", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(code) => (code, err),
        None => panic!(
            "memhc {} was killed by a signal: {:?}\n{err}",
            args.join(" "),
            out.status
        ),
    }
}

#[test]
fn random_command_lines_end_with_an_exit_code() {
    let d = scratch();
    let pion = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/data/pion.corr.json");
    let huge = d.join("huge.json");
    std::fs::write(
        &huge,
        r#"{"format": "memhc-corr/1",
 "nodes": [{"id": "a", "spins": 16, "dims": [200000, 200000], "time": 0, "data": {"seed": 1}}],
 "graphs": [{"id": "g", "loops": [{"nodes": ["a"]}]}],
 "correlators": [{"name": "C", "times": [{"source": 0, "sink": 0, "graphs": ["g"]}]}]}"#,
    )
    .unwrap();
    let manifest = d.join("campaign.json");
    std::fs::write(
        &manifest,
        format!(
            r#"{{"format": "memhc-campaign/1", "configurations": [{{"id": "c", "file": "{}"}}]}}"#,
            pion.display()
        ),
    )
    .unwrap();
    let files = [
        pion.display().to_string(),
        huge.display().to_string(),
        "/dev/zero".to_owned(),
        "/nonexistent.json".to_owned(),
        d.display().to_string(),
    ];
    let s = |xs: &[&str]| xs.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
    let run_flags: Vec<(&str, Vec<String>)> = vec![
        (
            "--vector-size",
            s(&["0", "1", "16", "18446744073709551615", "-1"]),
        ),
        (
            "--streams",
            s(&["0", "1", "4", "30000", "4611686018427387904"]),
        ),
        ("--budget", s(&["1", "64K", "1M", "1000T", "0", "abc"])),
        ("--policy", s(&["lru", "all", "foo"])),
        ("--mode", s(&["optimal", "all", "unified", "foo"])),
        ("--backend", s(&["host", "cuda", "foo"])),
        (
            "--out",
            vec![
                d.join("o.json").display().to_string(),
                d.join("o.x").display().to_string(),
                "/proc/x/y.json".into(),
            ],
        ),
        ("--verify", s(&[""])),
        ("--no-sharing", s(&[""])),
        ("--file-order", s(&[""])),
    ];
    let gen_flags: Vec<(&str, Vec<String>)> = vec![
        (
            "--tensor-size",
            s(&["0", "1", "2", "100000", "4611686018427387904"]),
        ),
        ("--sources", s(&["0", "0,4", "1,1", "4294967295"])),
        ("--seed", s(&["0", "18446744073709551615"])),
    ];
    for case in fuzz::cases("memhc-args", 60) {
        let mut r = Rng::new(case);
        let mut args: Vec<String> = Vec::new();
        let flags: Vec<(&str, Vec<String>)> = match r.below(5) {
            0 => {
                args.push("gen".into());
                args.push(["a1_rhopi", "f0d2", "f0d4", "foo"][r.below(4)].into());
                args.push("-o".into());
                args.push(d.join("gen.json").display().to_string());
                gen_flags.clone()
            }
            1 => {
                args.push("plan".into());
                args.push(files[r.below(files.len())].clone());
                run_flags[..1].to_vec()
            }
            2 => {
                args.push("campaign".into());
                args.push(manifest.display().to_string());
                args.push("-o".into());
                args.push(d.join(format!("c{case}.json")).display().to_string());
                Vec::new()
            }
            _ => {
                args.push("run".into());
                args.push(files[r.below(files.len())].clone());
                run_flags.clone()
            }
        };
        let mut chosen: Vec<&str> = Vec::new();
        for _ in 0..r.below(4) {
            if flags.is_empty() {
                break;
            }
            let (flag, values) = &flags[r.below(flags.len())];
            if chosen.contains(flag) {
                continue;
            }
            chosen.push(flag);
            args.push((*flag).to_owned());
            let v = &values[r.below(values.len())];
            if !v.is_empty() {
                args.push(v.clone());
            }
        }
        let (code, err) = run(&args);
        assert!(
            matches!(code, 0 | 2),
            "memhc {}: exit {code}\n{err}",
            args.join(" ")
        );
        if code == 2 {
            assert_eq!(err.lines().count(), 1, "memhc {}: {err}", args.join(" "));
        }
    }
}
