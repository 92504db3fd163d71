//! Running a plan on the runtime, through [`hadron::Engine`] over any [`Backend`], under any
//! policy and mode: the used nodes registered (host-backed), every product created up front as
//! a GPU-only object so that the future of uses is exact ([`Plan::future`] →
//! [`memhc_core::Runtime::set_future`]), then stage by stage: the vector's members announced
//! (`begin_vector`, for pre-protected LRU), its contractions on the streams, its traces on the
//! device, and every object released after its last use. The traces' values are assembled into
//! graph values and correlators on the host.
//!
//! A run is two steps, which a caller may time apart: [`load_onto`] reads or generates every used
//! node's values (all nodes at once, on every core) and registers them, creates the products
//! and announces the future; [`Loaded::run`] is the queue. [`run_with`] does both.
//!
//! With page-locked node data ([`run_with`], `pinned`), every registered node is loaded
//! straight into the backend's host memory ([`hadron::Engine::alloc_host`], filled in place
//! by [`crate::Node::fill`], then [`hadron::Engine::register_host`]): its upload is one DMA,
//! with no staging copy and no page fault. (A run's results are traces, scalars read as they
//! are computed: no result node is read back.)

use hadron::{Contraction, Engine, HadronNode, NodeShape};
use memhc_core::{Backend, ObjectId};
use num_complex::Complex64;
use rayon::prelude::*;

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

/// Runs `plan` on `engine` and returns the correlators: [`load_onto`], then [`Loaded::run`]. With
/// `pinned`, node data is loaded straight into the backend's page-locked host memory (the
/// runtime's direct data path: configure it with `Config::with_direct_host`). `progress` is
/// called after each stage. The engine's runtime keeps the statistics of the run.
pub fn run_with<B: Backend>(
    plan: &Plan,
    engine: &mut Engine<B>,
    pinned: bool,
    progress: &mut dyn FnMut(Progress),
) -> Result<Correlators> {
    load_onto(plan, engine, pinned)?.run(plan, engine, progress)
}

/// A plan's objects on an engine, made by [`load_onto`]: the used nodes registered with their
/// values, the identities, and every product created (no value yet); the future announced.
#[derive(Debug)]
pub struct Loaded {
    nodes: Vec<Option<ObjectId>>,
    identities: Vec<ObjectId>,
    products: Vec<ObjectId>,
}

/// Loads `plan` onto `engine`: reads or generates the values of every node the plan uses, on
/// every core (seeded values, `.npy` and HDF5 files alike; each node's values are the same
/// whichever thread makes them), registers them (with `pinned`, in the backend's page-locked
/// host memory, filled in place), registers the identities, creates every product up front as
/// a GPU-only object, and announces the future of uses ([`Plan::future`] →
/// [`memhc_core::Runtime::set_future`]). Nothing is queued on the device.
pub fn load_onto<B: Backend>(plan: &Plan, engine: &mut Engine<B>, pinned: bool) -> Result<Loaded> {
    let checked = &plan.checked;
    let mut nodes: Vec<Option<ObjectId>> = vec![None; checked.nodes.len()];
    let used = plan.used_nodes();
    let node = |n: usize| {
        checked
            .nodes
            .get(n)
            .ok_or_else(|| CorrError::Usage(format!("internal: node {n} is not in the file")))
    };
    if pinned {
        let mut hosts = Vec::with_capacity(used.len());
        for &n in &used {
            hosts.push(engine.alloc_host(&node(n)?.shape)?);
        }
        let mut slices = Vec::with_capacity(hosts.len());
        for host in &mut hosts {
            slices.push(host.as_mut_slice()?);
        }
        used.par_iter()
            .zip(slices.into_par_iter())
            .try_for_each(|(&n, out)| node(n)?.fill(out))?;
        for (&n, host) in used.iter().zip(hosts) {
            nodes[n] = Some(engine.register_host(node(n)?.shape.clone(), host)?);
        }
    } else {
        let values: Vec<HadronNode> = used
            .par_iter()
            .map(|&n| node(n)?.values())
            .collect::<Result<_>>()?;
        for (&n, v) in used.iter().zip(values) {
            nodes[n] = Some(engine.register(v)?);
        }
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
    let loaded = Loaded {
        nodes,
        identities,
        products,
    };
    let future = plan
        .future()
        .into_iter()
        .map(|op| loaded.id(op))
        .collect::<Result<Vec<_>>>()?;
    engine.runtime_mut().set_future(&future)?;
    Ok(loaded)
}

impl Loaded {
    /// The object of node `n` of the file (its index in [`crate::CheckedFile::nodes`]), if the
    /// plan uses it (only used nodes are registered).
    pub fn node(&self, n: usize) -> Option<ObjectId> {
        self.nodes.get(n).copied().flatten()
    }

    /// The object of an operand of the plan.
    fn id(&self, op: Operand) -> Result<ObjectId> {
        let found = match op {
            Operand::Node(n) => self.nodes.get(n).copied().flatten(),
            Operand::Product(p) => self.products.get(p).copied(),
            Operand::Identity(i) => self.identities.get(i).copied(),
        };
        found.ok_or_else(|| CorrError::Usage(format!("internal: {op:?} has no object")))
    }

    /// Runs the queue of `plan` (the plan [`load_onto`] loaded onto `engine`) and returns the
    /// correlators: stage by stage, the vector's members announced (`begin_vector`), its
    /// contractions on the streams, its traces on the device, every object released after its
    /// last use, then one synchronisation. `progress` is called after each stage.
    pub fn run<B: Backend>(
        &self,
        plan: &Plan,
        engine: &mut Engine<B>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Correlators> {
        let id = |op: Operand| self.id(op);
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
}
