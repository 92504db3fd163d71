//! Fuzzing the workload file reader (issue 31): seeded mutations of valid `memhc-workload/1`
//! files (numbers replaced by values that break size arithmetic, bytes flipped, ranges cut or
//! repeated), then load, analyse, and (when the host copies it makes are small) a dry run.
//! Whatever the input: `Ok` or a typed error, never a panic, an abort or a hang.
//!
//! Seeds: a generated queue saved with seeds, a hand-written file with explicit terms and a
//! trace, and the regression corpus `tests/fuzz-corpus/` (inputs that hung or aborted before
//! issue 31). Deterministic and bounded for CI; `MEMHC_FUZZ_CASES=N` or `MEMHC_FUZZ_SECONDS=S` runs more (`memhc_testkit::fuzz`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use memhc_testkit::fuzz::{self, Rng, mutate_json};
use std::path::{Path, PathBuf};

use memhc_workload::file::{load, save};
use memhc_workload::host_memory::dry_run_needs;
use memhc_workload::run::peak_without_eviction;
use memhc_workload::{Error, SynthParams, generate};

const EDGES: [&str; 10] = [
    "0",
    "1",
    "1048576",
    "99999999999",
    "1099511627776",
    "4611686018427387904",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "200000",
];

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memhc-workload-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[track_caller]
fn one_line(e: &Error) {
    let m = e.to_string();
    assert!(!m.contains('\n'), "a message of several lines: {m}");
}

/// Loads the file at `path`, analyses it and dry-runs it when that is cheap.
fn exercise(path: &Path) -> Result<(), Error> {
    let w = load(path)?;
    let a = w.analyse()?;
    if dry_run_needs(&w, &a) <= 64 << 20 {
        peak_without_eviction(&w, &a)?;
    }
    Ok(())
}

const EXPLICIT: &str = r#"{
  "format": "memhc-workload/1",
  "nodes": [
    {"id": "n0", "spins": 2, "dims": [3, 3], "data": {"random": {"seed": 1}}},
    {"id": "n1", "spins": 2, "dims": [3, 3], "data": {"random": {"seed": 2}}}
  ],
  "vectors": [[{"a": "n0", "b": "n1", "out": "t0", "terms": [[0, 0, 0], [1, 1, 1]]}]],
  "traces": [{"a": "t0", "b": "n1", "pairs": [[0, 0], [1, 1]]}],
  "results": ["t0"]
}"#;

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn the_regression_corpus_is_refused_with_typed_errors() {
    let found = corpus();
    assert!(found.len() >= 2, "the corpus is missing: {found:?}");
    for path in found {
        match exercise(&path) {
            Ok(()) => panic!("{}: accepted", path.display()),
            Err(e) => one_line(&e),
        }
    }
    if Path::new("/dev/zero").exists() {
        let e = load(Path::new("/dev/zero")).err();
        assert!(matches!(e, Some(Error::Io { .. })), "{e:?}");
    }
}

#[test]
fn mutated_workload_files_never_crash() {
    let dir = scratch("mutated");
    let generated = dir.join("generated.json");
    let p = SynthParams {
        tensor_size: 2,
        vector_size: 2,
        vectors: 3,
        ..SynthParams::default()
    };
    save(&generate(&p).unwrap(), &generated, false).unwrap();
    let mut seeds = vec![
        std::fs::read_to_string(&generated).unwrap(),
        EXPLICIT.to_owned(),
    ];
    seeds.extend(corpus().iter().map(|p| std::fs::read_to_string(p).unwrap()));
    let path = dir.join("case.json");
    for case in fuzz::cases("workload-files", 300) {
        let mut r = Rng::new(case);
        let mut text = seeds[r.below(seeds.len())].clone().into_bytes();
        for _ in 0..1 + r.below(3) {
            mutate_json(&mut r, &mut text, &EDGES, 64);
        }
        std::fs::write(&path, &text).unwrap();
        if let Err(e) = exercise(&path) {
            one_line(&e);
        }
    }
}
