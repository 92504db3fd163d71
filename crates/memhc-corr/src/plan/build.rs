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

use std::collections::HashMap;
use std::sync::Arc;

use hadron::{MatrixView, NodeShape, SpinMapping, TracePairs};

use super::keys::{MESON, ProductKey, TraceKey, least_rotation, meson_key};
use super::{Operand, Product, TraceJob};
use crate::error::Result;
use crate::model::{Loop, LoopKind, Model};

/// The distinct products and traces of a model, and each loop's trace.
pub(super) struct Built {
    pub products: Vec<Product>,
    pub traces: Vec<TraceJob>,
    pub identities: Vec<NodeShape>,
    /// For each graph of the model: its loops' trace indices (empty for unused graphs).
    pub graph_traces: Vec<Vec<usize>>,
    /// Contractions if every loop were reduced on its own.
    pub unshared_contractions: u64,
}

pub(super) struct Builder<'m> {
    model: &'m Model,
    sharing: bool,
    products: Vec<Product>,
    product_keys: HashMap<ProductKey, usize>,
    traces: Vec<TraceJob>,
    trace_keys: HashMap<TraceKey, usize>,
    mappings: Vec<Arc<SpinMapping>>,
    pairs: Vec<Arc<TracePairs>>,
    identities: Vec<NodeShape>,
    /// For amortisation: in how many distinct loops each meson node sequence occurs.
    frequency: HashMap<Vec<u32>, u32>,
}

impl<'m> Builder<'m> {
    pub(super) fn new(model: &'m Model, sharing: bool) -> Self {
        Builder {
            model,
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
        let used = self.model.used_graphs();
        if self.sharing {
            self.count_segments(&used);
        }
        let mut graph_traces = vec![Vec::new(); self.model.graphs.len()];
        let mut unshared = 0u64;
        for &g in &used {
            let graph = &self.model.graphs[g];
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
            for lp in &self.model.graphs[g].loops {
                if lp.kind != LoopKind::Meson || !seen.insert(least_rotation(&lp.nodes)) {
                    continue;
                }
                let k = lp.nodes.len();
                let mut segments = std::collections::HashSet::new();
                for i in 0..k {
                    for len in 2..k {
                        segments.insert(segment(&lp.nodes, i, len));
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
            Operand::Node(n) => self.model.nodes[n].shape.clone(),
            Operand::Product(p) => self.products[p].shape.clone(),
            Operand::Identity(i) => self.identities[i].clone(),
        }
    }

    fn one_loop(&mut self, lp: &Loop) -> Result<usize> {
        let key = match &lp.kind {
            LoopKind::Meson => TraceKey::Meson(least_rotation(&lp.nodes)),
            LoopKind::Explicit { mappings, trace } => {
                let mut key: ProductKey = vec![(MESON, lp.nodes[0] as u32)];
                for (m, &n) in mappings.iter().zip(&lp.nodes[1..]) {
                    let id = self.mapping_id(m);
                    key.push((id, n as u32));
                }
                let pairs = self.pairs_id(trace);
                let last = lp.nodes[lp.nodes.len() - 1] as u32;
                TraceKey::Explicit(key, pairs, last)
            }
        };
        if let Some(&t) = self.trace_keys.get(&key).filter(|_| self.sharing) {
            return Ok(t);
        }
        let job = match &lp.kind {
            LoopKind::Meson => self.meson_loop(&lp.nodes)?,
            LoopKind::Explicit { mappings, trace } => {
                self.explicit_loop(&lp.nodes, mappings, trace)?
            }
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

    fn trace_job(&self, a: Operand, b: Operand, pairs: Arc<TracePairs>) -> TraceJob {
        let (sa, sb) = (self.shape(a), self.shape(b));
        let (m, q) = (sa.dims()[0], sa.dims()[1]);
        let flops = 8 * (pairs.pairs().len() * m * q) as u64;
        let _ = sb;
        TraceJob {
            a,
            b,
            pairs,
            rows: m,
            flops,
        }
    }

    fn meson_loop(&mut self, nodes: &[usize]) -> Result<TraceJob> {
        let meson_pairs = self.pairs[0].clone();
        let k = nodes.len();
        if k == 1 {
            let r = self.model.nodes[nodes[0]].shape.dims()[0];
            let shape = NodeShape::meson(r)?;
            let i = match self.identities.iter().position(|s| *s == shape) {
                Some(i) => i,
                None => {
                    self.identities.push(shape);
                    self.identities.len() - 1
                }
            };
            return Ok(self.trace_job(Operand::Node(nodes[0]), Operand::Identity(i), meson_pairs));
        }
        if k == 2 {
            return Ok(self.trace_job(
                Operand::Node(nodes[0]),
                Operand::Node(nodes[1]),
                meson_pairs,
            ));
        }
        let table = self.segment_costs(nodes);
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
        let x = self.materialise(nodes, &table, i, len)?;
        let y = self.materialise(nodes, &table, (i + len) % k, k - len)?;
        Ok(self.trace_job(x, y, meson_pairs))
    }

    fn dims(&self, n: usize) -> (usize, usize) {
        let d = self.model.nodes[n].shape.dims();
        (d[0], d[1])
    }

    /// The dynamic programme over the cyclic segments of `nodes`.
    fn segment_costs(&self, nodes: &[usize]) -> Table {
        let k = nodes.len();
        let mut t = Table {
            k,
            cost: vec![0.0; k * k],
            split: vec![0; k * k],
        };
        for len in 2..k {
            for i in 0..k {
                let seg = segment(nodes, i, len);
                let key = meson_key(seg.iter().map(|&n| n as usize));
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
    fn materialise(&mut self, nodes: &[usize], t: &Table, i: usize, len: usize) -> Result<Operand> {
        let k = nodes.len();
        if len == 1 {
            return Ok(Operand::Node(nodes[i]));
        }
        let seg = segment(nodes, i, len);
        let key = meson_key(seg.iter().map(|&n| n as usize));
        if let Some(&p) = self.product_keys.get(&key).filter(|_| self.sharing) {
            return Ok(Operand::Product(p));
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
        a: Operand,
        b: Operand,
        mapping: Arc<SpinMapping>,
    ) -> Result<Operand> {
        let v = MatrixView::default();
        let plan = hadron::Plan::new(&self.shape(a), &self.shape(b), v, v, &mapping)?;
        let flops = plan.flops(&mapping);
        self.products.push(Product {
            a,
            b,
            mapping,
            shape: plan.out,
            flops,
        });
        let p = self.products.len() - 1;
        if self.sharing {
            self.product_keys.insert(key, p);
        }
        Ok(Operand::Product(p))
    }

    fn explicit_loop(
        &mut self,
        nodes: &[usize],
        mappings: &[Arc<SpinMapping>],
        trace: &Arc<TracePairs>,
    ) -> Result<TraceJob> {
        let mut key: ProductKey = vec![(MESON, nodes[0] as u32)];
        let mut acc = Operand::Node(nodes[0]);
        for (m, &n) in mappings.iter().zip(&nodes[1..]) {
            let id = self.mapping_id(m);
            key.push((id, n as u32));
            acc = match self.product_keys.get(&key) {
                Some(&p) if self.sharing => Operand::Product(p),
                _ => self.push_product(key.clone(), acc, Operand::Node(n), m.clone())?,
            };
        }
        let last = nodes[nodes.len() - 1];
        Ok(self.trace_job(acc, Operand::Node(last), trace.clone()))
    }
}

/// `8 · 64 · m q n`: a `meson4x4` contraction of `m x q` by `q x n` blocks.
fn meson_flops(m: usize, q: usize, n: usize) -> u64 {
    [m, q, n]
        .iter()
        .fold(8u64 * 64, |acc, &x| acc.saturating_mul(x as u64))
}

/// The nodes of the cyclic segment starting at `i` of length `len`.
fn segment(nodes: &[usize], i: usize, len: usize) -> Vec<u32> {
    let k = nodes.len();
    (0..len).map(|j| nodes[(i + j) % k] as u32).collect()
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
