//! A workload: initial nodes, a queue of vectors of contractions, traces, and the results
//! wanted. Generated workloads and workload files share this form.
//!
//! Execution order is fixed: the vectors in order (the contractions of one vector are
//! independent and run concurrently), then the traces in order, then the results are read.
//! [`Workload::analyse`] checks that the queue makes sense and works out every node's shape
//! and last use; a node is released right after its last use unless it is a result.

use std::collections::HashMap;
use std::sync::Arc;

use hadron::{HadronError, HadronNode, MatrixView, NodeShape, Plan, SpinMapping, TracePairs};

use crate::error::WorkloadError;

/// Where an initial node's values come from.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeData {
    /// Random values (parts uniform in [-1, 1)) from a seed.
    Random {
        /// The seed.
        seed: u64,
    },
    /// Values given (loaded from a file).
    Values(Arc<HadronNode>),
}

impl NodeData {
    /// The node's values.
    pub fn materialise(&self, shape: &NodeShape) -> HadronNode {
        match self {
            NodeData::Random { seed } => HadronNode::random(shape, *seed),
            NodeData::Values(v) => (**v).clone(),
        }
    }
}

/// An initial (host-backed) node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Its id, unique in the workload.
    pub id: String,
    /// Its shape.
    pub shape: NodeShape,
    /// Its values.
    pub data: NodeData,
}

/// One contraction of the queue: `out = contract(a, b)` with a mapping and views.
#[derive(Clone, Debug, PartialEq)]
pub struct ContractionSpec {
    /// Left input.
    pub a: String,
    /// Right input.
    pub b: String,
    /// The output, produced here (exactly once in the workload).
    pub out: String,
    /// The spin mapping (usually shared).
    pub mapping: Arc<SpinMapping>,
    /// How A's components are seen as matrices.
    pub a_view: MatrixView,
    /// How B's components are seen as matrices.
    pub b_view: MatrixView,
}

/// A trace computed after all vectors.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Left node.
    pub a: String,
    /// Right node.
    pub b: String,
    /// The spin pairs.
    pub pairs: Arc<TracePairs>,
}

/// A whole workload. See the [module documentation](self).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Workload {
    /// The initial nodes.
    pub nodes: Vec<NodeSpec>,
    /// The queue: vectors of independent contractions.
    pub vectors: Vec<Vec<ContractionSpec>>,
    /// Traces, computed after the vectors.
    pub traces: Vec<TraceSpec>,
    /// Ids whose final values are wanted (read back, checked, dumped).
    pub results: Vec<String>,
}

/// When something is used, in execution order: vector `v`, contraction `c`; traces come after
/// every vector, results after every trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A contraction.
    Contraction {
        /// Vector index.
        vector: usize,
        /// Index in the vector.
        index: usize,
    },
    /// A trace.
    Trace(usize),
    /// Reading the results.
    Results,
}

/// What [`Workload::analyse`] works out.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// The shape of every node, initial and produced.
    pub shapes: HashMap<String, NodeShape>,
    /// The last step that uses each node; a node never used has none.
    pub last_use: HashMap<String, Step>,
    /// The vector that produces each produced node.
    pub produced_in: HashMap<String, usize>,
    /// Whether every node has the same size in bytes (then Belady's misses are a lower bound).
    pub equal_sizes: bool,
    /// Floating-point operations of all contractions (`8 m n k` per term).
    pub contraction_flops: u64,
}

impl Analysis {
    /// The nodes to release once vector `v` has been launched: those whose last use is in it
    /// (outputs nobody uses included). Results are kept. Sorted, for reproducible runs.
    pub fn release_after_vector(&self, v: usize, results: &[String]) -> Vec<String> {
        self.release_where(
            results,
            |s| matches!(s, Step::Contraction { vector, .. } if *vector == v),
        )
    }

    /// The nodes to release once trace `t` has run (results are kept).
    pub fn release_after_trace(&self, t: usize, results: &[String]) -> Vec<String> {
        self.release_where(results, |s| *s == Step::Trace(t))
    }

    fn release_where(&self, results: &[String], at: impl Fn(&Step) -> bool) -> Vec<String> {
        let mut out: Vec<String> = self
            .last_use
            .iter()
            .filter(|(id, s)| at(s) && !results.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        out.sort();
        out
    }
}

impl Workload {
    /// Checks the workload and works out shapes and last uses. Errors name the place:
    /// `vectors[3][5].b: unknown id "t9"`.
    pub fn analyse(&self) -> Result<Analysis, WorkloadError> {
        let mut a = Analysis::default();
        for (i, n) in self.nodes.iter().enumerate() {
            if a.shapes.insert(n.id.clone(), n.shape.clone()).is_some() {
                return Err(WorkloadError::at(
                    format!("nodes[{i}].id"),
                    format!("id \"{}\" is defined twice", n.id),
                ));
            }
        }
        for (v, vector) in self.vectors.iter().enumerate() {
            // Outputs become usable from the next vector on: a vector's contractions are
            // independent.
            let mut produced = Vec::with_capacity(vector.len());
            for (c, spec) in vector.iter().enumerate() {
                let place = |field: &str| format!("vectors[{v}][{c}].{field}");
                let step = Step::Contraction {
                    vector: v,
                    index: c,
                };
                let mut shape_of = |field: &str, id: &str| -> Result<NodeShape, WorkloadError> {
                    let s = a.shapes.get(id).cloned().ok_or_else(|| {
                        let why = if produced.iter().any(|(o, _)| o == id) {
                            format!("\"{id}\" is produced in this same vector; contractions of one vector are independent")
                        } else {
                            format!("unknown id \"{id}\"")
                        };
                        WorkloadError::at(place(field), why)
                    })?;
                    a.last_use.insert(id.to_owned(), step);
                    Ok(s)
                };
                let sa = shape_of("a", &spec.a)?;
                let sb = shape_of("b", &spec.b)?;
                let plan =
                    Plan::new(&sa, &sb, spec.a_view, spec.b_view, &spec.mapping).map_err(|e| {
                        // Name the field the problem is in.
                        let field = match &e {
                            HadronError::BadView { .. }
                                if spec.a_view.rows_cols(sa.dims()).is_err() =>
                            {
                                "a_view"
                            }
                            HadronError::BadView { .. } => "b_view",
                            HadronError::ShapeMismatch(_) => "b",
                            _ => "terms",
                        };
                        WorkloadError::at(place(field), e.to_string())
                    })?;
                a.contraction_flops = a
                    .contraction_flops
                    .saturating_add(plan.flops(&spec.mapping));
                if spec.out == spec.a || spec.out == spec.b {
                    return Err(WorkloadError::at(
                        place("out"),
                        format!("\"{}\" is also an input", spec.out),
                    ));
                }
                if a.shapes.contains_key(&spec.out) || produced.iter().any(|(o, _)| *o == spec.out)
                {
                    let why = if self.nodes.iter().any(|n| n.id == spec.out) {
                        format!(
                            "\"{}\" is an initial node; an output must be a new id",
                            spec.out
                        )
                    } else {
                        format!("id \"{}\" is produced twice", spec.out)
                    };
                    return Err(WorkloadError::at(place("out"), why));
                }
                produced.push((spec.out.clone(), plan.out));
            }
            for (id, shape) in produced {
                a.produced_in.insert(id.clone(), v);
                a.shapes.insert(id, shape);
            }
        }
        for (t, trace) in self.traces.iter().enumerate() {
            let place = |field: &str| format!("traces[{t}].{field}");
            for (field, id) in [("a", &trace.a), ("b", &trace.b)] {
                if !a.shapes.contains_key(id) {
                    return Err(WorkloadError::at(
                        place(field),
                        format!("unknown id \"{id}\""),
                    ));
                }
                a.last_use.insert(id.clone(), Step::Trace(t));
            }
            let (sa, sb) = (&a.shapes[&trace.a], &a.shapes[&trace.b]);
            trace
                .pairs
                .check(sa.spins(), sb.spins())
                .map_err(|e| WorkloadError::at(place("pairs"), e.to_string()))?;
            let (m, k) = sa
                .matrix(MatrixView::default())
                .map_err(|e| WorkloadError::at(place("a"), e.to_string()))?;
            let (kb, mb) = sb
                .matrix(MatrixView::default())
                .map_err(|e| WorkloadError::at(place("b"), e.to_string()))?;
            if (kb, mb) != (k, m) {
                return Err(WorkloadError::at(
                    place("b"),
                    format!("a trace needs A m x k and B k x m; A is {m} x {k}, B is {kb} x {mb}"),
                ));
            }
        }
        for (r, id) in self.results.iter().enumerate() {
            if let Some(first) = self.results[..r].iter().position(|x| x == id) {
                return Err(WorkloadError::at(
                    format!("results[{r}]"),
                    format!("\"{id}\" is already listed as results[{first}]"),
                ));
            }
            if !a.shapes.contains_key(id) {
                return Err(WorkloadError::at(
                    format!("results[{r}]"),
                    format!("\"{id}\" is never produced"),
                ));
            }
            a.last_use.insert(id.clone(), Step::Results);
        }
        // A produced node nobody uses is released right after its vector.
        for (id, &v) in &a.produced_in {
            a.last_use.entry(id.clone()).or_insert(Step::Contraction {
                vector: v,
                index: usize::MAX,
            });
        }
        let mut sizes = a.shapes.values().map(|s| s.spins() * s.component_elems());
        let first = sizes.next();
        a.equal_sizes = sizes.all(|s| Some(s) == first);
        Ok(a)
    }
}
