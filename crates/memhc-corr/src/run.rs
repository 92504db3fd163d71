//! Running a plan on the runtime, through [`hadron::Engine`] over any [`Backend`], under any
//! policy and mode: the used nodes registered (host-backed), every product created up front as
//! a GPU-only object so that the future of uses is exact ([`Plan::future`] →
//! [`memhc_core::Runtime::set_future`]), then stage by stage: the vector's members announced
//! (`begin_vector`, for pre-protected LRU), its contractions on the streams, its traces on the
//! device, and every object released after its last use. The traces' values are assembled into
//! graph values and correlators on the host.
//!
//! With page-locked node data ([`run_with`], `pinned`), every registered node is loaded
//! straight into the backend's host memory ([`hadron::Engine::alloc_host`], filled in place
//! by [`crate::Node::fill`], then [`hadron::Engine::register_host`]): its upload is one DMA,
//! with no staging copy and no page fault. (A run's results are traces, scalars read as they
//! are computed: no result node is read back.)

use hadron::{Contraction, Engine, HadronNode, NodeShape};
use memhc_core::{Backend, ObjectId};
use num_complex::Complex64;

use crate::error::{CorrError, Result};
use crate::output::Correlators;
use crate::plan::{Operand, Plan};

/// How far a run is: stages done of the total.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Stages done.
    pub done: usize,
    /// Stages in all.
    pub total: usize,
}

/// The identity meson of `shape` (16 spins of `r x r`): identity blocks on the spin diagonal
/// (`s = 5 alpha`), zeros elsewhere, so that `Tr(M · 1) = Tr(M)`.
pub fn identity(shape: &NodeShape) -> Result<HadronNode> {
    let r = shape.dims()[0];
    let elems = shape.layout()?.elems();
    let mut v = vec![Complex64::new(0.0, 0.0); elems];
    for alpha in 0..4 {
        for i in 0..r {
            v[5 * alpha * r * r + i * r + i] = Complex64::new(1.0, 0.0);
        }
    }
    Ok(HadronNode::from_vec(shape, v)?)
}

/// Registers a node of `shape` whose values `fill` writes straight into the backend's host
/// memory (no copy afterwards).
fn register_pinned<B: Backend>(
    engine: &mut Engine<B>,
    shape: &NodeShape,
    fill: impl FnOnce(&mut [Complex64]) -> Result<()>,
) -> Result<ObjectId> {
    let mut host = engine.alloc_host(shape)?;
    fill(host.as_mut_slice()?)?;
    Ok(engine.register_host(shape.clone(), host)?)
}

/// Runs `plan` on `engine` and returns the correlators, with node data in pageable memory
/// ([`run_with`] without `pinned`).
pub fn run<B: Backend>(
    plan: &Plan,
    engine: &mut Engine<B>,
    progress: &mut dyn FnMut(Progress),
) -> Result<Correlators> {
    run_with(plan, engine, false, progress)
}

/// Runs `plan` on `engine` and returns the correlators. With `pinned`, node data is loaded
/// straight into the backend's page-locked host memory (the runtime's direct data path:
/// configure it with `Config::with_direct_host`). `progress` is called after each stage. The
/// engine's runtime keeps the statistics of the run.
pub fn run_with<B: Backend>(
    plan: &Plan,
    engine: &mut Engine<B>,
    pinned: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Correlators> {
    let checked = &plan.checked;
    let mut nodes: Vec<Option<ObjectId>> = vec![None; checked.nodes.len()];
    for n in plan.used_nodes() {
        let node = &checked.nodes[n];
        nodes[n] = Some(match pinned {
            true => register_pinned(engine, &node.shape, |out| node.fill(out))?,
            false => engine.register(node.values()?)?,
        });
    }
    let mut identities = Vec::with_capacity(plan.identities.len());
    for shape in &plan.identities {
        let one = identity(shape)?;
        identities.push(match pinned {
            true => register_pinned(engine, shape, |out| {
                out.copy_from_slice(one.as_slice());
                Ok(())
            })?,
            false => engine.register(one)?,
        });
    }
    let mut products = Vec::with_capacity(plan.products.len());
    for p in &plan.products {
        products.push(engine.create(p.shape.clone())?);
    }
    let id = |op: Operand| -> Result<ObjectId> {
        let found = match op {
            Operand::Node(n) => nodes.get(n).copied().flatten(),
            Operand::Product(p) => products.get(p).copied(),
            Operand::Identity(i) => identities.get(i).copied(),
        };
        found.ok_or_else(|| CorrError::Usage(format!("internal: {op:?} has no object")))
    };
    let future = plan
        .future()
        .into_iter()
        .map(id)
        .collect::<Result<Vec<_>>>()?;
    engine.runtime_mut().set_future(&future)?;

    let streams = engine.runtime().streams().max(1);
    let mut values = vec![Complex64::new(0.0, 0.0); plan.traces.len()];
    let total = plan.stages.len();
    let mut members = Vec::new();
    for (s, stage) in plan.stages.iter().enumerate() {
        let mut vector = Vec::with_capacity(stage.contractions.len());
        members.clear();
        for &p in &stage.contractions {
            let pr = &plan.products[p];
            let c = Contraction::new(id(pr.a)?, id(pr.b)?, pr.mapping.clone())
                .with_views(pr.a_view, pr.b_view);
            members.extend([c.a, c.b]);
            vector.push((c, id(Operand::Product(p))?));
        }
        if !vector.is_empty() {
            engine.runtime_mut().begin_vector(&members)?;
        }
        for (i, (c, out)) in vector.iter().enumerate() {
            engine.contract_into(i % streams, c, *out)?;
        }
        for &t in &stage.traces {
            let tr = &plan.traces[t];
            let (a, b) = (id(tr.a)?, id(tr.b)?);
            values[t] = engine.trace_with_views(0, a, tr.a_view, b, tr.b_view, &tr.pairs)?;
        }
        for &op in &stage.release {
            engine.release(id(op)?)?;
        }
        progress(Progress { done: s + 1, total });
    }
    engine.runtime_mut().synchronize()?;
    Ok(Correlators::assemble(plan, &values))
}
