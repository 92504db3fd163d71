//! Workload files (memhc-workload/1): round trips, a hand-written file with explicit terms,
//! rank-3 components, views and traces, result dumps, and one test per kind of error.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use hadron::{HadronNode, MatrixView, NodeShape, SpinMapping, Term, TracePairs};
use memhc_workload::file::{dump_results, load, save};
use memhc_workload::{Error, NodeData, SynthParams, Workload, generate};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use ndarray_npy::{read_npy, write_npy};
use num_complex::Complex64;

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "memhc-workload-files-{}-{}-{name}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn small() -> Workload {
    generate(&SynthParams {
        tensor_size: 4,
        vector_size: 3,
        vectors: 5,
        repeat: 0.5,
        ..Default::default()
    })
    .unwrap()
}

/// The workload with every node's values given (as a file with `.npy` data loads).
fn materialised(w: &Workload) -> Workload {
    let mut w = w.clone();
    for n in &mut w.nodes {
        n.data = NodeData::Values(Arc::new(n.data.materialise(&n.shape)));
    }
    w
}

/// Loads `path`, expecting a workload error; checks it is one line starting with the file's
/// name and containing every one of `parts`. Returns the message.
fn load_error(path: &Path, parts: &[&str]) -> String {
    let err = match load(path) {
        Ok(_) => panic!("{} loaded", path.display()),
        Err(e) => e,
    };
    assert!(
        matches!(err, Error::Workload(_)),
        "not a workload error: {err:?}"
    );
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "more than one line: {msg}");
    let prefix = format!("{}: ", path.display());
    assert!(
        msg.starts_with(&prefix),
        "does not start with {prefix:?}: {msg}"
    );
    for p in parts {
        assert!(msg.contains(p), "{msg:?} does not contain {p:?}");
    }
    msg
}

/// A small valid file: two 2-spin 3x3 nodes, one contraction, one result.
const VALID: &str = r#"{
  "format": "memhc-workload/1",
  "nodes": [
    {"id": "n0", "spins": 2, "dims": [3, 3], "data": {"random": {"seed": 1}}},
    {"id": "n1", "spins": 2, "dims": [3, 3], "data": {"random": {"seed": 2}}}
  ],
  "vectors": [[{"a": "n0", "b": "n1", "out": "t0", "terms": [[0, 0, 0], [1, 1, 1]]}]],
  "results": ["t0"]
}"#;

#[test]
fn valid_file_loads() {
    let dir = TempDir::new("valid");
    let w = load(&dir.write("work.json", VALID)).unwrap();
    assert_eq!(w.nodes.len(), 2);
    assert_eq!(w.results, vec!["t0".to_owned()]);
    assert!(w.traces.is_empty());
}

#[test]
fn round_trip_with_seeds() {
    let dir = TempDir::new("seeds");
    let w = small();
    let path = dir.path("work.json");
    save(&w, &path, false).unwrap();
    let back = load(&path).unwrap();
    assert_eq!(back, w);
    assert_eq!(back.analyse().unwrap(), w.analyse().unwrap());
    assert!(
        back.nodes
            .iter()
            .all(|n| matches!(n.data, NodeData::Random { .. }))
    );
    // One shared mapping, as generated.
    let first = &back.vectors[0][0].mapping;
    assert!(
        back.vectors
            .iter()
            .flatten()
            .all(|c| Arc::ptr_eq(&c.mapping, first))
    );
    // Seeds only: no .npy files.
    let npys = std::fs::read_dir(&dir.0)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "npy")
        })
        .count();
    assert_eq!(npys, 0);
}

#[test]
fn round_trip_with_npy() {
    let dir = TempDir::new("npy");
    let w = small();
    let path = dir.path("sub/work.json"); // the directory is created
    save(&w, &path, true).unwrap();
    for n in &w.nodes {
        assert!(dir.path(&format!("sub/{}.npy", n.id)).is_file(), "{}", n.id);
    }
    let back = load(&path).unwrap();
    assert!(
        back.nodes
            .iter()
            .all(|n| matches!(n.data, NodeData::Values(_)))
    );
    assert_eq!(back, materialised(&w));
    assert_eq!(back.analyse().unwrap(), w.analyse().unwrap());
    for (got, want) in back.nodes.iter().zip(&w.nodes) {
        assert_eq!(
            got.data.materialise(&got.shape),
            want.data.materialise(&want.shape)
        );
    }
    // Given values are written as .npy even without `npy`; the result loads the same.
    let again = dir.path("again/work.json");
    save(&back, &again, false).unwrap();
    assert_eq!(load(&again).unwrap(), back);
}

/// Rank-3 components, views, explicit terms and pairs, named ones, traces.
const EXPLICIT: &str = r#"{
  "format": "memhc-workload/1",
  "nodes": [
    {"id": "b0", "spins": 2, "dims": [3, 4, 5], "data": {"random": {"seed": 11}}},
    {"id": "m0", "spins": 2, "dims": [5, 6], "data": {"random": {"seed": 12}}},
    {"id": "m1", "spins": 1, "dims": [5, 4], "data": {"random": {"seed": 13}}},
    {"id": "c0", "spins": 1, "dims": [4, 2, 3], "data": {"random": {"seed": 14}}},
    {"id": "m2", "spins": 3, "dims": [6, 12], "data": {"random": {"seed": 15}}},
    {"id": "p", "spins": 16, "dims": [2, 2], "data": {"random": {"seed": 16}}},
    {"id": "q", "spins": 16, "dims": [2, 2], "data": {"random": {"seed": 17}}}
  ],
  "vectors": [
    [
      {"a": "b0", "b": "m0", "out": "t0", "terms": [[0, 0, 0], [2, 1, 1], [2, 0, 1]], "a_view": 2},
      {"a": "m1", "b": "c0", "out": "t1", "terms": [[0, 0, 0]], "b_view": 1},
      {"a": "p", "b": "q", "out": "t2", "terms": "meson4x4"}
    ],
    [
      {"a": "b0", "b": "m0", "out": "t3", "terms": [[0, 0, 0], [2, 1, 1], [2, 0, 1]], "out_spins": 3, "a_view": 2},
      {"a": "t2", "b": "q", "out": "t4", "terms": "meson4x4", "out_spins": 16}
    ]
  ],
  "traces": [
    {"a": "t0", "b": "m2", "pairs": [[0, 0], [2, 1]]},
    {"a": "t4", "b": "p", "pairs": "meson4x4"}
  ],
  "results": ["t1", "t3"]
}"#;

#[test]
fn explicit_terms_rank3_views_and_traces() {
    let dir = TempDir::new("explicit");
    let w = load(&dir.write("work.json", EXPLICIT)).unwrap();
    let a = w.analyse().unwrap();
    // (3 x 4 x 5) seen as 12 x 5, times 5 x 6: 12 x 6, out spins from the largest index.
    assert_eq!(a.shape("t0"), Some(&NodeShape::new(3, &[12, 6]).unwrap()));
    // 5 x 4 times (4 x 2 x 3) seen as 4 x 6: 5 x 6.
    assert_eq!(a.shape("t1"), Some(&NodeShape::new(1, &[5, 6]).unwrap()));
    assert_eq!(a.shape("t4"), Some(&NodeShape::meson(2).unwrap()));

    let (t0, t3) = (&w.vectors[0][0], &w.vectors[1][0]);
    let terms = vec![Term::new(0, 0, 0), Term::new(2, 1, 1), Term::new(2, 0, 1)];
    assert_eq!(*t0.mapping, SpinMapping::new(3, terms).unwrap());
    assert_eq!(
        (t0.a_view, t0.b_view),
        (MatrixView::split(2), MatrixView::default())
    );
    assert!(
        Arc::ptr_eq(&t0.mapping, &t3.mapping),
        "identical lists share a mapping"
    );
    assert!(Arc::ptr_eq(
        &w.vectors[0][2].mapping,
        &w.vectors[1][1].mapping
    ));
    assert_eq!(*w.vectors[0][2].mapping, SpinMapping::meson4x4());
    assert_eq!(
        *w.traces[0].pairs,
        TracePairs::new(vec![(0, 0), (2, 1)]).unwrap()
    );
    assert_eq!(*w.traces[1].pairs, TracePairs::meson4x4());

    // Written back: views only where not the default, names where they apply.
    let path = dir.path("back.json");
    save(&w, &path, false).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"a_view\": 2"), "{text}");
    assert!(!text.contains("b_view"), "{text}");
    assert!(text.contains("\"terms\": \"meson4x4\""), "{text}");
    assert!(text.contains("\"pairs\": \"meson4x4\""), "{text}");
    assert!(text.contains("\"out_spins\": 3"), "{text}");
    assert_eq!(load(&path).unwrap(), w);
}

#[test]
fn documented_example_loads() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/workload-format.md"),
    )
    .unwrap();
    let start = doc.find("```json\n").unwrap() + "```json\n".len();
    let json = &doc[start..start + doc[start..].find("```").unwrap()];
    let dir = TempDir::new("doc");
    let shape = NodeShape::meson(64).unwrap();
    write_npy(dir.path("n0.npy"), HadronNode::random(&shape, 3).array()).unwrap();
    let w = load(&dir.write("work.json", json)).unwrap();
    let a = w.analyse().unwrap();
    assert_eq!(a.shape("t1"), Some(&NodeShape::new(2, &[64, 4]).unwrap()));
    assert_eq!(
        w.nodes[0].data.materialise(&shape),
        HadronNode::random(&shape, 3)
    );
}

#[test]
fn dump_results_writes_npy_and_traces() {
    let dir = TempDir::new("dump");
    let out = dir.path("results/deeper");
    let x = HadronNode::random(&NodeShape::new(2, &[3, 4]).unwrap(), 5);
    let y = HadronNode::random(&NodeShape::meson(2).unwrap(), 6);
    let traces = vec![
        ("x".to_owned(), "y".to_owned(), Complex64::new(1.5, -0.25)),
        ("y".to_owned(), "x".to_owned(), Complex64::new(-3.0, 2.0)),
    ];
    dump_results(
        &out,
        &[("x".into(), x.clone()), ("y".into(), y.clone())],
        &traces,
    )
    .unwrap();
    let back: ArrayD<Complex64> = read_npy(out.join("x.npy")).unwrap();
    assert_eq!(back.shape(), &[2, 3, 4]);
    assert_eq!(&back, x.array());
    let back: ArrayD<Complex64> = read_npy(out.join("y.npy")).unwrap();
    assert_eq!(&back, y.array());
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("traces.json")).unwrap()).unwrap();
    assert_eq!(
        t,
        serde_json::json!([
            {"a": "x", "b": "y", "re": 1.5, "im": -0.25},
            {"a": "y", "b": "x", "re": -3.0, "im": 2.0}
        ])
    );
}

// ---------------------------------------------------------------------------------------------
// Errors: one line each, naming the place.

#[test]
fn error_missing_field() {
    let dir = TempDir::new("missing");
    let text = VALID.replace(
        r#""dims": [3, 3], "data": {"random": {"seed": 2}}"#,
        r#""data": {"random": {"seed": 2}}"#,
    );
    let msg = load_error(
        &dir.write("work.json", &text),
        &["line 5 column", "missing field `dims`"],
    );
    assert!(msg.contains("work.json: line 5 column"), "{msg}");
}

#[test]
fn error_unknown_field() {
    let dir = TempDir::new("unknown-field");
    let text = VALID.replace(r#""out": "t0","#, r#""out": "t0", "c": "n1","#);
    load_error(
        &dir.write("work.json", &text),
        &["line 7 column", "unknown field `c`"],
    );
    let text = VALID.replace(r#""results""#, r#""extra": 1, "results""#);
    load_error(
        &dir.write("top.json", &text),
        &["line 8 column", "unknown field `extra`"],
    );
    // A key with a newline in it is still reported on one line.
    let text = VALID.replace(r#""results""#, r#""ex\ntra": 1, "results""#);
    load_error(
        &dir.write("newline.json", &text),
        &["unknown field `ex\\ntra`"],
    );
}

#[test]
fn error_unknown_id() {
    let dir = TempDir::new("unknown-id");
    let text = VALID.replace(r#""b": "n1""#, r#""b": "t9""#);
    let msg = load_error(&dir.write("work.json", &text), &[]);
    assert!(
        msg.ends_with(r#"work.json: vectors[0][0].b: unknown id "t9""#),
        "{msg}"
    );
}

#[test]
fn error_id_produced_twice() {
    let dir = TempDir::new("twice");
    let text = VALID.replace(
        r#""vectors": [[{"a": "n0", "b": "n1", "out": "t0", "terms": [[0, 0, 0], [1, 1, 1]]}]]"#,
        r#""vectors": [
    [{"a": "n0", "b": "n1", "out": "t0", "terms": [[0, 0, 0], [1, 1, 1]]}],
    [{"a": "n1", "b": "n0", "out": "t0", "terms": [[0, 0, 0], [1, 1, 1]]}]
  ]"#,
    );
    load_error(
        &dir.write("work.json", &text),
        &[r#"work.json: vectors[1][0].out: id "t0" is produced twice"#],
    );
}

#[test]
fn error_result_never_produced() {
    let dir = TempDir::new("never");
    let text = VALID.replace(r#""results": ["t0"]"#, r#""results": ["t0", "t5"]"#);
    load_error(
        &dir.write("work.json", &text),
        &[r#"work.json: results[1]: "t5" is never produced"#],
    );
}

#[test]
fn error_unknown_format_version() {
    let dir = TempDir::new("format");
    // A later version with keys this one does not know: reported as the version, not the keys.
    let text = VALID
        .replace("memhc-workload/1", "memhc-workload/2")
        .replace(r#""results""#, r#""streams": 4, "results""#);
    load_error(
        &dir.write("work.json", &text),
        &[
            r#"work.json: format: unknown format "memhc-workload/2""#,
            "memhc-workload/1",
        ],
    );
}

/// VALID with n1's data in `n1.npy`.
fn with_npy(dir: &TempDir) -> PathBuf {
    dir.write(
        "work.json",
        &VALID.replace(r#"{"random": {"seed": 2}}"#, r#"{"npy": "n1.npy"}"#),
    )
}

#[test]
fn npy_data_loads() {
    let dir = TempDir::new("npy-ok");
    let values = HadronNode::random(&NodeShape::new(2, &[3, 3]).unwrap(), 9);
    write_npy(dir.path("n1.npy"), values.array()).unwrap();
    let w = load(&with_npy(&dir)).unwrap();
    assert_eq!(w.nodes[1].data, NodeData::Values(Arc::new(values)));
}

#[test]
fn error_npy_wrong_shape() {
    let dir = TempDir::new("npy-shape");
    let values = HadronNode::random(&NodeShape::new(2, &[3, 4]).unwrap(), 9);
    write_npy(dir.path("n1.npy"), values.array()).unwrap();
    load_error(
        &with_npy(&dir),
        &[
            "work.json: nodes[1] (n1): n1.npy: expected complex128",
            "of shape (2, 3, 3)",
            "found complex128 ('<c16') of shape (2, 3, 4)",
        ],
    );
}

#[test]
fn error_npy_wrong_dtype() {
    let dir = TempDir::new("npy-dtype");
    write_npy(dir.path("n1.npy"), &ArrayD::<f64>::zeros(IxDyn(&[2, 3, 3]))).unwrap();
    load_error(
        &with_npy(&dir),
        &[
            "work.json: nodes[1] (n1): n1.npy: expected complex128",
            "found float64 ('<f8') of shape (2, 3, 3)",
        ],
    );
}

#[test]
fn error_npy_fortran_order() {
    let dir = TempDir::new("npy-fortran");
    let a = ArrayD::<Complex64>::zeros(IxDyn(&[2, 3, 3]).f());
    write_npy(dir.path("n1.npy"), &a).unwrap();
    load_error(
        &with_npy(&dir),
        &["work.json: nodes[1] (n1): n1.npy: ", "in Fortran order"],
    );
}

#[test]
fn error_npy_missing_or_truncated() {
    let dir = TempDir::new("npy-missing");
    load_error(
        &with_npy(&dir),
        &["work.json: nodes[1] (n1): n1.npy: cannot open"],
    );
    let values = HadronNode::random(&NodeShape::new(2, &[3, 3]).unwrap(), 9);
    write_npy(dir.path("n1.npy"), values.array()).unwrap();
    let bytes = std::fs::read(dir.path("n1.npy")).unwrap();
    std::fs::write(dir.path("n1.npy"), &bytes[..bytes.len() - 16]).unwrap();
    load_error(
        &with_npy(&dir),
        &["work.json: nodes[1] (n1): n1.npy: unreadable data"],
    );
}

#[test]
fn error_malformed_json() {
    let dir = TempDir::new("malformed");
    let text = VALID.replace(
        r#""spins": 2, "dims": [3, 3], "data": {"random": {"seed": 1}}"#,
        r#""spins": 2 "dims": [3, 3]"#,
    );
    load_error(
        &dir.write("work.json", &text),
        &["work.json: line 4 column", "expected"],
    );
    let text = VALID.replace(r#""spins": 2"#, r#""spins": "two""#);
    load_error(
        &dir.write("type.json", &text),
        &["type.json: line 4 column", "invalid type"],
    );
}

#[test]
fn error_bad_mapping_and_pairs() {
    let dir = TempDir::new("mapping");
    let text = VALID.replace("[[0, 0, 0], [1, 1, 1]]", "[[0, 0, 0], [1, 2, 1]]");
    load_error(
        &dir.write("range.json", &text),
        &["range.json: vectors[0][0].terms: spin 2 of A is out of range"],
    );
    let text = VALID.replace("[[0, 0, 0], [1, 1, 1]]", "[[0, 0, 0], [0, 0, 0]]");
    load_error(
        &dir.write("dup.json", &text),
        &["dup.json: vectors[0][0].terms: duplicate term"],
    );
    let text = VALID.replace("[[0, 0, 0], [1, 1, 1]]", r#""meson5x5""#);
    load_error(
        &dir.write("name.json", &text),
        &[r#"name.json: vectors[0][0].terms: unknown mapping "meson5x5""#],
    );
    let text = VALID.replace("[[0, 0, 0], [1, 1, 1]]", "[[0, 0], [1, 1, 1]]");
    load_error(
        &dir.write("len.json", &text),
        &["len.json: line 7 column", "invalid length 2"],
    );
    let text = VALID.replace(
        r#""results""#,
        r#""traces": [{"a": "t0", "b": "n0", "pairs": [[0, 0], [0, 0]]}], "results""#,
    );
    load_error(
        &dir.write("pairs.json", &text),
        &["pairs.json: traces[0].pairs: duplicate trace pair"],
    );
}

#[test]
fn error_bad_ids_and_data() {
    let dir = TempDir::new("ids");
    let text = VALID.replace(r#""id": "n1""#, r#""id": "../n1""#);
    load_error(
        &dir.write("id.json", &text),
        &["id.json: nodes[1].id: id \"../n1\" is not allowed"],
    );
    let text = VALID.replace(r#"{"random": {"seed": 2}}"#, "{}");
    load_error(
        &dir.write("data.json", &text),
        &["data.json: nodes[1].data: give exactly one of"],
    );
    let text = VALID.replace(
        r#""spins": 2, "dims": [3, 3], "data": {"random": {"seed": 2}}"#,
        r#""spins": 2, "dims": [3, 0], "data": {"random": {"seed": 2}}"#,
    );
    load_error(
        &dir.write("dims.json", &text),
        &["dims.json: nodes[1] (n1): bad node"],
    );
    let text = VALID.replace(r#""results": ["t0"]"#, r#""results": ["t0", "t0"]"#);
    load_error(
        &dir.write("res.json", &text),
        &["res.json: results[1]: \"t0\" is already listed"],
    );
}

#[test]
fn error_npy_header_claiming_an_enormous_shape() {
    // A header of (2, 2^19, 2^19) complex128 values (8 TiB) in a sparse file of that length:
    // the header, the file name and the file length all agree, so only the size stops it, and
    // it must be a one-line error before anything is allocated, not an abort.
    let dir = TempDir::new("npy-enormous");
    let n = 1u64 << 19;
    let header = memhc_testkit::fuzz::npy_header(&[2, n, n], "<c16", false);
    let file = std::fs::File::create(dir.path("n1.npy")).unwrap();
    use std::io::Write;
    (&file).write_all(&header).unwrap();
    file.set_len(header.len() as u64 + (2 * n * n * 16))
        .unwrap();
    drop(file);
    let work = dir.write(
        "work.json",
        &format!(
            r#"{{"format": "memhc-workload/1",
  "nodes": [{{"id": "n1", "spins": 2, "dims": [{n}, {n}], "data": {{"npy": "n1.npy"}}}}],
  "vectors": [[{{"a": "n1", "b": "n1", "out": "t0", "terms": [[0, 0, 0]]}}]],
  "results": ["t0"]}}"#
        ),
    );
    load_error(
        &work,
        &["work.json: nodes[0] (n1): n1.npy: the node's values needs 8.0 TiB of host memory"],
    );
}
