//! The planner: the whole file at once.
//!
//! [`plan`] turns a [`CheckedFile`] into a [`Plan`]: the distinct partial products and traces of
//! every loop of every graph used by a correlator ([`build`](self) chooses each loop's
//! reduction order with a cost model and shares identical products through canonical
//! [`keys`]), put in an order that keeps the peak of live bytes low (`order.rs`: a
//! memory-aware list schedule over the traces), grouped into stages (`stages.rs`: a vector of
//! independent contractions, then traces, then the releases of every object whose last use
//! has passed; as wide as the peak allows), with the exact future of object uses for the
//! Belady policy and for prefetch ([`Plan::future`]), and a [`PlanReport`] whose peaks
//! (`memory.rs`) are what the runtime holds.

mod build;
mod greedy;
pub mod keys;
mod memory;
mod order;
mod stages;

use std::sync::Arc;

use hadron::{MatrixView, NodeShape, SpinMapping, TracePairs};
use serde::Serialize;

use crate::checked::CheckedFile;
use crate::error::Result;

/// What a contraction or trace reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operand {
    /// An initial node: an index into [`CheckedFile::nodes`].
    Node(usize),
    /// A partial product: an index into [`Plan::products`].
    Product(usize),
    /// The identity meson of [`Plan::identities`]`[i]` (closes a loop of one node:
    /// `Tr(M) = Tr(M · 1)`).
    Identity(usize),
}

/// One distinct partial product: `contract(a, b, mapping)`, each operand's components seen
/// through its view.
#[derive(Clone, Debug, PartialEq)]
pub struct Product {
    /// The left operand.
    pub a: Operand,
    /// The right operand.
    pub b: Operand,
    /// How `a`'s components are seen as matrices (a baryon's `N x N²` or `N² x N`; the
    /// default for a meson or a product).
    pub a_view: MatrixView,
    /// How `b`'s components are seen as matrices.
    pub b_view: MatrixView,
    /// The spin mapping.
    pub mapping: Arc<SpinMapping>,
    /// The output's shape.
    pub shape: NodeShape,
    /// Its flops (`8 m n k` per term).
    pub flops: u64,
}

/// One distinct trace: `Σ_(i, j) in pairs Tr(A[i] · B[j])`, each operand's components seen
/// through its view.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceJob {
    /// The left operand.
    pub a: Operand,
    /// The right operand.
    pub b: Operand,
    /// How `a`'s components are seen as matrices.
    pub a_view: MatrixView,
    /// How `b`'s components are seen as matrices.
    pub b_view: MatrixView,
    /// The spin pairs.
    pub pairs: Arc<TracePairs>,
    /// Rows of A's components through its view (the trace's scratch holds `pairs · rows`
    /// numbers).
    pub rows: usize,
    /// Its flops.
    pub flops: u64,
}

/// One stage of the execution queue: a vector of independent contractions (run concurrently,
/// contraction `i` on stream `i mod streams`), then the traces, then the releases.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stage {
    /// Indices into [`Plan::products`]; none reads another's output.
    pub contractions: Vec<usize>,
    /// Indices into [`Plan::traces`], run after the contractions.
    pub traces: Vec<usize>,
    /// Objects whose last use is in this stage, released after it.
    pub release: Vec<Operand>,
}

/// Which order the work runs in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// The planner's order: a memory-aware list schedule (each next trace the one that raises
    /// the peak least, then leaves the fewest bytes alive; see `order.rs`), or the file's
    /// order where that holds fewer bytes at the peak.
    #[default]
    Planned,
    /// The traces in the order the file gives the graphs and loops.
    File,
}

/// How to plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Share identical partial products and traces across all loops, graphs and time pairs.
    pub sharing: bool,
    /// The order of the work.
    pub order: Order,
    /// At most this many contractions per vector (stage). Vectors are as wide as this allows
    /// without raising the plan's peak of live bytes (see `stages.rs`), so some are narrower.
    pub vector_size: usize,
}

impl Default for PlanOptions {
    /// Sharing on, planner order, vectors of up to 16.
    fn default() -> Self {
        PlanOptions {
            sharing: true,
            order: Order::Planned,
            vector_size: 16,
        }
    }
}

/// What the planner reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlanReport {
    /// Whether products were shared.
    pub sharing: bool,
    /// The order used.
    pub order: Order,
    /// Loops of the used graphs (each occurrence).
    pub loops: u64,
    /// Contractions if every loop were reduced on its own (`Σ (k − 2)`).
    pub contractions_without_sharing: u64,
    /// Contractions the plan runs.
    pub contractions: u64,
    /// Traces the plan runs.
    pub traces: u64,
    /// `1 − contractions / contractions_without_sharing` (0 when there are none).
    pub shared_fraction: f64,
    /// Flops of the plan's contractions and traces.
    pub flops: u64,
    /// Stages (vectors).
    pub stages: u64,
    /// Initial nodes the plan reads, and their bytes.
    pub nodes: u64,
    /// Bytes of the initial nodes read.
    pub node_bytes: u64,
    /// The most bytes alive at once in this plan's queue: objects from their first use to the
    /// release after their last, and each trace's scratch while it runs. The smallest device
    /// budget under which the run evicts nothing.
    pub peak_bytes: u64,
    /// The same in the other order (file order for a planned plan, planner order for a
    /// file-order plan), for comparison.
    pub peak_bytes_other_order: u64,
    /// The device bytes the runtime holds at its peak when the budget never binds (its
    /// `peak_device_bytes`): released buffers wait in the free pool for requests of their
    /// size, so each size holds its own peak. Equal to `peak_bytes` when all objects have one
    /// size, more otherwise (optimal mode: packed objects, exact-size reuse, no arena).
    pub peak_bytes_with_pool: u64,
}

/// A plan. See the [module documentation](self).
#[derive(Clone, Debug)]
pub struct Plan {
    /// The checked file planned (nodes, graphs, correlators and their metadata).
    pub checked: CheckedFile,
    /// The distinct partial products.
    pub products: Vec<Product>,
    /// The distinct traces.
    pub traces: Vec<TraceJob>,
    /// Identity mesons used to close one-node loops.
    pub identities: Vec<NodeShape>,
    /// For each graph of the checked file, its loops' traces (empty for graphs no correlator uses).
    pub graph_traces: Vec<Vec<usize>>,
    /// The execution queue.
    pub stages: Vec<Stage>,
    /// The report.
    pub report: PlanReport,
}

/// Plans `checked` as `options` say. See the [module documentation](self).
pub fn plan(checked: &CheckedFile, options: &PlanOptions) -> Result<Plan> {
    let built = build::Builder::new(checked, options.sharing).build()?;
    let mut plan = Plan {
        checked: checked.clone(),
        products: built.products,
        traces: built.traces,
        identities: built.identities,
        graph_traces: built.graph_traces,
        stages: Vec::new(),
        report: PlanReport {
            sharing: options.sharing,
            order: options.order,
            loops: 0,
            contractions_without_sharing: built.unshared_contractions,
            contractions: 0,
            traces: 0,
            shared_fraction: 0.0,
            flops: 0,
            stages: 0,
            nodes: 0,
            node_bytes: 0,
            peak_bytes: 0,
            peak_bytes_other_order: 0,
            peak_bytes_with_pool: 0,
        },
    };
    let bytes = |op: Operand| plan.bytes(op);
    let work = order::Work::new(
        &plan.products,
        &plan.traces,
        plan.checked.nodes.len(),
        plan.identities.len(),
        &bytes,
    );
    let schedule = |traces: Vec<usize>| {
        let jobs = order::jobs(&work, &traces);
        let stages = stages::stages(&work, &jobs, options.vector_size);
        let peaks = memory::peaks(&work, &stages);
        (stages, peaks)
    };
    let file = schedule(order::file_order(&work));
    // The planner's order: the lowest peak of its list schedules, and of the file's order
    // (the schedules are heuristics: none may hold more than the file's order).
    let groups = time_pair_groups(&plan.checked, &plan.graph_traces, plan.traces.len());
    let mut planned = file.clone();
    for heuristic in [greedy::Heuristic::Steps, greedy::Heuristic::Focus] {
        let candidate = schedule(greedy::order(&work, &groups, heuristic));
        if candidate.1.live <= planned.1.live {
            planned = candidate;
        }
    }
    let ((stages, peaks), other) = match options.order {
        Order::Planned => (planned, file.1),
        Order::File => (file, planned.1),
    };
    drop(work);
    plan.stages = stages;
    let nodes = plan.used_nodes();
    let r = PlanReport {
        loops: plan.graph_traces.iter().map(|t| t.len() as u64).sum(),
        contractions: plan.products.len() as u64,
        traces: plan.traces.len() as u64,
        shared_fraction: if built.unshared_contractions == 0 {
            0.0
        } else {
            1.0 - plan.products.len() as f64 / built.unshared_contractions as f64
        },
        flops: plan.products.iter().map(|p| p.flops).sum::<u64>()
            + plan.traces.iter().map(|t| t.flops).sum::<u64>(),
        stages: plan.stages.len() as u64,
        nodes: nodes.len() as u64,
        node_bytes: nodes.iter().map(|&n| plan.bytes(Operand::Node(n))).sum(),
        peak_bytes: peaks.live,
        peak_bytes_other_order: other.live,
        peak_bytes_with_pool: peaks.with_pool,
        ..plan.report.clone()
    };
    plan.report = r;
    Ok(plan)
}

/// For each trace, the first `(source, sink)` time pair (in file order) whose graphs use it,
/// as an index in the order of first appearance.
fn time_pair_groups(
    checked: &CheckedFile,
    graph_traces: &[Vec<usize>],
    traces: usize,
) -> Vec<usize> {
    let mut group = vec![usize::MAX; traces];
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for c in &checked.correlators {
        for tp in &c.times {
            let key = (tp.source, tp.sink);
            let i = match pairs.iter().position(|&k| k == key) {
                Some(i) => i,
                None => {
                    pairs.push(key);
                    pairs.len() - 1
                }
            };
            for &g in &tp.graphs {
                for &t in &graph_traces[g] {
                    if group[t] == usize::MAX {
                        group[t] = i;
                    }
                }
            }
        }
    }
    group
        .iter()
        .map(|&g| if g == usize::MAX { 0 } else { g })
        .collect()
}

impl Plan {
    /// The bytes of an operand's values.
    pub fn bytes(&self, op: Operand) -> u64 {
        self.shape(op)
            .and_then(|s| s.layout().ok())
            .map_or(0, |l| l.bytes() as u64)
    }

    /// The shape of an operand.
    pub fn shape(&self, op: Operand) -> Option<&NodeShape> {
        match op {
            Operand::Node(n) => self.checked.nodes.get(n).map(|n| &n.shape),
            Operand::Product(p) => self.products.get(p).map(|p| &p.shape),
            Operand::Identity(i) => self.identities.get(i),
        }
    }

    /// The initial nodes the plan reads, ascending.
    pub fn used_nodes(&self) -> Vec<usize> {
        let mut used = vec![false; self.checked.nodes.len()];
        let ops = self
            .products
            .iter()
            .flat_map(|p| [p.a, p.b])
            .chain(self.traces.iter().flat_map(|t| [t.a, t.b]));
        for op in ops {
            if let Operand::Node(n) = op {
                used[n] = true;
            }
        }
        (0..used.len()).filter(|&n| used[n]).collect()
    }

    /// The exact sequence of object uses the queue makes, in order: for each stage, each
    /// contraction's `[a, b, out]` (`b` left out when it is `a`, as
    /// [`hadron::Engine::uses`] does), then each trace's `[a, b]` (likewise). Mapped to object
    /// ids, this is what [`memhc_core::Runtime::set_future`] wants (Belady, prefetch).
    pub fn future(&self) -> Vec<Operand> {
        let mut f = Vec::new();
        for stage in &self.stages {
            for &p in &stage.contractions {
                let pr = &self.products[p];
                f.push(pr.a);
                if pr.b != pr.a {
                    f.push(pr.b);
                }
                f.push(Operand::Product(p));
            }
            for &t in &stage.traces {
                let tr = &self.traces[t];
                f.push(tr.a);
                if tr.b != tr.a {
                    f.push(tr.b);
                }
            }
        }
        f
    }
}
