//! The work of a whole file as one graph of shared products: for each loop a reduction order
//! chosen by a cost model, each distinct partial product and each distinct trace once.
//!
//! **Cost model.** A contraction of an `m x q` by a `q x n` operand (per spin block) with `t`
//! terms costs `8 t m q n` flops plus the bytes of its output (16 bytes per complex element):
//! flops first, intermediate bytes breaking ties between equal flops. A product that other
//! loops also contain is amortised over them: its cost is divided by the number of distinct
//! loops whose cycle contains its node sequence. A product already planned costs nothing.
//!
//! **Meson loops** (`Tr(M_1 ... M_k)`, `k >= 3`): every cut of the cycle into two arcs
//! `X = M_i ... M_j`, `Y = M_{j+1} ... M_{i-1}` with `Tr(X Y)` the closing trace, and every
//! bracketing of each arc, is considered by dynamic programming over the cyclic segments
//! (`O(k³)`); the cheapest is taken. `k = 2` is one trace, `k = 1` a trace against the
//! identity. **Explicit loops** are left folds as written, their prefixes shared.
//!
//! **Views.** A node enters a loop through the view its components are seen through (a
//! baryon's `N x N²` or `N² x N`): the pair is a factor ([`keys::Factor`](super::keys)), and
//! products and traces of nodes carry the views of their node operands (a product is always
//! rank 2, seen plainly).

use std::collections::HashMap;
use std::sync::Arc;

use hadron::{MatrixView, NodeShape, SpinMapping, TracePairs};

use super::keys::{Factor, MESON, ProductKey, TraceKey, factor, least_rotation, meson_key};
use super::{Operand, Product, TraceJob};
use crate::checked::{CheckedFile, Loop, LoopKind};
use crate::error::Result;

/// The distinct products and traces of a checked file, and each loop's trace.
pub(super) struct Built {
    pub products: Vec<Product>,
    pub traces: Vec<TraceJob>,
    pub identities: Vec<NodeShape>,
    /// For each graph of the checked file: its loops' trace indices (empty for unused graphs).
    pub graph_traces: Vec<Vec<usize>>,
    /// Contractions if every loop were reduced on its own.
    pub unshared_contractions: u64,
}

pub(super) struct Builder<'m> {
    checked: &'m CheckedFile,
    sharing: bool,
    products: Vec<Product>,
    product_keys: HashMap<ProductKey, usize>,
    traces: Vec<TraceJob>,
    trace_keys: HashMap<TraceKey, usize>,
    mappings: Vec<Arc<SpinMapping>>,
    pairs: Vec<Arc<TracePairs>>,
    identities: Vec<NodeShape>,
    /// For amortisation: in how many distinct loops each meson factor sequence occurs.
    frequency: HashMap<Vec<Factor>, u32>,
}

/// An operand and the view its components are seen through (the default for a product).
type Viewed = (Operand, MatrixView);

/// The factors of a loop: each node with its view.
fn factors(lp: &Loop) -> Vec<Factor> {
    lp.nodes
        .iter()
        .zip(&lp.views)
        .map(|(&n, &v)| factor(n, v))
        .collect()
}

impl<'m> Builder<'m> {
    pub(super) fn new(checked: &'m CheckedFile, sharing: bool) -> Self {
        Builder {
            checked,
            sharing,
            products: Vec::new(),
            product_keys: HashMap::new(),
            traces: Vec::new(),
            trace_keys: HashMap::new(),
            mappings: vec![Arc::new(SpinMapping::meson4x4())],
            pairs: vec![Arc::new(TracePairs::meson4x4())],
            identities: Vec::new(),
            frequency: HashMap::new(),
        }
    }

    pub(super) fn build(mut self) -> Result<Built> {
        let used = self.checked.used_graphs();
        if self.sharing {
            self.count_segments(&used);
        }
        let mut graph_traces = vec![Vec::new(); self.checked.graphs.len()];
        let mut unshared = 0u64;
        for &g in &used {
            let graph = &self.checked.graphs[g];
            let mut list = Vec::with_capacity(graph.loops.len());
            for lp in &graph.loops {
                unshared += lp.nodes.len().saturating_sub(2) as u64;
                list.push(self.one_loop(lp)?);
            }
            graph_traces[g] = list;
        }
        Ok(Built {
            products: self.products,
            traces: self.traces,
            identities: self.identities,
            graph_traces,
            unshared_contractions: unshared,
        })
    }

    /// Counts, over the distinct meson loops, the loops containing each cyclic segment.
    fn count_segments(&mut self, used: &[usize]) {
        let mut seen = std::collections::HashSet::new();
        for &g in used {
            for lp in &self.checked.graphs[g].loops {
                let f = factors(lp);
                if lp.kind != LoopKind::Meson || !seen.insert(least_rotation(&f)) {
                    continue;
                }
                let k = f.len();
                let mut segments = std::collections::HashSet::new();
                for i in 0..k {
                    for len in 2..k {
                        segments.insert(segment(&f, i, len));
                    }
                }
                for s in segments {
                    *self.frequency.entry(s).or_insert(0) += 1;
                }
            }
        }
    }

    fn shape(&self, op: Operand) -> NodeShape {
        match op {
            Operand::Node(n) => self.checked.nodes[n].shape.clone(),
            Operand::Product(p) => self.products[p].shape.clone(),
            Operand::Identity(i) => self.identities[i].clone(),
        }
    }

    fn one_loop(&mut self, lp: &Loop) -> Result<usize> {
        let f = factors(lp);
        let key = match &lp.kind {
            LoopKind::Meson => TraceKey::Meson(least_rotation(&f)),
            LoopKind::Explicit { mappings, trace } => {
                let mut key: ProductKey = vec![(MESON, f[0].0, f[0].1)];
                for (m, &(n, v)) in mappings.iter().zip(&f[1..]) {
                    let id = self.mapping_id(m);
                    key.push((id, n, v));
                }
                let pairs = self.pairs_id(trace);
                TraceKey::Explicit(key, pairs, f[f.len() - 1])
            }
        };
        if let Some(&t) = self.trace_keys.get(&key).filter(|_| self.sharing) {
            return Ok(t);
        }
        let job = match &lp.kind {
            LoopKind::Meson => self.meson_loop(lp)?,
            LoopKind::Explicit { mappings, trace } => self.explicit_loop(lp, mappings, trace)?,
        };
        self.traces.push(job);
        let t = self.traces.len() - 1;
        if self.sharing {
            self.trace_keys.insert(key, t);
        }
        Ok(t)
    }

    fn mapping_id(&mut self, m: &Arc<SpinMapping>) -> u32 {
        let pos = self.mappings.iter().position(|x| **x == **m);
        pos.unwrap_or_else(|| {
            self.mappings.push(m.clone());
            self.mappings.len() - 1
        }) as u32
    }

    fn pairs_id(&mut self, p: &Arc<TracePairs>) -> u32 {
        let pos = self.pairs.iter().position(|x| **x == **p);
        pos.unwrap_or_else(|| {
            self.pairs.push(p.clone());
            self.pairs.len() - 1
        }) as u32
    }

    fn trace_job(&self, a: Viewed, b: Viewed, pairs: Arc<TracePairs>) -> Result<TraceJob> {
        let (m, q) = self.shape(a.0).matrix(a.1)?;
        let flops = 8 * (pairs.pairs().len() * m * q) as u64;
        Ok(TraceJob {
            a: a.0,
            b: b.0,
            a_view: a.1,
            b_view: b.1,
            pairs,
            rows: m,
            flops,
        })
    }

    fn meson_loop(&mut self, lp: &Loop) -> Result<TraceJob> {
        let meson_pairs = self.pairs[0].clone();
        let nodes = factors(lp);
        let node = |p: usize| (Operand::Node(lp.nodes[p]), lp.views[p]);
        let k = nodes.len();
        if k == 1 {
            let (r, _) = self.dims(nodes[0]);
            let shape = NodeShape::meson(r)?;
            let i = match self.identities.iter().position(|s| *s == shape) {
                Some(i) => i,
                None => {
                    self.identities.push(shape);
                    self.identities.len() - 1
                }
            };
            let identity = (Operand::Identity(i), MatrixView::default());
            return self.trace_job(node(0), identity, meson_pairs);
        }
        if k == 2 {
            return self.trace_job(node(0), node(1), meson_pairs);
        }
        let table = self.segment_costs(&nodes);
        let mut best: Option<(f64, usize, usize)> = None;
        for i in 0..k {
            for len in 1..k {
                let c = table.cost(i, len) + table.cost((i + len) % k, k - len);
                if best.is_none_or(|(b, _, _)| c < b) {
                    best = Some((c, i, len));
                }
            }
        }
        let (_, i, len) = best.unwrap_or((0.0, 0, 1));
        let x = self.materialise(&nodes, &table, i, len)?;
        let y = self.materialise(&nodes, &table, (i + len) % k, k - len)?;
        self.trace_job(x, y, meson_pairs)
    }

    /// Rows and columns of a factor's components (its view was checked with the file).
    fn dims(&self, (n, v): Factor) -> (usize, usize) {
        let view = MatrixView::split(v as usize);
        self.checked.nodes[n as usize]
            .shape
            .matrix(view)
            .unwrap_or((0, 0))
    }

    /// The dynamic programme over the cyclic segments of `nodes`.
    fn segment_costs(&self, nodes: &[Factor]) -> Table {
        let k = nodes.len();
        let mut t = Table {
            k,
            cost: vec![0.0; k * k],
            split: vec![0; k * k],
        };
        for len in 2..k {
            for i in 0..k {
                let seg = segment(nodes, i, len);
                let key = meson_key(seg.iter().copied());
                if self.sharing && self.product_keys.contains_key(&key) {
                    continue; // planned already: free
                }
                let f = if self.sharing {
                    self.frequency.get(&seg).copied().unwrap_or(1).max(1) as f64
                } else {
                    1.0
                };
                let (m, _) = self.dims(nodes[i]);
                let (_, n) = self.dims(nodes[(i + len - 1) % k]);
                let mut best = (f64::INFINITY, 1);
                for s in 1..len {
                    let (_, q) = self.dims(nodes[(i + s - 1) % k]);
                    let own = meson_flops(m, q, n) as f64 + (256 * m * n) as f64;
                    let c = t.cost(i, s) + t.cost((i + s) % k, len - s) + own / f;
                    if c < best.0 {
                        best = (c, s);
                    }
                }
                t.cost[i * k + len] = best.0;
                t.split[i * k + len] = best.1;
            }
        }
        t
    }

    /// The operand for segment `(i, len)`: a node, a product planned already, or new products.
    fn materialise(&mut self, nodes: &[Factor], t: &Table, i: usize, len: usize) -> Result<Viewed> {
        let k = nodes.len();
        if len == 1 {
            let (n, v) = nodes[i];
            return Ok((Operand::Node(n as usize), MatrixView::split(v as usize)));
        }
        let seg = segment(nodes, i, len);
        let key = meson_key(seg.iter().copied());
        if let Some(&p) = self.product_keys.get(&key).filter(|_| self.sharing) {
            return Ok((Operand::Product(p), MatrixView::default()));
        }
        let s = t.split[i * k + len].max(1);
        let a = self.materialise(nodes, t, i, s)?;
        let b = self.materialise(nodes, t, (i + s) % k, len - s)?;
        let mapping = self.mappings[0].clone();
        self.push_product(key, a, b, mapping)
    }

    fn push_product(
        &mut self,
        key: ProductKey,
        a: Viewed,
        b: Viewed,
        mapping: Arc<SpinMapping>,
    ) -> Result<Viewed> {
        let plan =
            hadron::ContractionSizes::new(&self.shape(a.0), &self.shape(b.0), a.1, b.1, &mapping)?;
        let flops = plan.flops(&mapping);
        self.products.push(Product {
            a: a.0,
            b: b.0,
            a_view: a.1,
            b_view: b.1,
            mapping,
            shape: plan.out,
            flops,
        });
        let p = self.products.len() - 1;
        if self.sharing {
            self.product_keys.insert(key, p);
        }
        Ok((Operand::Product(p), MatrixView::default()))
    }

    fn explicit_loop(
        &mut self,
        lp: &Loop,
        mappings: &[Arc<SpinMapping>],
        trace: &Arc<TracePairs>,
    ) -> Result<TraceJob> {
        let f = factors(lp);
        let node = |p: usize| (Operand::Node(lp.nodes[p]), lp.views[p]);
        let mut key: ProductKey = vec![(MESON, f[0].0, f[0].1)];
        let mut acc = node(0);
        for (j, m) in mappings.iter().enumerate() {
            let id = self.mapping_id(m);
            key.push((id, f[j + 1].0, f[j + 1].1));
            acc = match self.product_keys.get(&key) {
                Some(&p) if self.sharing => (Operand::Product(p), MatrixView::default()),
                _ => self.push_product(key.clone(), acc, node(j + 1), m.clone())?,
            };
        }
        self.trace_job(acc, node(f.len() - 1), trace.clone())
    }
}

/// `8 · 64 · m q n`: a `meson4x4` contraction of `m x q` by `q x n` blocks.
fn meson_flops(m: usize, q: usize, n: usize) -> u64 {
    [m, q, n]
        .iter()
        .fold(8u64 * 64, |acc, &x| acc.saturating_mul(x as u64))
}

/// The factors of the cyclic segment starting at `i` of length `len`.
fn segment(nodes: &[Factor], i: usize, len: usize) -> Vec<Factor> {
    let k = nodes.len();
    (0..len).map(|j| nodes[(i + j) % k]).collect()
}

/// Costs and best splits of the cyclic segments `(start, len)` of one loop.
struct Table {
    k: usize,
    cost: Vec<f64>,
    split: Vec<usize>,
}

impl Table {
    fn cost(&self, i: usize, len: usize) -> f64 {
        if len <= 1 {
            0.0
        } else {
            self.cost[i * self.k + len]
        }
    }
}
