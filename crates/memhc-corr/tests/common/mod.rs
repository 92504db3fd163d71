//! Small correlator files for the tests: several graphs sharing partial products, rotations,
//! disconnected graphs, one-node loops and loops with explicit spin mappings.

#![allow(dead_code)]

use memhc_corr::{
    CorrFile, CorrelatorSpec, GraphSpec, LoopSpec, MappingSpec, NodeKind, NodeSpec, PairsSpec,
    TimePairSpec,
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

/// A baryon node of `spins` components of `dims`, seeded.
fn baryon(id: &str, spins: usize, dims: &[usize], seed: u64) -> NodeSpec {
    NodeSpec {
        kind: NodeKind::Baryon,
        spins,
        dims: dims.to_vec(),
        ..NodeSpec::meson(id, 1, seed)
    }
}

fn viewed(nodes: &[&str], views: &[usize]) -> LoopSpec {
    LoopSpec::meson(nodes).with_views(views)
}

/// A file at tensor size `n` with baryon graphs: baryons (`n x n x n`) seen as `n x n²` (view
/// `1`) and `n² x n` (view `2`) in loops with each other and with mesons, rotations of one
/// loop (shared), products of `n² x n²` blocks, a one-node loop through a square view of a
/// baryon of other dims, a disconnected graph, and loops with explicit spin mappings through
/// a baryon of 4 spins.
pub fn baryon_file(n: usize) -> CorrFile {
    let mut f = CorrFile::new();
    for (i, id) in ["B1", "B2", "B3", "B4"].iter().enumerate() {
        f.nodes.push(baryon(id, 16, &[n, n, n], 200 + i as u64));
    }
    f.nodes.push(baryon("B5", 4, &[n, n, n], 210));
    f.nodes.push(baryon("B6", 16, &[n, n, n * n], 211));
    f.nodes.push(NodeSpec::meson("M1", n, 220));
    f.nodes.push(NodeSpec::meson("M2", n, 221));
    f.nodes.push(NodeSpec {
        spins: 4,
        ..NodeSpec::meson("S1", n, 222)
    });
    let graph = |id: &str, loops: Vec<LoopSpec>| GraphSpec {
        id: id.into(),
        coefficient: [1.0, 0.0],
        loops,
    };
    let mut explicit = viewed(&["B5", "B5", "S1"], &[1, 2, 1]);
    explicit.mappings = Some(vec![MappingSpec::Terms(vec![
        [0, 0, 0],
        [1, 1, 2],
        [1, 3, 3],
        [2, 2, 1],
    ])]);
    explicit.trace = Some(PairsSpec::Pairs(vec![[0, 0], [1, 3], [2, 1]]));
    let mut two = viewed(&["B5", "B5"], &[2, 1]);
    two.trace = Some(PairsSpec::Pairs(vec![[0, 1], [3, 2], [2, 2]]));
    let mut disc = graph(
        "disc",
        vec![
            viewed(&["B1", "B2"], &[1, 2]),
            LoopSpec::meson(&["M1", "M2"]),
        ],
    );
    disc.coefficient = [-0.5, 2.0];
    f.graphs = vec![
        graph("nn", vec![viewed(&["B1", "B2"], &[1, 2])]),
        graph("nn_rot", vec![viewed(&["B2", "B1"], &[2, 1])]),
        graph("npin", vec![viewed(&["B1", "B3", "M1"], &[1, 2, 1])]),
        graph("npin_rot", vec![viewed(&["M1", "B1", "B3"], &[1, 1, 2])]),
        graph(
            "long",
            vec![viewed(
                &["M1", "B1", "B2", "M2", "B3", "B4"],
                &[1, 1, 2, 1, 1, 2],
            )],
        ),
        graph("wide", vec![viewed(&["B1", "M1", "B2"], &[2, 1, 1])]),
        graph("self", vec![viewed(&["B6"], &[2])]),
        disc,
        graph("explicit", vec![explicit]),
        graph("two", vec![two]),
    ];
    f.correlators = vec![
        CorrelatorSpec::new(
            "N_N",
            vec![
                TimePairSpec::new(0, 5, &["nn", "nn_rot", "npin"]),
                TimePairSpec::new(1, 6, &["long", "wide", "disc"]),
            ],
        ),
        CorrelatorSpec::new(
            "N_X",
            vec![TimePairSpec::new(
                0,
                5,
                &["npin_rot", "self", "explicit", "two"],
            )],
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
