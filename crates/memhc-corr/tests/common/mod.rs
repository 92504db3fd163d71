//! Small correlator files for the tests: several graphs sharing partial products, rotations,
//! disconnected graphs, one-node loops and loops with explicit spin mappings.

#![allow(dead_code)]

use memhc_corr::{
    CorrFile, CorrelatorSpec, GraphSpec, LoopSpec, MappingSpec, NodeSpec, PairsSpec, TimePairSpec,
};

/// A file at tensor size `n` with nine seeded mesons and graphs that share products.
pub fn shared_file(n: usize) -> CorrFile {
    let mut f = CorrFile::new();
    for (i, id) in ["a", "b", "c", "d", "e", "f", "g", "h", "k"]
        .iter()
        .enumerate()
    {
        let mut node = NodeSpec::meson(*id, n, 100 + i as u64);
        node.time = Some((i % 3) as u32);
        f.nodes.push(node);
    }
    let mut g = vec![
        GraphSpec::meson("box", &[&["a", "b", "c", "d"]]),
        GraphSpec::meson("box2", &[&["a", "b", "e", "f"]]),
        GraphSpec::meson("rotated", &[&["c", "d", "a", "b"]]),
        GraphSpec::meson("disc", &[&["a", "b"], &["c"]]),
        GraphSpec::meson("long", &[&["b", "c", "d", "e", "f"]]),
        GraphSpec::meson("tri", &[&["g", "h", "k"], &["a", "b", "c"]]),
        GraphSpec::meson("again", &[&["a", "a", "b"]]),
    ];
    g[1].coefficient = [-0.5, 0.25];
    g[3].coefficient = [2.0, 0.0];
    let mut explicit = LoopSpec::meson(&["a", "b", "c", "g"]);
    explicit.mappings = Some(vec![
        MappingSpec::Named("meson4x4".into()),
        MappingSpec::Terms(vec![[0, 0, 0], [1, 1, 5], [5, 5, 5], [5, 0, 3], [2, 7, 2]]),
    ]);
    explicit.trace = Some(PairsSpec::Pairs(vec![[0, 0], [5, 5], [1, 4], [2, 9]]));
    g.push(GraphSpec {
        id: "sparse".into(),
        coefficient: [0.0, 1.0],
        loops: vec![explicit, LoopSpec::meson(&["d", "e"])],
    });
    f.graphs = g;
    f.correlators = vec![
        CorrelatorSpec::new(
            "C1",
            vec![
                TimePairSpec::new(0, 3, &["box", "box2", "disc"]),
                TimePairSpec::new(1, 4, &["rotated", "long", "tri"]),
            ],
        ),
        CorrelatorSpec::new(
            "C2",
            vec![TimePairSpec::new(0, 3, &["sparse", "box", "again"])],
        ),
    ];
    f
}

/// A scratch directory of its own for one test.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("memhc-corr-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
