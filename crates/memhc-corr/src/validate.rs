//! Checking a [`CorrFile`] into a [`CheckedFile`]: ids, shapes, loops, mappings, data files and
//! correlators, each problem one [`Invalid`] naming the graph and node (or the node, or the
//! correlator and time pair).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use hadron::{HadronError, MatrixView, NodeShape, SpinMapping, Term, TracePairs};
use num_complex::Complex64;

use crate::checked::{CheckedFile, Correlator, Graph, Loop, LoopKind, Node, TimePair};
use crate::error::{Invalid, Problem, Result};
use crate::format::{
    CorrFile, DataSource, GraphSpec, LoopSpec, MESON4X4, MappingSpec, NodeKind, PairsSpec,
};

/// Whether `id` may name a node, graph or correlator: ASCII letters, digits, `_`, `-`, `.`,
/// not empty, not starting with `.`.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

fn check_id(place: &str, id: &str, seen: &mut HashSet<String>) -> Result<(), Invalid> {
    if !is_valid_id(id) {
        return Err(Invalid::at(
            place,
            Problem::BadId(id.escape_debug().to_string()),
        ));
    }
    if !seen.insert(id.to_owned()) {
        return Err(Invalid::at(place, Problem::DuplicateId(id.to_owned())));
    }
    Ok(())
}

impl CheckedFile {
    /// Checks `file` (its relative data paths taken from `dir`): ids, shapes, loops, mappings,
    /// data files, correlators. Every problem is an [`crate::Invalid`] naming its place.
    ///
    /// (Written here, beside the checks it runs, so that checked.rs does not import the
    /// validator that imports it.)
    pub fn new(file: CorrFile, dir: &Path) -> Result<Self> {
        checked(file, dir)
    }
}

/// See [`CheckedFile::new`].
pub(crate) fn checked(file: CorrFile, dir: &Path) -> Result<CheckedFile> {
    if file.format != crate::format::FORMAT {
        return Err(Invalid::at("format", Problem::UnknownFormat(file.format.clone())).into());
    }
    let nodes = nodes(&file, dir)?;
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut seen = HashSet::new();
    let mut graphs = Vec::with_capacity(file.graphs.len());
    for (g, spec) in file.graphs.iter().enumerate() {
        check_id(&format!("graphs[{g}].id"), &spec.id, &mut seen)?;
        graphs.push(graph(spec, &nodes, &index, &file)?);
    }
    let graph_index: HashMap<&str, usize> = file
        .graphs
        .iter()
        .enumerate()
        .map(|(i, g)| (g.id.as_str(), i))
        .collect();
    let mut correlators = Vec::with_capacity(file.correlators.len());
    let mut names = HashSet::new();
    if file.correlators.is_empty() {
        return Err(Invalid::at("correlators", Problem::Empty("the list of correlators")).into());
    }
    for (c, spec) in file.correlators.iter().enumerate() {
        check_id(&format!("correlators[{c}].name"), &spec.name, &mut names)?;
        let place = format!("correlator {}", spec.name);
        if spec.times.is_empty() {
            return Err(Invalid::at(place, Problem::Empty("the list of time pairs")).into());
        }
        let mut pairs = HashSet::new();
        let mut times = Vec::with_capacity(spec.times.len());
        for t in &spec.times {
            let place = format!("{place}, time pair ({}, {})", t.source, t.sink);
            if t.graphs.is_empty() {
                return Err(Invalid::at(place, Problem::NoGraphs).into());
            }
            if !pairs.insert((t.source, t.sink)) {
                return Err(Invalid::at(place, Problem::DuplicateTimePair).into());
            }
            let graphs = t
                .graphs
                .iter()
                .map(|id| {
                    graph_index
                        .get(id.as_str())
                        .copied()
                        .ok_or_else(|| Invalid::at(&place, Problem::UnknownGraph(id.clone())))
                })
                .collect::<Result<Vec<_>, Invalid>>()?;
            times.push(TimePair {
                source: t.source,
                sink: t.sink,
                graphs,
            });
        }
        correlators.push(Correlator {
            name: spec.name.clone(),
            times,
        });
    }
    Ok(CheckedFile {
        file,
        dir: dir.to_path_buf(),
        nodes,
        graphs,
        correlators,
    })
}

fn nodes(file: &CorrFile, dir: &Path) -> Result<Vec<Node>> {
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(file.nodes.len());
    for (i, spec) in file.nodes.iter().enumerate() {
        check_id(&format!("nodes[{i}].id"), &spec.id, &mut seen)?;
        let place = format!("node {}", spec.id);
        let bad = |m: String| Invalid::at(&place, Problem::BadShape(m));
        let shape = NodeShape::new(spec.spins, &spec.dims).map_err(|e| bad(e.to_string()))?;
        let rank = match spec.kind {
            NodeKind::Meson => 2,
            NodeKind::Baryon => 3,
        };
        if spec.dims.len() != rank {
            return Err(bad(format!(
                "a {} has components of rank {rank}, not dims {:?}",
                if rank == 2 { "meson" } else { "baryon" },
                spec.dims
            ))
            .into());
        }
        let data = match &spec.data {
            DataSource::Seed(s) => DataSource::Seed(*s),
            DataSource::Npy(f) => DataSource::Npy(join(dir, f)),
            DataSource::Hdf5 { file, dataset } => DataSource::Hdf5 {
                file: join(dir, file),
                dataset: dataset.clone(),
            },
        };
        crate::data::check(&spec.id, &shape, &data)?;
        out.push(Node {
            id: spec.id.clone(),
            shape,
            data,
        });
    }
    Ok(out)
}

fn join(dir: &Path, f: &str) -> String {
    dir.join(f).display().to_string()
}

fn graph(
    spec: &GraphSpec,
    nodes: &[Node],
    index: &HashMap<&str, usize>,
    file: &CorrFile,
) -> Result<Graph, Invalid> {
    let place = format!("graph {}", spec.id);
    if spec.loops.is_empty() {
        return Err(Invalid::at(place, Problem::Empty("the list of loops")));
    }
    let [re, im] = spec.coefficient;
    if !re.is_finite() || !im.is_finite() {
        return Err(Invalid::at(
            place,
            Problem::BadShape("the coefficient is not finite".into()),
        ));
    }
    let loops = spec
        .loops
        .iter()
        .enumerate()
        .map(|(l, lp)| one_loop(&format!("{place}, loop {l}"), lp, nodes, index, file))
        .collect::<Result<Vec<_>, Invalid>>()?;
    Ok(Graph {
        id: spec.id.clone(),
        coefficient: Complex64::new(re, im),
        loops,
    })
}

fn one_loop(
    place: &str,
    spec: &LoopSpec,
    nodes: &[Node],
    index: &HashMap<&str, usize>,
    file: &CorrFile,
) -> Result<Loop, Invalid> {
    if spec.nodes.is_empty() {
        return Err(Invalid::at(
            place,
            Problem::LoopNotClosed("a loop needs at least one node".into()),
        ));
    }
    let mut ids = Vec::with_capacity(spec.nodes.len());
    for id in &spec.nodes {
        let i = *index
            .get(id.as_str())
            .ok_or_else(|| Invalid::at(place, Problem::UnknownNode(id.clone())))?;
        ids.push(i);
    }
    let at = |p: usize| format!("{place}, node {} (position {p})", spec.nodes[p]);
    let views = views(place, spec, &ids, nodes, file, &at)?;
    let k = ids.len();
    let named = |m: &MappingSpec| matches!(m, MappingSpec::Named(n) if n == MESON4X4);
    let meson = spec.mappings.as_ref().is_none_or(|m| m.iter().all(named))
        && spec
            .trace
            .as_ref()
            .is_none_or(|t| matches!(t, PairsSpec::Named(n) if n == MESON4X4));
    if let Some(m) = spec
        .mappings
        .as_ref()
        .filter(|m| m.len() != k.saturating_sub(2))
    {
        {
            return Err(Invalid::at(
                place,
                Problem::BadSpinMapping(format!(
                    "{} mappings for a loop of {k} nodes, which has {} contractions",
                    m.len(),
                    k.saturating_sub(2)
                )),
            ));
        }
    }
    if meson {
        meson_loop(&ids, &views, nodes, &at)?;
        return Ok(Loop {
            nodes: ids,
            views,
            kind: LoopKind::Meson,
        });
    }
    explicit_loop(place, spec, ids, views, nodes, &at)
}

/// The view of each node of a loop: as given (one per node, each a view the node's rank has),
/// or the default view of every node.
fn views(
    place: &str,
    spec: &LoopSpec,
    ids: &[usize],
    nodes: &[Node],
    file: &CorrFile,
    at: &dyn Fn(usize) -> String,
) -> Result<Vec<MatrixView>, Invalid> {
    let Some(given) = &spec.views else {
        return Ok(vec![MatrixView::default(); ids.len()]);
    };
    if given.len() != ids.len() {
        return Err(Invalid::at(
            place,
            Problem::BadView(format!(
                "{} views for a loop of {} nodes: one per node",
                given.len(),
                ids.len()
            )),
        ));
    }
    let mut out = Vec::with_capacity(ids.len());
    for (p, (&split, &i)) in given.iter().zip(ids).enumerate() {
        let view = MatrixView::split(split);
        if view.rows_cols(nodes[i].shape.dims()).is_err() {
            let rank = nodes[i].shape.dims().len();
            let kind = match file.nodes[i].kind {
                NodeKind::Meson => "a meson",
                NodeKind::Baryon => "a baryon",
            };
            return Err(Invalid::at(
                at(p),
                Problem::BadView(format!(
                    "view {split} of {kind} with rank-{rank} components: the views are 1 to {}",
                    rank - 1
                )),
            ));
        }
        out.push(view);
    }
    Ok(out)
}

fn meson_loop(
    ids: &[usize],
    views: &[MatrixView],
    nodes: &[Node],
    at: &dyn Fn(usize) -> String,
) -> Result<(), Invalid> {
    for (p, &i) in ids.iter().enumerate() {
        let s = nodes[i].shape.spins();
        if s != 16 {
            return Err(Invalid::at(
                at(p),
                Problem::MismatchedDims(format!(
                    "{s} spins, but a meson4x4 loop needs 16 (4 x 4 spin blocks)"
                )),
            ));
        }
    }
    let bad_view = |p: usize, e: HadronError| Invalid::at(at(p), Problem::BadView(e.to_string()));
    let matrices = (0..ids.len())
        .map(|p| {
            nodes[ids[p]]
                .shape
                .matrix(views[p])
                .map_err(|e| bad_view(p, e))
        })
        .collect::<Result<Vec<_>, Invalid>>()?;
    let dims = |p: usize| matrices[p];
    let k = ids.len();
    for p in 1..k {
        let ((r0, c0), (r1, c1)) = (dims(p - 1), dims(p));
        if c0 != r1 {
            return Err(Invalid::at(
                at(p),
                Problem::MismatchedDims(format!(
                    "{r0} x {c0} blocks times {r1} x {c1} blocks: {c0} columns against {r1} rows"
                )),
            ));
        }
    }
    let ((r_first, _), (r_last, c_last)) = (dims(0), dims(k - 1));
    if c_last != r_first {
        return Err(Invalid::at(
            at(k - 1),
            Problem::LoopNotClosed(format!(
                "its {r_last} x {c_last} blocks have {c_last} columns, the first node's blocks {r_first} rows"
            )),
        ));
    }
    Ok(())
}

fn explicit_loop(
    place: &str,
    spec: &LoopSpec,
    ids: Vec<usize>,
    views: Vec<MatrixView>,
    nodes: &[Node],
    at: &dyn Fn(usize) -> String,
) -> Result<Loop, Invalid> {
    let k = ids.len();
    if k < 2 {
        return Err(Invalid::at(
            place,
            Problem::LoopNotClosed(
                "a loop with explicit spin mappings needs at least two nodes".into(),
            ),
        ));
    }
    let bad_map = |p: usize, e: String| Invalid::at(at(p), Problem::BadSpinMapping(e));
    let mut mappings = Vec::with_capacity(k - 2);
    // P_1 is the first node through its view; a product is rank 2, seen plainly.
    let (mut product, mut product_view) = (nodes[ids[0]].shape.clone(), views[0]);
    let specs = spec.mappings.clone().unwrap_or_default();
    for (j, m) in specs.iter().enumerate() {
        let p = j + 1; // the node multiplied in
        let mapping = match m {
            MappingSpec::Named(n) if n == MESON4X4 => Arc::new(SpinMapping::meson4x4()),
            MappingSpec::Named(n) => {
                return Err(bad_map(
                    p,
                    format!(
                        "unknown mapping \"{}\": the named mapping is \"{MESON4X4}\"",
                        n.escape_debug()
                    ),
                ));
            }
            MappingSpec::Terms(t) => {
                let terms = t.iter().map(|&[o, a, b]| Term::new(o, a, b)).collect();
                Arc::new(SpinMapping::from_terms(terms).map_err(|e| bad_map(p, e.to_string()))?)
            }
        };
        let plan = hadron::ContractionSizes::new(
            &product,
            &nodes[ids[p]].shape,
            product_view,
            views[p],
            &mapping,
        )
        .map_err(|e| match e {
            HadronError::ShapeMismatch(m) => Invalid::at(at(p), Problem::MismatchedDims(m)),
            other => bad_map(p, other.to_string()),
        })?;
        product = plan.out;
        product_view = MatrixView::default();
        mappings.push(mapping);
    }
    let last = k - 1;
    let trace = match &spec.trace {
        None => Arc::new(TracePairs::meson4x4()),
        Some(PairsSpec::Named(n)) if n == MESON4X4 => Arc::new(TracePairs::meson4x4()),
        Some(PairsSpec::Named(n)) => {
            return Err(bad_map(
                last,
                format!(
                    "unknown trace pairing \"{}\": the named pairing is \"{MESON4X4}\"",
                    n.escape_debug()
                ),
            ));
        }
        Some(PairsSpec::Pairs(p)) => Arc::new(
            TracePairs::new(p.iter().map(|&[a, b]| (a, b)).collect())
                .map_err(|e| bad_map(last, format!("trace: {e}")))?,
        ),
    };
    let closing = &nodes[ids[last]].shape;
    trace
        .check(product.spins(), closing.spins())
        .map_err(|e| bad_map(last, format!("trace: {e}")))?;
    let bad_view = |p: usize, e: HadronError| Invalid::at(at(p), Problem::BadView(e.to_string()));
    let (m, q) = product
        .matrix(product_view)
        .map_err(|e| bad_view(last - 1, e))?;
    let (q2, m2) = closing.matrix(views[last]).map_err(|e| bad_view(last, e))?;
    if q != q2 {
        return Err(Invalid::at(
            at(last),
            Problem::MismatchedDims(format!(
                "the product so far is {m} x {q} and this node {q2} x {m2}: {q} columns against {q2} rows"
            )),
        ));
    }
    if m2 != m {
        return Err(Invalid::at(
            at(last),
            Problem::LoopNotClosed(format!(
                "the product so far has {m} rows, this node {m2} columns"
            )),
        ));
    }
    Ok(Loop {
        nodes: ids,
        views,
        kind: LoopKind::Explicit { mappings, trace },
    })
}
