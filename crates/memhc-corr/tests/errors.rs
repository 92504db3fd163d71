//! Bad input: one line naming the graph and node (or node, or correlator and time pair), and
//! a typed problem, for each case the issue lists.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests unwrap what must succeed

mod common;

use memhc_corr::{
    CorrError, CorrFile, DataSource, LoopSpec, MappingSpec, NodeSpec, PairsSpec, Problem,
    TimePairSpec, load, parse, save, write_npy,
};

fn check(f: &CorrFile) -> CorrError {
    let text = serde_json::to_string(f).unwrap();
    parse(&text, "corr.json", std::path::Path::new("/nonexistent-dir")).unwrap_err()
}

fn one_line(e: &CorrError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s
}

#[test]
fn an_unknown_node() {
    let mut f = common::shared_file(2);
    f.graphs[1].loops[0].nodes[2] = "zz".into();
    let e = check(&f);
    assert_eq!(e.problem(), Some(&Problem::UnknownNode("zz".into())));
    assert_eq!(
        one_line(&e),
        "corr.json: graph box2, loop 0: unknown node \"zz\""
    );
}

#[test]
fn mismatched_dims() {
    let mut f = common::shared_file(2);
    f.nodes[2].dims = vec![3, 3]; // c, used by box at position 2
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::MismatchedDims(_))),
        "{e}"
    );
    assert!(
        one_line(&e)
            .starts_with("corr.json: graph box, loop 0, node c (position 2): mismatched dims"),
        "{e}"
    );
    let mut f = common::shared_file(2);
    f.nodes[0].spins = 4;
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::MismatchedDims(_))),
        "{e}"
    );
    assert!(
        one_line(&e).contains("graph box, loop 0, node a (position 0)"),
        "{e}"
    );
}

#[test]
fn bad_spin_mappings() {
    let mut f = common::shared_file(2);
    let lp = &mut f.graphs[7].loops[0];
    lp.mappings = Some(vec![
        MappingSpec::Named("meson4x4".into()),
        MappingSpec::Terms(vec![[0, 0, 16]]),
    ]);
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::BadSpinMapping(_))),
        "{e}"
    );
    assert!(
        one_line(&e).contains("graph sparse, loop 0, node c (position 2): bad spin mapping"),
        "{e}"
    );
    let mut f = common::shared_file(2);
    f.graphs[7].loops[0].mappings = Some(vec![MappingSpec::Named("meson2x2".into()); 2]);
    assert!(
        check(&f)
            .to_string()
            .contains("unknown mapping \"meson2x2\"")
    );
    let mut f = common::shared_file(2);
    f.graphs[7].loops[0].trace = Some(PairsSpec::Pairs(vec![[0, 0], [0, 0]]));
    assert!(matches!(
        check(&f).problem(),
        Some(Problem::BadSpinMapping(_))
    ));
    let mut f = common::shared_file(2);
    f.graphs[7].loops[0].mappings = Some(vec![MappingSpec::Named("meson4x4".into())]);
    let e = check(&f);
    assert!(
        e.to_string().contains("1 mappings for a loop of 4 nodes"),
        "{e}"
    );
}

#[test]
fn a_loop_that_does_not_close() {
    let mut f = common::shared_file(2);
    let mut n = NodeSpec::meson("wide", 2, 9);
    n.dims = vec![2, 3];
    f.nodes.push(n);
    f.graphs[0].loops[0] = LoopSpec::meson(&["a", "b", "wide"]);
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::LoopNotClosed(_))),
        "{e}"
    );
    assert!(
        one_line(&e).contains("graph box, loop 0, node wide (position 2): the loop does not close"),
        "{e}"
    );
    let mut f = common::shared_file(2);
    f.graphs[0].loops[0].nodes.clear();
    assert!(matches!(
        check(&f).problem(),
        Some(Problem::LoopNotClosed(_))
    ));
}

#[test]
fn missing_and_short_data_files() {
    let dir = common::scratch("data");
    let mut f = common::shared_file(2);
    f.nodes[1].data = DataSource::Npy("b.npy".into());
    let path = dir.join("corr.json");
    save(&f, &path).unwrap();
    let e = load(&path).unwrap_err();
    assert!(matches!(e.problem(), Some(Problem::Data(_))), "{e}");
    assert!(one_line(&e).contains("corr.json: node b: "), "{e}");
    assert!(e.to_string().contains("b.npy: cannot open"), "{e}");
    // A file of the right header, cut short.
    let node = f.nodes[1].clone();
    let values = memhc_corr::CheckedFile::new(
        CorrFile {
            nodes: vec![NodeSpec {
                data: DataSource::Seed(1),
                ..node
            }],
            ..common::shared_file(2)
        },
        &dir,
    );
    drop(values);
    let shape = hadron::NodeShape::meson(2).unwrap();
    write_npy(&dir.join("b.npy"), &hadron::HadronNode::random(&shape, 3)).unwrap();
    let checked = load(&path).unwrap(); // whole: fine
    assert_eq!(
        checked.nodes[1].values().unwrap(),
        hadron::HadronNode::random(&shape, 3)
    );
    let bytes = std::fs::read(dir.join("b.npy")).unwrap();
    std::fs::write(dir.join("b.npy"), &bytes[..bytes.len() - 16]).unwrap();
    let e = load(&path).unwrap_err();
    assert!(one_line(&e).contains("short file"), "{e}");
    // The wrong shape.
    write_npy(
        &dir.join("b.npy"),
        &hadron::HadronNode::random(&hadron::NodeShape::meson(3).unwrap(), 3),
    )
    .unwrap();
    let e = load(&path).unwrap_err();
    assert!(e.to_string().contains("of shape (16, 2, 2)"), "{e}");
}

#[test]
fn a_time_pair_with_no_graphs() {
    let mut f = common::shared_file(2);
    f.correlators[1].times.push(TimePairSpec::new(2, 5, &[]));
    let e = check(&f);
    assert_eq!(e.problem(), Some(&Problem::NoGraphs));
    assert_eq!(
        one_line(&e),
        "corr.json: correlator C2, time pair (2, 5): no graphs"
    );
    let mut f = common::shared_file(2);
    f.correlators[1]
        .times
        .push(TimePairSpec::new(2, 5, &["nope"]));
    assert_eq!(
        check(&f).problem(),
        Some(&Problem::UnknownGraph("nope".into()))
    );
}

#[test]
fn other_format_problems() {
    let mut f = common::shared_file(2);
    f.format = "memhc-corr/2".into();
    assert!(matches!(
        check(&f).problem(),
        Some(Problem::UnknownFormat(_))
    ));
    let mut f = common::shared_file(2);
    f.nodes[3].id = "a".into();
    assert_eq!(check(&f).problem(), Some(&Problem::DuplicateId("a".into())));
    let e = parse(
        "{\"format\": \"memhc-corr/1\", \"nodes\": 3}",
        "x.json",
        std::path::Path::new("."),
    )
    .unwrap_err();
    assert!(matches!(e, CorrError::Json { .. }), "{e}");
    assert!(e.to_string().starts_with("x.json: line 1 column"), "{e}");
}

#[test]
fn baryon_views() {
    // A baryon seen as N x N² (the default view) before a meson of N x N: its N² columns do
    // not meet the meson's N rows.
    let mut f = common::shared_file(2);
    f.nodes[0].kind = memhc_corr::NodeKind::Baryon;
    f.nodes[0].dims = vec![2, 2, 2];
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::MismatchedDims(_))),
        "{e}"
    );
    assert!(
        one_line(&e)
            .starts_with("corr.json: graph box, loop 0, node b (position 1): mismatched dims"),
        "{e}"
    );
    // A view the node's rank does not have.
    let mut f = common::baryon_file(2);
    f.graphs[0].loops[0].views = Some(vec![1, 3]);
    let e = check(&f);
    assert!(matches!(e.problem(), Some(Problem::BadView(_))), "{e}");
    assert!(
        one_line(&e).starts_with("corr.json: graph nn, loop 0, node B2 (position 1): bad view"),
        "{e}"
    );
    let mut f = common::baryon_file(2);
    f.graphs[2].loops[0].views = Some(vec![1, 2, 2]); // M1 is a meson
    let e = check(&f);
    assert!(matches!(e.problem(), Some(Problem::BadView(_))), "{e}");
    assert!(one_line(&e).contains("node M1 (position 2)"), "{e}");
    // One view per node.
    let mut f = common::baryon_file(2);
    f.graphs[0].loops[0].views = Some(vec![1]);
    let e = check(&f);
    assert!(matches!(e.problem(), Some(Problem::BadView(_))), "{e}");
    assert!(one_line(&e).contains("graph nn, loop 0: bad view"), "{e}");
    // Views that do not chain: N x N² against N x N².
    let mut f = common::baryon_file(2);
    f.graphs[0].loops[0].views = Some(vec![1, 1]);
    let e = check(&f);
    assert!(
        matches!(e.problem(), Some(Problem::MismatchedDims(_))),
        "{e}"
    );
    // A baryon's components are rank 3.
    let mut f = common::baryon_file(2);
    f.nodes[0].dims = vec![2, 2];
    assert!(matches!(check(&f).problem(), Some(Problem::BadShape(_))));
}

#[test]
fn files_round_trip() {
    let dir = common::scratch("roundtrip");
    let f = common::shared_file(3);
    save(&f, &dir.join("c.json")).unwrap();
    let m = load(&dir.join("c.json")).unwrap();
    assert_eq!(m.file, f);
    assert_eq!(m.graphs.len(), f.graphs.len());
}
