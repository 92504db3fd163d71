//! A generated workload as a `memhc-corr/1` file ([`memhc_corr::CorrFile`]): full-spin meson
//! nodes of `N x N` distillation components with seeded data and their key fields (operator,
//! momentum, displacement path, time slice), graphs with real coefficients, and the correlator
//! matrix with its metadata.

use std::collections::BTreeMap;

use memhc_corr::{
    CorrFile, CorrelatorSpec, DataSource, GraphSpec, LoopSpec, NodeKind, NodeSpec, TimePairSpec,
};

use crate::physics::Generated;

/// How the file is made: the tensor size, the base seed of the node data, and key fields for
/// every correlator (`channel`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct FileOptions {
    /// `N`: each of a node's 16 spin components is `N x N`.
    pub tensor_size: usize,
    /// Node `i` has the seed `seed · 2^32 + i`.
    pub seed: u64,
    /// Key fields written to every correlator.
    pub keys: BTreeMap<String, String>,
}

/// The displacement path of a derivative construction (metadata): `nabla_d` is one step in
/// direction `d` (x = 1, y = 2, z = 3), `B_d` the clover path around `d` (the field
/// strength: `+e1 +e2 -e1 -e2` with `e1 e2 d` cyclic), `D_d` the symmetric pair `+e1 +e2`;
/// tokens joined by `.` follow each other.
pub fn displacement_path(name: &str) -> Vec<i64> {
    let dir = |c: &str| match c {
        "x" => Some(1i64),
        "y" => Some(2),
        "z" => Some(3),
        _ => None,
    };
    let mut path = Vec::new();
    for token in name.split('.').filter(|t| !t.is_empty()) {
        let Some((kind, axis)) = token.split_once('_') else {
            continue;
        };
        let Some(d) = dir(axis) else { continue };
        let (e1, e2) = (d % 3 + 1, (d + 1) % 3 + 1);
        match kind {
            "nabla" => path.push(d),
            "B" => path.extend([e1, e2, -e1, -e2]),
            "D" => path.extend([e1, e2]),
            _ => {}
        }
    }
    path
}

/// The file of a generated workload.
pub fn to_file(g: &Generated, options: &FileOptions) -> CorrFile {
    let n = options.tensor_size;
    let mut file = CorrFile::new();
    let ids: Vec<String> = g.nodes.iter().map(|k| k.id()).collect();
    file.nodes = g
        .nodes
        .iter()
        .zip(&ids)
        .enumerate()
        .map(|(i, (k, id))| NodeSpec {
            id: id.clone(),
            kind: NodeKind::Meson,
            spins: 16,
            dims: vec![n, n],
            time: Some(k.time),
            operator: k.operator_name(),
            momentum: k.meson.momentum.map(i64::from),
            displacement: displacement_path(&k.meson.displacement),
            data: DataSource::Seed(options.seed.wrapping_shl(32).wrapping_add(i as u64)),
        })
        .collect();
    file.graphs = g
        .graphs
        .iter()
        .enumerate()
        .map(|(i, gr)| GraphSpec {
            id: file_graph_id(g, i),
            coefficient: [gr.coeff, 0.0],
            loops: gr
                .loops
                .iter()
                .map(|l| LoopSpec {
                    nodes: l.iter().map(|&n| ids[n].clone()).collect(),
                    mappings: None,
                    trace: None,
                    views: None,
                })
                .collect(),
        })
        .collect();
    file.correlators = g
        .correlators
        .iter()
        .map(|c| CorrelatorSpec {
            name: c.name.clone(),
            source_operator: c.source.clone(),
            sink_operator: c.sink.clone(),
            momentum: c.momentum.map(i64::from),
            keys: options.keys.clone(),
            times: c
                .pairs
                .iter()
                .filter(|(_, graphs)| !graphs.is_empty())
                .map(|(tp, graphs)| TimePairSpec {
                    source: tp.source,
                    sink: tp.sink,
                    graphs: graphs.iter().map(|&i| file_graph_id(g, i)).collect(),
                })
                .collect(),
        })
        .filter(|c| !c.times.is_empty())
        .collect();
    file
}

fn file_graph_id(g: &Generated, i: usize) -> String {
    format!("g{i}.{}", g.graphs[i].topology.name())
}
