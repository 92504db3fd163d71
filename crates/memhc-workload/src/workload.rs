//! A workload: initial nodes, a queue of vectors of contractions, traces, and the results
//! wanted. Generated workloads and workload files share this form.
//!
//! Execution order is fixed: the vectors in order (the contractions of one vector are
//! independent and run concurrently), then the traces in order, then the results are read.
//! [`Workload::analyse`] checks that the queue makes sense and works out every node's shape
//! and last use; a node is released right after its last use unless it is a result.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use hadron::{
    ContractionSizes, HadronError, HadronNode, MatrixView, NodeShape, SpinMapping, TracePairs,
};
use memhc_core::Complex64;

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

    /// Writes the values into `out`, memory for a node of `shape` the caller provides (the
    /// backend's host memory): the same values as [`NodeData::materialise`], with no vector in
    /// between.
    pub fn materialise_into(&self, out: &mut [Complex64]) {
        match self {
            NodeData::Random { seed } => HadronNode::fill_random(*seed, out),
            NodeData::Values(v) => out.copy_from_slice(v.as_slice()),
        }
    }
}

/// One node's values and the memory they go to ([`materialise_all_into`]).
pub type Fill<'a> = (&'a NodeData, &'a mut [Complex64]);

/// Fills many nodes' memory at once, on every core (rayon's pool): `jobs` pairs each node's
/// data with the memory its values go to ([`NodeData::materialise_into`]). Each node's values
/// come from its own seed (or file), so the result is the same on any number of threads.
pub fn materialise_all_into(jobs: Vec<Fill<'_>>) {
    jobs.into_par_iter()
        .for_each(|(data, out)| data.materialise_into(out));
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

/// The nodes of one contraction, by their index in the [`Analysis`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ContractionNodes {
    /// Left input.
    pub a: usize,
    /// Right input.
    pub b: usize,
    /// The output.
    pub out: usize,
}

/// What [`Workload::analyse`] works out.
///
/// Every node is numbered once here, densely: the initial nodes in order, then the outputs in
/// queue order (the order a runner creates them in). Everything the run needs per contraction
/// is indexed by these numbers, so that running the queue makes no string lookup: the nodes of
/// every contraction and trace, and the nodes to release after each vector and trace, worked
/// out once, in linear time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Analysis {
    /// Every node's id, by index.
    ids: Vec<String>,
    /// The index of every id.
    ///
    /// Hashed with FxHash rather than the standard library's SipHash: names come from the
    /// user's own workload, not from an adversary, and at a few hundred thousand nodes the
    /// hashing was a visible share of the planning.
    index: FxHashMap<String, usize>,
    /// The shape of every node, by index.
    shapes: Vec<NodeShape>,
    /// The last step that uses each node; a node never used has none.
    last_use: Vec<Option<Step>>,
    /// The vector that produces each node (none for an initial node).
    produced_in: Vec<Option<usize>>,
    /// The nodes of every contraction, vector by vector.
    contractions: Vec<Vec<ContractionNodes>>,
    /// The nodes of every trace.
    traces: Vec<(usize, usize)>,
    /// The result nodes, in the workload's order.
    results: Vec<usize>,
    /// The nodes to release after each vector, sorted by id.
    release_after_vector: Vec<Vec<usize>>,
    /// The nodes to release after each trace, sorted by id.
    release_after_trace: Vec<Vec<usize>>,
    /// Whether every node has the same size in bytes (then Belady's misses are a lower bound).
    pub equal_sizes: bool,
    /// Floating-point operations of all contractions (`8 m n k` per term).
    pub contraction_flops: u64,
}

impl Analysis {
    /// Numbers a new node.
    fn add(&mut self, id: String, shape: NodeShape, produced_in: Option<usize>) -> usize {
        let i = self.ids.len();
        self.index.insert(id.clone(), i);
        self.ids.push(id);
        self.shapes.push(shape);
        self.last_use.push(None);
        self.produced_in.push(produced_in);
        i
    }

    /// Number of nodes, initial and produced.
    pub fn node_count(&self) -> usize {
        self.ids.len()
    }

    /// The index of the node `id`.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    /// The id of node `index`.
    pub fn id(&self, index: usize) -> Option<&str> {
        self.ids.get(index).map(String::as_str)
    }

    /// The shape of the node `id`, initial or produced.
    pub fn shape(&self, id: &str) -> Option<&NodeShape> {
        self.shape_at(self.index_of(id)?)
    }

    /// The shape of node `index`.
    pub fn shape_at(&self, index: usize) -> Option<&NodeShape> {
        self.shapes.get(index)
    }

    /// The last step that uses the node `id`; `None` for a node never used (or unknown).
    pub fn last_use(&self, id: &str) -> Option<Step> {
        *self.last_use.get(self.index_of(id)?)?
    }

    /// The vector that produces the node `id`; `None` for an initial node (or unknown).
    pub fn produced_in(&self, id: &str) -> Option<usize> {
        *self.produced_in.get(self.index_of(id)?)?
    }

    /// The nodes of the contractions of vector `v` (empty past the last vector).
    pub fn vector_nodes(&self, v: usize) -> &[ContractionNodes] {
        self.contractions.get(v).map_or(&[], Vec::as_slice)
    }

    /// The nodes of every contraction, in queue order.
    pub fn contraction_nodes(&self) -> impl Iterator<Item = &ContractionNodes> {
        self.contractions.iter().flatten()
    }

    /// The nodes `(a, b)` of trace `t`.
    pub fn trace_nodes(&self, t: usize) -> Option<(usize, usize)> {
        self.traces.get(t).copied()
    }

    /// The result nodes, in the workload's order.
    pub fn result_nodes(&self) -> &[usize] {
        &self.results
    }

    /// The nodes to release once vector `v` has been launched: those whose last use is in it
    /// (outputs nobody uses included). Results are kept. Sorted by id, for reproducible runs.
    pub fn release_after_vector(&self, v: usize) -> &[usize] {
        self.release_after_vector.get(v).map_or(&[], Vec::as_slice)
    }

    /// The nodes to release once trace `t` has run (results are kept), sorted by id.
    pub fn release_after_trace(&self, t: usize) -> &[usize] {
        self.release_after_trace.get(t).map_or(&[], Vec::as_slice)
    }

    /// Works out the release lists from the last uses: linear, plus sorting each list.
    fn plan_releases(&mut self, vectors: usize, traces: usize) {
        let mut after_vector = vec![Vec::new(); vectors];
        let mut after_trace = vec![Vec::new(); traces];
        for (i, step) in self.last_use.iter().enumerate() {
            match step {
                Some(Step::Contraction { vector, .. }) => after_vector[*vector].push(i),
                Some(Step::Trace(t)) => after_trace[*t].push(i),
                Some(Step::Results) | None => {}
            }
        }
        for list in after_vector.iter_mut().chain(after_trace.iter_mut()) {
            list.sort_by(|&x, &y| self.ids[x].cmp(&self.ids[y]));
        }
        self.release_after_vector = after_vector;
        self.release_after_trace = after_trace;
    }
}

impl Workload {
    /// Checks the workload and works out shapes and last uses. Errors name the place:
    /// `vectors[3][5].b: unknown id "t9"`. Linear in the size of the workload (plus sorting
    /// the release lists).
    pub fn analyse(&self) -> Result<Analysis, WorkloadError> {
        let mut a = Analysis::default();
        // Every node: the initial ones and one output per contraction.
        let nodes = self.nodes.len() + self.vectors.iter().map(Vec::len).sum::<usize>();
        a.index.reserve(nodes);
        a.ids.reserve(nodes);
        a.shapes.reserve(nodes);
        a.last_use.reserve(nodes);
        a.produced_in.reserve(nodes);
        for (i, n) in self.nodes.iter().enumerate() {
            if a.index.contains_key(&n.id) {
                return Err(WorkloadError::at(
                    format!("nodes[{i}].id"),
                    format!("id \"{}\" is defined twice", n.id),
                ));
            }
            a.add(n.id.clone(), n.shape.clone(), None);
        }
        let initial = a.ids.len();
        for (v, vector) in self.vectors.iter().enumerate() {
            // Outputs become usable from the next vector on: a vector's contractions are
            // independent.
            let mut produced: HashSet<&str> = HashSet::with_capacity(vector.len());
            let mut outputs = Vec::with_capacity(vector.len());
            for (c, spec) in vector.iter().enumerate() {
                let place = |field: &str| format!("vectors[{v}][{c}].{field}");
                let step = Step::Contraction {
                    vector: v,
                    index: c,
                };
                let mut node = |field: &str, id: &str| -> Result<usize, WorkloadError> {
                    let i = a.index_of(id).ok_or_else(|| {
                        let why = if produced.contains(id) {
                            format!("\"{id}\" is produced in this same vector; contractions of one vector are independent")
                        } else {
                            format!("unknown id \"{id}\"")
                        };
                        WorkloadError::at(place(field), why)
                    })?;
                    a.last_use[i] = Some(step);
                    Ok(i)
                };
                let ia = node("a", &spec.a)?;
                let ib = node("b", &spec.b)?;
                let (sa, sb) = (&a.shapes[ia], &a.shapes[ib]);
                let plan = ContractionSizes::new(sa, sb, spec.a_view, spec.b_view, &spec.mapping)
                    .map_err(|e| {
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
                let existing = a.index_of(&spec.out);
                if existing.is_some() || produced.contains(spec.out.as_str()) {
                    let why = if existing.is_some_and(|i| i < initial) {
                        format!(
                            "\"{}\" is an initial node; an output must be a new id",
                            spec.out
                        )
                    } else {
                        format!("id \"{}\" is produced twice", spec.out)
                    };
                    return Err(WorkloadError::at(place("out"), why));
                }
                produced.insert(&spec.out);
                outputs.push((ia, ib, plan.out));
            }
            let mut nodes = Vec::with_capacity(vector.len());
            for (spec, (ia, ib, shape)) in vector.iter().zip(outputs) {
                let out = a.add(spec.out.clone(), shape, Some(v));
                nodes.push(ContractionNodes { a: ia, b: ib, out });
            }
            a.contractions.push(nodes);
        }
        for (t, trace) in self.traces.iter().enumerate() {
            let place = |field: &str| format!("traces[{t}].{field}");
            let mut pair = [0usize; 2];
            for (slot, (field, id)) in [("a", &trace.a), ("b", &trace.b)].into_iter().enumerate() {
                let Some(i) = a.index_of(id) else {
                    return Err(WorkloadError::at(
                        place(field),
                        format!("unknown id \"{id}\""),
                    ));
                };
                a.last_use[i] = Some(Step::Trace(t));
                pair[slot] = i;
            }
            let (sa, sb) = (&a.shapes[pair[0]], &a.shapes[pair[1]]);
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
            a.traces.push((pair[0], pair[1]));
        }
        let mut listed_as: HashMap<usize, usize> = HashMap::with_capacity(self.results.len());
        for (r, id) in self.results.iter().enumerate() {
            let Some(i) = a.index_of(id) else {
                return Err(WorkloadError::at(
                    format!("results[{r}]"),
                    format!("\"{id}\" is never produced"),
                ));
            };
            if let Some(first) = listed_as.insert(i, r) {
                return Err(WorkloadError::at(
                    format!("results[{r}]"),
                    format!("\"{id}\" is already listed as results[{first}]"),
                ));
            }
            a.last_use[i] = Some(Step::Results);
            a.results.push(i);
        }
        // A produced node nobody uses is released right after its vector.
        for (last, produced) in a.last_use.iter_mut().zip(&a.produced_in) {
            if let (None, Some(v)) = (*last, *produced) {
                *last = Some(Step::Contraction {
                    vector: v,
                    index: usize::MAX,
                });
            }
        }
        let mut sizes = a.shapes.iter().map(|s| s.spins() * s.component_elems());
        let first = sizes.next();
        a.equal_sizes = sizes.all(|s| Some(s) == first);
        a.plan_releases(self.vectors.len(), self.traces.len());
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nodes of several sizes filled at once hold what each gives on its own, whatever thread
    /// filled it; an empty node and a node given by value included.
    #[test]
    fn filling_at_once_gives_each_node_its_own_values() {
        let given = HadronNode::random(&NodeShape::new(2, &[3, 3]).unwrap(), 99);
        let data: Vec<NodeData> = (0..9u64)
            .map(|seed| NodeData::Random { seed })
            .chain([NodeData::Values(Arc::new(given.clone()))])
            .collect();
        let lens = [
            7usize,
            1,
            300,
            0,
            64,
            64,
            5,
            1000,
            33,
            given.as_slice().len(),
        ];
        let mut outs: Vec<Vec<Complex64>> =
            lens.iter().map(|&n| vec![Complex64::ZERO; n]).collect();
        materialise_all_into(
            data.iter()
                .zip(outs.iter_mut())
                .map(|(d, o)| (d, o.as_mut_slice()))
                .collect(),
        );
        for ((d, out), &n) in data.iter().zip(&outs).zip(&lens) {
            let mut alone = vec![Complex64::ZERO; n];
            d.materialise_into(&mut alone);
            assert_eq!(out, &alone);
            assert!(n == 0 || out.iter().any(|z| *z != Complex64::ZERO));
        }
        assert_eq!(outs[9].as_slice(), given.as_slice());
    }
}
