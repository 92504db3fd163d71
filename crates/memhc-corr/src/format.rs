//! The types of a `memhc-corr/1` file, exactly as serde reads and writes them.
//!
//! These are plain data: a generator builds them, [`crate::save`] writes them, [`crate::load`]
//! reads them back and checks them into a [`crate::CheckedFile`]. Every field is documented in
//! `docs/correlator-format.md`; the doc comments here say the same in short.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The value of the top-level `"format"` key this version reads and writes.
pub const FORMAT: &str = "memhc-corr/1";

/// The name of the named spin mapping and trace pairing.
pub const MESON4X4: &str = "meson4x4";

/// A whole correlator file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// The hadron nodes.
    pub nodes: Vec<NodeSpec>,
    /// The graphs (Wick contractions).
    pub graphs: Vec<GraphSpec>,
    /// The correlators.
    pub correlators: Vec<CorrelatorSpec>,
}

impl CorrFile {
    /// An empty file of the current format.
    pub fn new() -> Self {
        CorrFile {
            format: FORMAT.to_owned(),
            nodes: Vec::new(),
            graphs: Vec::new(),
            correlators: Vec::new(),
        }
    }
}

impl Default for CorrFile {
    fn default() -> Self {
        Self::new()
    }
}

/// What a node is: a meson (rank-2 components) or a baryon (rank-3 components).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Rank-2 components (`rows x cols`).
    #[default]
    Meson,
    /// Rank-3 components (`N x N x N`), contracted through matrix views (`N x N²`, `N² x N`).
    Baryon,
}

impl NodeKind {
    fn is_meson(&self) -> bool {
        *self == NodeKind::Meson
    }
}

/// One hadron node: its shape, its metadata and where its values come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// Unique among nodes.
    pub id: String,
    /// Meson (default) or baryon.
    #[serde(default, skip_serializing_if = "NodeKind::is_meson")]
    pub kind: NodeKind,
    /// Number of spin components (16 for a full-spin meson).
    pub spins: usize,
    /// Dimensions of one component: `[rows, cols]` for a meson, `[N, N, N]` for a baryon.
    pub dims: Vec<usize>,
    /// The time slice (metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<u32>,
    /// The operator's name (metadata).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub operator: String,
    /// The momentum in units of `2 pi / L` (metadata).
    #[serde(default, skip_serializing_if = "is_zero_momentum")]
    pub momentum: [i64; 3],
    /// The displacement path (metadata).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub displacement: Vec<i64>,
    /// Where the values come from.
    pub data: DataSource,
}

impl NodeSpec {
    /// A full-spin meson `n x n` with seeded data and no metadata.
    pub fn meson(id: impl Into<String>, n: usize, seed: u64) -> Self {
        NodeSpec {
            id: id.into(),
            kind: NodeKind::Meson,
            spins: 16,
            dims: vec![n, n],
            time: None,
            operator: String::new(),
            momentum: [0; 3],
            displacement: Vec::new(),
            data: DataSource::Seed(seed),
        }
    }
}

fn is_zero_momentum(p: &[i64; 3]) -> bool {
    *p == [0; 3]
}

/// Where a node's values come from: `{"seed": S}`, `{"npy": FILE}` or
/// `{"hdf5": {"file": FILE, "dataset": PATH}}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum DataSource {
    /// Seeded values (SplitMix64, see [`crate::seed`]).
    Seed(u64),
    /// A complex128 `.npy` file, relative to the JSON file's directory.
    Npy(String),
    /// A dataset of an HDF5 file (relative to the JSON file's directory).
    Hdf5 {
        /// The HDF5 file.
        file: String,
        /// The dataset's path inside it.
        dataset: String,
    },
}

/// One graph: a coefficient times a product of loops.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {
    /// Unique among graphs.
    pub id: String,
    /// The complex coefficient `[re, im]`.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub coefficient: [f64; 2],
    /// The loops whose traces are multiplied.
    pub loops: Vec<LoopSpec>,
}

impl GraphSpec {
    /// A graph of coefficient 1 and the given meson loops (each a list of node ids).
    pub fn meson(id: impl Into<String>, loops: &[&[&str]]) -> Self {
        GraphSpec {
            id: id.into(),
            coefficient: one(),
            loops: loops.iter().map(|l| LoopSpec::meson(l)).collect(),
        }
    }
}

fn one() -> [f64; 2] {
    [1.0, 0.0]
}

fn is_one(c: &[f64; 2]) -> bool {
    *c == one()
}

/// One closed loop of nodes: the trace of the product of its nodes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// The node ids around the loop (at least one).
    pub nodes: Vec<String>,
    /// One spin mapping per contraction (`nodes.len() - 2` of them); `None`: all `meson4x4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mappings: Option<Vec<MappingSpec>>,
    /// The pairs that close the loop; `None`: `meson4x4`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<PairsSpec>,
    /// The matrix view of each node's components, one per node: how many leading dimensions
    /// form the rows (a baryon's `1`: `N x N²`, `2`: `N² x N`). `None`: all `1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub views: Option<Vec<usize>>,
}

impl LoopSpec {
    /// A meson loop through `nodes`.
    pub fn meson(nodes: &[&str]) -> Self {
        LoopSpec {
            nodes: nodes.iter().map(|s| (*s).to_owned()).collect(),
            mappings: None,
            trace: None,
            views: None,
        }
    }

    /// The same loop with a view per node (see [`LoopSpec::views`]).
    pub fn with_views(mut self, views: &[usize]) -> Self {
        self.views = Some(views.to_vec());
        self
    }
}

/// A spin mapping: `"meson4x4"` or a list of `[out, a, b]` terms.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MappingSpec {
    /// A named mapping (only `"meson4x4"` exists).
    Named(String),
    /// Explicit terms `out[o] += A[a] · B[b]`, accumulated in order.
    Terms(Vec<[usize; 3]>),
}

/// A trace pairing: `"meson4x4"` or a list of `[a, b]` pairs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum PairsSpec {
    /// A named pairing (only `"meson4x4"` exists).
    Named(String),
    /// Explicit pairs `Tr(A[a] · B[b])`, summed.
    Pairs(Vec<[usize; 2]>),
}

/// One correlator: metadata and the graphs summed at each time pair.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorrelatorSpec {
    /// Unique among correlators (a dataset name in HDF5 output).
    pub name: String,
    /// The source operator (metadata).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source_operator: String,
    /// The sink operator (metadata).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sink_operator: String,
    /// The total momentum (metadata).
    #[serde(default, skip_serializing_if = "is_zero_momentum")]
    pub momentum: [i64; 3],
    /// Further key fields (metadata): irrep, row, configuration, ...
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keys: BTreeMap<String, String>,
    /// The time pairs.
    pub times: Vec<TimePairSpec>,
}

impl CorrelatorSpec {
    /// A correlator with no metadata.
    pub fn new(name: impl Into<String>, times: Vec<TimePairSpec>) -> Self {
        CorrelatorSpec {
            name: name.into(),
            source_operator: String::new(),
            sink_operator: String::new(),
            momentum: [0; 3],
            keys: BTreeMap::new(),
            times,
        }
    }
}

/// One `(source, sink)` time pair of a correlator and the graphs summed there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimePairSpec {
    /// The source time slice.
    pub source: u32,
    /// The sink time slice.
    pub sink: u32,
    /// The graph ids summed (at least one).
    pub graphs: Vec<String>,
}

impl TimePairSpec {
    /// The pair `(source, sink)` summing `graphs`.
    pub fn new(source: u32, sink: u32, graphs: &[&str]) -> Self {
        TimePairSpec {
            source,
            sink,
            graphs: graphs.iter().map(|s| (*s).to_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_shapes_parse() {
        let text = r#"{"format": "memhc-corr/1",
          "nodes": [{"id": "a", "spins": 16, "dims": [1, 1], "data": {"seed": 1}},
                    {"id": "b", "kind": "baryon", "spins": 4, "dims": [2, 2, 2], "time": 3,
                     "data": {"hdf5": {"file": "x.h5", "dataset": "/t3/b"}}},
                    {"id": "c", "spins": 2, "dims": [2, 2], "data": {"npy": "c.npy"}}],
          "graphs": [{"id": "g", "coefficient": [0.5, -1], "loops": [
              {"nodes": ["a", "c", "c"], "mappings": ["meson4x4"], "trace": [[0, 1]],
               "views": [1, 1, 1]}]}],
          "correlators": [{"name": "C", "keys": {"irrep": "A1"},
              "times": [{"source": 0, "sink": 3, "graphs": ["g"]}]}]}"#;
        let f: CorrFile = serde_json::from_str(text).unwrap();
        assert_eq!(f.nodes[0].data, DataSource::Seed(1));
        assert_eq!(f.nodes[1].kind, NodeKind::Baryon);
        assert_eq!(f.nodes[2].data, DataSource::Npy("c.npy".into()));
        assert_eq!(f.graphs[0].coefficient, [0.5, -1.0]);
        let l = &f.graphs[0].loops[0];
        assert_eq!(
            l.mappings,
            Some(vec![MappingSpec::Named("meson4x4".into())])
        );
        assert_eq!(l.trace, Some(PairsSpec::Pairs(vec![[0, 1]])));
        assert_eq!(l.views, Some(vec![1, 1, 1]));
        let back: CorrFile = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
        assert!(serde_json::from_str::<CorrFile>(&text.replace("\"time\"", "\"tim\"")).is_err());
    }
}
