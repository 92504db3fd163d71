//! The C ABI's logic in safe Rust: the runtime registry, and every call on values the
//! boundary ([`crate::ffi`]) has already checked and converted from raw pointers.

pub mod corr;
pub mod host;

use std::sync::{Arc, LazyLock, Mutex, MutexGuard, PoisonError};

use memhc_embed::hadron::{Contraction, MatrixView, NodeShape, SpinMapping, Term, TracePairs};
use memhc_embed::{Complex64, HostBuffer, ObjectId, Options, Session};

use crate::registry::{Kind, Registry};
use crate::status::{Failure, MemhcStatus, Outcome};
use crate::types::{
    MemhcContraction, MemhcObject, MemhcPair, MemhcPlan, MemhcRuntime, MemhcStats, MemhcTerm,
};

/// One runtime behind a handle: the session, and the handles of its objects, plans and host
/// buffers.
#[derive(Debug)]
struct Instance {
    session: Session,
    objects: Registry<ObjectId>,
    plans: Registry<Arc<SpinMapping>>,
    hosts: Registry<HostBuffer>,
}

type Shared = Arc<Mutex<Instance>>;

/// Every live runtime. Held only to look a handle up, never during work.
static RUNTIMES: LazyLock<Mutex<Registry<Shared>>> =
    LazyLock::new(|| Mutex::new(Registry::new(Kind::Runtime)));

fn runtimes() -> MutexGuard<'static, Registry<Shared>> {
    // The registry is only ever changed by whole insertions and removals: usable after a panic.
    RUNTIMES.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `f` on the runtime `rt` names, holding its lock (calls on one runtime serialise).
fn with<T>(rt: MemhcRuntime, f: impl FnOnce(&mut Instance) -> Outcome<T>) -> Outcome<T> {
    let shared = runtimes().get(rt.handle).map_err(Failure::handle)?.clone();
    let mut guard = shared.lock().map_err(|_| {
        Failure::new(
            MemhcStatus::Internal,
            "an earlier call failed inside this runtime with an internal error (a panic); \
             destroy it",
        )
    })?;
    f(&mut guard)
}

impl Instance {
    fn object(&self, o: MemhcObject) -> Outcome<ObjectId> {
        self.objects.get(o.handle).copied().map_err(Failure::handle)
    }

    fn plan(&self, p: MemhcPlan) -> Outcome<Arc<SpinMapping>> {
        self.plans.get(p.handle).cloned().map_err(Failure::handle)
    }

    /// A handle for a new object; the object is released again if no handle is left.
    fn adopt(&mut self, id: ObjectId) -> Outcome<MemhcObject> {
        match self.objects.insert(id) {
            Some(handle) => Ok(MemhcObject { handle }),
            None => {
                let _ = self.session.release(id);
                Err(Failure::argument(
                    "too many live objects in one runtime (16,777,215)",
                ))
            }
        }
    }

    fn contraction(&self, c: &MemhcContraction) -> Outcome<Contraction> {
        let split = |s: usize| MatrixView::split(s.max(1));
        Ok(
            Contraction::new(self.object(c.a)?, self.object(c.b)?, self.plan(c.plan)?)
                .with_views(split(c.a_split), split(c.b_split)),
        )
    }
}

/// Runtime options from names (each `None` for its default) and numbers (a budget or a
/// number of streams of 0 for the default; a budget of 0 is `None`).
pub fn options(
    backend: Option<&str>,
    policy: Option<&str>,
    mode: Option<&str>,
    budget: u64,
    streams: u32,
    seed: u64,
) -> Outcome<Options> {
    let mut options = Options::from_names(backend, None, policy, mode)?;
    if budget > 0 {
        let bytes = usize::try_from(budget)
            .map_err(|_| Failure::argument(format!("a budget of {budget} bytes is too large")))?;
        options.budget = Some(bytes);
    }
    if streams > 0 {
        options.streams = streams as usize;
    }
    options.seed = seed;
    Ok(options)
}

/// Opens a runtime with `options` ([`options`] builds them from a `memhc_config`).
pub fn create(options: &Options) -> Outcome<MemhcRuntime> {
    let session = Session::open(options)?;
    let instance = Instance {
        session,
        objects: Registry::new(Kind::Object),
        plans: Registry::new(Kind::Plan),
        hosts: Registry::new(Kind::Host),
    };
    let handle = runtimes()
        .insert(Arc::new(Mutex::new(instance)))
        .ok_or_else(|| Failure::argument("too many live runtimes"))?;
    Ok(MemhcRuntime { handle })
}

/// Destroys a runtime: every object, plan and host buffer handle of it becomes stale, its
/// host buffers are freed and its device memory is returned. Work in flight on another thread finishes first.
pub fn destroy(rt: MemhcRuntime) -> Outcome<()> {
    let shared = runtimes().remove(rt.handle).map_err(Failure::handle)?;
    // The last reference drops the session (waiting for the device); if another thread holds
    // it at this moment, that thread's call drops it when done.
    drop(shared);
    Ok(())
}

/// Registers a host node, copying `data`.
pub fn register(
    rt: MemhcRuntime,
    spins: usize,
    dims: &[usize],
    data: &[Complex64],
) -> Outcome<MemhcObject> {
    with(rt, |i| {
        let id = i.session.register(spins, dims, data.to_vec())?;
        i.adopt(id)
    })
}

/// The shape of an object.
pub fn shape(rt: MemhcRuntime, o: MemhcObject) -> Outcome<NodeShape> {
    with(rt, |i| Ok(i.session.shape(i.object(o)?)?))
}

/// A plan from a term list; `out_spins` 0 means the largest output index plus one.
pub fn plan(rt: MemhcRuntime, out_spins: usize, terms: &[MemhcTerm]) -> Outcome<MemhcPlan> {
    let terms: Vec<Term> = terms.iter().map(|t| Term::new(t.out, t.a, t.b)).collect();
    let mapping = if out_spins == 0 {
        SpinMapping::from_terms(terms)?
    } else {
        SpinMapping::new(out_spins, terms)?
    };
    adopt_plan(rt, mapping)
}

/// The 4x4 spin-block product of two full-spin mesons, as a plan.
pub fn plan_meson4x4(rt: MemhcRuntime) -> Outcome<MemhcPlan> {
    adopt_plan(rt, SpinMapping::meson4x4())
}

fn adopt_plan(rt: MemhcRuntime, mapping: SpinMapping) -> Outcome<MemhcPlan> {
    with(rt, |i| {
        let handle = i
            .plans
            .insert(Arc::new(mapping))
            .ok_or_else(|| Failure::argument("too many live plans in one runtime"))?;
        Ok(MemhcPlan { handle })
    })
}

/// Releases a plan.
pub fn plan_release(rt: MemhcRuntime, p: MemhcPlan) -> Outcome<()> {
    with(rt, |i| {
        i.plans.remove(p.handle).map(drop).map_err(Failure::handle)
    })
}

/// One contraction on `stream`, into a new object.
pub fn contract(rt: MemhcRuntime, c: &MemhcContraction, stream: usize) -> Outcome<MemhcObject> {
    with(rt, |i| {
        let c = i.contraction(c)?;
        let id = i.session.contract(stream, &c)?;
        i.adopt(id)
    })
}

/// A vector of contractions, into `outs` (one new object each, in order).
pub fn run_vector(
    rt: MemhcRuntime,
    cs: &[MemhcContraction],
    outs: &mut [MemhcObject],
) -> Outcome<()> {
    if cs.len() != outs.len() {
        return Err(Failure::new(
            MemhcStatus::SizeMismatch,
            format!(
                "{} contractions need {} outputs, the array has {}",
                cs.len(),
                cs.len(),
                outs.len()
            ),
        ));
    }
    with(rt, |i| {
        let vector = cs
            .iter()
            .map(|c| i.contraction(c))
            .collect::<Outcome<Vec<_>>>()?;
        let ids = i.session.run_vector(&vector)?;
        let mut handles = Vec::with_capacity(ids.len());
        for id in ids {
            handles.push(i.adopt(id)?);
        }
        outs.copy_from_slice(&handles);
        Ok(())
    })
}

/// `Σ Tr(A[a] · B[b])` over `pairs`, or over the meson 4x4 pairs when `None`.
pub fn trace(
    rt: MemhcRuntime,
    a: MemhcObject,
    b: MemhcObject,
    pairs: Option<&[MemhcPair]>,
    stream: usize,
) -> Outcome<Complex64> {
    let pairs = match pairs {
        Some(p) => TracePairs::new(p.iter().map(|p| (p.a, p.b)).collect())?,
        None => TracePairs::meson4x4(),
    };
    with(rt, |i| {
        let (a, b) = (i.object(a)?, i.object(b)?);
        Ok(i.session.trace(stream, a, b, &pairs)?)
    })
}

/// Copies an object's values into `out` (exactly its number of elements).
pub fn read(rt: MemhcRuntime, o: MemhcObject, out: &mut [Complex64]) -> Outcome<()> {
    with(rt, |i| Ok(i.session.read_into(i.object(o)?, out)?))
}

/// Releases an object.
pub fn release(rt: MemhcRuntime, o: MemhcObject) -> Outcome<()> {
    with(rt, |i| {
        let id = i.object(o)?;
        i.session.release(id)?;
        i.objects
            .remove(o.handle)
            .map(drop)
            .map_err(Failure::handle)
    })
}

/// Waits for all work of the runtime.
pub fn synchronize(rt: MemhcRuntime) -> Outcome<()> {
    with(rt, |i| Ok(i.session.synchronize()?))
}

/// The statistics.
pub fn stats(rt: MemhcRuntime) -> Outcome<MemhcStats> {
    with(rt, |i| {
        let s = i.session.stats();
        Ok(MemhcStats {
            allocations: s.allocations,
            frees: s.frees,
            pool_reuses: s.pool_reuses,
            handovers: s.handovers,
            arena_allocations: s.arena_allocations,
            hits: s.hits,
            misses: s.misses,
            hit_rate: s.hit_rate,
            evictions: s.evictions,
            writebacks: s.writebacks,
            h2d_bytes: s.h2d_bytes,
            d2h_bytes: s.d2h_bytes,
            peak_device_bytes: s.peak_device_bytes,
            flops: s.flops,
            gemm_calls: s.gemm_calls,
            objects: i.objects.len() as u64,
            plans: i.plans.len() as u64,
            budget_bytes: i.session.budget() as u64,
        })
    })
}

/// Checks the runtime's invariants, and that its handles and its objects agree.
pub fn audit(rt: MemhcRuntime) -> Outcome<()> {
    with(rt, |i| {
        i.session.audit()?;
        let (handles, live) = (i.objects.len(), i.session.object_count());
        if handles != live {
            return Err(Failure::new(
                MemhcStatus::AuditFailed,
                format!("audit failed: {handles} object handles for {live} live objects"),
            ));
        }
        Ok(())
    })
}

/// Live runtimes (for tests: every runtime a test creates is destroyed).
pub fn live_runtimes() -> usize {
    runtimes().len()
}
