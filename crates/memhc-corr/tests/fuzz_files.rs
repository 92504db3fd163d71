//! Fuzzing the correlator file parser and `.npy` node data (issue 31): seeded mutations of
//! valid files (numbers replaced by the values that break size arithmetic, bytes flipped,
//! ranges cut or repeated), then parse, check, plan, admit and (when admitted under a 1 MiB
//! budget) run on the host backend. Whatever the input, each stage returns `Ok` or a typed
//! error of one line; nothing panics, aborts or hangs.
//!
//! Seeds: `examples/data/pion.corr.json`, the test files of `common` (shared products,
//! baryons with views, explicit mappings), and the regression corpus in
//! `tests/fuzz-corpus/` (inputs that aborted or hung before issue 31, each still checked).
//! Deterministic (splitmix64, case numbers as seeds) and bounded for CI; set
//! `MEMHC_FUZZ_CASES=N` or `MEMHC_FUZZ_SECONDS=S` to run more (`memhc_testkit::fuzz`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use memhc_testkit::fuzz::{self, Rng, mutate_json, npy_header};
use std::path::{Path, PathBuf};

use hadron::Engine;
use memhc_core::{Config, Runtime};
use memhc_corr::{CorrError, PlanOptions};
use memhc_host::HostBackend;

/// Numbers that break size arithmetic, as JSON text.
const EDGES: [&str; 12] = [
    "0",
    "1",
    "3",
    "1048576",
    "1099511627776",
    "4611686018427387904",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "1e308",
    "0.5",
    "200000",
];

#[track_caller]
fn one_line(e: &CorrError) {
    let m = e.to_string();
    assert!(!m.contains('\n'), "a message of several lines: {m}");
}

/// Parses, plans, admits and (when it fits 1 MiB) runs `text`; every failure must be typed.
fn exercise(text: &str, dir: &Path) {
    let model = match memhc_corr::parse(text, "fuzz.json", dir) {
        Ok(m) => m,
        Err(e) => return one_line(&e),
    };
    for n in &model.nodes {
        // Node data (seeded, .npy) is read only when it fits comfortably.
        if let Some(Err(e)) = (n.bytes() <= 1 << 20).then(|| n.values()) {
            one_line(&e);
        }
    }
    let options = PlanOptions {
        vector_size: 1 + (text.len() % 4),
        ..PlanOptions::default()
    };
    let plan = match memhc_corr::plan(&model, &options) {
        Ok(p) => p,
        Err(e) => return one_line(&e),
    };
    let budget = 1usize << 20;
    if let Err(e) = memhc_corr::admit_run(&plan, budget as u64, true) {
        return one_line(&e);
    }
    let rt = Runtime::new(
        HostBackend::new(budget),
        Config::default().with_budget(budget),
    )
    .expect("a host runtime of 1 MiB");
    let mut engine = Engine::new(rt);
    if let Err(e) = memhc_corr::run(&plan, &mut engine, &mut |_| {}) {
        one_line(&e);
    }
}

fn seeds() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seeds = vec![
        std::fs::read_to_string(root.join("../../examples/data/pion.corr.json")).unwrap(),
        serde_json::to_string(&common::shared_file(2)).unwrap(),
        serde_json::to_string(&common::baryon_file(2)).unwrap(),
    ];
    seeds.extend(corpus().into_iter().map(|(_, text)| text));
    seeds
}

/// The regression corpus: `tests/fuzz-corpus/*.json`, by name.
fn corpus() -> Vec<(PathBuf, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

#[test]
fn the_regression_corpus_is_refused_with_typed_errors() {
    let dir = common::scratch("fuzz-corpus");
    let found = corpus();
    assert!(found.len() >= 4, "the corpus is missing: {found:?}");
    for (path, text) in found {
        // Each was an abort or a hang; each is now an error (none of them is a valid run).
        let outcome = memhc_corr::parse(&text, "corpus.json", &dir).and_then(|m| {
            let plan = memhc_corr::plan(&m, &PlanOptions::default())?;
            memhc_corr::admit_run(&plan, 1 << 20, true)
        });
        match outcome {
            Ok(()) => panic!("{}: admitted", path.display()),
            Err(e) => one_line(&e),
        }
    }
}

#[test]
fn mutated_correlator_files_never_crash() {
    let dir = common::scratch("fuzz-corr");
    let seeds = seeds();
    for case in fuzz::cases("corr-files", 400) {
        let mut r = Rng::new(case);
        let mut text = seeds[r.below(seeds.len())].clone().into_bytes();
        for _ in 0..1 + r.below(3) {
            mutate_json(&mut r, &mut text, &EDGES, 64);
        }
        exercise(&String::from_utf8_lossy(&text), &dir);
    }
}

#[test]
fn mutated_npy_node_data_never_crashes() {
    let dir = common::scratch("fuzz-npy");
    let sizes = [1u64, 2, 4, 1 << 20, 1 << 40, 1 << 62, u64::MAX];
    for case in fuzz::cases("npy-node-data", 400).divided_by(2) {
        let mut r = Rng::new(1000 + case);
        let n = sizes[r.below(sizes.len())];
        let spins = [16u64, 1, 1 << 40][r.below(3)];
        let descr = ["<c16", ">c16", "<f8", "|u1"][r.below(4)];
        let mut bytes = npy_header(&[spins, n, n], descr, r.below(8) == 0);
        // Data: enough for a small node, or short, or nothing.
        let elems = (spins.saturating_mul(n).saturating_mul(n)).min(4096) as usize;
        let data_len = [elems * 16, elems * 8, 0][r.below(3)];
        bytes.extend(std::iter::repeat_n(0x3fu8, data_len));
        if r.below(4) == 0 {
            let i = r.below(bytes.len());
            bytes[i] = (r.next_u64() & 0xff) as u8;
        }
        let npy = dir.join(format!("n{case}.npy"));
        std::fs::write(&npy, &bytes).unwrap();
        let file = format!(
            r#"{{"format": "memhc-corr/1",
  "nodes": [{{"id": "a", "spins": {spins}, "dims": [{n}, {n}], "time": 0,
              "data": {{"npy": "{}"}}}}],
  "graphs": [{{"id": "g", "loops": [{{"nodes": ["a"]}}]}}],
  "correlators": [{{"name": "C", "times": [{{"source": 0, "sink": 0, "graphs": ["g"]}}]}}]}}"#,
            npy.file_name().unwrap().to_string_lossy()
        );
        exercise(&file, &dir);
    }
}

#[test]
fn an_npy_header_claiming_an_enormous_shape_is_refused_cleanly() {
    // A header of (16, 2^17, 2^17) complex128 values (4 TiB) in a sparse file of that length:
    // the header, the node and the file length agree, so only the size stops it: a one-line
    // error before anything is allocated, never an abort.
    let dir = common::scratch("fuzz-npy-enormous");
    let n = 1u64 << 17;
    let header = npy_header(&[16, n, n], "<c16", false);
    let npy = dir.join("big.npy");
    std::fs::write(&npy, &header).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&npy)
        .unwrap()
        .set_len(header.len() as u64 + 16 * n * n * 16)
        .unwrap();
    let file = format!(
        r#"{{"format": "memhc-corr/1",
  "nodes": [{{"id": "a", "spins": 16, "dims": [{n}, {n}], "time": 0, "data": {{"npy": "big.npy"}}}}],
  "graphs": [{{"id": "g", "loops": [{{"nodes": ["a"]}}]}}],
  "correlators": [{{"name": "C", "times": [{{"source": 0, "sink": 0, "graphs": ["g"]}}]}}]}}"#
    );
    // Loading the file admits its nodes against the host: refused there already.
    let e = memhc_corr::parse(&file, "big.json", &dir).unwrap_err();
    assert!(
        one_line_text(&e).contains("big.json: the values of its nodes needs 4.0 TiB"),
        "{e}"
    );
    // A plan loads it without that admission; the values themselves are still refused.
    let path = dir.join("big.json");
    std::fs::write(&path, &file).unwrap();
    let model = memhc_corr::io::load_for_planning(&path).unwrap();
    let e = model.nodes[0].values().unwrap_err();
    assert!(
        one_line_text(&e).starts_with("node a: ")
            && e.to_string()
                .contains("big.npy: the node's values needs 4.0 TiB of host memory"),
        "{e}"
    );
    let _ = std::fs::remove_file(&npy);
}

fn one_line_text(e: &CorrError) -> String {
    one_line(e);
    e.to_string()
}
