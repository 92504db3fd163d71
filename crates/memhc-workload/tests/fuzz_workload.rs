//! Fuzzing the workload file reader (issue 31): seeded mutations of valid `memhc-workload/1`
//! files (numbers replaced by values that break size arithmetic, bytes flipped, ranges cut or
//! repeated), then load, analyse, and (when the host copies it makes are small) a dry run.
//! Whatever the input: `Ok` or a typed error, never a panic, an abort or a hang.
//!
//! Seeds: a generated queue saved with seeds, a hand-written file with explicit terms and a
//! trace, and the regression corpus `tests/fuzz-corpus/` (inputs that hung or aborted before
//! issue 31). Deterministic and bounded for CI; `MEMHC_FUZZ_CASES=N` runs more.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use memhc_workload::file::{load, save};
use memhc_workload::host_memory::dry_run_needs;
use memhc_workload::run::peak_without_eviction;
use memhc_workload::{Error, SynthParams, generate};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

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

fn mutate(r: &mut Rng, text: &mut Vec<u8>) {
    if text.is_empty() {
        text.extend_from_slice(b"{}");
        return;
    }
    match r.below(6) {
        0..=2 => {
            let starts: Vec<usize> = (0..text.len())
                .filter(|&i| text[i].is_ascii_digit() && (i == 0 || !text[i - 1].is_ascii_digit()))
                .collect();
            if starts.is_empty() {
                return;
            }
            let start = starts[r.below(starts.len())];
            let end = (start..text.len())
                .find(|&i| !text[i].is_ascii_digit())
                .unwrap_or(text.len());
            let edge = EDGES[r.below(EDGES.len())].as_bytes();
            text.splice(start..end, edge.iter().copied());
        }
        3 => {
            let i = r.below(text.len());
            text[i] = (r.next() & 0xff) as u8;
        }
        4 => {
            let a = r.below(text.len());
            let b = (a + r.below(64)).min(text.len());
            text.drain(a..b);
        }
        _ => {
            let a = r.below(text.len());
            let b = (a + r.below(64)).min(text.len());
            let piece: Vec<u8> = text[a..b].to_vec();
            let at = r.below(text.len());
            text.splice(at..at, piece);
        }
    }
}

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

fn cases() -> u64 {
    std::env::var("MEMHC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300)
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
    for case in 0..cases() {
        let mut r = Rng(case);
        let mut text = seeds[r.below(seeds.len())].clone().into_bytes();
        for _ in 0..1 + r.below(3) {
            mutate(&mut r, &mut text);
        }
        std::fs::write(&path, &text).unwrap();
        if let Err(e) = exercise(&path) {
            one_line(&e);
        }
    }
}
