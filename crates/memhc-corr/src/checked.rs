//! The checked form of a file: what must be computed, with every id resolved to an index,
//! every shape and mapping validated, and every data file checked. Built by
//! [`CheckedFile::new`] (or [`crate::load`]); the planner, the runner and the reference all start
//! from it.

use std::path::PathBuf;
use std::sync::Arc;

use hadron::{HadronNode, MatrixView, NodeShape, SpinMapping, TracePairs};
use num_complex::Complex64;

use crate::error::Result;
use crate::format::{CorrFile, DataSource};

/// One node: its id, shape and data source (paths resolved against the file's directory).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's id.
    pub id: String,
    /// Its shape.
    pub shape: NodeShape,
    /// Where its values come from (relative paths already joined to the file's directory).
    pub data: DataSource,
}

impl Node {
    /// The node's values: seeded, or read from its `.npy` or HDF5 file.
    pub fn values(&self) -> Result<HadronNode> {
        crate::data::load(&self.id, &self.shape, &self.data)
    }

    /// The node's values written into `out` (exactly its elements: memory filled in place,
    /// such as the backend's page-locked host memory), read as [`Node::values`] reads them.
    pub fn fill(&self, out: &mut [Complex64]) -> Result<()> {
        crate::data::load_into(&self.id, &self.shape, &self.data, out)
    }

    /// Bytes of the node's values.
    pub fn bytes(&self) -> usize {
        self.shape.layout().map_or(0, |l| l.bytes())
    }
}

/// How a loop's products and closing trace are taken.
#[derive(Clone, Debug, PartialEq)]
pub enum LoopKind {
    /// Every product `meson4x4`, closed by the `meson4x4` trace: a trace of a product of
    /// `4r x 4c` matrices (each node's components seen as `r x c` through its view), which may
    /// be re-associated and rotated.
    Meson,
    /// Explicit mappings (one per contraction, `nodes.len() - 2`) and pairs, evaluated left to
    /// right as written.
    Explicit {
        /// The contractions' mappings, in order.
        mappings: Vec<Arc<SpinMapping>>,
        /// The closing pairs.
        trace: Arc<TracePairs>,
    },
}

/// One loop: node indices around it, the view each is seen through, and how it is contracted.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// Indices into [`CheckedFile::nodes`], in order around the loop.
    pub nodes: Vec<usize>,
    /// The matrix view of each node's components, one per node (a meson's is the default;
    /// a baryon's `N x N²` or `N² x N`).
    pub views: Vec<MatrixView>,
    /// Meson or explicit.
    pub kind: LoopKind,
}

/// One graph: a coefficient times the product of its loops' traces.
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    /// The graph's id.
    pub id: String,
    /// The coefficient.
    pub coefficient: Complex64,
    /// The loops.
    pub loops: Vec<Loop>,
}

/// One time pair of a correlator: the graphs (indices into [`CheckedFile::graphs`]) summed there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimePair {
    /// The source time slice.
    pub source: u32,
    /// The sink time slice.
    pub sink: u32,
    /// Indices into [`CheckedFile::graphs`] (a graph listed twice counts twice).
    pub graphs: Vec<usize>,
}

/// One correlator: the index of its spec in the file (for the metadata) and its time pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Correlator {
    /// Its name.
    pub name: String,
    /// The time pairs, in file order.
    pub times: Vec<TimePair>,
}

/// A checked correlator file. See the [module documentation](self).
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedFile {
    /// The file as read (for metadata).
    pub file: CorrFile,
    /// The directory relative data paths were resolved against.
    pub dir: PathBuf,
    /// The nodes, in file order.
    pub nodes: Vec<Node>,
    /// The graphs, in file order.
    pub graphs: Vec<Graph>,
    /// The correlators, in file order.
    pub correlators: Vec<Correlator>,
}

impl CheckedFile {
    /// Every loop of every graph, with its graph index and position.
    pub fn loops(&self) -> impl Iterator<Item = (usize, usize, &Loop)> {
        self.graphs.iter().enumerate().flat_map(|(g, graph)| {
            graph
                .loops
                .iter()
                .enumerate()
                .map(move |(l, lp)| (g, l, lp))
        })
    }

    /// The graphs some correlator uses (others need not be computed), ascending.
    pub fn used_graphs(&self) -> Vec<usize> {
        let mut used = vec![false; self.graphs.len()];
        for c in &self.correlators {
            for t in &c.times {
                for &g in &t.graphs {
                    used[g] = true;
                }
            }
        }
        (0..used.len()).filter(|&g| used[g]).collect()
    }
}
